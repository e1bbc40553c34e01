#!/usr/bin/env bash
# Layer 80-board-qemu: kernel and initrd onto the boot partition, the ALSA
# loopback as parleyd's microphone and speaker (files/etc/modprobe.d).
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
in_root "$root" /usr/lib/parley-image/bootfiles
config=$root/etc/parley/parley.yaml
if [ -f "$config" ]; then
    sed -i -e 's|^  # capture: .*|  capture: "plughw:CARD=Loopback,DEV=1,SUBDEV=0"|' \
           -e 's|^  # playback: .*|  playback: "plughw:CARD=Loopback,DEV=0,SUBDEV=1"|' "$config"
    grep -q 'capture: "plughw:CARD=Loopback' "$config" && grep -q 'playback: "plughw:CARD=Loopback' "$config" \
        || { echo "80-board-qemu: no audio capture/playback lines in $config" >&2; exit 1; }
    in_root "$root" parleyd --check-config
fi
