#!/usr/bin/env bash
# Layer 80-board-qemu: the A/B layout's mounts and GRUB environment (issue 52;
# the boot code is written by image-build.sh's assemble_ab_image), the ALSA
# loopback as parleyd's microphone and speaker (files/etc/modprobe.d).
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
# The root is whichever slot GRUB chose (root= on its command line): both
# slots' file systems are alike, so fstab cannot name it. Parley's state is
# on the data partition, bind-mounted where the package expects it.
# The root is read-only (ro on GRUB's command line; no fstab line remounts
# it): preinit mounts /data (fsck'd first, hence pass 0 here) and the
# writable layers before systemd starts, and /tmp is memory.
cat >"$root/etc/fstab" <<FSTAB
LABEL=$BOOT_LABEL  /boot/firmware   vfat  rw,noatime,umask=0077  0 2
LABEL=$DATA_LABEL  /data            ext4  rw,noatime             0 0
/data/parley       /var/lib/parley  none  bind,x-systemd.requires-mounts-for=/data  0 0
tmpfs              /tmp             tmpfs mode=1777,nosuid,nodev,size=25%  0 0
FSTAB
# Each build is a new slot content: preinit gives a slot installed with
# another build a fresh writable layer.
mkdir -p "$root/usr/lib/parley-image"
od -An -N8 -tx1 /dev/urandom | tr -d ' \n' >"$root/usr/lib/parley-image/build-id"
echo >>"$root/usr/lib/parley-image/build-id"
# Slot A as built is the good one; B is empty until an update.
env=$root/boot/firmware/grub/grubenv
rm -f "$env"
in_root "$root" grub-editenv /boot/firmware/grub/grubenv create
in_root "$root" grub-editenv /boot/firmware/grub/grubenv set ORDER="A B" A_OK=1 A_TRY=0 B_OK=0 B_TRY=0
config=$root/etc/parley/parley.yaml
if [ -f "$config" ]; then
    sed -i -e 's|^  # capture: .*|  capture: "plughw:CARD=Loopback,DEV=1,SUBDEV=0"|' \
           -e 's|^  # playback: .*|  playback: "plughw:CARD=Loopback,DEV=0,SUBDEV=1"|' "$config"
    grep -q 'capture: "plughw:CARD=Loopback' "$config" && grep -q 'playback: "plughw:CARD=Loopback' "$config" \
        || { echo "80-board-qemu: no audio capture/playback lines in $config" >&2; exit 1; }
    in_root "$root" parleyd --check-config
fi
in_root "$root" systemctl enable parley-mark-good.service
