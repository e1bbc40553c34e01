# Sourced by the evaluation and benchmark scripts (from the package root):
# the folder of the evaluation recordings (docs/evaluation-data.md), exported
# as PARLEY_SHARED_DATA for parley-bench, which takes it from there alone.
# Default: the `shared/data` folder beside the checkout. The test suite and
# the package never use it (Tests/Fixtures, model/adaptation).
export PARLEY_SHARED_DATA="${PARLEY_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
[ -d "$PARLEY_SHARED_DATA" ] || echo "$(basename "$0"): evaluation data missing: $PARLEY_SHARED_DATA" \
  "(set PARLEY_SHARED_DATA to the folder of docs/evaluation-data.md)" >&2

# build_release PRODUCT...: release builds of the products an evaluation runs,
# unless PARLEY_SKIP_BUILD is set (a calling script built them already).
build_release() {
  [ -z "${PARLEY_SKIP_BUILD:-}" ] || return 0
  local product
  for product in "$@"; do swift build -c release --product "$product" >/dev/null; done
}

# work_folder: sets `work` to WORK (created; mixes and decodes kept there for
# later runs) or to a temporary folder removed when the script exits.
work_folder() {
  if [ -n "${WORK:-}" ]; then work=$WORK; mkdir -p "$work"
  # The trap names the folder itself, not $work, which a script may reuse.
  else work=$(mktemp -d); trap "rm -rf '$work'" EXIT; fi
}
