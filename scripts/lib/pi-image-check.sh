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

# --- partition table ---
table=$(sfdisk -J "$img")
read -r label n p1start p1type p1boot p1size p2start p2type p2size < <(echo "$table" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]; p = t["partitions"] + [{}, {}]
print(t["label"], len(t["partitions"]), p[0].get("start"), p[0].get("type"), p[0].get("bootable", False),
      p[0].get("size"), p[1].get("start"), p[1].get("type"), p[1].get("size"))')
ok=1
[ "$label" = dos ] && [ "$n" = 2 ] && [ "$p1type" = c ] && [ "$p1boot" = True ] && [ "$p2type" = 83 ] &&
    [ "$p1start" = $((BOOT_START_MIB * 2048)) ] && [ "$p2start" = $((p1start + p1size)) ] && ok=0
result "pi-partitions" "$label, $n partitions: FAT32 LBA (type $p1type, bootable $p1boot) at sector $p1start, $((p1size / 2048)) MiB; Linux (type $p2type) at $p2start, $((p2size / 2048)) MiB" $ok

boot_off=$((p1start * 512)) root_off=$((p2start * 512))
mt() { MTOOLS_SKIP_CHECK=1 "$@"; }
files=$(mt mdir -b -i "$img@@$boot_off" ::/ | sed 's|^::/||')

# --- boot files: the firmware for this board, kernel, initrd, device tree ---
case "$board" in
    pi4) want="start4.elf fixup4.dat bcm2711-rpi-4-b.dtb bcm2711-rpi-400.dtb" ;;
    pi3) want="bootcode.bin start.elf fixup.dat bcm2837-rpi-3-b.dtb bcm2837-rpi-3-b-plus.dtb" ;;
esac
missing=
for f in config.txt cmdline.txt $want; do grep -qxF "$f" <<<"$files" || missing="$missing $f"; done
fat_label=$(blkid -p -O "$boot_off" -s LABEL -o value "$img")
mt mcopy -o -i "$img@@$boot_off" ::/config.txt "$work/config.txt"
mt mcopy -o -i "$img@@$boot_off" ::/cmdline.txt "$work/cmdline.txt"
kernel=$(sed -n 's/^kernel=//p' "$work/config.txt" | tail -n1)
initrd=$(sed -n 's/^initramfs \([^ ]*\).*/\1/p' "$work/config.txt" | tail -n1)
for f in "$kernel" "$initrd"; do [ -n "$f" ] && grep -qxF "$f" <<<"$files" || missing="$missing config.txt:${f:-(no kernel/initramfs line)}"; done
grep -qx 'arm_64bit=1' "$work/config.txt" || missing="$missing arm_64bit=1"
[ -z "$missing" ] && [ "$fat_label" = "$BOOT_LABEL" ]
result "pi-boot-files" "label $fat_label; ${missing:+missing:$missing; }kernel $kernel, initramfs $initrd, firmware and device trees for $board" $?

# --- the initramfs can read the SD card the root is on ---
# The root is mounted from the initramfs, so the board's SD card driver
# must be in it (initramfs-tools' MODULES=most puts them there today; a
# change to MODULES=dep on the build machine would drop them).
case "$board" in
    pi4) sd_modules="sdhci-iproc" ;;          # the BCM2711's emmc2 controller
    pi3) sd_modules="bcm2835 sdhci-iproc" ;;  # the BCM2837's sdhost, and its sdhci
esac
mt mcopy -o -i "$img@@$boot_off" "::/$initrd" "$work/initrd.img"
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

# --- the kernel's root= names the root partition ---
root_arg=$(grep -o 'root=[^ ]*' "$work/cmdline.txt" | head -n1)
root_label=$(blkid -p -O "$root_off" -s LABEL -o value "$img")
root_type=$(blkid -p -O "$root_off" -s TYPE -o value "$img")
disk_id=$(echo "$table" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["id"][2:])')
case "$root_arg" in
    root=LABEL=*) [ "${root_arg#root=LABEL=}" = "$root_label" ] ;;
    root=PARTUUID=*) [ "${root_arg#root=PARTUUID=}" = "$disk_id-02" ] ;;
    *) false ;;
esac
result "pi-cmdline-root" "cmdline.txt $root_arg; partition 2 is $root_type labelled $root_label (disk id $disk_id)" $?

# --- every library parleyd needs is in the image ---
dd if="$img" of="$work/root.ext4" bs=1M skip=$((p2start / 2048)) count=$((p2size / 2048)) conv=sparse status=none
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
