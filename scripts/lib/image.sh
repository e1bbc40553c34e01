# Shared by image-build.sh and image-test.sh (sourced).
source scripts/lib/mmdebstrap.sh
PARLEY_CACHE=${PARLEY_CACHE:-/var/cache/parley}
IMAGE_CACHE=$PARLEY_CACHE/image
APT_CACHE=$PARLEY_CACHE/apt
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY=${DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
# Partition layout, shared with image-test.sh's checks.
BOOT_LABEL=PARLEYBOOT
ROOT_LABEL=PARLEYROOT
BOOT_START_MIB=4

log() { echo "$(basename "$0"): $*" >&2; }
die() { log "error: $*"; exit 1; }

# image_target NAME: the architecture and board of a target.
image_target() {
    case "$1" in
        pi3 | pi4 | pi5) ARCH=arm64 BOARD=$1 BOARD_LAYER=80-board-pi ;;
        qemu) ARCH=amd64 BOARD=sim BOARD_LAYER=80-board-qemu ;;
        *) die "unknown target '$1'; expected one of: pi3, pi4, pi5, qemu" ;;
    esac
    if [ "$1" = pi5 ]; then
        die "pi5: Debian 13's arm64 kernel (6.12) ships the Pi 5's device tree but not its SD card driver (CONFIG_MMC_SDHCI_BRCMSTB is not set: the root partition could not be mounted) nor any driver for its RP1 chip (GPIO header, USB, Ethernet: no microphone, speaker or button); see image/README.md"
    fi
}

# find_deb ARCH: the newest out/deb/parley_*_ARCH.deb.
find_deb() {
    # No package yet is an empty answer, not a failure: under pipefail ls's
    # status would end image-build.sh before it builds the package.
    { ls -1 out/deb/parley_*_"$1".deb 2>/dev/null || true; } | sort -V | tail -n 1
}

# The sources of the image: Debian 13, its updates and security suites.
mirror_lines() {
    echo "deb $DEBIAN_MIRROR trixie main non-free-firmware"
    echo "deb $DEBIAN_MIRROR trixie-updates main non-free-firmware"
    echo "deb $DEBIAN_SECURITY trixie-security main non-free-firmware"
}

# The Date: line of each suite's InRelease: part of the base's cache key, so
# that a point release or a security update makes a new base. Offline, the
# key falls back to "offline" and the newest cached base is used.
suite_dates() {
    local url
    for url in "$DEBIAN_MIRROR/dists/trixie" "$DEBIAN_MIRROR/dists/trixie-updates" "$DEBIAN_SECURITY/dists/trixie-security"; do
        python3 - "$url/InRelease" <<'PY' || echo offline
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
    for line in r.read(4096).decode(errors="replace").splitlines():
        if line.startswith("Date:"):
            print(line); break
PY
    done
}

# layer_packages DIR...: the package names of the layers, comments dropped, sorted.
layer_packages() {
    local d
    for d in "$@"; do [ -f "$d/packages" ] && sed -e 's/#.*//' -e 's/[[:space:]]//g' "$d/packages"; done | grep -v '^$' | sort -u
}

# board_yaml_list BOARD KEY: the items of boot.KEY (config-txt, packages) in
# board/BOARD/board.yaml, block (- item) or flow ([a, b]) style.
board_yaml_list() {
    python3 - "board/$1/board.yaml" "$2" <<'PY'
import re, sys
path, key = sys.argv[1], sys.argv[2]
def strip_comment(s):
    out, quote = "", None
    for ch in s:
        if quote:
            out += ch
            if ch == quote: quote = None
        elif ch in "\"'": quote = ch; out += ch
        elif ch == "#": break
        else: out += ch
    return out.rstrip()
def unquote(s):
    s = s.strip()
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'" else s
in_boot, in_key = False, False
for raw in open(path):
    line = strip_comment(raw.rstrip("\n"))
    if not line.strip(): continue
    indent = len(line) - len(line.lstrip())
    if indent == 0:
        in_boot, in_key = line.strip() == "boot:", False
        continue
    if not in_boot: continue
    m = re.match(r"\s+([\w-]+):\s*(.*)$", line)
    if m and not line.lstrip().startswith("- "):
        in_key = m.group(1) == key
        if in_key and m.group(2).startswith("["):
            for item in m.group(2).strip("[]").split(","):
                if item.strip(): print(unquote(item))
        continue
    if in_key and line.lstrip().startswith("- "):
        print(unquote(line.lstrip()[2:]))
PY
}
board_boot_packages() { [ "$1" = sim ] || board_yaml_list "$1" packages; }

# tar_inputs PATH...: a digest of the content, names and modes of files.
tar_inputs() {
    find "$@" -type f -print0 | sort -z | xargs -0 sha256sum
    find "$@" -type f -printf '%p %m\n' | sort
}

# in_root ROOT CMD...: runs CMD chrooted in ROOT with /proc, /sys and /dev,
# in a private mount namespace (the mounts vanish with it). arm64 roots run
# through qemu-user's binfmt handler.
in_root() {
    local root=$1; shift
    unshare --mount --propagation private -- bash -euc '
        root=$1; shift
        mount -t proc proc "$root/proc"
        mount -t sysfs sysfs "$root/sys"
        mount --rbind /dev "$root/dev"
        exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
    ' in_root "$root" "$@"
}

# assemble_image ROOT IMAGE WORK: the root file system's /boot/firmware
# becomes the FAT boot partition, the rest the ext4 root; both are made from
# directories (no loop device, no mount) and written into an MBR disk image.
assemble_image() {
    local root=$1 img=$2 work=$3
    mkdir -p "$work/boot" "$(dirname "$img")"
    if [ -n "$(ls -A "$root/boot/firmware" 2>/dev/null)" ]; then
        mv "$root/boot/firmware/"* "$work/boot/"
    fi
    mkdir -p "$root/boot/firmware"
    local used_root used_boot boot_mib root_mib
    used_root=$(du -sm --apparent-size "$root" | cut -f1)
    used_boot=$(du -sm --apparent-size "$work/boot" | cut -f1)
    # Room for a second kernel and initrd on the boot partition (an upgrade
    # keeps the old one until the new one is written), and 30 % + 256 MiB
    # free on the root before it grows to fill the card.
    boot_mib=$(( used_boot * 2 + 128 )); (( boot_mib < 256 )) && boot_mib=256
    root_mib=$(( used_root * 13 / 10 + 256 ))
    rm -f "$work/boot.img" "$work/root.img"
    mkfs.vfat -F 32 -n "$BOOT_LABEL" -C "$work/boot.img" $(( boot_mib * 1024 )) >/dev/null
    if [ -n "$(ls -A "$work/boot")" ]; then
        MTOOLS_SKIP_CHECK=1 mcopy -s -p -i "$work/boot.img" "$work/boot/"* ::/
    fi
    truncate -s "${root_mib}M" "$work/root.img"
    mkfs.ext4 -q -F -L "$ROOT_LABEL" -d "$root" "$work/root.img"
    local total=$(( BOOT_START_MIB + boot_mib + root_mib ))
    rm -f "$img" "$img.zst"
    truncate -s "${total}M" "$img"
    local s=2048   # sectors per MiB
    sfdisk -q "$img" <<SF
label: dos
unit: sectors
start=$(( BOOT_START_MIB * s )), size=$(( boot_mib * s )), type=c, bootable
start=$(( (BOOT_START_MIB + boot_mib) * s )), size=$(( root_mib * s )), type=83
SF
    dd if="$work/boot.img" of="$img" bs=1M seek="$BOOT_START_MIB" conv=notrunc,sparse status=none
    dd if="$work/root.img" of="$img" bs=1M seek=$(( BOOT_START_MIB + boot_mib )) conv=notrunc,sparse status=none
    zstd -q -f -T0 -10 "$img" -o "$img.zst"
}
