# Sourced by the evaluation and benchmark scripts (from the package root):
# the folder of the evaluation recordings (docs/evaluation-data.md), exported
# as PARLEY_SHARED_DATA for parley-bench, which takes it from there alone.
# Default: the `shared/data` folder beside the checkout. The test suite and
# the package never use it (Tests/Fixtures, model/adaptation).
export PARLEY_SHARED_DATA="${PARLEY_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
[ -d "$PARLEY_SHARED_DATA" ] || echo "$(basename "$0"): evaluation data missing: $PARLEY_SHARED_DATA" \
  "(set PARLEY_SHARED_DATA to the folder of docs/evaluation-data.md)" >&2
