#!/usr/bin/env bash
# Layer 00-base: host name, mounts, persistent journal, no password anywhere.
set -euo pipefail
root=$1
echo parley >"$root/etc/hostname"
cat >"$root/etc/hosts" <<HOSTS
127.0.0.1	localhost
127.0.1.1	parley
::1		localhost ip6-localhost ip6-loopback
HOSTS
# fstab is the A/B layout's (40-ab): the boot partition holds sysconf.txt and
# wpa_supplicant.conf secrets until first boot, so it is root's only.
mkdir -p "$root/boot/firmware" "$root/var/log/journal"
# Each device makes its own machine id on first boot (ConditionFirstBoot).
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"
# No default password: root is locked; access is by an SSH key or a user
# from the boot partition (20-firstboot).
sed -i 's/^root:[^:]*:/root:*:/' "$root/etc/shadow"
