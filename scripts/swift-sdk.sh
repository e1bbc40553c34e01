#!/usr/bin/env bash
# Makes, from Debian packages only, what the device build needs:
#
#   1. the compiler chroot: Debian unstable with `swiftlang` 6.2.x (Debian 13's
#      own swiftlang is 6.0.3, too old for swift-log's and
#      swift-service-lifecycle's 6.2 manifests), libc6-dev, git and pkgconf;
#   2. one Swift SDK bundle (SE-0387 artifact bundle) per target
#      architecture, arm64 and amd64, for Debian 13 (trixie): a sysroot of
#      Debian 13's -dev packages with that architecture's Swift resource
#      directories (lib/swift, lib/swift_static, lib/clang) from unstable's
#      swiftlang package inside it, and a toolset that links with the lld
#      swiftlang ships.
#
# Everything is cached under $PARLEY_CACHE (default /var/cache/parley), in
# directories named after a hash of the package versions they hold, so it
# survives between builds and CI runs on this machine; a fresh machine makes
# it again (about 4 minutes and 1 GB of downloads on 2 cores). When the cache
# is there the script only checks it and prints where it is.
#
#   scripts/swift-sdk.sh            make what is missing (idempotent)
#   scripts/swift-sdk.sh --update   fetch the newest package versions; a new
#                                   key gives new directories, the old stay
#                                   until removed by hand
#
# Prints nothing on stdout but, at the end, `KEY=VALUE` lines that
# cross-build.sh reads: COMPILER_ROOT, SDK_BUNDLE_arm64, SDK_BUNDLE_amd64.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh

update=false
[ "${1:-}" = "--update" ] && update=true

require_root
ensure_host_tools

mkdir -p "$PARLEY_CACHE"
# One builder at a time: CI and a developer (or two lanes) may start this together.
exec 9>"$PARLEY_CACHE/.lock"
flock 9

# MARK: 1. The compiler chroot (Debian unstable, amd64 host).

# Packages of the compiler chroot. arm64 is added as a foreign architecture so
# that `apt-get download swiftlang:arm64` finds the arm64 runtime.
COMPILER_PACKAGES=swiftlang,libc6-dev,git,pkgconf,ca-certificates

make_compiler() {
    local tmp="$PARLEY_CACHE/compiler.new"
    remove_root "$tmp"
    log "making the compiler chroot (Debian unstable, swiftlang) in $tmp"
    mmdebstrap_private --variant=apt --architectures=amd64,arm64 \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="$COMPILER_PACKAGES" \
        --customize-hook='chroot "$1" sh -c "mkdir -p /opt/swift-arm64-debs && cd /opt/swift-arm64-debs && apt-get download swiftlang:arm64 libswiftlang:arm64"' \
        --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}:\${Architecture} \${Version}\n" > "$1/etc/parley-versions"' \
        --customize-hook='cd "$1/opt/swift-arm64-debs" && ls >> "$1/etc/parley-versions"' \
        unstable "$tmp" "$DEBIAN_MIRROR" >&2
    local key
    key=$(version_key "$tmp/etc/parley-versions")
    local swift_version
    swift_version=$(chroot_query_version "$tmp" swiftlang)
    local dest="$PARLEY_CACHE/compiler-${swift_version//[^A-Za-z0-9.+-]/_}-$key"
    if [ -d "$dest" ]; then remove_root "$tmp"; else mv "$tmp" "$dest"; fi
    ln -sfn "$(basename "$dest")" "$PARLEY_CACHE/compiler"
}

if $update || [ ! -f "$PARLEY_CACHE/compiler/etc/parley-versions" ]; then
    make_compiler
fi
COMPILER_ROOT=$(readlink -f "$PARLEY_CACHE/compiler")

# MARK: 2. Debian 13 sysroots and SDK bundles.

# Debian's swiftlang 6.2.3 ships the module of Swift Testing's Foundation
# overlay (_Testing_Foundation, cross-imported when a test imports Testing
# and Foundation) but not its library, so every test bundle fails to link
# (`unable to find library -l_Testing_Foundation`). Parley's tests use none
# of the overlay's API; without its cross-import declaration the compiler
# does not import it and nothing asks for the library.
drop_testing_foundation_overlay() {
    rm -rf "$1/Testing.swiftcrossimport" "$1/_Testing_Foundation.swiftmodule"
}

# What Parley's C modules include and link (Package.swift's systemLibrary
# targets), plus the C and C++ runtime the Swift runtime links against.
SYSROOT_PACKAGES=libc6-dev,libstdc++-14-dev,libgcc-14-dev,libasound2-dev,libpocketsphinx-dev,libsphinxbase-dev,libgpiod-dev,libespeak-ng-dev,libspeexdsp-dev,libsqlite3-dev,zlib1g-dev

make_sdk() {
    local arch=$1 triple
    triple=$(swift_triple "$arch")
    local tmp="$PARLEY_CACHE/sdk-$arch.new"
    remove_root "$tmp"
    mkdir -p "$tmp"
    local bundle="$tmp/parley-debian13-$arch.artifactbundle"
    local sysroot="$bundle/debian13-$arch/sysroot"
    mkdir -p "$(dirname "$sysroot")"
    log "making the Debian 13 $arch sysroot in $sysroot"
    # extract: the packages' files only, no maintainer scripts, so a foreign
    # architecture needs no emulation. Dependencies are included.
    mmdebstrap_private --variant=extract --architectures="$arch" \
        --include="$SYSROOT_PACKAGES" \
        trixie "$sysroot" "$DEBIAN_MIRROR" >&2
    merge_usr "$sysroot"
    # The Swift resource directories of the target's swiftlang package (same
    # version as the compiler's: the compiler's own for amd64).
    # They must sit inside the sysroot, at usr/lib/{swift,swift_static,clang}
    # (the driver looks for swiftrt.o there); Debian 13 has no Swift of its own
    # in this package set, so nothing is overwritten.
    local res="$sysroot/usr/lib"
    if [ "$arch" = amd64 ]; then
        for d in swift swift_static clang; do
            cp -a "$COMPILER_ROOT/usr/libexec/swift/lib/$d" "$res/$d"
        done
    else
        local x="$tmp/extract"
        mkdir -p "$x"
        for deb in "$COMPILER_ROOT"/opt/swift-arm64-debs/*.deb; do dpkg-deb -x "$deb" "$x"; done
        for d in swift swift_static clang; do
            cp -a "$x/usr/libexec/swift/lib/$d" "$res/$d"
        done
        rm -rf "$x"
    fi
    drop_testing_foundation_overlay "$res/swift/linux"
    write_sdk_json "$bundle" "$arch" "$triple"
    {
        echo "swiftlang $(chroot_query_version "$COMPILER_ROOT" swiftlang)"
        ls "$COMPILER_ROOT/opt/swift-arm64-debs"
        # The extract variant has no dpkg database: list the archives used.
        ls "$sysroot/var/cache/apt/archives" 2>/dev/null || true
        find "$sysroot/usr/share/doc" -maxdepth 1 -mindepth 1 -printf '%f\n' | sort
    } > "$bundle/parley-versions"
    local key
    key=$(version_key "$bundle/parley-versions")
    local dest="$PARLEY_CACHE/sdk-$arch-$key"
    if [ -d "$dest" ]; then remove_root "$tmp"; else mv "$tmp" "$dest"; fi
    ln -sfn "$(basename "$dest")" "$PARLEY_CACHE/sdk-$arch"
}

for arch in arm64 amd64; do
    if $update || [ ! -f "$PARLEY_CACHE/sdk-$arch/parley-debian13-$arch.artifactbundle/info.json" ]; then
        make_sdk "$arch"
    fi
done

# The bundle's JSON files are rewritten every time (cheap), so a change to
# them reaches a cached SDK without a rebuild; so is the overlay removal.
for arch in arm64 amd64; do
    drop_testing_foundation_overlay "$(readlink -f "$PARLEY_CACHE/sdk-$arch")/parley-debian13-$arch.artifactbundle/debian13-$arch/sysroot/usr/lib/swift/linux"
    write_sdk_json "$(readlink -f "$PARLEY_CACHE/sdk-$arch")/parley-debian13-$arch.artifactbundle" "$arch" "$(swift_triple "$arch")"
done

echo "COMPILER_ROOT=$COMPILER_ROOT"
for arch in arm64 amd64; do
    echo "SDK_BUNDLE_$arch=$(readlink -f "$PARLEY_CACHE/sdk-$arch")/parley-debian13-$arch.artifactbundle"
done
