#!/usr/bin/env bash
# Layer 80-board-pi: the Pi boot partition from Debian's raspi-firmware.
# Its kernel hook (run again here) copies the firmware, kernel, initrd and
# device trees to /boot/firmware and writes config.txt and cmdline.txt from
# /etc/default/raspi-firmware (root by label) and raspi-firmware-custom (the
# board file's boot.config-txt lines, appended to config.txt).
set -euo pipefail
root=$1
here=$(cd "$(dirname "$0")/../../.." && pwd)
source "$here/scripts/lib/image.sh"
cat >>"$root/etc/default/raspi-firmware" <<CONF

# Parley image (image/layers/80-board-pi): the root file system by label.
ROOTPART=LABEL=$ROOT_LABEL
CONF
{
    echo "# From board/$BOARD/board.yaml (boot.config-txt), by the Parley image."
    (cd "$here" && board_yaml_list "$BOARD" config-txt)
} >"$root/etc/default/raspi-firmware-custom"
rm -f "$root/boot/firmware/config.txt" "$root/boot/firmware/cmdline.txt"
in_root "$root" env DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/z50-raspi-firmware
grep -q "root=LABEL=$ROOT_LABEL" "$root/boot/firmware/cmdline.txt" \
    || { echo "80-board-pi: cmdline.txt has no root=LABEL=$ROOT_LABEL" >&2; exit 1; }
ls "$root/boot/firmware"
