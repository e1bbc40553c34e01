#!/usr/bin/env bash
# What the daemon does on its own in a room where nobody speaks to it
# (issue 27, listening in a loud room): the release parleyd, wake modes as
# shipped (direct and named), listens in real time to an idle scene of
# scripts/lib/idle-scenes.sh (kitchen: ../shared/data/noise/kitchen.wav
# looped; tv; talk; others: people saying other wake words, 1,669 s) and
# its debug log is counted:
#   heard       utterances taken as a command or an answer
#   asked back  of those, asked back as unsure ("Did you say: ...?")
#   performed   intents performed, and volume changes (the volume builtins)
# each also per hour of audio. Nothing here should happen at all.
#
#   training/bin/eval-idle-heard.sh BIN [SECONDS] [SCENE]     (600 s of kitchen by default)
#   training/bin/eval-idle-heard.sh .build/release/parleyd 600 kitchen
#   training/bin/eval-idle-heard.sh .build/release/parleyd 1669 others
#
# A benchmark: needs ../shared/data (or PARLEY_SHARED_DATA) for the scenes.
set -euo pipefail
bin=${1:?usage: training/bin/eval-idle-heard.sh BIN [SECONDS] [SCENE]}
seconds=${2:-600} scene_name=${3:-kitchen}
root=$(cd "$(dirname "$0")/../.." && pwd)
export PARLEY_BOARD_DIR=${PARLEY_BOARD_DIR:-$root/board}
data=${PARLEY_SHARED_DATA:-$root/../shared/data}
work=${WORK:-$root/.build/idle-heard}
[ -f "$data/noise/kitchen.wav" ] || { echo "eval-idle-heard: evaluation data missing: $data (set PARLEY_SHARED_DATA)" >&2; exit 2; }
# shellcheck source=scripts/lib/idle-scenes.sh
source "$root/scripts/lib/idle-scenes.sh"
wav=$(scene "$scene_name" "$seconds")
state=$work/run-$scene_name
# The debug log says what was heard and why it was rejected.
scene_state default "$wav" "$state" "log_level: debug"
# The file device plays the scene in real time; a few seconds more for the start.
timeout --signal=TERM $((seconds + 15)) "$bin" --config "$state/parley.yaml" 2>"$state/log" || true
count() { grep -c -- "$1" "$state/log" || true; }
heard=$(count "parley.listen: heard")
asked=$(count "unsure, asking back")
performed=$(count "performed intent=")
volume=$(count "volume changed")
per_hour() { python3 -c "print(f'{$1 * 3600 / $seconds:.1f}')"; }
printf '%-10s %6s s  heard %3d (%s/h)  asked back %3d (%s/h)  performed %3d  volume changes %3d (%s/h)\n' \
  "$scene_name" "$seconds" "$heard" "$(per_hour "$heard")" "$asked" "$(per_hour "$asked")" "$performed" "$volume" "$(per_hour "$volume")"
echo "log: $state/log (grep 'parley.listen: heard')"
