# Booting an image under QEMU and talking to it (sourced by image-test.sh).
# The VM's only way in is SSH on a host-local forwarded port, with a key the
# test puts on the boot partition (sysconf.txt), as a person would.

# vm_accel: tcg, QEMU's software emulation, unless PARLEY_QEMU_ACCEL=kvm.
# KVM is not probed: on the nested-virtualisation hosts this runs on, /dev/kvm
# exists and an empty KVM machine runs, yet the guest's kernel stops at its
# first BMI2 instruction ("KVM internal error ... emulation failure") and
# QEMU waits there without exiting; a probe that boots no kernel said kvm,
# and CI's boot then ran into its 900 s limit. TCG boots everywhere.
vm_accel() {
    case "${PARLEY_QEMU_ACCEL:-tcg}" in
        tcg|kvm) echo "${PARLEY_QEMU_ACCEL:-tcg}" ;;
        *) echo "vm.sh: PARLEY_QEMU_ACCEL=${PARLEY_QEMU_ACCEL}: expected tcg or kvm" >&2; return 1 ;;
    esac
}

# vm_stopped: QEMU is alive but this boot's guest stopped (a KVM emulation
# failure: QEMU prints it and pauses the machine instead of exiting); says so.
vm_stopped() {
    grep -q "KVM internal error" "$VM_QEMU_ERR" 2>/dev/null || return 1
    echo "the guest stopped: $(head -n 1 "$VM_QEMU_ERR")"
}

# vm_prepare_disk IMAGE: a sparse copy 1 GiB larger than the image (the last
# partition must grow into it) with sysconf.txt (test key, host name) on the
# boot partition. The A/B image boots through its own boot code (GRUB on the
# QEMU image, the Pi's boot.scr under U-Boot), whose environment gets the
# test's extra kernel arguments (EXTRA_CMDLINE).
vm_prepare_disk() {
    local img=$1 off=$(( BOOT_START_MIB * 1024 * 1024 ))
    DISK=$WORK/disk.img
    cp --sparse=always "$img" "$DISK"
    truncate -s +1G "$DISK"
    ssh-keygen -q -t ed25519 -N '' -C parley-image-test -f "$WORK/key"
    printf 'hostname=parley-test\nroot_authorized_key=%s\n' "$(cat "$WORK/key.pub")" >"$WORK/sysconf.txt"
    MTOOLS_SKIP_CHECK=1 mcopy -o -i "$DISK@@$off" "$WORK/sysconf.txt" ::/sysconf.txt
    # systemd's 90 s start time-out is for real hardware: a niced software
    # emulation on a loaded machine ran mounts out of it (emergency mode);
    # and no reboot loop on a panic (-no-reboot ends QEMU instead).
    # no_timer_check: on a loaded host TCG ran the kernel's IO-APIC timer
    # check too slowly and it panicked ("IO-APIC + timer doesn't work!",
    # 2026-12-06); cloud images boot VMs with it for the same reason.
    if [ "$ARCH" = amd64 ]; then
        vm_bootenv set EXTRA_CMDLINE="systemd.default_timeout_start_sec=900 panic=-1 no_timer_check"
    else
        # virt's serial port is a PL011 (the Pi's consoles are not there).
        vm_bootenv set EXTRA_CMDLINE="console=ttyAMA0,115200 systemd.default_timeout_start_sec=900 panic=-1"
    fi
}

# vm_bootenv list | set KEY=VALUE...: the A/B image's boot environment on
# $DISK's boot partition (GRUB's grubenv on amd64, U-Boot's parley.env on the
# Pi), read or changed while QEMU is not running.
vm_bootenv() {
    local off=$(( BOOT_START_MIB * 1024 * 1024 )) file=grub/grubenv tool=scripts/lib/grubenv.py
    [ "$ARCH" = amd64 ] || file=$UBOOT_ENV_FILE tool=scripts/lib/ubootenv.py
    MTOOLS_SKIP_CHECK=1 mcopy -o -i "$DISK@@$off" "::/$file" "$WORK/bootenv"
    python3 "$tool" "$WORK/bootenv" "$@"
    [ "$1" = list ] || MTOOLS_SKIP_CHECK=1 mcopy -o -i "$DISK@@$off" "$WORK/bootenv" "::/$file"
}

# vm_boot N: starts QEMU on $DISK in the background (console in
# $WORK/console-N.log); sets VM_PID, VM_PORT, VM_WEB_PORT, VM_WYOMING_PORT,
# VM_START (epoch seconds, ns).
vm_boot() {
    local n=$1
    VM_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # The speaker's page (guest port 80 on its LAN address, 10.0.2.15 here), forwarded too.
    VM_WEB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # The Wyoming satellite's port (10700), as Home Assistant on the LAN would reach it.
    VM_WYOMING_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    VM_CONSOLE=$WORK/console-$n.log
    VM_QEMU_ERR=$WORK/qemu-$n.err
    : >"$VM_CONSOLE"
    local common=(-m 1024 -smp 2
        -drive "file=$DISK,format=raw,if=virtio,cache=writeback"
        -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$VM_PORT-:22,hostfwd=tcp:127.0.0.1:$VM_WEB_PORT-:80,hostfwd=tcp:127.0.0.1:$VM_WYOMING_PORT-:10700" -device virtio-net-pci,netdev=n0
        -device virtio-rng-pci -display none -monitor none -serial "file:$VM_CONSOLE" -no-reboot)
    VM_START=$(date +%s.%N)
    if [ "$ARCH" = amd64 ]; then
        # No nested virtualisation for the guest (its kvm_amd hung a TCG boot once).
        # SeaBIOS, then the image's GRUB from the disk: it picks the slot.
        local cpu=${PARLEY_QEMU_CPU:-qemu64}; [ "$ACCEL" = kvm ] && cpu=host
        nice -n 10 qemu-system-x86_64 -M q35 -accel "$ACCEL" -cpu "$cpu" "${common[@]}" \
            >/dev/null 2>"$VM_QEMU_ERR" &
    else
        # The Pi's boot firmware and SoC cannot be emulated: U-Boot's build
        # for QEMU's generic arm64 machine (the host's u-boot-qemu) finds the
        # image's boot.scr on the virtio disk and runs it, as the Pi's
        # rpi_arm64 U-Boot does from the SD card: the slot choice, its
        # counter and the slot's own kernel and initrd are the image's.
        nice -n 10 qemu-system-aarch64 -M virt -accel tcg -cpu cortex-a72 "${common[@]}" \
            -bios /usr/lib/u-boot/qemu_arm64/u-boot.bin >/dev/null 2>"$VM_QEMU_ERR" &
    fi
    VM_PID=$!
    # Checks run in subshells: the file tells every one (and the exit trap)
    # which QEMU is the current one; vm.env its ports, for the shell that ran
    # a check which booted the VM again (`. "$WORK/vm.env"`).
    echo "$VM_PID" >"$WORK/vm.pid"
    declare -p VM_PID VM_PORT VM_WEB_PORT VM_WYOMING_PORT VM_CONSOLE VM_QEMU_ERR VM_START >"$WORK/vm.env"
}

# vm_kill: the power cut (SIGKILL: the guest gets no chance to flush).
vm_kill() {
    local pid; pid=$(cat "$WORK/vm.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    rm -f "$WORK/vm.pid"
    VM_PID=
}

# vm_wait_console PATTERN TIMEOUT: waits for PATTERN on the serial console;
# prints seconds since VM_START. Fails on a failed parleyd or a dead QEMU.
vm_wait_console() {
    local pattern=$1 limit=$2 t0
    t0=$(date +%s)
    while :; do
        if grep -q "$pattern" "$VM_CONSOLE" 2>/dev/null; then
            python3 -c "import time,sys; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$VM_START"
            return 0
        fi
        grep -q "Failed to start parleyd" "$VM_CONSOLE" && { echo "parleyd failed to start"; return 1; }
        kill -0 "$VM_PID" 2>/dev/null || { echo "QEMU exited: $(tail -c 300 "$VM_QEMU_ERR" | tr '\n' ' ')"; return 1; }
        vm_stopped && return 1
        (( $(date +%s) - t0 > limit )) && { echo "not within ${limit} s"; return 1; }
        sleep 0.2
    done
}

# vm_wait_ready TIMEOUT: waits until parleyd is active (Type=notify: it has
# told systemd it is ready); prints "<guest> <wall>": seconds from the
# guest kernel's start to ready (systemd's own monotonic timestamp) and
# seconds of wall time since QEMU started. The console is no use here:
# systemd stops printing unit status once multi-user.target is reached,
# which does not wait for parleyd.
vm_wait_ready() {
    local limit=$1 t0 state
    t0=$(date +%s)
    # On failure the console's last lines say where the boot stopped (CI
    # keeps only this script's output, not the console file), then the
    # reason, last: the check's one-line detail.
    local why
    why=$(vm_wait_ssh "$limit") || { vm_console_tail; echo "$why"; return 1; }
    while :; do
        state=$(vm_ssh systemctl is-active parleyd 2>/dev/null || true)
        case "$state" in
            active) break ;;
            failed) echo "parleyd failed to start: $(vm_ssh journalctl -u parleyd -n 3 --no-pager 2>/dev/null | tr '\n' ' ')"; return 1 ;;
        esac
        kill -0 "$VM_PID" 2>/dev/null || { echo "QEMU exited: $(tail -c 300 "$VM_QEMU_ERR" | tr '\n' ' ')"; return 1; }
        (( $(date +%s) - t0 > limit )) && { echo "parleyd not ready within ${limit} s (state: $state)"; return 1; }
        sleep 1
    done
    local mono; mono=$(vm_ssh systemctl show -P ActiveEnterTimestampMonotonic parleyd)
    python3 -c "import time,sys; print(f'{int(sys.argv[2])/1e6:.1f} {time.time()-float(sys.argv[1]):.1f}')" "$VM_START" "$mono"
}

# vm_console_tail: the serial console's last 25 lines, control sequences
# and carriage returns removed (systemd colours its status lines); says so
# when the console is empty.
vm_console_tail() {
    local lines
    lines=$(sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g; s/\r//g' "$VM_CONSOLE" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 25 || true)
    if [ -n "$lines" ]; then echo "$lines" | sed 's/^/  console: /'; else echo "  console: (nothing)"; fi
}

# vm_scp FILE GUEST_PATH: copies a host file into the guest.
vm_scp() {
    scp -q -i "$WORK/key" -P "$VM_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -o ConnectTimeout=20 "$1" "root@127.0.0.1:$2"
}

# vm_wait_exit TIMEOUT: waits for QEMU to end (a guest reboot ends it: -no-reboot).
vm_wait_exit() {
    local t0; t0=$(date +%s)
    while kill -0 "$VM_PID" 2>/dev/null; do
        (( $(date +%s) - t0 > $1 )) && return 1
        sleep 1
    done
    rm -f "$WORK/vm.pid"
}

vm_ssh() {
    ssh -q -i "$WORK/key" -p "$VM_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -o ConnectTimeout=20 -o ServerAliveInterval=10 root@127.0.0.1 "$@"
}

# vm_ssh_again COMMAND: vm_ssh for a command that reads no standard input,
# tried again (up to 3 times) when the connection itself failed (exit 255):
# under TCG on a loaded host a connection now and then times out.
vm_ssh_again() {
    local attempt rc
    for attempt in 1 2 3; do
        vm_ssh "$@" </dev/null && return 0
        rc=$?
        [ "$rc" = 255 ] || return "$rc"
        sleep 5
    done
    return 255
}

# vm_wait_ssh TIMEOUT: the SSH server answers (enabled by sysconf.txt);
# on failure prints why.
vm_wait_ssh() {
    local t0; t0=$(date +%s)
    until vm_ssh true 2>/dev/null; do
        (( $(date +%s) - t0 > $1 )) && { echo "no SSH within $1 s"; return 1; }
        kill -0 "$VM_PID" 2>/dev/null || { echo "no SSH: QEMU exited: $(tail -c 300 "$VM_QEMU_ERR" | tr '\n' ' ')"; return 1; }
        vm_stopped && return 1
        sleep 2
    done
}

# vm_status_field EXPR: evaluates a Python expression over `parley status --json` (s = status).
vm_status() {
    vm_ssh parley status --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin); s = r.get("status", r)
print(eval(sys.argv[1], {}, {"s": s}))' "$1"
}

# vm_wait_status EXPR TIMEOUT: polls until EXPR is True.
vm_wait_status() {
    local t0; t0=$(date +%s)
    until [ "$(vm_status "$1" 2>/dev/null)" = True ]; do
        (( $(date +%s) - t0 > $2 )) && return 1
        sleep 1
    done
}
