#!/usr/bin/env bash
# The Raspberry Pi image checked without booting it (called by image-test.sh):
#   pi-image-check.sh IMAGE BOARD WORKDIR
# One line per check; exit 1 if any failed. Reads the image file only: mtools
# for the FAT partition, debugfs for the ext4 one (no loop device, no mount).
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/image.sh
img=$1 board=$2 work=$3
mkdir -p "$work"
failures=0
result() { if [ "$3" -eq 0 ]; then echo "ok   $1: $2"; else echo "FAIL $1: $2"; failures=$((failures + 1)); fi; }

# --- partition table: the A/B layout (issue 52) ---
table=$(sfdisk -J "$img")
read -r label disk_id n parts < <(echo "$table" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]; p = t["partitions"]
print(t["label"], t.get("id", "?"), len(p), " ".join(":".join(str(x) for x in (q["start"], q["size"], q["type"], q.get("bootable", False))) for q in p))')
read -r p1 p2 p3 p4 <<<"$parts"
IFS=: read -r p1start p1size p1type p1boot <<<"$p1"
IFS=: read -r p2start p2size p2type _ <<<"$p2"
IFS=: read -r p3start p3size p3type _ <<<"${p3:-0:0:0:0}"
IFS=: read -r p4start p4size p4type _ <<<"${p4:-0:0:0:0}"
ok=1
[ "$label" = dos ] && [ "$n" = 4 ] && [ "$disk_id" = "$PI_DISK_ID" ] && [ "$p1type" = c ] && [ "$p1boot" = True ] &&
    [ "$p1start" = $((BOOT_START_MIB * 2048)) ] && [ "$p2start" = $((p1start + p1size)) ] &&
    [ "$p2type" = 83 ] && [ "$p3type" = 83 ] && [ "$p4type" = 83 ] && [ "$p2size" = "$p3size" ] &&
    [ "$p3start" = $((p2start + p2size)) ] && [ "$p4start" = $((p3start + p3size)) ] && ok=0
result "pi-partitions" "$label, disk id $disk_id, $n partitions: FAT32 LBA (type $p1type, bootable $p1boot) at sector $p1start, $((p1size / 2048)) MiB; slots A and B (type $p2type, $p3type) of $((p2size / 2048)) MiB; data (type $p4type) $((p4size / 2048)) MiB" $ok

boot_off=$((p1start * 512))
mt() { MTOOLS_SKIP_CHECK=1 "$@"; }
files=$(mt mdir -b -i "$img@@$boot_off" ::/ | sed 's|^::/||')
dd if="$img" of="$work/root.ext4" bs=1M skip=$((p2start / 2048)) count=$((p2size / 2048)) conv=sparse status=none
# slot_boot_file PREFIX: the newest /boot/PREFIX-<version> in slot A.
slot_boot_file() {
    debugfs -R "ls -p /boot" "$work/root.ext4" 2>/dev/null | awk -F/ '{print $6}' | grep "^$1-" | sort -V | tail -n 1
}

# --- boot files: the firmware for this board, U-Boot, its script and
# environment; the kernel and initrd in slot A's /boot ---
case "$board" in
    pi4) want="start4.elf fixup4.dat bcm2711-rpi-4-b.dtb bcm2711-rpi-400.dtb" ;;
    pi3) want="bootcode.bin start.elf fixup.dat bcm2837-rpi-3-b.dtb bcm2837-rpi-3-b-plus.dtb" ;;
esac
missing=
for f in config.txt u-boot.bin boot.scr "$UBOOT_ENV_FILE" $want; do grep -qxF "$f" <<<"$files" || missing="$missing $f"; done
fat_label=$(blkid -p -O "$boot_off" -s LABEL -o value "$img")
mt mcopy -o -i "$img@@$boot_off" ::/config.txt "$work/config.txt"
grep -qx 'kernel=u-boot.bin' "$work/config.txt" || missing="$missing config.txt:kernel=u-boot.bin"
grep -qx 'arm_64bit=1' "$work/config.txt" || missing="$missing config.txt:arm_64bit=1"
kernel=$(slot_boot_file vmlinuz) initrd=$(slot_boot_file initrd.img)
[ -n "$kernel" ] || missing="$missing slot-A:/boot/vmlinuz-*"
[ -n "$initrd" ] || missing="$missing slot-A:/boot/initrd.img-*"
[ -z "$missing" ] && [ "$fat_label" = "$BOOT_LABEL" ]
result "pi-boot-files" "label $fat_label; ${missing:+missing:$missing; }config.txt starts u-boot.bin; slot A has /boot/$kernel and /boot/$initrd; firmware and device trees for $board" $?

# --- U-Boot's script and environment: slot A first, slots by PARTUUID ---
mt mcopy -o -i "$img@@$boot_off" ::/boot.scr "$work/boot.scr"
mt mcopy -o -i "$img@@$boot_off" "::/$UBOOT_ENV_FILE" "$work/boot.env"
debugfs -R "dump /etc/rauc/system.conf $work/system.conf" "$work/root.ext4" >/dev/null 2>&1
debugfs -R "dump /etc/fw_env.config $work/fw_env.config" "$work/root.ext4" >/dev/null 2>&1
why=
mkimage -l "$work/boot.scr" 2>/dev/null | grep -q 'Linux Script' || why="$why boot.scr is not a U-Boot script image;"
grep -q 'root=PARTUUID=${p_partuuid}' "$work/boot.scr" || why="$why boot.scr does not name the root by PARTUUID;"
env=$(python3 scripts/lib/ubootenv.py "$work/boot.env" list 2>&1 | sort | paste -sd' ')
[ "$env" = "BOOT_A_LEFT=3 BOOT_B_LEFT=0 BOOT_ORDER=A B" ] || why="$why $UBOOT_ENV_FILE: '$env';"
id=${disk_id#0x}
grep -qx "device=/dev/disk/by-partuuid/$id-02" "$work/system.conf" && grep -qx "device=/dev/disk/by-partuuid/$id-03" "$work/system.conf" \
    && grep -qx 'bootloader=uboot' "$work/system.conf" || why="$why RAUC's system.conf does not name slots $id-02/$id-03 with bootloader=uboot;"
grep -q "^/boot/firmware/$UBOOT_ENV_FILE 0x0 $UBOOT_ENV_SIZE" "$work/fw_env.config" || why="$why fw_env.config: '$(cat "$work/fw_env.config" 2>/dev/null)';"
[ -z "$why" ]
result "pi-boot-script" "${why:+$why }boot.scr names the root by PARTUUID; $UBOOT_ENV_FILE: $env; RAUC's slots $id-02 and $id-03, fw_env.config $UBOOT_ENV_FILE $UBOOT_ENV_SIZE" $?

# --- the initramfs can read the SD card the root is on ---
# The root is mounted from the initramfs, so the board's SD card driver
# must be in it (initramfs-tools' MODULES=most puts them there today; a
# change to MODULES=dep on the build machine would drop them).
case "$board" in
    pi4) sd_modules="sdhci-iproc" ;;          # the BCM2711's emmc2 controller
    pi3) sd_modules="bcm2835 sdhci-iproc" ;;  # the BCM2837's sdhost, and its sdhci
esac
debugfs -R "dump /boot/$initrd $work/initrd.img" "$work/root.ext4" >/dev/null 2>&1
modules=$(python3 - "$work/initrd.img" <<'PY'
# An initramfs is newc cpio archives one after the other, the last one compressed.
import subprocess, sys
data = open(sys.argv[1], "rb").read()
def names(buf, pos):
    found = []
    while buf[pos:pos + 6] in (b"070701", b"070702"):
        namesize, filesize = int(buf[pos + 94:pos + 102], 16), int(buf[pos + 54:pos + 62], 16)
        name = buf[pos + 110:pos + 109 + namesize].decode(errors="replace")
        pos = (pos + 110 + namesize + 3) & ~3
        pos = (pos + filesize + 3) & ~3
        if name == "TRAILER!!!":
            while pos < len(buf) and buf[pos] == 0: pos += 1
            break
        found.append(name)
    return found, pos
listed, pos = [], 0
while data[pos:pos + 6] in (b"070701", b"070702"):
    more, pos = names(data, pos); listed += more
for tool in (["zstd", "-dc"], ["xz", "-dc"], ["gzip", "-dc"]):
    run = subprocess.run(tool, input=data[pos:], capture_output=True)
    if run.returncode == 0 and run.stdout:
        listed += names(run.stdout, 0)[0]; break
for name in listed:
    base = name.rsplit("/", 1)[-1]
    for suffix in (".ko.xz", ".ko.zst", ".ko"):
        if base.endswith(suffix): print(base[: -len(suffix)])
PY
)
missing=
for m in $sd_modules; do grep -qxF "$m" <<<"$modules" || missing="$missing $m"; done
ok=1; [ -n "$modules" ] && [ -z "$missing" ] && ok=0
result "pi-initramfs" "${missing:+missing:$missing; }$(echo "$modules" | grep -c .) modules in $initrd, SD card driver for $board: $sd_modules" $ok
rm -f "$work/initrd.img"

# --- config.txt carries the board file's boot.config-txt lines ---
missing=
while IFS= read -r line; do
    [ -n "$line" ] && ! grep -qxF "$line" "$work/config.txt" && missing="$missing '$line'"
done < <(board_yaml_list "$board" config-txt)
# (The status is taken before the detail's command substitution, which would set $?.)
ok=1; [ -z "$missing" ] && ok=0
result "pi-config-txt" "${missing:+missing:$missing; }lines of board/$board/board.yaml boot.config-txt: $(board_yaml_list "$board" config-txt | paste -sd' ')" $ok

# --- every library parleyd needs is in the image ---
mkdir -p "$work/rootfs/usr/bin" "$work/rootfs/usr/lib" "$work/rootfs/etc"
debugfs -R "dump /usr/bin/parleyd $work/rootfs/usr/bin/parleyd" "$work/root.ext4" >/dev/null 2>&1
for d in /usr/lib/aarch64-linux-gnu /usr/lib/parley; do
    debugfs -R "rdump $d $work/rootfs/usr/lib" "$work/root.ext4" >/dev/null 2>&1
done
# Debian's BLAS and LAPACK (pocketsphinx's sphinxbase needs them) are found
# through update-alternatives: libblas.so.3 -> /etc/alternatives/... -> blas/.
debugfs -R "rdump /etc/alternatives $work/rootfs/etc" "$work/root.ext4" >/dev/null 2>&1
libs=$(python3 - "$work/rootfs" <<'PY'
# Resolves DT_NEEDED recursively the way ld.so does for this binary:
# its RUNPATH ($ORIGIN expanded), then the multiarch directories.
import os, subprocess, sys
root = sys.argv[1]
def dynamic(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    needed, runpath = [], []
    for line in out.splitlines():
        if "(NEEDED)" in line: needed.append(line.split("[")[1].split("]")[0])
        if "(RUNPATH)" in line or "(RPATH)" in line: runpath += line.split("[")[1].split("]")[0].split(":")
    return needed, runpath
def inside(p):  # an absolute path in the image, symlinks followed inside it
    for _ in range(20):
        full = root + p
        if os.path.islink(full):
            t = os.readlink(full); p = t if t.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(p), t))
        else:
            return full if os.path.isfile(full) else None
    return None
seen, missing, todo = {}, [], [("/usr/bin/parleyd", "/usr/bin/parleyd")]
if not os.path.isfile(root + "/usr/bin/parleyd"): print("MISSING /usr/bin/parleyd"); sys.exit(1)
while todo:
    name, path = todo.pop()
    needed, runpath = dynamic(inside(path))
    dirs = [r.replace("$ORIGIN", os.path.dirname(path)) for r in runpath] + ["/usr/lib/aarch64-linux-gnu", "/usr/lib"]
    for lib in needed:
        if lib in seen: continue
        found = next((os.path.normpath(d + "/" + lib) for d in dirs if inside(os.path.normpath(d + "/" + lib))), None)
        seen[lib] = found
        if found: todo.append((lib, found))
        else: missing.append(f"{lib} (needed by {name})")
print(len(seen), "libraries resolved" if not missing else "MISSING " + ", ".join(missing))
sys.exit(1 if missing else 0)
PY
)
result "pi-libraries" "/usr/bin/parleyd: $libs inside the image" $?
rm -f "$work/root.ext4"
exit $(( failures > 0 ))
