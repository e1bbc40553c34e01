# The idle scenes and wake modes of issue 19, sourced by scripts/lib/idle-cost.sh
# and scripts/lib/idle-instructions.sh (which set $work and $data):
#   wake_yaml MODE       prints parley.yaml's `wake:` value for MODE: direct
#                        (wake.named false), named (wake.direct false, "computer")
#                        or default (both, as shipped)
#   scene_state MODE WAV DIR [YAML]
#                        makes DIR the state folder of a daemon listening to
#                        WAV (its capture file) in wake mode MODE: parley.yaml
#                        with its socket in DIR; YAML: more lines for it
#   scene NAME SECONDS   prints the path of NAME's WAV of SECONDS seconds
#                        (made once in $work/idle), NAME one of:
#   silence   digital silence
#   kitchen   ../shared/data/noise/kitchen.wav (room noise, no speech)
#   tv        television-like speech: an espeak-ng news paragraph and 20 clean
#             coffee-maker recordings with their pauses shortened to 0.25 s,
#             none of it after "hey" (it must wake nothing)
#   talk      people talking, with pauses: 30 other clean coffee-maker
#             recordings as recorded (each a sentence between its own
#             silences), none of it after a wake word
#   others    people saying other wake words, one after another: every third
#             of the 1,155 wake-other recordings (sorted by word and name;
#             385, 0.30 h of speech), each followed by 1.5 s of silence
#             (1,669 s in all), clean; none of it is a command to this device
#   white, pink, brown, babble, clatter
#             a training noise of scripts/adapt/make-noises.py (never
#             kitchen.wav: these are what a rule may be chosen on) at a
#             kitchen's level, -40 dBFS RMS, repeated as often as needed
# How many repeats (sox's `repeat`, after the first play) make FILE last
# SECONDS; the scene is trimmed to SECONDS, so more would give the same audio.
repeats_for() {
  python3 -c "import math, sys; print(max(0, math.ceil(float(sys.argv[2]) / float(sys.argv[1])) - 1))" "$(soxi -D "$1")" "$2"
}

scene() {
  local name=$1 length=$2
  local out=$work/idle/$name-$length.wav
  mkdir -p "$work/idle"
  # Made before, and as long as asked (an older script's tv and talk scenes were shorter).
  [ -f "$out" ] && [ "$(soxi -s "$out")" = "$(( length * 16000 ))" ] && { echo "$out"; return; }
  case $name in
    silence) sox -n -r 16000 -c 1 -b 16 "$out" trim 0 "$length" ;;
    kitchen) sox "$data/noise/kitchen.wav" -r 16000 -c 1 -b 16 "$out" repeat "$(repeats_for "$data/noise/kitchen.wav" "$length")" trim 0 "$length" ;;
    tv)
      espeak-ng -v en-us -s 165 -w "$work/idle/news-raw.wav" "Good evening and welcome to the news at six. \
Tonight the city council voted to extend the opening hours of the public library through the summer months. \
Officials said the decision followed a survey in which most residents asked for more evening access. \
In sport, the home team won its third match in a row after a late goal in the second half. \
The weather will stay mild for the rest of the week, with light rain expected on Thursday and sunshine \
returning by the weekend. Now here is a look at the traffic on the main roads leading into town, where \
roadworks continue near the river bridge."
      sox "$work/idle/news-raw.wav" -r 16000 -c 1 -b 16 "$work/idle/news.wav"
      # shellcheck disable=SC2046
      sox $(ls "$data"/coffee-maker/clean/*.wav | head -n 20) "$work/idle/coffee.wav" silence -l 1 0.1 1% -1 0.25 1%
      sox "$work/idle/news.wav" "$work/idle/coffee.wav" "$work/idle/tv-once.wav"
      sox "$work/idle/tv-once.wav" "$out" repeat "$(repeats_for "$work/idle/tv-once.wav" "$length")" trim 0 "$length"
      ;;
    talk)
      # shellcheck disable=SC2046
      sox $(ls "$data"/coffee-maker/clean/*.wav | sed -n 21,50p) "$work/idle/talk-raw.wav"
      sox "$work/idle/talk-raw.wav" "$out" repeat "$(repeats_for "$work/idle/talk-raw.wav" "$length")" trim 0 "$length"
      ;;
    others)
      command -v flac >/dev/null || { echo "idle scenes: flac is missing (scripts/setup.sh installs it)" >&2; exit 1; }
      # The C locale's order of the names, whatever the caller's locale.
      local LC_ALL=C parts=$work/idle/others i=0 f
      mkdir -p "$parts"
      # -D: no dither, so the gaps are digital silence.
      sox -D -n -r 16000 -c 1 -b 16 "$parts/gap.wav" trim 0 1.5
      local pieces=()
      for f in "$data"/wake-other/{alexa,jarvis,smart-mirror,snowboy,view-glass}/*.flac; do
        if (( i++ % 3 == 0 )); then
          flac -s -d -f -o "$parts/$i.wav" "$f"
          pieces+=("$parts/$i.wav" "$parts/gap.wav")
        fi
      done
      sox -D "${pieces[@]}" "$work/idle/others-once.wav"
      sox -D "$work/idle/others-once.wav" "$out" repeat "$(repeats_for "$work/idle/others-once.wav" "$length")" trim 0 "$length"
      ;;
    white|pink|brown|babble|clatter)
      [ -f "$work/idle/noise/$name.wav" ] || /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../adapt/make-noises.py" "$work/idle/noise" 60 >/dev/null
      local gain
      gain=$(sox "$work/idle/noise/$name.wav" -n stats 2>&1 | awk '/RMS lev dB/ { print -40 - $4 }')
      sox "$work/idle/noise/$name.wav" "$out" gain "$gain" repeat "$(repeats_for "$work/idle/noise/$name.wav" "$length")" trim 0 "$length"
      ;;
    *) echo "idle scenes: unknown scene '$name' (expected silence, kitchen, tv, talk, others or a training noise: white, pink, brown, babble, clatter)" >&2; exit 2 ;;
  esac
  echo "$out"
}

scene_state() {
  local mode=$1 wav=$2 state=$3 extra=${4:-} wake
  wake=$(wake_yaml "$mode")
  rm -rf "$state" && mkdir -p "$state"
  ln -s "$wav" "$state/capture.wav"
  cat >"$state/parley.yaml" <<YAML
audio: {capture: "file:capture.wav"}
wake: $wake
state_directory: $state
control_socket: $state/parley.sock
$extra
YAML
}

wake_yaml() {
  case $1 in
    direct) echo "{named: false}" ;;
    named) echo "{direct: false, name: computer}" ;;
    named-sphinx) echo "{direct: false, name: computer, detector: pocketsphinx}" ;;
    named-network) echo "{direct: false, name: computer, detector: network}" ;;
    default) echo "{direct: true, named: true}" ;;
    default-hey) echo "{direct: true, named: true, hey_gate: true}" ;;
    direct-hey) echo "{named: false, hey_gate: true}" ;;
    default-ungated) echo "{direct: true, named: true, hey_gate: false}" ;;
    direct-ungated) echo "{named: false, hey_gate: false}" ;;
    *) echo "idle: unknown wake mode '$1' (expected direct, direct-hey, direct-ungated, named, named-network, named-sphinx, default, default-hey or default-ungated)" >&2; exit 2 ;;
  esac
}
