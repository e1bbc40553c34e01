# Shared by every script that makes a Debian root with mmdebstrap (sourced).

# mmdebstrap in its own mount namespace. In root mode it mounts /proc, /sys
# and /dev/pts into the root it is making; when it is killed (a CI job or a
# session cut short) those mounts outlive it, and the next run's removal of
# the half-made root meets the host's /sys and /proc (the CI run of
# 2026-12-03 failed so, in swift-sdk.sh). In a private namespace the mounts
# vanish with the last process in it, however it ends.
mmdebstrap_private() {
    unshare --mount --propagation private -- mmdebstrap "$@"
}

# Removes a half-made root that an older run left: first whatever is still
# mounted below it (deepest first: roots from before mmdebstrap_private),
# then the tree, never crossing into another file system.
remove_root() {
    local dir=$1 target
    [ -e "$dir" ] || return 0
    dir=$(readlink -f "$dir")
    # /proc/self/mounts' second field is the mount point (octal escapes for
    # spaces; the cache's paths have none).
    while read -r target; do
        umount --lazy "$target"
    done < <(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
    rm -rf --one-file-system "$dir"
}
