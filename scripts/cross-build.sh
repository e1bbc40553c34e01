#!/usr/bin/env bash
# Builds release parleyd, parley, parley-bench and parley-app-runner for Debian 13 (trixie) with
# Debian's Swift 6.2 (unstable's swiftlang, in the compiler chroot that
# scripts/swift-sdk.sh makes) into out/<arch>/:
#
#   out/<arch>/bin/{parleyd,parley,parley-bench,parley-app-runner}   stripped, RUNPATH $ORIGIN/../lib/parley
#   out/<arch>/lib/parley/*.so                     the Swift runtime they load (one private copy)
#
#   scripts/cross-build.sh arm64|amd64 [--runtime shared|static] [--tests]
#
# --runtime static links the Swift runtime into each binary instead
# (out/<arch>-static/bin, no lib/); BENCHMARKS.md ("Image and cross build")
# has the measurement behind the default, shared. --tests also builds the
# test bundle (debug, for scripts/device-test.sh) into out/<arch>-tests/.
#
# The GPIO layer is built against libgpiod v2 (the LibgpiodV2 trait), which
# is what Debian 13 ships. The build folder, .build-debian13-<arch>, stays
# between runs, so a second build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh

arch=${1:-}
runtime=shared
tests=false
shift || true
while (($#)); do
    case "$1" in
        --runtime) runtime=${2:?--runtime needs shared or static}; shift 2 ;;
        --tests) tests=true; shift ;;
        *) die "unknown option '$1' (usage: cross-build.sh arm64|amd64 [--runtime shared|static] [--tests])" ;;
    esac
done
triple=$(swift_triple "$arch")
case "$runtime" in shared | static) ;; *) die "--runtime must be shared or static, not '$runtime'" ;; esac
multiarch=$( [ "$arch" = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu )

require_root
eval "$(bash scripts/swift-sdk.sh)"
bundle_var=SDK_BUNDLE_$arch
bundle=${!bundle_var}
sysroot=$bundle/debian13-$arch/sysroot
scratch=.build-debian13-$arch
[ "$runtime" = static ] && scratch=$scratch-static

# SwiftPM reads PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR (not PKG_CONFIG_LIBDIR).
export PKG_CONFIG_PATH=$sysroot/usr/lib/$multiarch/pkgconfig:$sysroot/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$sysroot

common=(
    --swift-sdks-path "$(dirname "$bundle")" --swift-sdk "parley-debian13-$arch"
    --scratch-path "$scratch" --traits LibgpiodV2
)
if [ "$runtime" = static ]; then
    link=(--static-swift-stdlib)
else
    # No build-machine path in RUNPATH: the runtime sits beside the binaries.
    link=(-Xswiftc -no-toolchain-stdlib-rpath -Xlinker -rpath -Xlinker '$ORIGIN/../lib/parley')
fi

log "building release parleyd, parley, parley-bench, parley-app-runner for Debian 13 $arch ($runtime Swift runtime)"
start=$(date +%s)
for product in parleyd parley parley-bench parley-app-runner; do
    in_compiler swift build -c release "${common[@]}" "${link[@]}" --product "$product"
done
log "release build took $(($(date +%s) - start)) s"

out=out/$arch
[ "$runtime" = static ] && out=out/$arch-static
rm -rf "$out"
mkdir -p "$out/bin"
bin=$scratch/$triple/release
for product in parleyd parley parley-bench parley-app-runner; do
    in_compiler llvm-objcopy --strip-all "$bin/$product" "$out/bin/$product"
done

if [ "$runtime" = shared ]; then
    # The runtime libraries the binaries need, found by following DT_NEEDED
    # through the target's Swift resource directory (the rest is Debian 13's).
    mkdir -p "$out/lib/parley"
    runtime_dir=$sysroot/usr/lib/swift/linux
    pending=("$out"/bin/*)
    while ((${#pending[@]})); do
        file=${pending[0]}
        pending=("${pending[@]:1}")
        while read -r lib; do
            if [ -f "$runtime_dir/$lib" ] && [ ! -f "$out/lib/parley/$lib" ]; then
                in_compiler llvm-objcopy --strip-unneeded "$runtime_dir/$lib" "$out/lib/parley/$lib"
                pending+=("$out/lib/parley/$lib")
            fi
        done < <(in_compiler llvm-objdump -p "$file" | awk '$1 == "NEEDED" {print $2}')
    done
fi
du -sh "$out"/* >&2

if $tests; then
    log "building the test bundle (debug) for Debian 13 $arch"
    in_compiler swift build --build-tests "${common[@]}" -Xswiftc -no-toolchain-stdlib-rpath \
        -Xlinker -rpath -Xlinker /usr/lib/swift/linux
    rm -rf "out/$arch-tests"
    mkdir -p "out/$arch-tests"
    cp -a "$scratch/$triple/debug/ParleyPackageTests.xctest" "out/$arch-tests/"
fi
echo "$out"
