#!/usr/bin/env bash
# The training package's own environment: training/.venv with the pinned
# requirements (PyPI), and the system tools the synthetic voices need.
# Idempotent; prints the venv's python on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
need=()
for p in espeak-ng flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts python3-venv; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  as_root=(); [ "$(id -u)" = 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
venv="$here/.venv"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  cp "$here/requirements.txt" "$stamp"
fi
echo "$venv/bin/python"
