#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and starts
# parleyd in the foreground on this machine. On a development machine it runs
# with the simulated board (`sim`) and file audio, with its configuration,
# state and control socket in .run/ (override the folder with PARLEY_RUN_DIR,
# or give a whole configuration with PARLEY_CONFIG). Stop it with Ctrl-C.
#
# In another terminal:
#   export PARLEY_SOCKET=$PWD/.run/parley.sock
#   .build/release/parley status
#   .build/release/parley play recording.wav   # heard through the spool microphone
#   .build/release/parley say "order a latte with barista"   # then: parley say large; parley press
#   .build/release/parley press
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parleyd >&2
swift build -c release --product parley >&2
# The commands' acoustic model is Debian's stock en-us model by default
# (speech.acoustic_model: stock; README, "The acoustic model"). The adapted
# model is built only when asked for: PARLEY_ADAPTED_MODEL=1 builds it into
# .build/model/en-us-adapted (about 4 min the first time, then kept), where
# parleyd finds it for `speech.acoustic_model: adapted`.
if [ "${PARLEY_ADAPTED_MODEL:-0}" = 1 ]; then
  bash scripts/shipped-model.sh >&2 || echo "run.sh: the adapted acoustic model could not be built" >&2
fi

run_dir=${PARLEY_RUN_DIR:-$PWD/.run}
mkdir -p "$run_dir"
socket="$run_dir/parley.sock"
# sun_path holds 107 bytes: fall back to /tmp for deep checkouts.
if [ "${#socket}" -gt 100 ]; then socket="/tmp/parley-$(id -u)/parley.sock"; fi

if [ -n "${PARLEY_CONFIG:-}" ]; then
  config=$PARLEY_CONFIG
else
  config="$run_dir/parley.yaml"
  if [ ! -f "$config" ]; then
    # The shipped example with the state and socket moved into the run folder.
    sed -e "s|^state_directory: .*|state_directory: $run_dir/state|" \
        -e "s|^control_socket: .*|control_socket: $socket|" \
        dist/parley.yaml >"$config"
    echo "run.sh: wrote $config (edit it to change board, audio, voice ...)" >&2
  fi
fi

echo "run.sh: starting parleyd with $config; in another terminal:" >&2
echo "  export PARLEY_SOCKET=$socket; .build/release/parley status" >&2
exec .build/release/parleyd --config "$config" "$@"
