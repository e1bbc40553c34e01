#!/usr/bin/env bash
# Boots the device image and talks to it from outside, as a person would.
#
#   scripts/image-test.sh qemu   amd64 image under qemu-system-x86_64 (KVM
#                                when /dev/kvm works, else TCG): checks 1-10
#   scripts/image-test.sh pi4    the Pi image without booting it (partition
#                                table, boot files, U-Boot's script and
#                                environment, config.txt, parleyd's
#                                libraries), then booted by its own boot.scr
#                                under QEMU's arm64 U-Boot on qemu-system-
#                                aarch64 (virt): checks 1-2 and the A/B
#                                checks 8-10
#   (pi3 works as pi4.)
#
# Builds the image first when it is missing or stale (image-build.sh is a
# no-op when its inputs have not changed). One line per check:
# "ok|FAIL <check>: <detail>"; exits 1 if any failed. image/README.md says
# what cannot be checked without a Pi.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/image.sh
source scripts/lib/vm.sh

target=${1:-}
image_target "$target"
[ "$(id -u)" -eq 0 ] || die "must run as root (the image build needs it)"
bash scripts/image-deps.sh
bash scripts/image-build.sh "$target"
IMG=out/image/parley-$target.img

WORK=$(mktemp -d /var/tmp/parley-image-test.XXXXXX)
VM_PID=
trap 'vm_kill; rm -rf "$WORK"' EXIT
failures=0
# result NAME DETAIL STATUS: one line per check.
result() {
    if [ "$3" -eq 0 ]; then echo "ok   $1: $2"; else echo "FAIL $1: $2"; failures=$((failures + 1)); fi
}
# check NAME FUNCTION: runs FUNCTION (in a subshell), whose last output line
# is the detail; returns its status. A failure's whole output goes to
# standard error (CI keeps nothing else of the guest: the console's tail,
# for one, is in it).
check() {
    local out rc=0
    out=$("$2" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || echo "$out" >&2
    result "$1" "$(echo "$out" | tail -n 1)" "$rc"
    return "$rc"
}

# The guest's view of the A/B slots: the slot it booted (from the kernel
# command line its bootloader wrote), the bootloader's environment sorted on
# one line (GRUB's on amd64, U-Boot's through fw_printenv on the Pi), and a
# wait (up to 300 s) for parley-mark-good to have marked the booted slot.
vm_slot() { vm_ssh_again "sed -n 's/.*rauc\\.slot=\\([AB]\\).*/\\1/p' /proc/cmdline"; }
if [ "$ARCH" = amd64 ]; then
    BOOTLOADER=GRUB
    vm_boot_env() { vm_ssh grub-editenv /boot/firmware/grub/grubenv list | sort | paste -sd' '; }
else
    BOOTLOADER=U-Boot
    vm_boot_env() { vm_ssh fw_printenv | sort | paste -sd' '; }
fi
# What the environment ENV says of SLOT, in either bootloader's terms:
#   env_good SLOT ENV   marked good: GRUB <slot>_OK=1 and <slot>_TRY=0;
#                       U-Boot BOOT_<slot>_LEFT=3 (mark-good's boot-attempts)
#   env_bad SLOT ENV    given up: GRUB <slot>_OK=0; U-Boot BOOT_<slot>_LEFT=0
#   env_first SLOT ENV  first in the order: GRUB ORDER, U-Boot BOOT_ORDER
env_good() {
    if [ "$BOOTLOADER" = GRUB ]; then grep -qw "$1_OK=1" <<<"$2" && grep -qw "$1_TRY=0" <<<"$2"
    else grep -qw "BOOT_$1_LEFT=3" <<<"$2"; fi
}
env_bad() {
    if [ "$BOOTLOADER" = GRUB ]; then grep -qw "$1_OK=0" <<<"$2"; else grep -qw "BOOT_$1_LEFT=0" <<<"$2"; fi
}
env_first() { grep -q "\(^\| \)\(BOOT_\)\?ORDER=$1" <<<"$2"; }
vm_wait_marked_good() {
    vm_ssh_again "for i in \$(seq 300); do systemctl is-active -q parley-mark-good && exit 0; sleep 1; done; exit 1"
}

MIC_PCM="plughw:CARD=Loopback,DEV=0,SUBDEV=0"      # the test's end of parleyd's microphone
SPEAKER_PCM="plughw:CARD=Loopback,DEV=1,SUBDEV=1"  # the test's end of parleyd's speaker
ORDER=Tests/Fixtures/coffee-maker/clean/0075d273-51bb-47cb-b323-4437bd0de029.wav  # coffee, twelve ounce, light roast (a test fixture: the image step needs no ../shared)
READY_LIMIT=$([ "$ARCH" = arm64 ] && echo 1500 || echo 900)

# --- 1. boot to ready ------------------------------------------------------
check_ready() {
    local t
    t=$(vm_wait_ready "$READY_LIMIT") || { echo "$t"; return 1; }
    echo "parleyd ready ${t% *} s after the kernel started (${t#* } s of wall time after QEMU started; $ACCEL, $ARCH)"
}

# What grows on first boot: the last partition, the data partition (4).
check_grown() {
    local part_bytes fs_bytes index=3 mount=/data what=data
    part_bytes=$(sfdisk -J "$IMG" | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"][int(sys.argv[1])]; print(p["size"]*512)' "$index")
    fs_bytes=$(vm_ssh findmnt -bno SIZE "$mount")
    (( fs_bytes > part_bytes + 512 * 1024 * 1024 )) || { echo "$what file system ($mount) $fs_bytes bytes, image's $what partition $part_bytes: not grown"; return 1; }
    echo "$what grew from $((part_bytes >> 20)) MiB to $((fs_bytes >> 20)) MiB (disk 1 GiB larger than the image)"
}

# The A/B image (issue 52): its bootloader started slot A and counted the try,
# Parley's state is the data partition's, and the Home Assistant app is there.
check_slots() {
    local booted env state
    booted=$(vm_slot)
    [ "$booted" = A ] || { echo "booted slot '$booted' (kernel command line: $(vm_ssh cat /proc/cmdline)), not A"; return 1; }
    [ "$(vm_ssh findmnt -no SOURCE /)" = /dev/vda2 ] || { echo "root is $(vm_ssh findmnt -no SOURCE /), not /dev/vda2 (slot A)"; return 1; }
    vm_wait_marked_good \
        || { echo "parley-mark-good.service not active: $(vm_ssh journalctl -u parley-mark-good -b --no-pager | tail -n 3 | tr '\n' ' ')"; return 1; }
    env=$(vm_boot_env)
    env_good A "$env" \
        || { echo "$BOOTLOADER's environment after booting A: '$env' (expected slot A marked good once parleyd was ready)"; return 1; }
    state=$(vm_ssh findmnt -no SOURCE,TARGET /var/lib/parley | tr -s ' ')
    case "$state" in
        "/dev/vda4[/parley] /var/lib/parley") ;;
        *) echo "/var/lib/parley is '$state', not the data partition's /parley (/dev/vda4)"; return 1 ;;
    esac
    vm_ssh test -f /usr/share/parley/apps/home-assistant/manifest.yaml \
        || { echo "/usr/share/parley/apps/home-assistant/manifest.yaml missing: the Home Assistant app is not in the image"; return 1; }
    vm_read_only_root A || return 1
    echo "slot A (/dev/vda2) chosen by $BOOTLOADER and marked good ($env); /var/lib/parley on /dev/vda4; the Home Assistant app in /usr/share/parley/apps; root read-only, /etc /var /root /home layered from /data/overlay/A"
}

# vm_read_only_root SLOT: the slot is mounted read-only and cannot be
# written; /etc, /var, /root and /home are overlays whose writable half is
# the data partition's /data/overlay/SLOT (preinit).
vm_read_only_root() {
    local options d layer
    options=$(vm_ssh_again findmnt -no OPTIONS /)
    case "$options" in ro,*) ;; *) echo "root mounted '$options', not read-only"; return 1 ;; esac
    ! vm_ssh_again "touch /usr/lib/parley-image/written 2>/dev/null" || { echo "the root slot could be written"; return 1; }
    for d in etc var root home; do
        layer=$(vm_ssh_again findmnt -no FSTYPE,OPTIONS "/$d")
        case "$layer" in
            overlay*upperdir=/data/overlay/$1/$d/upper*) ;;
            *) echo "/$d is '$layer', not an overlay written to /data/overlay/$1/$d"; return 1 ;;
        esac
    done
}

check_bootconf() {
    [ "$(vm_ssh hostname)" = parley-test ] || { echo "hostname is $(vm_ssh hostname), not parley-test"; return 1; }
    vm_ssh "grep -q 'root_authorized_key= (applied)' /boot/firmware/sysconf.txt && ! grep -q ssh-ed25519 /boot/firmware/sysconf.txt" \
        || { echo "sysconf.txt still holds its values"; return 1; }
    vm_ssh "journalctl -b --list-boots >/dev/null && test -d /var/log/journal/\$(cat /etc/machine-id)" \
        || { echo "journal not persistent"; return 1; }
    echo "hostname and SSH key from sysconf.txt applied and wiped; journal in /var/log/journal"
}

# Voiced 10 ms frames (RMS > 300) of raw 16 kHz S16 mono audio, as EndToEndTests.
voiced() {
    python3 - "$1" <<'PY'
import array, sys
a = array.array("h"); data = open(sys.argv[1], "rb").read(); a.frombytes(data[: len(data) // 2 * 2])
print(sum(1 for i in range(0, len(a) - 160, 160) if (sum(x * x for x in a[i:i + 160]) / 160) ** 0.5 > 300))
PY
}

wait_voiced() {  # FILE MIN TIMEOUT
    local t0 v; t0=$(date +%s)
    while :; do
        v=$(voiced "$1")
        (( v > $2 )) && { echo "$v"; return 0; }
        (( $(date +%s) - t0 > $3 )) && { echo "$v"; return 1; }
        sleep 1
    done
}

# --- 2. "hey" + a recorded order into the microphone, the button, the answer
check_order() {
    [ -f "$ORDER" ] || { echo "recording $ORDER missing"; return 1; }
    espeak-ng -w "$WORK/hey-raw.wav" hey
    sox "$WORK/hey-raw.wav" -r 16000 -c 1 -b 16 "$WORK/hey.wav"
    sox -n -r 16000 -c 1 -b 16 "$WORK/silence.wav" trim 0 1.5
    sox "$WORK/silence.wav" "$WORK/hey.wav" "$ORDER" "$WORK/silence.wav" "$WORK/silence.wav" "$WORK/mic.wav"
    vm_wait_status 's["audio"]["state"] == "running"' 120 || { echo "audio not running: $(vm_status 's["audio"]')"; return 1; }
    # The speaker: everything parleyd plays, recorded at the loopback's other end.
    vm_ssh "exec arecord -q -D $SPEAKER_PCM -f S16_LE -r 16000 -c 1 -t raw" >"$WORK/speaker.raw" 2>"$WORK/arecord.err" &
    local rec=$!
    sleep 2
    vm_ssh "aplay -q -D $MIC_PCM" <"$WORK/mic.wav" || { kill $rec; echo "aplay into the microphone failed"; return 1; }
    if ! vm_wait_status 's["state"] == "awaiting-confirmation"' 180; then
        kill $rec; echo "no confirmation asked: state $(vm_status 's["state"]'), recognitions $(vm_status 's["recognitions"]'), last $(vm_status 's.get("lastIntents")')"; return 1
    fi
    local before after
    before=$(wait_voiced "$WORK/speaker.raw" 100 120) || { kill $rec; echo "read-back not heard on the speaker ($before voiced frames)"; return 1; }
    # An order is never asked back when heard with low confidence
    # (speech.ask_unsure): the read-back is its check, and one press orders.
    vm_ssh parley press >/dev/null
    vm_wait_status 's["donations"] >= 1 and s["lastIntents"][:1] == ["CoffeeMaker/orderDrink"]' 120 \
        || { kill $rec; echo "order not performed: $(vm_status '(s["state"], s["donations"], s.get("lastIntents"))')"; return 1; }
    after=$(wait_voiced "$WORK/speaker.raw" $((before + 50)) 120) || { kill $rec; echo "no answer heard after the press ($before then $after voiced frames)"; return 1; }
    sleep 3; kill $rec 2>/dev/null || true
    local params
    params=$(vm_ssh parley donations --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["donations"][0]["parameters"]
print(d.get("coffeeDrink"), "|", d.get("size"), "|", d.get("roast"))')
    [ "$params" = "coffee | twelve ounce | light roast" ] || { echo "stored order is '$params'"; return 1; }
    # Logged once the answer has been spoken, which under TCG may be seconds
    # after the speaker first carried it.
    vm_ssh_again "for i in \$(seq 60); do journalctl -u parleyd -b | grep -q 'spoke text=Ordered.' && exit 0; sleep 1; done; exit 1" \
        || { echo "'Ordered.' not in parleyd's journal within 60 s"; return 1; }
    echo "order '$params' stored; read-back ($before voiced frames) before the press, answer after ($after)"
}

# --- 3. power cut in a stream of acknowledged writes ----------------------
check_power_cut() {
    python3 -c '
w = "zero one two three four five six seven eight nine".split()
for i in range(400): print("power cut", w[i // 100], w[i // 10 % 10], w[i % 10])' >"$WORK/phrases.txt"
    # Each line is added over the control socket; "ack" only once parley returned.
    vm_ssh 'while read -r p; do parley phrases add "$p" --app "Coffee Maker" --intent OrderDrink >/dev/null 2>>/tmp/add.err && echo "ack $p" || { echo "refused $p: $(tail -n1 /tmp/add.err)"; exit 1; }; done' \
        <"$WORK/phrases.txt" >"$WORK/acks.txt" 2>&1 &
    local writer=$! t0; t0=$(date +%s)
    until (( $(grep -c '^ack' "$WORK/acks.txt") >= 25 )); do
        grep -q '^refused' "$WORK/acks.txt" && { echo "$(grep -m1 '^refused' "$WORK/acks.txt")"; return 1; }
        (( $(date +%s) - t0 > 300 )) && { echo "only $(grep -c '^ack' "$WORK/acks.txt") writes in 300 s"; return 1; }
        sleep 0.3
    done
    vm_kill       # the power cut: QEMU killed, the guest's page cache lost
    wait $writer 2>/dev/null || true
    local acked; acked=$(grep -c '^ack' "$WORK/acks.txt")
    (( acked < 400 )) || { echo "the writes finished before the cut"; return 1; }
    vm_boot 2
    local t; t=$(vm_wait_ready "$READY_LIMIT") || { echo "second boot: $t"; return 1; }
    t=${t% *}
    vm_ssh parley phrases --json | python3 -c '
import json, sys
print("\n".join(p["phrase"] for p in json.load(sys.stdin)["phrases"]))' >"$WORK/stored.txt"
    local lost; lost=$(sed -n 's/^ack //p' "$WORK/acks.txt" | grep -vxFf "$WORK/stored.txt" | wc -l)
    local integrity; integrity=$(vm_ssh sqlite3 /var/lib/parley/state.db "'PRAGMA integrity_check'")
    (( lost == 0 )) || { echo "$lost of $acked acknowledged phrases lost"; return 1; }
    [ "$integrity" = ok ] || { echo "integrity_check: $integrity"; return 1; }
    echo "killed after $acked acknowledged writes ($(wc -l <"$WORK/stored.txt") stored); all there, integrity_check ok, ready again in $t s"
}

# --- 6. the volume (issue 28): "louder" over the control socket, read back --
# vm_volume: the level `parley volume` reads back ("7", or "7 muted").
vm_volume() {
    vm_ssh parley volume --json | python3 -c '
import json, sys
v = json.load(sys.stdin)["volume"]
print(str(v["level"]) + (" muted" if v["muted"] else ""))'
}
check_volume() {
    local before said level
    before=$(vm_volume) || { echo "parley volume did not answer"; return 1; }
    vm_ssh parley volume 5 >/dev/null || { echo "parley volume 5 refused"; return 1; }
    said=$(vm_ssh parley say louder --json | python3 -c '
import json, sys
print(" ".join(json.load(sys.stdin).get("spoken") or []))')
    [ "$said" = six ] || { echo "'louder' answered '$said', not 'six'"; return 1; }
    level=$(vm_volume)
    [ "$level" = 6 ] || { echo "level after 'louder' is '$level', not 6"; return 1; }
    vm_ssh parley volume up >/dev/null
    level=$(vm_volume)
    [ "$level" = 7 ] || { echo "level after 'parley volume up' is '$level', not 7"; return 1; }
    # Kept in the state store: the same level after parleyd restarts.
    vm_ssh "systemctl restart parleyd && systemctl is-active parleyd" >/dev/null || { echo "parleyd did not restart"; return 1; }
    vm_wait_status 's["state"] == "idle"' 120 || { echo "parleyd not idle after the restart"; return 1; }
    level=$(vm_volume)
    [ "$level" = 7 ] || { echo "level after a restart is '$level', not 7"; return 1; }
    vm_ssh parley volume "${before%% *}" >/dev/null
    echo "'louder' at 5 answered 'six' and read back 6; 'parley volume up' 7, kept across a restart (was $before)"
}

# --- 4. control socket permissions, network listeners ---------------------
# What image/README.md lists as listening on the network: SSH (only once a
# key or ssh file was given on the boot partition) and networkd's DHCP
# client, bound to the interface's address; the speaker's page (tcp/80, on
# the LAN address only) and Avahi's mDNS (udp/5353); as protocol/port.
ALLOWED_LISTENERS="tcp/22
udp/68
tcp/80
udp/5353"
check_socket() {
    local out rc
    rc=$(vm_ssh_again 'setpriv --reuid=nobody --regid=nogroup --clear-groups parley status --socket /run/parley/parley.sock >/dev/null 2>&1; echo $?')
    [ "$rc" = 77 ] || { echo "a user outside group parley got exit $rc, not 77 (permission denied)"; return 1; }
    rc=$(vm_ssh_again 'setpriv --reuid=nobody --regid=nogroup --groups=parley parley status --socket /run/parley/parley.sock >/dev/null 2>&1; echo $?')
    [ "$rc" = 0 ] || { echo "a member of group parley got exit $rc"; return 1; }
    echo "refused outside group parley (exit 77), answered inside it"
}
# --- 4. an app's handler in the sandbox: user parley-app, a cgroup of its own
# with the unit's caps, its data written as that user, the daemon's state
# closed to it, the whole cgroup gone when the app is removed
check_app_sandbox() {
    local pid user unit caps said owner
    vm_ssh_again parley apps install shopping-list >/dev/null || { echo "parley apps install shopping-list failed"; return 1; }
    local i
    for i in $(seq 90); do
        pid=$(vm_ssh parley apps status 2>/dev/null | sed -n 's/.*running (pid \([0-9]*\)).*/\1/p')
        [ -n "$pid" ] && break
        sleep 1
    done
    [ -n "$pid" ] || { echo "the handler never ran: $(vm_ssh parley apps status 2>&1 | head -3)"; return 1; }
    user=$(vm_ssh_again ps -o user= -p "$pid")
    [ "$user" = parley-app ] || { echo "the handler (pid $pid) runs as '$user', not parley-app"; return 1; }
    unit=$(vm_ssh_again cat "/proc/$pid/cgroup" | sed -n 's|^0::.*/\(parley-app@[^/]*\.service\)$|\1|p')
    [ -n "$unit" ] || { echo "the handler is not in a parley-app@ unit's cgroup: $(vm_ssh cat /proc/$pid/cgroup)"; return 1; }
    caps=$(vm_ssh_again "for p in MemoryMax TasksMax CPUQuotaPerSecUSec; do systemctl show -p \$p --value $unit; done" | tr '\n' ' ')
    # No CPU quota on the QEMU image (parley-app@.service.d/tcg.conf: TCG and
    # the kernel's live patching); the .deb's unit has CPUQuota=50%.
    [ "$caps" = "268435456 32 infinity " ] || { echo "$unit's caps are '$caps', not MemoryMax 256M, TasksMax 32 (no CPU quota under TCG)"; return 1; }
    said=$(vm_ssh_again parley say "add eggs to the shopping list" --json | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin).get("spoken") or []))')
    case "$said" in Added\ eggs*) ;; *) echo "'add eggs to the shopping list' answered '$said'"; return 1 ;; esac
    owner=$(vm_ssh_again stat -c %U /var/lib/parley/app-data/ShoppingList/list.txt)
    [ "$owner" = parley-app ] || { echo "the list was written by '$owner', not parley-app"; return 1; }
    vm_ssh_again "setpriv --reuid=parley-app --regid=parley-app --init-groups cat /var/lib/parley/state.db >/dev/null 2>&1" \
        && { echo "parley-app can read the daemon's database"; return 1; }
    vm_ssh_again "rm -rf /var/lib/parley/apps/shopping-list"
    for i in $(seq 60); do
        vm_ssh_again systemctl is-active -q "$unit" || break
        sleep 1
    done
    ! vm_ssh_again systemctl is-active -q "$unit" || { echo "$unit still active 60 s after the app was removed"; return 1; }
    echo "handler pid $pid as parley-app in $unit (caps $caps); 'add eggs' answered '$said', list.txt owned by $owner; state.db closed to it; unit gone with the app"
}
check_listeners() {
    local found unexpected
    # protocol/port and the owning program: Avahi also binds an ephemeral UDP
    # port per address family for its unicast answers (never a fixed
    # service), which is allowed for avahi-daemon alone.
    found=$(vm_ssh ss -Htulnp | awk '{n = split($5, a, ":"); p = ""
        if (match($0, /users:\(\("[^"]+"/)) p = substr($0, RSTART + 9, RLENGTH - 10)
        print $1 "/" a[n] " " p}' | sort -u)
    unexpected=$(echo "$found" | awk '$1 ~ /^udp\// && $2 == "avahi-daemon" { next } { print $1 }' \
        | grep -vxF "$ALLOWED_LISTENERS" | grep -v '^$' || true)
    [ -z "$unexpected" ] || { echo "unexpected listeners: $(echo "$unexpected" | paste -sd, )"; return 1; }
    echo "listening: $(echo "$found" | awk '{print $1}' | sort -u | paste -sd, )"
}

# --- 5. the speaker's page over the VM's network ---------------------------
# From the host through the forwarded port 80 (as a phone on the LAN would):
# ask for a code, read it from the journal's speech log, pair, open Status;
# then `parley web tokens` in the guest lists the browser.
check_web() {
    local log_command="ssh -q -i $WORK/key -p $VM_PORT -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes root@127.0.0.1 journalctl -u parleyd --no-pager"
    python3 scripts/lib/web-pair.py "http://127.0.0.1:$VM_WEB_PORT/" "$log_command" || return 1
    grep -q paired <<<"$(vm_ssh parley web tokens)" || { echo "parley web tokens lists no paired browser"; return 1; }
    # The setting the page saved is in the state directory (the data
    # partition), where the daemon may write: /etc/parley stays as shipped.
    vm_ssh "grep -q 'rate: 165' /var/lib/parley/settings.yaml" \
        || { echo "the page's setting is not in /var/lib/parley/settings.yaml"; return 1; }
    vm_ssh "grep -q 'rate: 165' /etc/parley/parley.yaml" && { echo "the page wrote /etc/parley/parley.yaml"; return 1; }
    echo "paired; voice.rate saved to /var/lib/parley/settings.yaml"
}

# --- 7. Home Assistant finds the satellite (docs/home-assistant.md) --------
# As an owner turns it on: avahi-daemon enabled, `home_assistant.satellite:
# true`, parleyd restarted. QEMU's user-mode network carries no multicast to
# the host, so the mDNS announcement is browsed inside the guest
# (avahi-browse, as any machine on the LAN sees it); the Wyoming port is
# reached from the host through its forwarded port and answers `describe`
# with `info` naming a satellite. The settings are put back afterwards.
check_wyoming() {
    local announced reply
    vm_ssh_again "systemctl enable --now avahi-daemon >/dev/null 2>&1 &&
        cp /etc/parley/parley.yaml /etc/parley/parley.yaml.before-wyoming &&
        sed -i -E '/^home_assistant:/,/^[a-z]/ { s/^(  satellite:) *false/\\1 true/; s/^(  name:) *Parley( |\$)/\\1 ParleyImageTest\\2/ }' /etc/parley/parley.yaml &&
        grep -Eq '^  satellite: true' /etc/parley/parley.yaml && grep -Eq '^  name: ParleyImageTest' /etc/parley/parley.yaml &&
        systemctl restart parleyd && systemctl is-active parleyd" >/dev/null \
        || { echo "could not turn the satellite on and restart parleyd: $(vm_ssh_again 'journalctl -u parleyd -n 3 --no-pager' | tail -n 3 | tr '\n' ' ')"; return 1; }
    announced=$(vm_ssh_again "for i in \$(seq 60); do avahi-browse -rtp _wyoming._tcp 2>/dev/null | grep '^=' | grep -q ';10700;' && break; sleep 2; done
        avahi-browse -rtp _wyoming._tcp 2>/dev/null | grep '^=' | head -n 1")
    grep -q ';ParleyImageTest;_wyoming._tcp;local;.*;10700;' <<<"$announced" \
        || { echo "no _wyoming._tcp announcement of 'ParleyImageTest' on port 10700 (avahi-browse: ${announced:-nothing})"; return 1; }
    reply=$(python3 - "$VM_WYOMING_PORT" <<'PY'
import json, socket, sys, time
# Wyoming 1.9 framing: a JSON header line, then data_length bytes of JSON data.
for attempt in range(30):
    try:
        link = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
        break
    except OSError:
        time.sleep(2)
else:
    sys.exit("cannot connect to the forwarded Wyoming port")
link.sendall(b'{"type": "describe", "version": "1.9.0"}\n')
stream = link.makefile("rb")
header = json.loads(stream.readline())
data = header.get("data") or {}
if header.get("data_length"):
    data.update(json.loads(stream.read(header["data_length"])))
print(header.get("type"), json.dumps(data.get("satellite", {}).get("name")))
PY
    ) || { echo "the Wyoming client failed: $reply"; return 1; }
    # The host's describe paired the satellite with QEMU's NAT address
    # (home_assistant.allow empty: the first to speak is kept); forget it too.
    vm_ssh_again "mv /etc/parley/parley.yaml.before-wyoming /etc/parley/parley.yaml && rm -f /var/lib/parley/home-assistant/peer &&
        systemctl disable --now avahi-daemon >/dev/null 2>&1;
        systemctl restart parleyd" >/dev/null || true
    [ "$reply" = 'info "ParleyImageTest"' ] || { echo "describe answered: $reply"; return 1; }
    echo "announced ($(echo "$announced" | cut -d';' -f4,8,9 | tr ';' ' ')); describe from the host: $reply"
}

# --- 8. update (issue 52): the image's own bundle into the other slot -----
# The bundle image-build.sh made (slot A's file system, signed with the
# development key) is copied in over SSH and installed with `parley update`
# (parleyd, user parley, runs `rauc install` over D-Bus and answers when RAUC
# is done) into slot B; parleyd then says it restarts and reboots the guest
# itself (`systemctl reboot` through polkit; QEMU ends: -no-reboot; the test
# starts it again, as power would come back), the bootloader starts B, parley-mark-good
# marks it good once parleyd is ready, parleyd says it is back, `parley
# status` shows both slots, and the order of check 2 and the browser paired
# in check 5 (amd64) are still there (the data partition). On the emulated
# Pi the bundle is the test's own (pi_emulated_slot). Prints the time from
# `parley update` to parleyd ready on B (TCG).
BUNDLE=out/image/parley-$target.raucb
check_update() {
    [ -f "$BUNDLE" ] || { echo "$BUNDLE missing (image-build.sh makes it)"; return 1; }
    local t_copy t0 out env tready slot version slots
    t_copy=$(date +%s)
    vm_scp "$BUNDLE" /data/update.raucb || { echo "could not copy $BUNDLE into the guest"; return 1; }
    vm_ssh chmod 0644 /data/update.raucb || { echo "could not make the bundle readable for parleyd"; return 1; }
    t_copy=$(( $(date +%s) - t_copy ))
    slots=$(vm_ssh_again parley status | sed -n 's/^slots: *//p')
    # Slot A's version is RAUC's record the image build wrote (/data/rauc/central.raucs).
    grep -q '^A [^ (]* (booted, good), B' <<<"$slots" || { echo "before the update parley status shows slots '$slots' (expected A with its version, booted and good, then B)"; return 1; }
    t0=$(date +%s)
    # The guest may go down right after the answer: a lost connection (255) after it is not a failure.
    local rc=0
    out=$(vm_ssh parley update /data/update.raucb 2>&1) || rc=$?
    grep -q 'into slot B; restarting' <<<"$out" \
        || { echo "parley update (exit $rc) answered: $out (expected: Installed … into slot B; restarting.)"; return 1; }
    version=$(echo "$out" | sed -n 's/.*(version \([^)]*\)).*/\1/p')
    [ -n "$version" ] || { echo "parley update named no version: $out"; return 1; }
    local t_install=$(( $(date +%s) - t0 ))
    # parleyd restarts the guest by itself once it has said so.
    vm_wait_exit 300 || { vm_kill; echo "the guest did not reboot within 300 s of parley update's answer"; return 1; }
    vm_boot update
    tready=$(vm_wait_ready "$READY_LIMIT") || { echo "boot into slot B: $tready"; return 1; }
    slot=$(vm_slot)
    [ "$slot" = B ] || { echo "booted slot '$slot' after the install, not B"; return 1; }
    local t_ready=$(( $(date +%s) - t0 ))
    vm_wait_marked_good \
        || { echo "slot B not marked good: $(vm_ssh journalctl -u parley-mark-good -b --no-pager | tail -n 3 | tr '\n' ' ')"; return 1; }
    env=$(vm_boot_env)
    env_good B "$env" \
        || { echo "slot B booted but $BOOTLOADER's environment is '$env' (expected slot B marked good)"; return 1; }
    # parleyd says it is back once the slot is good (it asks RAUC every 5 s).
    vm_ssh_again "for i in \$(seq 60); do journalctl -u parleyd -b --no-pager | grep -q 'update: back' && exit 0; sleep 1; done; exit 1" \
        || { echo "parleyd did not say it is back: $(vm_ssh journalctl -u parleyd -b --no-pager | grep 'update:' | tail -n 3 | tr '\n' ' ')"; return 1; }
    slots=$(vm_ssh_again parley status | sed -n 's/^slots: *//p')
    [ "$slots" = "A $version (good), B $version (booted, good)" ] \
        || { echo "parley status shows slots '$slots' (expected A $version (good), B $version (booted, good))"; return 1; }
    vm_read_only_root B || return 1
    local donations
    donations=$(vm_ssh parley donations --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["donations"]))')
    (( donations >= 1 )) || { echo "the order stored before the update is gone ($donations donations)"; return 1; }
    # The page's pairing and saved setting exist where check 5 ran (amd64).
    local kept="$donations donation(s)"
    if [ "$ARCH" = amd64 ]; then
        grep -q paired <<<"$(vm_ssh parley web tokens)" || { echo "the browser paired before the update is gone (parley web tokens)"; return 1; }
        vm_ssh "grep -q 'rate: 165' /var/lib/parley/settings.yaml" || { echo "the page's saved setting is gone after the update"; return 1; }
        kept="$kept and the paired browser"
    fi
    echo "bundle $(du -h "$BUNDLE" | cut -f1) copied in ${t_copy} s; parley update ${t_install} s; install to parleyd ready on slot B ${t_ready} s ($ACCEL); marked good, said it is back; slots: $slots; $kept kept"
}

# --- 8. update.url: the bundle on a release server (a range-serving HTTP
# server on this host, 10.0.2.2 to the guest): RAUC streams its manifest and
# signature, and parleyd, told the address, checks it and finds it no newer
# than the running slot (the same build): nothing installed, no restart.
check_update_url() {
    local port version info outcome
    python3 scripts/lib/range-server.py "$(dirname "$BUNDLE")" "$WORK/range-port" 2>"$WORK/range-server.log" &
    local server=$!
    for _ in $(seq 50); do [ -s "$WORK/range-port" ] && break; sleep 0.1; done
    port=$(cat "$WORK/range-port")
    local url="http://10.0.2.2:$port/$(basename "$BUNDLE")"
    version=$(vm_ssh_again parley status | sed -n 's/^slots: .*B \([^ ]*\) (booted.*/\1/p')
    # RAUC's streaming messages go to standard error; the JSON to standard output.
    info=$(vm_ssh_again "rauc info --output-format=json '$url' 2>/dev/null" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])' 2>&1)
    [ -n "$version" ] && [ "$info" = "$version" ] \
        || { kill $server; echo "rauc info $url gave '$info', not slot B's version '$version'"; return 1; }
    vm_ssh_again "sed -i 's|^  url: null .*|  url: $url|' /etc/parley/parley.yaml && grep -q '^  url: http' /etc/parley/parley.yaml && systemctl restart parleyd" \
        || { kill $server; echo "could not set update.url in /etc/parley/parley.yaml"; return 1; }
    outcome=$(vm_ssh_again "for i in \$(seq 180); do journalctl -u parleyd -b --no-pager -o cat | grep 'update: address checked' | tail -n 1 | grep . && exit 0; sleep 1; done; exit 1")
    vm_ssh_again "sed -i 's|^  url: http.*|  url: null|' /etc/parley/parley.yaml && systemctl restart parleyd"
    kill $server
    case "$outcome" in
        *"is not newer than $version"*) ;;
        *) echo "parleyd's check of $url: '${outcome:-nothing logged in 180 s}'"; return 1 ;;
    esac
    vm_wait_status 's["state"] == "idle"' 120 || { echo "parleyd not idle after update.url was set back"; return 1; }
    echo "rauc info streamed $url (version $info, $(grep -c '" 206 ' "$WORK/range-server.log") range requests); parleyd checked it: not newer, nothing installed"
}

# --- 8. refused bundles: truncated, signed by another key, corrupt --------
# Each `rauc install` must fail, say why, and leave slot B (running) primary.
# refused FILE: RAUC's own refusal (exit 1 and "failed" in its output), not a
# lost SSH connection (255); prints RAUC's last line.
refused() {
    local out rc=0
    out=$(vm_ssh rauc install "$1" 2>&1) || rc=$?
    if [ "$rc" = 0 ] || [ "$rc" = 255 ] || ! grep -q 'failed' <<<"$out"; then
        echo "rauc install $1: exit $rc, not refused: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; return 1
    fi
    echo "$out" | grep -v '^ *$' | tail -n 1
}
check_bundle_refused() {
    local env
    vm_ssh "head -c 1048576 /data/update.raucb >/data/truncated.raucb" || { echo "could not make a truncated copy in the guest"; return 1; }
    local why_truncated; why_truncated=$(refused /data/truncated.raucb) || { echo "truncated: $why_truncated"; return 1; }
    # Through parleyd: refused, the file named with RAUC's reason, nothing restarted.
    local through; through=$(vm_ssh "chmod 0644 /data/truncated.raucb && parley update /data/truncated.raucb" 2>&1) \
        && { echo "parley update of a truncated bundle succeeded: $through"; return 1; }
    grep -q '/data/truncated.raucb: not installed: ' <<<"$through" \
        || { echo "parley update of a truncated bundle answered: $through (expected /data/truncated.raucb: not installed: RAUC's reason)"; return 1; }
    # Another key: a small bundle of the same compatible signed by a key the
    # image does not trust.
    local other=$WORK/other-key dir=$WORK/other-bundle
    mkdir -p "$other" "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$other/key.pem" -out "$other/cert.pem" \
        -days 1 -subj "/CN=not the update key" 2>/dev/null
    # Random bytes: the signature is refused before the image is looked at,
    # and RAUC wants a squashfs larger than one 4 KiB block.
    head -c 262144 /dev/urandom >"$dir/rootfs.ext4"
    printf '[update]\ncompatible=%s\nversion=other\n\n[bundle]\nformat=verity\n\n[image.rootfs]\nfilename=rootfs.ext4\n' "$RAUC_COMPATIBLE" >"$dir/manifest.raucm"
    rauc bundle --cert="$other/cert.pem" --key="$other/key.pem" "$dir" "$WORK/other.raucb" >/dev/null 2>&1 \
        || { echo "could not make the other key's bundle"; return 1; }
    vm_scp "$WORK/other.raucb" /data/other.raucb || { echo "could not copy the other key's bundle in"; return 1; }
    local why_key; why_key=$(refused /data/other.raucb) || { echo "other key: $why_key"; return 1; }
    # Corrupt: one byte of the payload changed (dm-verity finds it as it is read).
    vm_ssh "printf '\\377\\377\\377\\377' | dd of=/data/update.raucb bs=1 seek=4194304 conv=notrunc status=none" \
        || { echo "could not corrupt the bundle in the guest"; return 1; }
    local why_corrupt; why_corrupt=$(refused /data/update.raucb) || { echo "corrupt: $why_corrupt"; return 1; }
    vm_ssh rm -f /data/update.raucb /data/truncated.raucb /data/other.raucb
    env=$(vm_boot_env)
    env_first B "$env" && env_good B "$env" \
        || { echo "after the refusals $BOOTLOADER's environment is '$env' (slot B should stay first and good)"; return 1; }
    echo "refused: truncated ($why_truncated); other key ($why_key); corrupt ($why_corrupt)"
}

# slot_a_extent DISK: slot A's partition (the second) of DISK, "START SIZE"
# in 512-byte sectors.
slot_a_extent() {
    sfdisk -J "$1" | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"][1]; print(p["start"], p["size"])'
}

# slot_a_image DISK OUT: slot A's file system of DISK, as a file.
slot_a_image() {
    local start size
    read -r start size < <(slot_a_extent "$1")
    dd if="$1" of="$2" bs=512 skip="$start" count="$size" conv=sparse status=none
}

# ext4_put EXT4 PATH SOURCE: SOURCE written to PATH in the ext4 image EXT4
# (debugfs: no mount), keeping the replaced file's owner and mode (a new
# file: root's, 0644).
ext4_put() {
    local mode uid gid
    read -r mode uid gid < <(debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*Mode: *\([0-7]*\).*/\1/p; s/^User: *\([0-9]*\) *Group: *\([0-9]*\).*/\1 \2/p' | paste -sd' ')
    debugfs -w -R "rm $2" "$1" >/dev/null 2>&1 || true
    debugfs -w -R "write $3 $2" "$1" >/dev/null 2>&1
    debugfs -w -R "sif $2 mode 0100${mode:-644}" "$1" >/dev/null 2>&1
    debugfs -w -R "sif $2 uid ${uid:-0}" "$1" >/dev/null 2>&1
    debugfs -w -R "sif $2 gid ${gid:-0}" "$1" >/dev/null 2>&1
}

# --- 9. fall-back (issue 52): a bundle whose parleyd fails its check -------
# The bundle's slot image is slot A's with /usr/bin/parleyd replaced by a
# program that exits 1 (debugfs on a copy; signed with the same development
# key, so RAUC installs it). After the install and a reboot the bootloader tries the
# new slot once; parleyd fails, parley-mark-good marks it bad and reboots,
# and the next boot is the old slot again, by itself: at most two boots.
# The test only starts QEMU again after each guest reboot (-no-reboot), as
# power coming back would.
check_fallback() {
    local bad=$WORK/broken.ext4 out env slot boots=0
    slot_a_image "$IMG" "$bad"
    printf '#!/bin/sh\necho "parleyd: broken on purpose (image-test 9-fallback)" >&2\nexit 1\n' >"$WORK/parleyd"
    ext4_put "$bad" /usr/bin/parleyd "$WORK/parleyd"
    rm -f "$WORK/parleyd"
    ( make_bundle "$bad" "$WORK/broken.raucb" broken-parleyd ) >/dev/null 2>&1 \
        || { echo "could not make the broken bundle"; return 1; }
    rm -f "$bad"
    vm_scp "$WORK/broken.raucb" /data/broken.raucb || { echo "could not copy the broken bundle in"; return 1; }
    rm -f "$WORK/broken.raucb"
    local before; before=$(vm_slot)
    out=$(vm_ssh "rauc install /data/broken.raucb && rm -f /data/broken.raucb" 2>&1) || { echo "$out"; echo "rauc install of the broken bundle failed"; return 1; }
    vm_ssh "systemctl reboot" >/dev/null 2>&1 || true
    vm_wait_exit 300 || { vm_kill; echo "no reboot after the install"; return 1; }
    # Each boot ends by itself (the failed check reboots) until the old slot is up.
    while :; do
        boots=$((boots + 1))
        (( boots <= 3 )) || { echo "still not back on slot $before after 3 boots"; return 1; }
        vm_boot "fallback-$boots"
        vm_wait_ssh "$READY_LIMIT" >/dev/null || { vm_wait_exit 5 && continue; echo "boot $boots: no SSH"; return 1; }
        slot=$(vm_slot || true)
        if [ "$slot" = "$before" ]; then break; fi
        # On the broken slot: its mark-good reboots the guest.
        vm_wait_exit "$READY_LIMIT" || { vm_kill; echo "boot $boots on the broken slot $slot did not reboot by itself: $(vm_console_tail | tail -n 3)"; return 1; }
    done
    vm_wait_ready "$READY_LIMIT" >/dev/null || { echo "back on slot $before but parleyd not ready"; return 1; }
    env=$(vm_boot_env)
    local broken=A; [ "$before" = A ] && broken=B
    env_bad "$broken" "$env" || { echo "the broken slot $broken is not marked bad: $env"; return 1; }
    echo "broken parleyd in slot $broken: back on slot $before after $boots boot(s), by itself; $broken marked bad ($env)"
}

# --- 10. power cuts during an update (issue 52) ------------------------------
# The image's own bundle is installed again and again, and each time the
# power is cut (QEMU killed) at a point into `rauc install` drawn from a
# seeded sequence (the same points each run: 2-65 s, the install takes
# 36-70 s here); the guest is then started again, as power would come back.
# Every boot must come up on a good slot with parleyd ready and the state of
# the data partition intact (donations, the phrases of check 3, SQLite's
# integrity_check). POWER_CUTS sets how many (CI: 1, for its time; BENCHMARKS.md has 10).
POWER_CUTS=${POWER_CUTS:-1}
vm_counts() {
    echo "$(vm_ssh parley donations --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["donations"]))') $(vm_ssh parley phrases --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["phrases"]))')"
}
check_update_power_cut() {
    [ -f "$BUNDLE" ] || { echo "$BUNDLE missing (image-build.sh makes it)"; return 1; }
    vm_scp "$BUNDLE" /data/update.raucb && vm_ssh chmod 0644 /data/update.raucb || { echo "could not copy $BUNDLE into the guest"; return 1; }
    local counts before after slot i cut t env integrity summary=() new=0
    counts=$(vm_counts) || { echo "could not read donations and phrases"; return 1; }
    RANDOM=52
    for i in $(seq "$POWER_CUTS"); do
        before=$(vm_slot)
        cut=$(( 2 + RANDOM % 64 ))
        vm_ssh systemd-run --quiet --unit="update-cut-$i" rauc install /data/update.raucb \
            || { echo "cut $i: could not start rauc install"; return 1; }
        sleep "$cut"
        vm_kill
        vm_boot "cut-$i"
        t=$(vm_wait_ready "$READY_LIMIT") || { echo "cut $i (${cut} s into the install, slot $before): no ready boot: $t"; return 1; }
        slot=$(vm_slot)
        vm_wait_marked_good \
            || { echo "cut $i: slot $slot booted but not marked good: $(vm_ssh journalctl -u parley-mark-good -b --no-pager | tail -n 3 | tr '\n' ' ')"; return 1; }
        env=$(vm_boot_env)
        env_good "$slot" "$env" || { echo "cut $i: booted $slot, but $BOOTLOADER's environment is '$env'"; return 1; }
        after=$(vm_counts) || { echo "cut $i: could not read donations and phrases"; return 1; }
        [ "$after" = "$counts" ] || { echo "cut $i: donations and phrases were '$counts', now '$after'"; return 1; }
        integrity=$(vm_ssh sqlite3 /var/lib/parley/state.db "'PRAGMA integrity_check'")
        [ "$integrity" = ok ] || { echo "cut $i: integrity_check: $integrity"; return 1; }
        [ "$slot" != "$before" ] && new=$((new + 1))
        summary+=("${cut}s:$before>$slot")
    done
    vm_ssh rm -f /data/update.raucb
    echo "$POWER_CUTS power cuts into rauc install (${summary[*]}): every boot ready on a good slot ($new on the new one, the install done before the cut), donations and phrases ($counts) intact, integrity_check ok"
}

# --- idle memory (a figure for BENCHMARKS.md, "Image and cross build") ----
# Once parleyd listens and the boot has settled: the whole guest from
# /proc/meminfo (used = MemTotal - MemAvailable, as free(1) counts it) and
# the sum of every process's PSS; parleyd's VmRSS and PSS (smaps_rollup).
# Fails only when the figures cannot be read.
IDLE_SETTLE=${IDLE_SETTLE:-30}
check_memory() {
    vm_wait_status 's["audio"]["state"] == "running" and s["state"] == "idle"' 180 \
        || { echo "parleyd not idle and listening: $(vm_status '(s["state"], s["audio"]["state"])')"; return 1; }
    sleep "$IDLE_SETTLE"
    vm_ssh 'pid=$(systemctl show -p MainPID --value parleyd)
        [ "${pid:-0}" -gt 0 ] || { echo "parleyd has no main process"; exit 1; }
        awk "/^MemTotal:/ {t = \$2} /^MemAvailable:/ {a = \$2} END {printf \"system %d MiB used of %d MiB (available %d MiB)\", (t - a) / 1024, t / 1024, a / 1024}" /proc/meminfo
        cat /proc/[0-9]*/smaps_rollup 2>/dev/null | awk "/^Pss:/ {s += \$2} END {printf \", PSS of all processes %d MiB\", s / 1024}"
        printf "; parleyd VmRSS %d MiB, PSS %d MiB\n" \
            $(( $(awk "/^VmRSS:/ {print \$2}" /proc/$pid/status) / 1024 )) \
            $(( $(awk "/^Pss:/ {print \$2}" /proc/$pid/smaps_rollup) / 1024 ))'
}

# --- Pi image without booting ----------------------------------------------

# The Pi image on QEMU's virt machine: no Pi GPIO and no USB sound card
# there (parleyd without its sound card exits and is restarted, so
# parley-mark-good would rightly never mark the slot good). Before the first
# boot, the test's copy of slot A is switched to the simulated board and the
# ALSA loopback, loaded at boot as on the QEMU image (its modprobe.d and
# modules-load.d files), and the update bundle the checks install is made
# from that slot, signed with the development key and carrying the image
# bundle's version: slot B then runs under QEMU as slot A does.
pi_emulated_slot() {
    local version slot=$WORK/slot-a.ext4 q=image/layers/80-board-qemu/files/etc start
    slot_a_image "$DISK" "$slot"
    debugfs -R "dump /etc/parley/parley.yaml $WORK/parley.yaml" "$slot" >/dev/null 2>&1
    sed -i 's/^board: .*/board: sim/' "$WORK/parley.yaml"
    grep -q '^board: sim' "$WORK/parley.yaml" && loopback_audio "$WORK/parley.yaml" \
        || die "slot A's /etc/parley/parley.yaml has no board: or audio capture/playback lines to switch"
    ext4_put "$slot" /etc/parley/parley.yaml "$WORK/parley.yaml"
    ext4_put "$slot" /etc/modprobe.d/snd-aloop.conf "$q/modprobe.d/snd-aloop.conf"
    ext4_put "$slot" /etc/modules-load.d/snd-aloop.conf "$q/modules-load.d/snd-aloop.conf"
    debugfs -R "cat /etc/parley/parley.yaml" "$slot" 2>/dev/null | grep -q '^board: sim' || die "could not write slot A's parley.yaml"
    read -r start _ < <(slot_a_extent "$DISK")
    dd if="$slot" of="$DISK" bs=512 seek="$start" conv=notrunc,sparse status=none
    version=$(rauc info --no-verify --output-format=json "out/image/parley-$target.raucb" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])') \
        || die "could not read the version of out/image/parley-$target.raucb"
    BUNDLE=$WORK/parley-$target.raucb
    ( make_bundle "$slot" "$BUNDLE" "$version" ) >/dev/null 2>&1 || die "could not make the emulated Pi's bundle"
    rm -f "$slot"
}

# The recorded orders are a coffee maker's: the test's copy of the image is
# configured as that appliance's speaker (primary_app), as EndToEndTests is.
use_coffee_maker() {
    vm_ssh "sed -i 's/^primary_app: .*/primary_app: Coffee Maker/' /etc/parley/parley.yaml &&
        systemctl restart parleyd && systemctl is-active parleyd" >/dev/null
}

if [ "$ARCH" = arm64 ]; then
    bash scripts/lib/pi-image-check.sh "$IMG" "$BOARD" "$WORK/static" || failures=$((failures + 1))
fi
ACCEL=$(vm_accel)
[ "$ARCH" = amd64 ] && [ "$ACCEL" = tcg ] && echo "note: TCG software emulation (PARLEY_QEMU_ACCEL=kvm boots under KVM where it works)"
vm_prepare_disk "$IMG"
[ "$ARCH" = arm64 ] && pi_emulated_slot
vm_boot 1
if check "1-boot-to-ready" check_ready; then
    check "first-boot-grow" check_grown || true
    check "first-boot-settings" check_bootconf || true
    check "ab-slots" check_slots || true
    use_coffee_maker || result "2-order" "could not set primary_app and restart parleyd" 1
    check "idle-memory" check_memory || true
    check "2-order" check_order || true
    if [ "$ARCH" = amd64 ]; then
        check "4-control-socket" check_socket || true
        check "4-listeners" check_listeners || true
        check "4-app-sandbox" check_app_sandbox || true
        check "5-web" check_web || true
        check "6-volume" check_volume || true
        check "7-wyoming" check_wyoming || true
    fi
    # Boots the VM again (into slot B): its ports are read back after.
    if check "8-update" check_update; then
        . "$WORK/vm.env"
        check "8-bundle-refused" check_bundle_refused || true
        check "8-update-url" check_update_url || true
    fi
    . "$WORK/vm.env"
    # It boots the VM again in its subshell, so the ports this shell knows
    # are the old VM's.
    if [ "$ARCH" = amd64 ]; then
        check "3-power-cut" check_power_cut || true
        . "$WORK/vm.env"
    fi
    # Last: it reboots the guest twice, into the broken slot and back.
    check "9-fallback" check_fallback || true
    . "$WORK/vm.env"
    (( POWER_CUTS > 0 )) && { check "10-update-power-cut" check_update_power_cut || true; }
fi
vm_kill
if (( failures )); then echo "image-test $target: $failures check(s) failed"; exit 1; fi
echo "image-test $target: all checks passed"
