#!/usr/bin/env bash
# Layer 10-system: networkd + resolved (no listeners), timesyncd, SSH off
# until a key arrives (20-firstboot), no host keys shared between devices.
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
in_root "$root" systemctl enable systemd-networkd.service systemd-resolved.service systemd-timesyncd.service
ln -sf /run/systemd/resolve/resolv.conf "$root/etc/resolv.conf"
in_root "$root" systemctl disable ssh.service
rm -f "$root"/etc/ssh/ssh_host_*
