#!/usr/bin/env bash
# Layer 80-board-pi: the Pi boot partition and its A/B boot (issue 52).
#
# Debian's raspi-firmware kernel hook (run again here) copies the firmware and
# device trees to /boot/firmware and writes config.txt from
# /etc/default/raspi-firmware and raspi-firmware-custom (the board file's
# boot.config-txt lines, appended). The firmware then starts U-Boot
# (kernel=u-boot.bin) instead of the kernel: U-Boot runs boot.scr
# (boot.cmd here), which picks slot A or B by the environment in parley.env
# (RAUC's uboot backend writes it with fw_setenv) and boots the kernel and
# initrd of that slot's own /boot, with the device tree the firmware made
# (its config.txt overlays applied). So a kernel update is part of a slot
# update, and the boot partition holds nothing a slot owns.
set -euo pipefail
root=$1
here=$(cd "$(dirname "$0")/../../.." && pwd)
source "$here/scripts/lib/image.sh"
image_target "$TARGET"   # RAUC_COMPATIBLE
fw=$root/boot/firmware
# The hook's settings (/etc/default/raspi-firmware): a root for its
# cmdline.txt, which boot.scr replaces with the chosen slot's; the Pi 3's and
# Pi 4's serial console (ttyS1; the hook would probe the build machine's
# /dev); no cma= on a Pi 4, where the hook's comment says it can keep the
# board from booting (it cannot tell the board apart in a chroot).
cma=64M; [ "$BOARD" = pi4 ] && cma=0
cat >>"$root/etc/default/raspi-firmware" <<CONF

# Parley image (image/layers/80-board-pi).
ROOTPART=LABEL=$SLOT_LABEL
CONSOLES="tty0 ttyS1,115200"
CMA=$cma
CONF
{
    echo "# From board/$BOARD/board.yaml (boot.config-txt), by the Parley image."
    (cd "$here" && board_yaml_list "$BOARD" config-txt)
} >"$root/etc/default/raspi-firmware-custom"
rm -f "$fw/config.txt" "$fw/cmdline.txt"
# First as Debian sets it up: the firmware, the device trees and cmdline.txt.
in_root "$root" env DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/z50-raspi-firmware
[ -f "$fw/cmdline.txt" ] || { echo "80-board-pi: raspi-firmware's hook wrote no cmdline.txt" >&2; exit 1; }
# The kernel's arguments the hook chose (consoles, fsck.repair, cma, ...)
# less root= and rw: boot.scr names the slot's root itself.
args=$(tr ' ' '\n' <"$fw/cmdline.txt" | grep -v -e '^root=' -e '^rw$' -e '^ro$' -e '^$' | paste -sd' ')
# Then with U-Boot as what the firmware starts and no initramfs of its own
# (the hook's settings for a second-stage bootloader): config.txt says
# kernel=u-boot.bin, and so would any later run of the hook.
cat >>"$root/etc/default/raspi-firmware" <<CONF
KERNEL="u-boot.bin"
INITRAMFS="no"
CONF
in_root "$root" env DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/z50-raspi-firmware
grep -qx 'kernel=u-boot.bin' "$fw/config.txt" && grep -qx 'arm_64bit=1' "$fw/config.txt" && ! grep -q '^initramfs' "$fw/config.txt" \
    || { echo "80-board-pi: config.txt does not start u-boot.bin in 64-bit mode without an initramfs" >&2; exit 1; }
# The kernel and initrd the first run copied are the slot's (its /boot).
rm -f "$fw"/vmlinuz* "$fw"/initrd.img* "$fw/cmdline.txt"
cp "$root/usr/lib/u-boot/rpi_arm64/u-boot.bin" "$fw/u-boot.bin"
# boot.cmd stays beside boot.scr: what the script holds, readable.
sed "s|@ARGS@|$args|; s|@ENV_FILE@|$UBOOT_ENV_FILE|g; s|@ENV_SIZE@|$UBOOT_ENV_SIZE|g" \
    "$here/image/layers/80-board-pi/boot.cmd" >"$fw/boot.cmd"
mkimage -q -A arm64 -O linux -T script -C none -n "Parley A/B boot" -d "$fw/boot.cmd" "$fw/boot.scr"

# Slot A as built is the good one (three tries, as RAUC's mark-good gives);
# B is empty until an update.
python3 "$here/scripts/lib/ubootenv.py" "$fw/$UBOOT_ENV_FILE" create "$UBOOT_ENV_SIZE" "BOOT_ORDER=A B" BOOT_A_LEFT=3 BOOT_B_LEFT=0
echo "/boot/firmware/$UBOOT_ENV_FILE 0x0 $UBOOT_ENV_SIZE" >"$root/etc/fw_env.config"
# libubootenv's defaults for a file whose CRC is wrong (a power cut while
# U-Boot wrote it): fw_printenv and fw_setenv, so RAUC, then see slot A as
# built, as boot.scr does, instead of failing.
printf 'BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n' >"$root/etc/u-boot-initial-env"

# RAUC on the Pi: U-Boot's environment, the slots by PARTUUID (the card is
# mmcblk0 on a Pi, a USB disk may be sda; the test's QEMU calls it vda).
id=${PI_DISK_ID#0x}
mkdir -p "$root/etc/rauc"
cat >"$root/etc/rauc/system.conf" <<CONF
# RAUC on the A/B Pi image (issue 52; image/README.md, "Two slots"). A bundle
# is installed into the slot not running, then U-Boot's environment
# (BOOT_ORDER, BOOT_<slot>_LEFT in /boot/firmware/$UBOOT_ENV_FILE, through
# fw_setenv and /etc/fw_env.config) makes it the next boot;
# parley-mark-good.service marks it good once parleyd is ready.
[system]
compatible=$RAUC_COMPATIBLE
bootloader=uboot
# A new slot gets one try (a slot that fails comes back to the old one on the
# next boot); a slot marked good gets three, so a power cut during a boot
# does not send the speaker back to an older slot.
boot-attempts=3
boot-attempts-primary=1
# RAUC's own state (which slot holds which bundle) beside Parley's, on the
# data partition: an update never writes it away.
data-directory=/data/rauc
# Only dm-verity bundles: every block is checked against the signed hash
# tree as it is read, so a corrupt or truncated bundle is refused.
bundle-formats=-plain

[keyring]
# The certificate of the key the bundles are signed with (a development key
# made on the build machine: scripts/lib/image.sh, rauc_dev_key).
path=/etc/rauc/keyring.pem

[slot.rootfs.0]
device=/dev/disk/by-partuuid/$id-02
type=ext4
bootname=A

[slot.rootfs.1]
device=/dev/disk/by-partuuid/$id-03
type=ext4
bootname=B
CONF
ls "$fw"
