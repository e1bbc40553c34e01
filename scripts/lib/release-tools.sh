# Sourced by evaluation scripts: builds the release `parley` and
# `parley-bench` they run, unless PARLEY_SKIP_BUILD is set (a caller that
# built them already, or a run measuring binaries as they are).
release_tools() {
  [ -n "${PARLEY_SKIP_BUILD:-}" ] && return 0
  swift build -c release --product parley >/dev/null
  swift build -c release --product parley-bench >/dev/null
}
