#!/usr/bin/env bash
# Host tools the image build and boot test need (Debian 12 or 13 host).
# Idempotent and quiet when everything is there; image-build.sh and
# image-test.sh call it first, so a fresh machine needs nothing by hand.
set -euo pipefail
PACKAGES=(
  mmdebstrap debian-archive-keyring     # the root file systems, from Debian 13 packages
  qemu-user-static binfmt-support       # arm64 maintainer scripts while building the Pi root
  dosfstools mtools                     # FAT boot partition without mounting (mkfs.vfat, mcopy)
  e2fsprogs fdisk                       # ext4 root from a directory (mkfs.ext4 -d), sfdisk
  qemu-system-x86 qemu-system-arm       # booting the images
  qemu-utils                            # qemu-img (overlays for the power-cut test)
  openssh-client                        # talking to the booted VM
  sox espeak-ng zstd                       # the "hey" + order played into the VM's microphone
  python3 file binutils                 # image checks (ELF interpreter, NEEDED libraries)
  rauc squashfs-tools openssl           # the A/B image's signed update bundle and its development key
  u-boot-tools                          # the Pi image's boot.scr (mkimage)
  u-boot-qemu                           # U-Boot for QEMU's arm64 virt machine: the Pi image's boot.scr under test
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "image-deps: installing ${missing[*]}" >&2
  as_root=(env DEBIAN_FRONTEND=noninteractive)
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "image-deps: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo "${as_root[@]}")
  fi
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# qemu-user-static registers its binfmt handlers on install; a container may
# have missed that (no systemd): register them now if arm64 is not runnable.
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
  update-binfmts --enable qemu-aarch64 2>/dev/null || true
fi
