#!/usr/bin/env bash
# `parley understand` on every recording of ../shared/data/coffee-maker/clean
# with the Debian 13 package for arm64 (under qemu-user) and for amd64, each
# installed in its own fresh Debian 13 root: the transcript, intent and slots
# per recording must be the same on both (decode time is printed, not
# compared). Differences are listed one per line.
#
#   scripts/device-understand.sh [DATA_DIR]
#
# Runs niced (qemu-user is CPU-heavy); about 10 minutes on 2 busy cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh
data=$(readlink -f "${1:-../shared/data/coffee-maker/clean}")
[ -d "$data" ] || die "no recordings at $data"
require_root
ensure_host_tools

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ParleyDaemon/Lifecycle/DaemonController.swift)
results=out/understand
mkdir -p "$results"
for arch in amd64 arm64; do
    deb=out/deb/parley_${version}_$arch.deb
    [ -f "$deb" ] || bash scripts/package-deb.sh "$arch" >/dev/null
    root=$PWD/out/understand-root-$arch
    # The installed root is kept while the package is the same.
    if ! cmp -s "$deb" "$root/var/cache/parley-test/parley.deb"; then
        rm -rf "$root"
        mkdir -p "$root/var/cache/parley-test"
        tar -xf "$(debian13_base_root "$arch")" -C "$root"
        cp "$deb" "$root/var/cache/parley-test/parley.deb"
        in_root "$root" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /var/cache/parley-test/parley.deb' >&2
    fi
    rm -rf "$root/var/tmp/recordings"
    cp -r "$data" "$root/var/tmp/recordings"
    log "parley understand on $(ls "$data" | wc -l) recordings, $arch"
    start=$(date +%s)
    in_root "$root" nice -n 10 sh -c 'parley understand --app coffee-maker /var/tmp/recordings/*.wav' >"$results/$arch.jsonl"
    echo "$arch: $(wc -l <"$results/$arch.jsonl") recordings in $(($(date +%s) - start)) s"
done

python3 - "$results/amd64.jsonl" "$results/arm64.jsonl" <<'PY'
import json, sys, statistics
def load(path):
    return {json.loads(l)["file"]: json.loads(l) for l in open(path) if l.strip()}
a, b = load(sys.argv[1]), load(sys.argv[2])
keys = ("transcript", "intent", "slots")
same = [f for f in a if f in b and all(a[f][k] == b[f][k] for k in keys)]
diff = [f for f in a if f not in same]
for f in sorted(diff):
    print("differs:", f.split("/")[-1], {k: a[f].get(k) for k in keys}, "arm64:", {k: b.get(f, {}).get(k) for k in keys})
ratio = statistics.median(b[f]["decode_seconds"] / a[f]["decode_seconds"] for f in same if a[f]["decode_seconds"] > 0) if same else 0
print(f"{len(same)} same, {len(diff)} different of {len(a)} recordings; arm64 (qemu-user) decode time / amd64: median {ratio:.1f}x")
sys.exit(1 if diff else 0)
PY
