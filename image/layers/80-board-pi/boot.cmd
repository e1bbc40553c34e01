# Parley's A/B boot on the Pi (issue 52): U-Boot runs this (boot.scr, made by
# image/layers/80-board-pi/customize.sh with mkimage) from the boot partition.
#
# The slot choice is RAUC's uboot interface: BOOT_ORDER lists the slots, most
# wanted first; BOOT_<slot>_LEFT counts the tries left. Each boot takes the
# first slot of the order with a try left, counts the try down and saves the
# environment before starting it; parley-mark-good.service (rauc status
# mark-good) gives the slot its tries back once parleyd is ready. A new slot
# has one try (boot-attempts-primary=1 in RAUC's system.conf), so a slot that
# fails is passed over on the next boot: back on the old slot by itself.
#
# The environment is its own file (@ENV_FILE@, @ENV_SIZE@ bytes, U-Boot's
# binary format with its CRC), the one fw_setenv writes through
# /etc/fw_env.config, read and written here with env import/export and
# fatwrite rather than U-Boot's own environment: the same script then works
# with any U-Boot build, whatever its CONFIG_ENV_* (the Pi's rpi_arm64 keeps
# uboot.env of 0x4000 bytes on FAT, the qemu_arm64 the image test boots it
# with 0x40000 in flash). U-Boot 2025.01's old hush parser: no `break`.
#
# Where this script is: standard boot's script method sets devtype ("mmc" on
# the Pi, "virtio" under QEMU), devnum and distro_bootpart before running it.

test -n "${devtype}" || setenv devtype mmc
test -n "${devnum}" || setenv devnum 0
test -n "${distro_bootpart}" || setenv distro_bootpart 1
setenv p_envfile @ENV_FILE@
setenv p_envsize @ENV_SIZE@
# Load addresses of its own, as offsets from the start of RAM (0 on a Pi,
# 0x40000000 on QEMU's virt), 2 MiB aligned so booti need not move the
# kernel: the rpi_arm64 defaults put the initrd where the 36 MiB kernel,
# once moved, runs over it.
#   +64 MiB the kernel   +176 MiB the environment file   +192 MiB the initrd
setexpr p_ram ${kernel_addr_r} "&" 0xf0000000
setexpr p_kernel ${p_ram} + 0x04000000
setexpr p_scratch ${p_ram} + 0x0b000000
setexpr p_initrd ${p_ram} + 0x0c000000

# --- the slot state: parley.env, or slot A as built ---------------------------
# Anything U-Boot's own environment holds (a stale uboot.env on the Pi) is
# forgotten: only parley.env counts. env import -c checks the CRC and
# imports nothing from a damaged file; only these names are taken from it.
setenv BOOT_ORDER
setenv BOOT_A_LEFT
setenv BOOT_B_LEFT
setenv EXTRA_CMDLINE
setenv p_envok 0
if load ${devtype} ${devnum}:${distro_bootpart} ${p_scratch} ${p_envfile} ${p_envsize}; then
    if env import -c ${p_scratch} ${p_envsize} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT EXTRA_CMDLINE; then
        setenv p_envok 1
    fi
fi
test "${p_envok}" = 1 || echo "parley: ${p_envfile} missing or damaged: slot A, as built"
test -n "${BOOT_ORDER}" || setenv BOOT_ORDER "A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 0
echo "parley: order ${BOOT_ORDER}, tries left A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT}"

# --- the slot: the first of the order with a try left, its try counted --------
# The counts are hex, as RAUC writes (printf %x) and reads them; 0x makes
# test read them so, and setexpr answers in hex.
setenv p_slot
for s in ${BOOT_ORDER}; do
    if test -z "${p_slot}"; then
        if test "${s}" = A && test 0x${BOOT_A_LEFT} -gt 0; then
            setexpr BOOT_A_LEFT 0x${BOOT_A_LEFT} - 1
            setenv p_slot A
        elif test "${s}" = B && test 0x${BOOT_B_LEFT} -gt 0; then
            setexpr BOOT_B_LEFT 0x${BOOT_B_LEFT} - 1
            setenv p_slot B
        fi
    fi
done
setenv p_write 1
if test -z "${p_slot}"; then
    # No slot has a try left (power cuts during every try since the last
    # good boot): the first of the order rather than nothing, not counted;
    # it is the slot last made primary, a new install or the one fallen
    # back to. The file is rewritten only if it was damaged.
    for s in ${BOOT_ORDER}; do
        if test -z "${p_slot}"; then
            if test "${s}" = A || test "${s}" = B; then setenv p_slot ${s}; fi
        fi
    done
    test -n "${p_slot}" || setenv p_slot A
    echo "parley: no slot has a try left: slot ${p_slot}, the first of the order"
    test "${p_envok}" = 1 && setenv p_write 0
fi

# The try is saved before the slot starts: a slot that never comes up has
# used it. -s: the file's size, not this build's CONFIG_ENV_SIZE.
if test "${p_write}" = 1; then
    env export -c -s ${p_envsize} ${p_scratch} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT EXTRA_CMDLINE
    fatwrite ${devtype} ${devnum}:${distro_bootpart} ${p_scratch} ${p_envfile} ${p_envsize}
fi

# --- the slot's own kernel and initrd ------------------------------------------
if test "${p_slot}" = B; then setenv p_part 3; else setenv p_part 2; fi
# MBR: <disk id>-<partition>, as Linux names it (RAUC's system.conf too).
part uuid ${devtype} ${devnum}:${p_part} p_partuuid
echo "parley: booting slot ${p_slot} (${devtype} ${devnum}:${p_part}, PARTUUID ${p_partuuid})"
# Debian's /vmlinuz and /initrd.img links into /boot (U-Boot's ext4 follows
# them); trixie's arm64 kernel is an uncompressed Image, so booti needs no
# unpacking.
setenv p_kok 0
load ${devtype} ${devnum}:${p_part} ${p_kernel} /vmlinuz && setenv p_kok 1
test "${p_kok}" = 1 || load ${devtype} ${devnum}:${p_part} ${p_kernel} /boot/vmlinuz && setenv p_kok 1
setenv p_iok 0
load ${devtype} ${devnum}:${p_part} ${p_initrd} /initrd.img && setenv p_iok 1
test "${p_iok}" = 1 || load ${devtype} ${devnum}:${p_part} ${p_initrd} /boot/initrd.img && setenv p_iok 1
setenv p_isize ${filesize}
# The device tree: the Pi firmware's (config.txt's overlays applied) at
# fdt_addr; QEMU's virt puts its own there too; U-Boot's where neither did.
if test -n "${fdt_addr}"; then setenv p_fdt ${fdt_addr}; else setenv p_fdt ${fdtcontroladdr}; fi
setenv bootargs "root=PARTUUID=${p_partuuid} ro rootwait init=/usr/lib/parley-image/preinit rauc.slot=${p_slot} @ARGS@ ${EXTRA_CMDLINE}"
if test "${p_kok}" = 1 && test "${p_iok}" = 1; then
    booti ${p_kernel} ${p_initrd}:${p_isize} ${p_fdt}
fi
# Only reached if the slot could not be started. Its try is counted, so a
# reset tries again and, once the tries are used, the other slot.
echo "parley: slot ${p_slot} could not be started (kernel loaded ${p_kok}, initrd ${p_iok}); resetting in 5 s"
sleep 5
reset
