#!/usr/bin/env bash
# Boots the device image and talks to it from outside, as a person would.
#
#   scripts/image-test.sh qemu   amd64 image under qemu-system-x86_64 (KVM
#                                when /dev/kvm works, else TCG): checks 1-7
#   scripts/image-test.sh pi4    the Pi image without booting it (partition
#                                table, boot files, config.txt, cmdline root,
#                                parleyd's libraries), then its own kernel and
#                                root under qemu-system-aarch64 (virt): 1-2
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

check_grown() {
    local part_bytes fs_bytes
    part_bytes=$(sfdisk -J "$IMG" | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"][1]; print(p["size"]*512)')
    fs_bytes=$(vm_ssh findmnt -bno SIZE /)
    (( fs_bytes > part_bytes + 512 * 1024 * 1024 )) || { echo "root file system $fs_bytes bytes, image's root partition $part_bytes: not grown"; return 1; }
    echo "root grew from $((part_bytes >> 20)) MiB to $((fs_bytes >> 20)) MiB (disk 1 GiB larger than the image)"
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
    vm_ssh parley web tokens | grep -q "paired" || { echo "parley web tokens lists no paired browser"; return 1; }
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
    echo "$announced" | grep -q ';ParleyImageTest;_wyoming._tcp;local;.*;10700;' \
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
# there, so the test's copy switches to the simulated board and the ALSA
# loopback (the same module the QEMU image uses) before check 2.
pi_use_loopback() {
    vm_ssh "modprobe snd-aloop index=0 id=Loopback pcm_substreams=2 &&
        sed -i -e 's/^board: .*/board: sim/' \
            -e 's|^  # capture: .*|  capture: \"plughw:CARD=Loopback,DEV=1,SUBDEV=0\"|' \
            -e 's|^  # playback: .*|  playback: \"plughw:CARD=Loopback,DEV=0,SUBDEV=1\"|' /etc/parley/parley.yaml &&
        systemctl restart parleyd && systemctl is-active parleyd" >/dev/null
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
vm_boot 1
if check "1-boot-to-ready" check_ready; then
    check "first-boot-grow" check_grown || true
    check "first-boot-settings" check_bootconf || true
    if [ "$ARCH" = arm64 ]; then
        pi_use_loopback || result "2-order" "could not switch the emulated Pi to the loopback" 1
    fi
    use_coffee_maker || result "2-order" "could not set primary_app and restart parleyd" 1
    check "idle-memory" check_memory || true
    check "2-order" check_order || true
    if [ "$ARCH" = amd64 ]; then
        check "4-control-socket" check_socket || true
        check "4-listeners" check_listeners || true
        check "5-web" check_web || true
        check "6-volume" check_volume || true
        check "7-wyoming" check_wyoming || true
        # Last: it boots the VM again in its subshell, so the ports this
        # shell knows are the old VM's.
        check "3-power-cut" check_power_cut || true
    fi
fi
vm_kill
if (( failures )); then echo "image-test $target: $failures check(s) failed"; exit 1; fi
echo "image-test $target: all checks passed"
