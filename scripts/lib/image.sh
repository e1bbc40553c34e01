# Shared by image-build.sh and image-test.sh (sourced).
source scripts/lib/mmdebstrap.sh
PARLEY_CACHE=${PARLEY_CACHE:-/var/cache/parley}
IMAGE_CACHE=$PARLEY_CACHE/image
APT_CACHE=$PARLEY_CACHE/apt
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY=${DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
# Partition layout, shared with image-test.sh's checks.
BOOT_LABEL=PARLEYBOOT
BOOT_START_MIB=4
# The A/B layout (issue 52): two root slots and a data
# partition; the slots' file systems are alike (RAUC writes one image into
# either), so only the boot and data partitions have labels to mount by.
DATA_LABEL=PARLEYDATA
SLOT_LABEL=PARLEYSLOT
DATA_MIB=256     # before first boot; it grows to the end of the disk then
# The Pi images' MBR disk identifier ("Parl"): U-Boot's boot script names the
# slot by PARTUUID (<id>-02, <id>-03), as RAUC's system.conf does, so the same
# names hold on the Pi's SD card (mmcblk0) and under QEMU (vda). Fixed, not
# drawn per build: an update's slot carries the system.conf naming them.
PI_DISK_ID=0x5061726c
# The U-Boot environment file the Pi's boot script and fw_setenv share (on
# the boot partition) and its size, in fw_env.config and in the script.
UBOOT_ENV_FILE=parley.env
UBOOT_ENV_SIZE=0x4000

log() { echo "$(basename "$0"): $*" >&2; }
die() { log "error: $*"; exit 1; }

# image_target NAME: the architecture and board of a target.
image_target() {
    case "$1" in
        pi3 | pi4 | pi5) ARCH=arm64 BOARD=$1 BOARD_LAYER=80-board-pi ;;
        qemu) ARCH=amd64 BOARD=sim BOARD_LAYER=80-board-qemu ;;
        *) die "unknown target '$1'; expected one of: pi3, pi4, pi5, qemu" ;;
    esac
    # Every image is A/B (issue 52): GRUB picks the slot on the QEMU image,
    # U-Boot on the Pi images. RAUC's compatible: a bundle installs only
    # where it was built for (a Pi 3 slot carries the Pi 3's board file).
    case "$1" in
        qemu) RAUC_COMPATIBLE=parley-qemu-amd64 ;;
        *) RAUC_COMPATIBLE=parley-$1-arm64 ;;
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

# loopback_audio CONFIG: parleyd's microphone and speaker in parley.yaml
# CONFIG on the ALSA loopback (card Loopback, 80-board-qemu's modprobe.d):
# the QEMU image's sound card, and the emulated Pi's under test. Fails when
# CONFIG has no commented capture/playback lines to set.
loopback_audio() {
    sed -i -e 's|^  # capture: .*|  capture: "plughw:CARD=Loopback,DEV=1,SUBDEV=0"|' \
           -e 's|^  # playback: .*|  playback: "plughw:CARD=Loopback,DEV=0,SUBDEV=1"|' "$1"
    grep -q 'capture: "plughw:CARD=Loopback' "$1" && grep -q 'playback: "plughw:CARD=Loopback' "$1"
}

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

# The GRUB modules built into the QEMU image's core.img (no module folder on
# disk: everything the boot needs is in the 4 MiB gap before partition 1).
GRUB_MODULES="biosdisk part_msdos fat ext2 normal configfile loadenv test echo linux search search_label serial terminal sleep halt reboot"

# assemble_ab_image ROOT IMAGE WORK: the A/B layout (issue 52):
#   p1 FAT  PARLEYBOOT  the bootloader's files and its environment (the slot
#                       choice and its boot counter), sysconf.txt; mounted at
#                       /boot/firmware. QEMU: GRUB's grub.cfg and grubenv.
#                       Pi: the firmware, device trees, config.txt starting
#                       U-Boot, boot.scr and parley.env (80-board-pi).
#   p2 ext4 slot A      the root, as built, kernel and initrd in its /boot
#   p3 ext4 slot B      empty until RAUC installs a bundle into it
#   p4 ext4 PARLEYDATA  Parley's state (/var/lib/parley, bind-mounted from
#                       /data/parley): never written by an update; grows to
#                       the end of the disk on first boot
# QEMU: GRUB for BIOS, boot.img in the MBR, core.img (grub-mkimage of the
# image's own Debian 13 GRUB) in the gap before partition 1: what
# grub-install does, without the loop device it would need. The Pi's
# firmware reads partition 1 itself; its disk identifier is PI_DISK_ID. The
# root's ext4 image is also left in WORK/root.img for the update bundle
# (make_bundle).
assemble_ab_image() {
    local root=$1 img=$2 work=$3 grub=false
    mkdir -p "$work/boot" "$work/data" "$(dirname "$img")"
    if [ "$BOARD_LAYER" = 80-board-qemu ]; then
        grub=true
        [ -f "$root/boot/firmware/grub/grub.cfg" ] || die "$root/boot/firmware/grub/grub.cfg missing: the A/B layout needs the 80-board-qemu layer's GRUB configuration"
        [ -f "$root/usr/lib/grub/i386-pc/boot.img" ] || die "$root/usr/lib/grub/i386-pc/boot.img missing: grub-pc-bin is not in the image"
    else
        local f
        for f in u-boot.bin boot.scr "$UBOOT_ENV_FILE" config.txt; do
            [ -f "$root/boot/firmware/$f" ] || die "$root/boot/firmware/$f missing: the Pi's A/B boot needs the 80-board-pi layer's U-Boot files"
        done
    fi
    mv "$root/boot/firmware/"* "$work/boot/"
    # Parley's state moves to the data partition; the root keeps the mount points.
    if [ -d "$root/var/lib/parley" ]; then
        cp -a "$root/var/lib/parley" "$work/data/parley"
        find "$root/var/lib/parley" -mindepth 1 -delete
    else
        mkdir -p "$work/data/parley"   # --no-parley: the bind mount's source all the same
    fi
    mkdir -p "$root/data" "$root/var/lib/parley"
    if $grub; then
        in_root "$root" grub-mkimage -O i386-pc -o /tmp/core.img -p '(hd0,msdos1)/grub' $GRUB_MODULES
        mv "$root/tmp/core.img" "$work/core.img"
        local core_sectors=$(( ($(stat -c %s "$work/core.img") + 511) / 512 ))
        (( core_sectors < BOOT_START_MIB * 2048 - 1 )) || die "GRUB's core.img ($core_sectors sectors) does not fit before partition 1 at $BOOT_START_MIB MiB"
    fi
    local used_root used_boot boot_mib root_mib
    used_root=$(du -sm --apparent-size "$root" | cut -f1)
    used_boot=$(du -sm --apparent-size "$work/boot" | cut -f1)
    boot_mib=$(( used_boot * 2 + 128 )); (( boot_mib < 256 )) && boot_mib=256
    # A slot is not grown on the device: it needs the room of future
    # updates now (30 % + 256 MiB over today's root).
    root_mib=$(( used_root * 13 / 10 + 256 ))
    rm -f "$work/boot.img" "$work/root.img" "$work/data.img"
    mkfs.vfat -F 32 -n "$BOOT_LABEL" -C "$work/boot.img" $(( boot_mib * 1024 )) >/dev/null
    MTOOLS_SKIP_CHECK=1 mcopy -s -p -i "$work/boot.img" "$work/boot/"* ::/
    truncate -s "${root_mib}M" "$work/root.img"
    mkfs.ext4 -q -F -L "$SLOT_LABEL" -d "$root" "$work/root.img"
    truncate -s "${DATA_MIB}M" "$work/data.img"
    # 4 KiB blocks: it starts small (mke2fs would pick 1 KiB) but grows to the card.
    mkfs.ext4 -q -F -b 4096 -L "$DATA_LABEL" -d "$work/data" "$work/data.img"
    local total=$(( BOOT_START_MIB + boot_mib + 2 * root_mib + DATA_MIB ))
    rm -f "$img" "$img.zst"
    truncate -s "${total}M" "$img"
    local s=2048 a=$(( BOOT_START_MIB + boot_mib ))
    local b=$(( a + root_mib )) d=$(( a + 2 * root_mib )) label_id=
    $grub || label_id="label-id: $PI_DISK_ID"
    sfdisk -q "$img" <<SF
label: dos
$label_id
unit: sectors
start=$(( BOOT_START_MIB * s )), size=$(( boot_mib * s )), type=c, bootable
start=$(( a * s )), size=$(( root_mib * s )), type=83
start=$(( b * s )), size=$(( root_mib * s )), type=83
start=$(( d * s )), size=$(( DATA_MIB * s )), type=83
SF
    if $grub; then
        # boot.img's first 440 bytes (the disk id and partition table after
        # them stay sfdisk's); core.img from sector 1, where boot.img looks for it.
        dd if="$root/usr/lib/grub/i386-pc/boot.img" of="$img" bs=440 count=1 conv=notrunc status=none
        dd if="$work/core.img" of="$img" bs=512 seek=1 conv=notrunc status=none
    fi
    dd if="$work/boot.img" of="$img" bs=1M seek="$BOOT_START_MIB" conv=notrunc,sparse status=none
    dd if="$work/root.img" of="$img" bs=1M seek="$a" conv=notrunc,sparse status=none
    dd if="$work/data.img" of="$img" bs=1M seek="$d" conv=notrunc,sparse status=none
    zstd -q -f -T0 -10 "$img" -o "$img.zst"
}

# The update bundles' signing key (issue 52). A development key, made once on
# the build machine and kept in the cache (never in the repository): a CA
# whose certificate the image trusts (/etc/rauc/keyring.pem) and a signing
# key it issued. A product replaces RAUC_KEY_DIR with its own, kept offline.
RAUC_KEY_DIR=${PARLEY_RAUC_KEY_DIR:-$PARLEY_CACHE/rauc}
rauc_dev_key() {
    local dir=$RAUC_KEY_DIR
    [ -f "$dir/ca.cert.pem" ] && [ -f "$dir/dev.cert.pem" ] && [ -f "$dir/dev.key.pem" ] && return 0
    log "making the development signing key in $dir (never commit it)"
    local tmp; tmp=$(mktemp -d "${dir%/}.new.XXXXXX")
    chmod 0700 "$tmp"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout "$tmp/ca.key.pem" -out "$tmp/ca.cert.pem" -days 3650 \
        -subj "/O=Parley development/CN=Parley development CA ($(hostname))" 2>/dev/null
    openssl req -new "${ec[@]}" -keyout "$tmp/dev.key.pem" -out "$tmp/dev.csr" \
        -subj "/O=Parley development/CN=Parley development bundle signing ($(hostname))" 2>/dev/null
    # A signing certificate, not a CA: RAUC checks the signer for S/MIME
    # signing (no extended key usage limits it) against the keyring's CA.
    printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >"$tmp/ext"
    openssl x509 -req -in "$tmp/dev.csr" -CA "$tmp/ca.cert.pem" -CAkey "$tmp/ca.key.pem" -CAcreateserial \
        -days 3650 -extfile "$tmp/ext" -out "$tmp/dev.cert.pem" 2>/dev/null
    rm -f "$tmp/dev.csr" "$tmp/ext"
    mkdir -p "$(dirname "$dir")"
    mv -T "$tmp" "$dir" 2>/dev/null || { rm -rf "$tmp"; [ -f "$dir/dev.key.pem" ] || die "could not make $dir"; }
}

# make_bundle ROOTFS_IMAGE BUNDLE VERSION: a signed RAUC bundle (verity
# format) holding ROOTFS_IMAGE, the slot image as the device image's slot A
# has it, for `rauc install` on an A/B image of the target (RAUC_COMPATIBLE,
# set by image_target). Checked against the keyring after signing.
make_bundle() {
    local rootfs=$1 bundle=$2 version=$3 dir
    dir=$(mktemp -d /var/tmp/parley-bundle.XXXXXX)
    ln "$rootfs" "$dir/rootfs.ext4" 2>/dev/null || cp --sparse=always "$rootfs" "$dir/rootfs.ext4"
    cat >"$dir/manifest.raucm" <<MANIFEST
[update]
compatible=$RAUC_COMPATIBLE
version=$version

[bundle]
format=verity

[image.rootfs]
filename=rootfs.ext4
MANIFEST
    rm -f "$bundle"
    rauc bundle --cert="$RAUC_KEY_DIR/dev.cert.pem" --key="$RAUC_KEY_DIR/dev.key.pem" \
        --keyring="$RAUC_KEY_DIR/ca.cert.pem" "$dir" "$bundle" >&2 \
        || { rm -rf "$dir"; die "rauc bundle failed for $bundle (key $RAUC_KEY_DIR/dev.key.pem)"; }
    rm -rf "$dir"
}
