#!/usr/bin/env bash
# The volume's alarm floor end to end (issue 28): parleyd on the simulated
# board, playing into the file plugin's WAV (no mixer control, so Parley
# scales its samples). The level is set to 2 with `voice.alarm_floor: 5`, a
# one-minute timer is started and, after it rang, the level is asked. The
# peaks of what was played show the answer at level 2, the timer's chime and
# words at the floor, and the last answer at level 2 again (5 dB a level:
# 15 dB, x5.6, between 2 and 5). Takes about 70 s.
#
#   training/bin/check-alarm-floor.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product parleyd >/dev/null
swift build --product parley >/dev/null
dir=$(mktemp -d)
printf 'board: sim\nvoice:\n  alarm_floor: 5\n' >"$dir/parley.yaml"
PARLEY_CONFIG="$dir/parley.yaml" .build/debug/parleyd --state-directory "$dir/state" --socket "$dir/p.sock" >"$dir/log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 200); do [ -S "$dir/p.sock" ] && break; sleep 0.3; done
parley() { .build/debug/parley "$@" --socket "$dir/p.sock"; }
parley volume 2
parley say "start a one minute timer"
for _ in $(seq 1 120); do grep -q "timer is done" "$dir/log" && break; sleep 1; done
sleep 3
parley say "what is the volume"
sleep 2
kill -TERM "$daemon"; wait "$daemon" || true
# The file plugin writes only what is played, back to back: the first answer,
# the chime (0.4 s of 880 and 660 Hz tones, 8000 at full scale), the timer's
# words, the last answer.
python3 - "$dir/state/playback.wav" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
s = struct.unpack("<%dh" % ((len(b) - 44) // 2), b[44:44 + (len(b) - 44) // 2 * 2])
rate, win = 16000, 1600
peaks = [max(abs(x) for x in s[i:i + win]) for i in range(0, len(s) - win + 1, win)]
print("peak of each 100 ms played:", " ".join(str(p) for p in peaks))
PY
grep -E "alarm at the floor|volume (changed|asked)|timer is done" "$dir/log" | sed 's/^/log: /'
