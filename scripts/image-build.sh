#!/usr/bin/env bash
# Builds the device image from the layered recipe in image/ (image/README.md).
#
#   scripts/image-build.sh pi3|pi4|pi5|qemu [--deb FILE]
#
# writes out/image/parley-<target>.img (a whole SD card / disk, A/B, issue
# 52: MBR, FAT boot partition PARLEYBOOT, slot A, slot B, data partition
# PARLEYDATA), parley-<target>.img.zst and out/image/parley-<target>.raucb, a
# RAUC bundle of slot A signed with the development key (scripts/lib/image.sh,
# rauc_dev_key). Pi targets are arm64 with Debian's linux-image-arm64,
# raspi-firmware and U-Boot choosing the slot; qemu is amd64 with
# linux-image-amd64, GRUB choosing the slot and the ALSA loopback as sound
# card.
#
# Two stages, both cached under /var/cache/parley/image (PARLEY_CACHE):
#   A  mmdebstrap of every layer's package list from Debian 13, keyed by the
#      lists, the architecture, the mirror and the Date of the suites'
#      InRelease files (a new point release or security update rebuilds it);
#      downloaded .debs are kept in /var/cache/parley/apt/<arch> across keys.
#   B  each layer's files/ copied in and customize.sh run, Parley's .deb
#      installed, partitions made without loop devices (mkfs.ext4 -d,
#      mkfs.vfat + mcopy, sfdisk on the file) and assembled. The image's
#      stamp records the key of its inputs; the same inputs rebuild nothing.
#
# PARLEY_IMAGE_BASE=FILE uses FILE as stage A's tarball whatever the key
# (development only: stage A of arm64 takes 8-50 min under qemu-user, and a
# Debian update between two runs makes a new key; the image then lags that
# update, and the log says so).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/image.sh

target=${1:-}
shift || true
deb=
with_parley=true
while (($#)); do
    case "$1" in
        --deb) deb=${2:?--deb needs a file}; shift 2 ;;
        # Development only: the image without Parley (boot path, first boot).
        --no-parley) with_parley=false; shift ;;
        *) die "unknown option '$1' (usage: image-build.sh pi3|pi4|pi5|qemu [--deb FILE])" ;;
    esac
done
image_target "$target"        # sets ARCH, BOARD, BOARD_LAYER
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap and chroot need it)"
bash scripts/image-deps.sh

if $with_parley; then
    deb=${deb:-$(find_deb "$ARCH")}
    if [ -z "$deb" ] && [ -x scripts/package-deb.sh ]; then
        log "no .deb for $ARCH in out/deb: building it (scripts/package-deb.sh $ARCH)"
        bash scripts/package-deb.sh "$ARCH" >&2
        deb=$(find_deb "$ARCH")
    fi
    [ -f "$deb" ] || die "Parley's .deb for $ARCH not found; build it with scripts/package-deb.sh $ARCH or give --deb FILE"
    export PARLEY_DEB=$deb
else
    log "warning: --no-parley: the image will not contain Parley (development only)"
    export PARLEY_DEB=
fi

layers=(image/layers/[0-7]*/ "image/layers/$BOARD_LAYER/")
packages=$(layer_packages "${layers[@]}"; board_boot_packages "$BOARD")
keyA=$( { echo "$ARCH"; echo "$packages"; mirror_lines; suite_dates; } | sha256sum | cut -c1-16)
base=$IMAGE_CACHE/base-$ARCH-$keyA.tar
if [ -n "${PARLEY_IMAGE_BASE:-}" ]; then
    [ -f "$PARLEY_IMAGE_BASE" ] || die "PARLEY_IMAGE_BASE: no file $PARLEY_IMAGE_BASE"
    [ "$PARLEY_IMAGE_BASE" -ef "$base" ] \
        || log "warning: base $PARLEY_IMAGE_BASE given (PARLEY_IMAGE_BASE), not the one of Debian's current state ($(basename "$base")): the image lags the archive"
    base=$PARLEY_IMAGE_BASE
    keyA=given-$(basename "$base")
fi
# The A/B image trusts the update key's certificate: a new key makes a new image.
rauc_dev_key
keyB=$( { echo "$keyA $target"; [ -z "$deb" ] || sha256sum "$deb"; sha256sum "$RAUC_KEY_DIR/ca.cert.pem"; tar_inputs "${layers[@]}" "board/$BOARD" scripts/image-build.sh scripts/lib/image.sh; } | sha256sum | cut -c1-16)
img=out/image/parley-$target.img
stamp=$img.key
bundle=out/image/parley-$target.raucb
if [ -f "$img" ] && [ -f "$img.zst" ] && [ -f "$bundle" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$keyB" ]; then
    log "up to date: $img (key $keyB)"
    exit 0
fi

t0=$(date +%s)
if [ ! -f "$base" ]; then
    log "stage A: mmdebstrap $ARCH base ($(echo "$packages" | wc -l) packages) -> $base"
    mkdir -p "$IMAGE_CACHE" "$APT_CACHE/$ARCH"
    tmp=$base.tmp.$$.tar
    mapfile -t mirrors < <(mirror_lines)
    trap 'rm -f "$tmp"' EXIT
    # The .deb cache pattern from mmdebstrap(1): what was downloaded once is
    # copied in before and back out after, so a new key downloads only what changed.
    mmdebstrap_private --variant=minbase --architectures="$ARCH" \
        --components=main,non-free-firmware \
        --aptopt='APT::Install-Recommends "false"' \
        --include="$(echo "$packages" | paste -sd,)" \
        --skip=download/empty --skip=essential/unlink \
        --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
        --setup-hook="sync-in $APT_CACHE/$ARCH /var/cache/apt/archives/" \
        --customize-hook="sync-out /var/cache/apt/archives $APT_CACHE/$ARCH" \
        trixie "$tmp" "${mirrors[@]}" >&2
    mv "$tmp" "$base"
    trap - EXIT
    # Older bases of this architecture are superseded.
    find "$IMAGE_CACHE" -maxdepth 1 -name "base-$ARCH-*.tar" ! -name "$(basename "$base")" -delete
fi
tA=$(date +%s)

work=$(mktemp -d /var/tmp/parley-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"
log "stage B: layers, Parley (${deb:-none}), partitions"
tar --numeric-owner --xattrs --xattrs-include='*' -xpf "$base" -C "$root"
export ROOT=$root TARGET=$target ARCH BOARD BOARD_DIR=$PWD/board/$BOARD
for layer in "${layers[@]}"; do
    [ -d "$layer/files" ] && cp -a --no-preserve=ownership "$layer/files/." "$root/"
    if [ -x "$layer/customize.sh" ]; then
        log "  $(basename "$layer")/customize.sh"
        "$layer/customize.sh" "$root" >&2
    fi
done
install -D -m 0644 "$RAUC_KEY_DIR/ca.cert.pem" "$root/etc/rauc/keyring.pem"
# The update: slot A's file system as a signed bundle, its version the
# package's and the image key's (two builds of one version differ).
version=$( { [ -n "$deb" ] && dpkg-deb -f "$deb" Version; } || echo none)+$keyB
# RAUC's record of slot A on the data partition (data-directory=/data/rauc),
# as if it had installed that bundle there: `rauc status` and `parley
# status` name slot A's version from the first boot on (issue 52).
mkdir -p "$work/data/rauc"
printf '[slot.rootfs.0]\nbundle.compatible=%s\nbundle.version=%s\nstatus=ok\ninstalled.timestamp=%s\ninstalled.count=1\n' \
    "$RAUC_COMPATIBLE" "$version" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$work/data/rauc/central.raucs"
assemble_ab_image "$root" "$img" "$work"
tb=$(date +%s)
make_bundle "$work/root.img" "$bundle" "$version"
log "wrote $bundle ($(du -h "$bundle" | cut -f1), version $version) in $(( $(date +%s) - tb )) s"
echo "$keyB" >"$stamp"
tB=$(date +%s)
log "wrote $img ($(du -h --apparent-size "$img" | cut -f1), zstd $(du -h "$img.zst" | cut -f1)); stage A $((tA - t0)) s, stage B $((tB - tA)) s"
