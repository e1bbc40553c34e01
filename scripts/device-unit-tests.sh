#!/usr/bin/env bash
# Runs Parley's tests built for ARCH (`cross-build.sh ARCH --tests`: Debian's
# Swift 6.2, libgpiod v2) in a Debian 13 root of that architecture with the
# package and its dependencies installed; arm64 runs under qemu-user. By
# default the hardware module's tests, so that the libgpiod v2 path is
# tested on the system it ships on; FILTER selects others.
#
#   FILTER=ParleyHardwareTests scripts/device-unit-tests.sh arm64|amd64
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh
arch=${1:-}
swift_triple "$arch" >/dev/null
FILTER=${FILTER:-ParleyHardwareTests}
require_root
ensure_host_tools
bundle=out/$arch-tests/ParleyPackageTests.xctest
[ -f "$bundle" ] || bash scripts/cross-build.sh "$arch" --tests >/dev/null
eval "$(bash scripts/swift-sdk.sh)"
bundle_var=SDK_BUNDLE_$arch
# ROOT: another Debian 13 root with the dependencies (e.g. device-test.sh's).
root=${ROOT:-$(installed_root "$arch")}
# The test runtime (XCTest, Swift Testing) where the bundle's RUNPATH points.
rm -rf "$root/usr/lib/swift/linux"
mkdir -p "$root/usr/lib/swift"
cp -a "${!bundle_var}/debian13-$arch/sysroot/usr/lib/swift/linux" "$root/usr/lib/swift/"
cp "$bundle" "$root/root/ParleyPackageTests.xctest"
# Tests find the shipped board files beside their sources (#filePath).
rm -rf "$root$PWD/board"
mkdir -p "$root$PWD"
cp -r board "$root$PWD/board"
out=$(in_root "$root" nice -n 10 /root/ParleyPackageTests.xctest --testing-library swift-testing --filter "$FILTER" 2>&1) || true
echo "$out" | grep -E '✘|passed|failed' | tail -40
grep -qE '^✔ Test run with [0-9]+ tests? .*passed' <<<"$out"
