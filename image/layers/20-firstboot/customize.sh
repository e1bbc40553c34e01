#!/usr/bin/env bash
# Layer 20-firstboot: root growth, boot-partition settings, SSH host keys.
set -euo pipefail
root=$1
source "$(dirname "$0")/../../../scripts/lib/image.sh"
in_root "$root" systemctl enable parley-growroot.service parley-bootconf.service parley-ssh-hostkeys.service
