#!/usr/bin/env bash
# Runs the Home Assistant app against a real Home Assistant (from PyPI, in
# the project's Debian 13 root: Python 3.13) and records its answers for the
# replay server the test suite uses (Tests/Fixtures/home-assistant/).
#
#   sudo scripts/eval-home-assistant.sh            # install (cached), start, capture, test
#   sudo scripts/eval-home-assistant.sh --no-capture   # leave the fixtures as they are
#
# Home Assistant runs in out/ha/root (a chroot sharing the host's network:
# it listens on 127.0.0.1:18123 only), with scripts/lib/home-assistant/
# configuration.yaml: template lights, a switch and locks over
# input_booleans, so nothing needs the network. ha_setup.py onboards it
# (the owner's user, areas, a long-lived token). Prints the time and disk
# it cost (BENCHMARKS.md, "Home Assistant app").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/device-build.sh
require_root
capture=1
[ "${1:-}" = "--no-capture" ] && capture=0

root=$PWD/out/ha/root
port=18123
url=http://127.0.0.1:$port
started=$(date +%s)

# 1. The root: Debian 13's Python 3.13 and Home Assistant in a venv (kept while
# present); a C compiler, as a few of its requirements (lru-dict) have no
# wheel for Python 3.13 and are built.
if [ ! -x "$root/opt/ha/bin/hass" ]; then
    rm -rf "$root"
    mkdir -p "$root"
    tar -xf "$(debian13_base_root amd64)" -C "$root"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # The host's CA bundle: pip's HTTPS may go through a proxy with its own CA.
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt"
    in_root "$root" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev ca-certificates >/dev/null'
    in_root "$root" sh -c 'export PIP_CERT=/etc/host-ca.crt SSL_CERT_FILE=/etc/host-ca.crt
        python3 -m venv /opt/ha && /opt/ha/bin/pip install -q --upgrade pip && /opt/ha/bin/pip install -q homeassistant'
fi
installed=$(date +%s)
version=$(in_root "$root" /opt/ha/bin/python -c 'from homeassistant.const import __version__; print(__version__)')
log "Home Assistant $version, root $(du -sh "$root" | cut -f1), venv $(du -sh "$root/opt/ha" | cut -f1)"

# 2. A fresh configuration each run (onboarding happens once per configuration).
rm -rf "$root/srv/ha-config" && mkdir -p "$root/srv/ha-config" "$root/srv/ha-tools"
cp scripts/lib/home-assistant/configuration.yaml "$root/srv/ha-config/"
cp scripts/lib/home-assistant/ha_setup.py "$root/srv/ha-tools/"

# 3. Start it (its own process group, stopped at exit).
# At its first start Home Assistant installs its integrations' own
# requirements (pyotp, PyQRCode, …) with uv from PyPI: the host's CA bundle again.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt"
setsid bash -c ". scripts/lib/device-build.sh; in_root '$root' env SSL_CERT_FILE=/etc/host-ca.crt UV_NATIVE_TLS=1 \
    /opt/ha/bin/hass -c /srv/ha-config" \
    > out/ha/hass.log 2>&1 &
hass_group=$!
# Home Assistant stops gracefully on SIGTERM, taking a few seconds: waited for.
trap 'kill -- -$hass_group 2>/dev/null || true
    for _ in $(seq 60); do kill -0 -- -$hass_group 2>/dev/null || break; sleep 0.5; done' EXIT
for _ in $(seq 1 600); do
    curl -fsS "$url/api/onboarding" >/dev/null 2>&1 && break
    kill -0 $hass_group 2>/dev/null || { tail -20 out/ha/hass.log; die "Home Assistant exited"; }
    sleep 1
done
up=$(date +%s)
log "Home Assistant answers after $((up - installed)) s"
# The template entities exist once the template integration has set up.
in_root "$root" /opt/ha/bin/python /srv/ha-tools/ha_setup.py "$url" > out/ha/token
chmod 600 out/ha/token
log "onboarded; long-lived token in out/ha/token"

# 4. Record its answers for the replay server.
if [ $capture = 1 ]; then
    mkdir -p Tests/Fixtures/home-assistant
    python3 scripts/lib/home-assistant/capture.py "$url" out/ha/token Tests/Fixtures/home-assistant/exchanges.json
fi

# 5. The app against the real Home Assistant.
printf '{"url": "%s", "token": "%s"}\n' "$url" "$(cat out/ha/token)" > out/ha/home-assistant.json
chmod 600 out/ha/home-assistant.json
HOME_ASSISTANT_CONFIG=$PWD/out/ha/home-assistant.json HA_LIVE_URL=$url \
    python3 examples/apps/home-assistant/test_handler.py --live
finished=$(date +%s)
log "cost: install $((installed - started)) s (0 when cached), start $((up - installed)) s, total $((finished - started)) s; disk $(du -sh "$root" | cut -f1)"
