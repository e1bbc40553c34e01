# Shared by swift-sdk.sh, cross-build.sh, package-deb.sh and the device tests:
# where the cache is, and the small helpers they all need. Sourced, not run.

PARLEY_CACHE=${PARLEY_CACHE:-/var/cache/parley}
# The work tree, mounted at the same path inside the compiler chroot.
SRC=$(pwd)
export PARLEY_CACHE SRC
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
source scripts/lib/mmdebstrap.sh

log() { echo "[$(basename "$0")] $*" >&2; }
die() { log "error: $*"; exit 1; }

require_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, chroot and bind mounts need it)"
}

# The Debian 12 host's tools: mmdebstrap makes the roots, qemu-user-static
# with binfmt_misc runs arm64 programs, lintian checks the package.
ensure_host_tools() {
    local missing=()
    for p in mmdebstrap qemu-user-static binfmt-support lintian arch-test; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    fi
    ensure_binfmt
}

# arm64 programs run through qemu-aarch64-static registered with binfmt_misc
# (the F flag: the interpreter is opened once, so it works inside chroots).
ensure_binfmt() {
    if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    fi
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
        update-binfmts --enable qemu-aarch64 >&2 || die "cannot register qemu-aarch64 with binfmt_misc"
    fi
}

# A short hash of a list of package versions: the cache key.
version_key() { sort "$1" | sha256sum | cut -c1-12; }

chroot_query_version() {
    dpkg-query --admindir="$1/var/lib/dpkg" -W -f='${Version}' "$2"
}

swift_triple() {
    case "$1" in
        arm64) echo aarch64-unknown-linux-gnu ;;
        amd64) echo x86_64-pc-linux-gnu ;;  # how Debian builds its amd64 Swift modules
        *) die "unknown architecture '$1' (expected arm64 or amd64)" ;;
    esac
}

# The extract variant runs no maintainer scripts, so the merged-/usr links
# that Debian 13 expects (/lib -> usr/lib ...) may be missing; linker
# scripts such as libc.so name /lib/<triplet>/libc.so.6.
merge_usr() {
    local root=$1 d
    for d in bin sbin lib lib64; do
        if [ ! -e "$root/$d" ] && [ ! -L "$root/$d" ]; then
            mkdir -p "$root/usr/$d"
            ln -s "usr/$d" "$root/$d"
        fi
    done
}

# SE-0387 Swift SDK bundle: info.json, swift-sdk.json and toolset.json.
write_sdk_json() {
    local bundle=$1 arch=$2 triple=$3
    local id="parley-debian13-$arch"
    cat > "$bundle/info.json" <<JSON
{
  "schemaVersion": "1.0",
  "artifacts": {
    "$id": {
      "type": "swiftSDK",
      "version": "1",
      "variants": [{ "path": "debian13-$arch" }]
    }
  }
}
JSON
    cat > "$bundle/debian13-$arch/swift-sdk.json" <<JSON
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "$triple": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
JSON
    # lld: swiftlang ships it, and it links for any target without a
    # cross binutils.
    cat > "$bundle/debian13-$arch/toolset.json" <<JSON
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] }
}
JSON
}

# Runs a command (from the work tree) in the compiler chroot that
# swift-sdk.sh made (COMPILER_ROOT set from its output) with the work tree, the Swift package
# mirror and the cache mounted at the same paths as outside, in a private
# mount namespace so that the mounts vanish with it.
in_compiler() {
    unshare --mount --propagation private -- bash -euc '
        root=$1; shift
        for dir in /proc:proc "$PARLEY_CACHE" /opt/swift-packages "$SRC"; do
            case "$dir" in
                /proc:proc) mount -t proc proc "$root/proc" ;;
                *) [ -d "$dir" ] || continue; mkdir -p "$root$dir"; mount --bind "$dir" "$root$dir" ;;
            esac
        done
        exec chroot "$root" env -i PATH=/usr/bin:/bin:/usr/libexec/swift/bin HOME=/root LANG=C.UTF-8 \
            PKG_CONFIG_PATH="${PKG_CONFIG_PATH:-}" PKG_CONFIG_SYSROOT_DIR="${PKG_CONFIG_SYSROOT_DIR:-}" \
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=url./opt/swift-packages/.insteadOf GIT_CONFIG_VALUE_0=https://github.com/ \
            bash -euc "cd \"\$0\" && exec \"\$@\"" "$SRC" "$@"
    ' in_compiler "$COMPILER_ROOT" "$@"
}

# A fresh Debian 13 root for tests (minbase, systemd's tools, no Parley),
# kept as a tarball in the cache and keyed by its package versions; arm64 is
# made under qemu-user (binfmt_misc). Prints the tarball's path.
debian13_base_root() {
    local arch=$1
    local link="$PARLEY_CACHE/debian13-$arch-base.tar"
    if [ ! -f "$link" ]; then
        ensure_host_tools
        local tmp="$PARLEY_CACHE/debian13-$arch-base.new.tar"
        log "making a Debian 13 $arch root (minbase + systemd) in $tmp"
        mmdebstrap_private --variant=minbase --architectures="$arch" --include=systemd \
            --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}:\${Architecture} \${Version}\n" > "$1/etc/parley-base-versions"' \
            trixie "$tmp" "$DEBIAN_MIRROR" >&2
        local key
        key=$(tar -xOf "$tmp" ./etc/parley-base-versions | sort | sha256sum | cut -c1-12)
        mv "$tmp" "$PARLEY_CACHE/debian13-$arch-base-$key.tar"
        ln -sfn "debian13-$arch-base-$key.tar" "$link"
    fi
    readlink -f "$link"
}

# Runs a command inside a Debian root (arm64 ones through qemu-user) with
# /proc, /dev and a fresh /run, in a private mount namespace.
in_root() {
    local root=$1; shift
    unshare --mount --propagation private -- bash -euc '
        root=$1; shift
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount -t tmpfs tmpfs "$root/run"
        mount -t tmpfs tmpfs "$root/tmp"
        exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
    ' in_root "$root" "$@"
}

# A Debian 13 root of `arch` with out/deb's package installed by apt, kept in
# out/installed-root-<arch> while the package is the same. Prints its path.
installed_root() {
    local arch=$1 version deb root
    version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ParleyDaemon/Lifecycle/DaemonController.swift)
    deb=out/deb/parley_${version}_$arch.deb
    [ -f "$deb" ] || bash scripts/package-deb.sh "$arch" >/dev/null
    root=$PWD/out/installed-root-$arch
    if ! cmp -s "$deb" "$root/var/cache/parley-test/parley.deb"; then
        rm -rf "$root"
        mkdir -p "$root"
        tar -xf "$(debian13_base_root "$arch")" -C "$root"
        mkdir -p "$root/var/cache/parley-test"
        cp "$deb" "$root/var/cache/parley-test/parley.deb"
        in_root "$root" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /var/cache/parley-test/parley.deb' >&2
    fi
    echo "$root"
}
