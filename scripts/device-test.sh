#!/usr/bin/env bash
# Tests the Debian package and the cross-built binaries in a fresh Debian 13
# root of the target architecture (a chroot; arm64 runs under qemu-user,
# whose slowness is about a Pi 3's, which is the point for the stop test):
#
#   1. install: `apt-get install ./parley_<v>_<arch>.deb` resolves the
#      Depends from Debian 13 and runs the maintainer scripts: the parley user,
#      /var/lib/parley (parley, 0750), the conffile, the unit enabled;
#   2. daemon: parleyd started as systemd would (user parley, /run/parley;
#      no systemd runs in a chroot) answers `parley status`;
#   3. stop: SIGTERM while a question is open, STOP_RUNS times: parleyd must
#      exit with status 0 every time (it crashed in 3 of 4 such runs under
#      qemu-user before the fix), and the stop time is printed;
#   4. unit tests (--tests): scripts/device-unit-tests.sh, the hardware
#      module's tests (libgpiod v2 path) built for this architecture;
#   5. upgrade, remove, purge: a changed conffile and the state survive a
#      reinstall and a remove; purge removes the state.
#
#   scripts/device-test.sh arm64|amd64 [--tests]
#
# One line per check, "ok" or "FAIL"; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh

arch=${1:-}
swift_triple "$arch" >/dev/null
run_tests=false
[ "${2:-}" = "--tests" ] && run_tests=true
STOP_RUNS=${STOP_RUNS:-4}
require_root
ensure_host_tools

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ParleyDaemon/Lifecycle/DaemonController.swift)
deb=out/deb/parley_${version}_$arch.deb
[ -f "$deb" ] || bash scripts/package-deb.sh "$arch" >/dev/null
base=$(debian13_base_root "$arch")
root=$PWD/out/device-root-$arch
rm -rf "$root"
mkdir -p "$root"
tar -xf "$base" -C "$root"
mkdir -p "$root/var/cache/parley-test"
cp "$deb" "$root/var/cache/parley-test/parley.deb"

failures=0
check() {  # check NAME COMMAND...: prints ok/FAIL
    local name=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ok   $arch $name"; else echo "FAIL $arch $name"; failures=$((failures + 1)); fi
}

# MARK: 1. Install.
start=$(date +%s)
in_root "$root" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /var/cache/parley-test/parley.deb' >&2
echo "     $arch install took $(($(date +%s) - start)) s"
check "install: package configured" \
    test "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' parley)" = "install ok installed"
check "install: user parley" grep -q '^parley:' "$root/etc/passwd"
check "install: /var/lib/parley owned by parley, 0750" \
    in_root "$root" sh -c '[ "$(stat -c %U:%G:%a /var/lib/parley)" = parley:parley:750 ]'
check "install: the handler sandbox: user parley-app (in gpio), parley in its group, its units" sh -c "grep -q '^parley-app:' '$root/etc/passwd' \
    && grep -q '^parley-app:.*:parley' '$root/etc/group' && grep -q '^gpio:.*parley-app' '$root/etc/group' \
    && test -f '$root/usr/lib/systemd/system/parley-app.socket' && test -f '$root/usr/lib/systemd/system/parley-app@.service' \
    && test -x '$root/usr/libexec/parley-app-runner'"
check "install: configuration is a conffile" grep -q '/etc/parley/parley.yaml' "$root/var/lib/dpkg/info/parley.conffiles"
check "install: parleyd.service enabled" test -L "$root/etc/systemd/system/multi-user.target.wants/parleyd.service"
check "install: board files" test -f "$root/usr/share/parley/board/pi4/board.yaml"
check "install: the wake word's keyword network" test -s "$root/usr/share/parley/model/wake/computer.json"
check "install: shipped apps, handlers executable, no tests" sh -c "test -x '$root/usr/share/parley/apps/shopping-list/handler.sh' \
    && test -f '$root/usr/share/parley/apps/home-assistant/manifest.yaml' && ! ls '$root'/usr/share/parley/apps/*/test* 2>/dev/null"
check "install: every library of parleyd resolves" \
    in_root "$root" sh -c '! ldd /usr/bin/parleyd /usr/bin/parley /usr/bin/parley-bench /usr/libexec/parley-app-runner | grep -q "not found"'

# MARK: 2 and 3. Daemon and stop, inside one namespace (/run is its own).
cat > "$root/root/daemon-check.sh" <<'EOF'
#!/bin/sh
# Starts parleyd as its unit does (user parley, /run/parley 0750), waits for
# `parley status`, then STOP_RUNS times: a question open, SIGTERM, exit status.
set -u
runs=$1
install -d -o parley -g parley -m 0750 /run/parley
start_daemon() {
    setpriv --reuid=parley --regid=parley --init-groups /usr/bin/parleyd 2>>/var/log/parleyd.log &
    pid=$!
    i=0
    until parley status >/tmp/status 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 1500 ] || ! kill -0 $pid 2>/dev/null; then echo "daemon: not ready"; return 1; fi
        sleep 0.2
    done
}
start_daemon || exit 1
grep -q '"ok" *: *true\|state' /tmp/status && echo "status: ok" || { echo "status: bad"; cat /tmp/status; }
# The apps that come with the package: listed, and one installed into the
# apps folder by the daemon (as user parley) while it runs.
parley apps install >/tmp/apps-list 2>&1
parley apps install shopping-list >/tmp/apps-install 2>&1
echo "apps listed: $(grep -c '^  [a-z-]*: ' /tmp/apps-list); install: $(head -n 1 /tmp/apps-install | cut -c1-160)"
echo "apps folder: $(stat -c '%U' /var/lib/parley/apps/shopping-list/manifest.yaml 2>&1)"
# Without python3 (the package suggests it), the Python apps say why they cannot be installed.
echo "apps without python3: $(grep -c "not here: the handler program 'python3' is not on the PATH" /tmp/apps-list)"
# Resident memory once idle (model loaded, grammar compiled). Under
# qemu-user this is the emulator's process: guest memory plus qemu's own.
sleep 5
echo "rss: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB, pss: $(awk '/^Pss:/ {s += $2} END {print s}' /proc/$pid/smaps_rollup) kB"
kill -TERM $pid; wait $pid; echo "first stop: exit $?"
n=0
while [ $n -lt "$runs" ]; do
    n=$((n + 1))
    start_daemon || exit 1
    # Soup Chef asks which soup: the question stays open.
    parley say "order soup with soup chef" >/tmp/said 2>&1
    t0=$(date +%s%N)
    kill -TERM $pid
    wait $pid
    code=$?
    t1=$(date +%s%N)
    echo "stop $n: exit $code after $(( (t1 - t0) / 1000000 )) ms; said: $(tr '\n' ' ' </tmp/said | cut -c1-120)"
done
EOF
chmod +x "$root/root/daemon-check.sh"
daemon_out=$(in_root "$root" /root/daemon-check.sh "$STOP_RUNS" 2>&1 || true)
echo "$daemon_out" | sed "s/^/     $arch /"
check "daemon: parley status answers" grep -q '^status: ok' <<<"$daemon_out"
check "apps: the three shipped apps listed, shopping-list installed" grep -q '^apps listed: 3; install: Installed Shopping List in /var/lib/parley/apps/shopping-list' <<<"$daemon_out"
check "apps: the installed copy is the daemon's (user parley)" grep -q '^apps folder: parley$' <<<"$daemon_out"
python_apps=2
in_root "$root" sh -c 'command -v python3' >/dev/null 2>&1 && python_apps=0
check "apps: without python3 the Python apps say why" grep -q "^apps without python3: $python_apps$" <<<"$daemon_out"
check "stop: exit status 0 after SIGTERM, $STOP_RUNS runs with a question open" \
    test "$(grep -c '^stop [0-9]*: exit 0 ' <<<"$daemon_out")" -eq "$STOP_RUNS"
check "stop: a question was open at each SIGTERM" \
    test "$(grep '^stop [0-9]*: ' <<<"$daemon_out" | grep -vc 'said: .*not understood\|said: *$')" -eq "$STOP_RUNS"
check "stop: no crash in the log" sh -c "! grep -q 'Fatal error' '$root/var/log/parleyd.log'"
# Each stop's own account (ServiceTrace): the service that ended last and
# the time from SIGTERM to the group's return. The watchdog (4 s) must not
# be what ends a stop, on any CPU.
grep -o 'service ended.*' "$root/var/log/parleyd.log" | awk '
    { delete f; for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    f["still-running"] == "" { print "     '"$arch"' last service to end: " f["service"] " at " f["ms-since-stop"] " ms" }' | tail -n "$STOP_RUNS"
check "stop: every stop finished before the 4 s watchdog" \
    sh -c "! grep -q 'stop took longer than' '$root/var/log/parleyd.log' && test \$(grep -c 'parleyd stopped' '$root/var/log/parleyd.log') -eq $((STOP_RUNS + 1))"

# MARK: 4. Unit tests of the hardware module (libgpiod v2) on this architecture.
if $run_tests; then
    check "unit tests: ParleyHardwareTests (libgpiod v2) pass" bash scripts/device-unit-tests.sh "$arch"
fi

# MARK: 5. Upgrade (reinstall), remove, purge.
echo "# changed by the administrator" >>"$root/etc/parley/parley.yaml"
touch "$root/var/lib/parley/kept"
in_root "$root" dpkg -i /var/cache/parley-test/parley.deb >&2
check "upgrade: changed configuration kept" grep -q 'changed by the administrator' "$root/etc/parley/parley.yaml"
check "upgrade: state kept" test -f "$root/var/lib/parley/kept"
in_root "$root" apt-get remove -y -qq parley >&2
check "remove: configuration kept" test -f "$root/etc/parley/parley.yaml"
check "remove: state kept" test -f "$root/var/lib/parley/kept"
check "remove: binaries gone" test ! -e "$root/usr/bin/parleyd"
in_root "$root" dpkg --purge parley >&2
check "purge: state removed" test ! -e "$root/var/lib/parley"
check "purge: configuration removed" test ! -e "$root/etc/parley/parley.yaml"

echo "$failures failed"
exit $((failures > 0))
