#!/usr/bin/env bash
# Layer 30-parley: installs Parley's .deb (scripts/package-deb.sh; its
# maintainer scripts create the parley user and enable parleyd), then makes
# the configuration the image's: the target's board, and the parley group
# may use the control socket. The board layer adds its audio devices.
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
[ -n "${PARLEY_DEB:-}" ] || { echo "30-parley: no .deb given (--no-parley): skipped"; exit 0; }
cp "$PARLEY_DEB" "$root/tmp/parley.deb"
# The cached base has the Depends of the .deb (30-parley/packages); a .deb
# that needs more fetches it: name resolution from the build machine meanwhile.
mv "$root/etc/resolv.conf" "$root/etc/resolv.conf.image"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if ! in_root "$root" dpkg -i /tmp/parley.deb; then
    in_root "$root" apt-get update -qq
    in_root "$root" apt-get install -y -f --no-install-recommends
fi
in_root "$root" apt-get clean
rm -rf "$root/tmp/parley.deb" "$root"/var/lib/apt/lists/*
mv "$root/etc/resolv.conf.image" "$root/etc/resolv.conf"
in_root "$root" systemctl is-enabled parleyd.service
config=$root/etc/parley/parley.yaml
sed -i -e "s/^board: .*/board: $BOARD/" \
       -e "s/^control_group: [^ ]*/control_group: parley/" "$config"
grep -q "^board: $BOARD\$" "$config" && grep -q '^control_group: parley' "$config" \
    || { echo "30-parley: $config has no 'board:' or 'control_group:' line to set" >&2; exit 1; }
# The speaker's page is on in the image (off in the package's default file):
# port 80 on the LAN address (the unit drop-in files/etc/systemd/system/
# parleyd.service.d/web.conf lets parleyd bind it), announced by Avahi. Its
# Settings page writes /var/lib/parley/settings.yaml (the daemon's own), laid
# over this file, which stays root's: the daemon may not rewrite its own configuration.
if grep -q '^web:' "$config"; then
    sed -i -e '/^web:/,/^[^ #]/ s/^  enabled: [a-z]*/  enabled: true/' \
           -e '/^web:/,/^[^ #]/ s/^  port: [0-9]*/  port: 80/' "$config"
else
    printf '\nweb:\n  enabled: true\n  port: 80\n  listen: lan\n' >>"$config"
fi
sed -n '/^web:/,/^[^ #]/p' "$config" | grep -q '^  enabled: true' && sed -n '/^web:/,/^[^ #]/p' "$config" | grep -q '^  port: 80\b' \
    || { echo "30-parley: web.enabled and web.port not set in $config" >&2; exit 1; }
chmod 0644 "$config"
# Avahi also announces the Home Assistant satellite (_wyoming._tcp, with
# avahi-publish-service) while home_assistant.satellite is on.
in_root "$root" systemctl enable avahi-daemon.service
