#!/usr/bin/env bash
# Attacks a real parleyd over loopback as LAN peers would (issue 51 item 7):
# Wyoming takeover, the handle role from a stranger, oversized events and
# formats, 500 idle page connections, pairing guesses and code requests from
# many addresses, forged POSTs, alias bombs through the page and the socket.
# Each must be refused with a clear error, nothing lost, a voice order
# answered within 1 s during and after, resident memory growing < 10 MiB.
# Peers are other loopback addresses (127.0.0.2 ...), so no namespace or root
# is needed. BUILD=release measures the release build (default debug, the
# test suite's). Prints each check and the figures (scripts/lib/attack.py);
# ROUNDS=N repeats the cheapest attacks N times (scripts/lib/attack-rounds.py).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-debug}
if [ "$BUILD" = release ]; then swift build -c release --product parleyd >&2; fi
bin=.build/$BUILD/parleyd
[ -x "$bin" ] || { echo "attack.sh: no $bin (swift build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/parley-attack.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
read -r sat handle < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
cat >"$work/parley.yaml" <<YAML
state_directory: $work/state
control_socket: $work/parley.sock
speech: {acoustic_model: stock}
web: {enabled: true, port: 0, listen: loopback}
home_assistant: {satellite: true, port: $sat, handler: true, handler_port: $handle, listen: loopback, allow: [127.0.0.1]}
YAML
"$bin" --config "$work/parley.yaml" 2>"$work/log" &
pid=$!
python3 scripts/lib/wait-for-socket.py "$work/parley.sock" 30000 0.002
# Listening (the decoders loaded and the start-up pages given back: the
# resident memory the attack is measured against) and the page up.
for _ in $(seq 600); do grep -q 'start-up pages released' "$work/log" && grep -q 'web page listening' "$work/log" && break; sleep 0.1; done
url=$(grep -o 'web page listening url=http://[0-9.:]*/' "$work/log" | head -1 | cut -d= -f2)
[ -n "$url" ] || { echo "attack.sh: no web page in the log" >&2; cat "$work/log" >&2; exit 1; }
status=0
python3 scripts/lib/attack.py "$pid" "$work/parley.sock" "$url" "$sat" "$handle" "$work/log" || status=$?
# ROUNDS=N: then the cheapest attacks N times more; memory must stay flat after the first.
if [ "${ROUNDS:-0}" -gt 0 ]; then
  python3 scripts/lib/attack-rounds.py "$pid" "$url" "$sat" "$handle" "$ROUNDS" || status=$?
fi
kill -0 "$pid" 2>/dev/null || { echo "FAIL parleyd died during the attack" >&2; tail -20 "$work/log" >&2; exit 1; }
[ "$status" -eq 0 ] || { echo "attack.sh: failed; the daemon's last lines:" >&2; tail -30 "$work/log" >&2; }
exit "$status"
