#!/usr/bin/env bash
# Layer 40-ab: what the A/B layout (issue 52) needs whichever bootloader picks
# the slot: the mounts of the data partition, a build id for preinit, and
# parley-mark-good.service. The boards' layers add the bootloader and RAUC's
# system.conf (80-board-qemu: GRUB; 80-board-pi: U-Boot).
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
# The root is whichever slot the bootloader chose (root= on its command
# line): both slots' file systems are alike, so fstab cannot name it.
# Parley's state is on the data partition, bind-mounted where the package
# expects it. The root is read-only (ro on the command line; no fstab line
# remounts it): preinit mounts /data (fsck'd first, hence pass 0 here) and
# the writable layers before systemd starts, and /tmp is memory.
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
in_root "$root" systemctl enable parley-mark-good.service
