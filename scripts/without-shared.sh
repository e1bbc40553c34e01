#!/usr/bin/env bash
# Runs a command with the evaluation data beside the checkout (../shared,
# docs/evaluation-data.md) out of reach, to prove the command needs only the
# repository: CI runs the test suite this way (.ci/run).
#
#   scripts/without-shared.sh CMD [ARG...]
#
# When ../shared exists, CMD runs in a private mount namespace (unshare -m,
# as root; through sudo otherwise) with an empty tmpfs mounted over it, so
# nothing outside that namespace sees a change; PARLEY_SHARED_DATA is unset.
# When there is no ../shared, CMD simply runs. CMD runs from the package root.
set -euo pipefail
cd "$(dirname "$0")/.."
(($#)) || { echo "usage: scripts/without-shared.sh CMD [ARG...]" >&2; exit 2; }
unset PARLEY_SHARED_DATA
shared=$(cd .. && pwd)/shared
if [ ! -e "$shared" ]; then
  echo "without-shared: no $shared; running $* as it is" >&2
  exec "$@"
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "without-shared: hiding $shared needs root (unshare -m) or sudo" >&2; exit 1; }
  as_root=(sudo --preserve-env)
fi
echo "without-shared: $shared hidden under an empty tmpfs for: $*" >&2
# The inner shell mounts, checks, and drops back to the caller's user for CMD.
exec "${as_root[@]}" unshare --mount --propagation private -- bash -c '
  set -euo pipefail
  shared=$1 user=$2; shift 2
  mount -t tmpfs -o size=1m,mode=0555 parley-no-shared "$shared"
  if [ -n "$(ls -A "$shared")" ]; then echo "without-shared: $shared is still visible" >&2; exit 1; fi
  if [ "$user" = 0 ]; then exec "$@"; fi
  exec setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@"
' without-shared "$shared" "$(id -u)" "$@"
