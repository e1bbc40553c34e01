#!/usr/bin/env bash
# Static Swift runtime or one shared private runtime directory: sizes and
# resident memory of the Debian 13 build, measured in a Debian 13 root of
# ARCH (default amd64, native; arm64 runs under qemu-user, whose memory
# figures include the emulator's own).
#
#   scripts/bench-runtime.sh [amd64|arm64]
#
# Needs out/<arch> (cross-build.sh <arch>) and out/<arch>-static
# (cross-build.sh <arch> --runtime static). For each variant, RUNS times:
# parleyd (default configuration, simulated board) started, `parley status`
# answered, 5 s idle, then VmRSS, PSS and private memory from
# /proc/PID/smaps_rollup; medians printed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh
arch=${1:-amd64}
RUNS=${RUNS:-3}
require_root
[ -x "out/$arch-static/bin/parleyd" ] || die "out/$arch-static missing: run scripts/cross-build.sh $arch --runtime static"
root=$(installed_root "$arch")
install -d "$root/opt/parley-static"
cp out/"$arch"-static/bin/* "$root/opt/parley-static/"

echo "sizes ($arch, stripped):"
for b in parleyd parley parley-bench; do
    printf '  %-13s shared %6.1f MB   static %6.1f MB\n' "$b" \
        "$(echo "$(stat -c %s "out/$arch/bin/$b") / 1048576" | bc -l)" \
        "$(echo "$(stat -c %s "out/$arch-static/bin/$b") / 1048576" | bc -l)"
done
printf '  shared runtime (lib/parley) %.1f MB, of which Foundation %.1f MB (ICU %.1f MB)\n' \
    "$(echo "$(du -sb "out/$arch/lib/parley" | cut -f1) / 1048576" | bc -l)" \
    "$(echo "$(cat out/"$arch"/lib/parley/lib*Foundation*.so | wc -c) / 1048576" | bc -l)" \
    "$(echo "$(stat -c %s "out/$arch/lib/parley/lib_FoundationICU.so") / 1048576" | bc -l)"
printf '  all three binaries: shared %.1f MB (with runtime), static %.1f MB\n' \
    "$(echo "($(cat out/"$arch"/bin/* | wc -c) + $(du -sb "out/$arch/lib/parley" | cut -f1)) / 1048576" | bc -l)" \
    "$(echo "$(cat out/"$arch"-static/bin/* | wc -c) / 1048576" | bc -l)"

cat > "$root/root/bench-runtime.sh" <<'EOF'
#!/bin/sh
# One run: start BINARY as parley, wait for status, idle 5 s, print memory.
bin=$1
install -d -o parley -g parley -m 0750 /run/parley
setpriv --reuid=parley --regid=parley --init-groups "$bin" 2>/dev/null &
pid=$!
i=0
until parley status >/dev/null 2>&1; do i=$((i + 1)); [ $i -gt 600 ] && exit 1; sleep 0.2; done
sleep 5
awk '/^Rss:/ {r=$2} /^Pss:/ {p=$2} /^Private_(Clean|Dirty):/ {v+=$2} END {print r, p, v}' /proc/$pid/smaps_rollup
kill -TERM $pid; wait $pid
EOF
chmod +x "$root/root/bench-runtime.sh"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for variant in shared:/usr/bin/parleyd static:/opt/parley-static/parleyd; do
    rss=() pss=() priv=()
    for _ in $(seq "$RUNS"); do
        read -r r p v < <(in_root "$root" /root/bench-runtime.sh "${variant#*:}")
        rss+=("$r") pss+=("$p") priv+=("$v")
    done
    echo "parleyd idle, ${variant%%:*} runtime ($arch, median of $RUNS): RSS $(( $(median "${rss[@]}") / 1024 )) MB, PSS $(( $(median "${pss[@]}") / 1024 )) MB, private $(( $(median "${priv[@]}") / 1024 )) MB   (RSS runs kB: ${rss[*]})"
done
