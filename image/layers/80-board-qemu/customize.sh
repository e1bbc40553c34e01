#!/usr/bin/env bash
# Layer 80-board-qemu: the A/B layout's GRUB environment (issue 52; the boot
# code is written by image-build.sh's assemble_ab_image, the mounts by
# 40-ab), the ALSA loopback as parleyd's microphone and speaker
# (files/etc/modprobe.d).
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
# Slot A as built is the good one; B is empty until an update.
env=$root/boot/firmware/grub/grubenv
rm -f "$env"
in_root "$root" grub-editenv /boot/firmware/grub/grubenv create
in_root "$root" grub-editenv /boot/firmware/grub/grubenv set ORDER="A B" A_OK=1 A_TRY=0 B_OK=0 B_TRY=0
config=$root/etc/parley/parley.yaml
if [ -f "$config" ]; then
    loopback_audio "$config" || { echo "80-board-qemu: no audio capture/playback lines in $config" >&2; exit 1; }
    in_root "$root" parleyd --check-config
fi
