#!/usr/bin/env bash
# Installs the Debian packages Parley builds and runs against. Idempotent and
# quiet when everything is already there, so every entry script can call it.
set -euo pipefail
PACKAGES=(
  pkg-config
  libasound2-dev libasound2-plugins alsa-utils      # ALSA library, file plugin, aplay/arecord
  libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us  # recogniser and en-us model
  libgpiod-dev gpiod                                # GPIO (v1 API, 1.6)
  libespeak-ng-dev espeak-ng                        # speech out
  libspeexdsp-dev                                   # the capture front end (noise suppression, AGC, echo cancellation)
  libsqlite3-dev sqlite3                            # state
  sox                                               # test-signal generation and noise mixing
  flite                                             # training/parley_training/long_negatives.py: voices beside espeak-ng for the wake word's negatives
  sphinxtrain sphinxbase-utils pocketsphinx python3-numpy  # scripts/adapt-model.sh: adapting the acoustic model
  flac                                              # model/adaptation/*.flac: the shipped model's recordings (scripts/adaptation-recordings.sh)
  python3-matplotlib                                # training/bin/eval-wake-cv.sh: the wake DET curve (docs/wake-det.svg)
  python3-scipy                                     # training/parley_training/echo_room.py: the simulated room of training/bin/eval-echo.sh
  libglib2.0-bin                                    # gresource: training/parley_training/recorded_noises.py reads blanket's recorded rooms
  valgrind                                          # scripts/lib/idle-instructions.sh: instructions per second of idle audio (callgrind)
  qemu-user                                         # scripts/lib/arm64-count.sh: the Pi's instructions per second, counted by a TCG plugin (InstructionCountPluginTests)
  python3 bc                                        # test and benchmark helpers (ControlSocketTests, bench-daemon.sh, eval scoring)
  jq                                                # the Shopping List example app (examples/apps)
  chromium chromium-driver                          # WebBrowserTests: the speaker's page in a real (headless) browser
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# As root apt-get runs directly (containers, CI); otherwise through sudo.
# The environment goes through env(1): sudo's env_reset would drop a
# DEBIAN_FRONTEND set in front of it, and apt would stop to ask questions.
as_root=(env DEBIAN_FRONTEND=noninteractive)
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo "${as_root[@]}")
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# Selenium (from PyPI) drives chromium in WebBrowserTests (scripts/lib/web_browser_test.py).
if ! python3 -c "import selenium" 2>/dev/null; then
  echo "setup: installing selenium (pip)" >&2
  # A Debian-managed python3 (PEP 668) refuses a plain install; selenium is a
  # leaf package there, so the system's own Python modules are not disturbed.
  python3 -m pip install --quiet selenium >&2 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages selenium >&2 \
    || { echo "setup: pip install selenium failed" >&2; exit 1; }
fi
# The neural noise suppressor (speech.front_end: neural) for this machine's
# daemon, tools and tests: scripts/lib/deepfilter.sh.
# Only beside its library (a copy of this script elsewhere has none).
deepfilter_lib="$(cd "$(dirname "$0")" && pwd)/lib/deepfilter.sh"
if [ -f "$deepfilter_lib" ]; then
  "${as_root[@]}" bash -c "source '$deepfilter_lib' && install_deepfilter $(dpkg --print-architecture) /usr/local/lib/parley/deepfilter"
fi
# The wake word's features (speech_embedding, ParleyWake): scripts/lib/speech-embedding.sh.
speech_embedding_lib="$(cd "$(dirname "$0")" && pwd)/lib/speech-embedding.sh"
if [ -f "$speech_embedding_lib" ]; then
  "${as_root[@]}" bash -c "source '$speech_embedding_lib' && install_speech_embedding /usr/local/share/parley/speech-embedding"
fi
command -v swift >/dev/null || { echo "setup: Swift 6 toolchain not on PATH (expected at /opt/swift/usr/bin)" >&2; exit 1; }
# The Wyoming interop tests (ParleyWyomingTests) drive Home Assistant's side
# with the real `wyoming` package from PyPI, pinned, in a virtualenv under
# .build/ (never in git). Only in a checkout (a copy of this script elsewhere
# has no Package.swift beside it).
root="$(cd "$(dirname "$0")/.." && pwd)"
WYOMING_VERSION=1.9.0
if [ -f "$root/Package.swift" ]; then
  venv="$root/.build/wyoming-venv"
  if ! "$venv/bin/python" -c "import wyoming, sys; sys.exit(wyoming.__version__ != '$WYOMING_VERSION')" 2>/dev/null; then
    echo "setup: installing wyoming==$WYOMING_VERSION (PyPI) into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "wyoming==$WYOMING_VERSION" >&2
  fi
fi
