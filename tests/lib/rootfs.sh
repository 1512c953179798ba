# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Sourced by tests/vm/build-rootfs, tests/vm/run and policy-examples/kubernetes/build-image:
# a Debian 12 root file system made with debootstrap from the archive the host's apt uses and
# cached per machine, and affinityd installed into a tree as a package would be.

rootfs_suite=bookworm

rootfs_log() { echo "${rootfs_log_prefix:-rootfs}: $*" >&2; }

# The mirror: the first "deb" source for $rootfs_suite in the host's apt configuration,
# one-line (sources.list) or deb822 (*.sources, "URIs:") form.
rootfs_find_mirror() {
        local f uri
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
                [[ -r $f ]] || continue
                uri=$(awk -v s="$rootfs_suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                                         if ($(i + 1) == s) { print $i; exit } }' "$f")
                [[ -n $uri ]] && { echo "$uri"; return 0; }
        done
        for f in /etc/apt/sources.list.d/*.sources; do
                [[ -r $f ]] || continue
                # Paragraphs separated by blank lines; take URIs of one whose Types has deb and
                # whose Suites has the suite itself.
                uri=$(awk -v s="$rootfs_suite" '
                        function flush() { if (deb && suiteok && uri != "") { print uri; found = 1; exit } deb = 0; suiteok = 0; uri = "" }
                        /^[ \t]*$/ { flush(); next }
                        /^#/ { next }
                        tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
                        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) suiteok = 1 }
                        tolower($1) == "uris:" { uri = $2 }
                        END { if (!found) flush() }' "$f")
                [[ -n $uri ]] && { echo "$uri"; return 0; }
        done
        return 1
}

# rootfs_cached CACHE_DIR CUSTOMIZE PACKAGE...
#
# Prints the path of CACHE_DIR/rootfs-HASH/: debootstrap --variant=minbase of bookworm with
# PACKAGEs, then the shell function CUSTOMIZE run with the tree's path, then documentation,
# locales, apt lists and caches removed. HASH covers the package list, CUSTOMIZE's code and
# this file: change any and a new tree is built next to the old one. The tree is built in a
# temporary directory and renamed into place at the end, so a half-built tree is never used;
# older trees in CACHE_DIR are removed once the new one is complete. Progress on standard
# error. Exits 77 without root or debootstrap, 1 when the build fails. While it builds, its EXIT
# trap removes the half-built tree: call it in a command substitution, or before setting a trap
# of your own.
#
# Environment: ROOTFS_MIRROR (or VM_MIRROR) overrides the mirror taken from /etc/apt.
rootfs_cached() {
        local cache_dir=$1 customize=$2
        shift 2
        local packages=("$@") hash target mirror include start
        local lib=${BASH_SOURCE[0]}

        hash=$( { printf '%s\n' "${packages[@]}" "$rootfs_suite"; declare -f "$customize"; cat "$lib"; } |
                sha256sum | cut -c1-16)
        target=$cache_dir/rootfs-$hash
        if [[ -e $target/.complete ]]; then
                echo "$target"
                return 0
        fi
        if [[ $(id -u) != 0 ]]; then
                rootfs_log "needs root (debootstrap, chroot)"
                exit 77
        fi
        command -v debootstrap >/dev/null || { rootfs_log "debootstrap is not installed"; exit 77; }
        mirror=${ROOTFS_MIRROR:-${VM_MIRROR:-$(rootfs_find_mirror || true)}}
        if [[ -z $mirror ]]; then
                rootfs_log "no apt source for $rootfs_suite found in /etc/apt (set ROOTFS_MIRROR=URL)"
                exit 1
        fi

        mkdir -p "$cache_dir"
        # One build at a time; whoever waited finds the tree done.
        exec 9>"$cache_dir/.lock"
        flock 9
        if [[ -e $target/.complete ]]; then
                echo "$target"
                return 0
        fi
        rootfs_tmp=$(mktemp -d "$cache_dir/.rootfs-$hash.XXXXXX")
        trap rootfs_cleanup EXIT

        start=$SECONDS
        rootfs_log "debootstrap $rootfs_suite from $mirror into $rootfs_tmp"
        include=$(IFS=,; echo "${packages[*]}")
        if ! debootstrap --variant=minbase --include="$include" "$rootfs_suite" "$rootfs_tmp" "$mirror" \
                >"$rootfs_tmp.log" 2>&1; then
                tail -n 40 "$rootfs_tmp.log" >&2
                rootfs_log "debootstrap failed (full log: $rootfs_tmp.log)"
                exit 1
        fi
        rm -f "$rootfs_tmp.log"

        "$customize" "$rootfs_tmp"

        # Small: no documentation, locales, apt lists or caches.
        rm -rf "$rootfs_tmp"/usr/share/doc/* "$rootfs_tmp"/usr/share/man/* "$rootfs_tmp"/usr/share/info/* \
                "$rootfs_tmp"/usr/share/locale/* "$rootfs_tmp"/var/lib/apt/lists/* "$rootfs_tmp"/var/cache/apt/* \
                "$rootfs_tmp"/var/cache/debconf/*-old "$rootfs_tmp"/var/log/*.log
        touch "$rootfs_tmp/.complete"

        mv -T "$rootfs_tmp" "$target"
        rootfs_tmp=
        # Trees of other package lists or versions of the scripts are not used again.
        local old
        for old in "$cache_dir"/rootfs-*; do
                [[ $old != "$target" && -e $old/.complete ]] && rm -rf --one-file-system "$old"
        done
        rootfs_log "built $target in $((SECONDS - start)) s ($(du -sh "$target" | cut -f1))"
        echo "$target"
}

# The half-built tree, and whatever CUSTOMIZE left mounted in it.
rootfs_cleanup() {
        if [[ -n ${rootfs_tmp:-} && -d $rootfs_tmp ]]; then
                umount -R "$rootfs_tmp/proc" "$rootfs_tmp/sys" "$rootfs_tmp/dev" 2>/dev/null || true
                rm -rf --one-file-system "$rootfs_tmp"
        fi
}

# rootfs_chroot TREE COMMAND...: COMMAND in TREE with a clean environment.
rootfs_chroot() {
        local tree=$1
        shift
        chroot "$tree" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"
}

# rootfs_install_affinityd SOURCE_DIR PKG_BUILD_DIR STAGE LOG_DIR
#
# Installs affinityd from SOURCE_DIR into the tree STAGE as a packager would: its own build
# directory PKG_BUILD_DIR, configured for /usr and /etc without tests (set up again when it was
# made from another source tree, else rebuilt incrementally), then DESTDIR=STAGE meson install.
# Logs go to LOG_DIR; on failure their tail to standard error. Returns 0, or 1 with the reason
# on standard error.
rootfs_install_affinityd() {
        local src=$1 pkg=$2 stage=$3 logs=$4

        if [[ ! -e $pkg/build.ninja || $(cat "$pkg/.pkg-source" 2>/dev/null) != "$src" ]]; then
                rm -rf "$pkg"
                meson setup "$pkg" "$src" -Dprefix=/usr -Dsysconfdir=/etc -Dtests=false -Dwerror=false \
                        >"$logs/pkg-setup.log" 2>&1 ||
                        { cat "$logs/pkg-setup.log" >&2; rootfs_log "meson setup $pkg failed"; return 1; }
                echo "$src" >"$pkg/.pkg-source"
        fi
        DESTDIR=$stage meson install -C "$pkg" >"$logs/pkg-install.log" 2>&1 ||
                { tail -n 40 "$logs/pkg-install.log" >&2; rootfs_log "meson install -C $pkg failed"; return 1; }
        [[ -x $stage/usr/sbin/affinityd && -x $stage/usr/bin/affinityctl ]] ||
                { rootfs_log "meson install put no /usr/sbin/affinityd or /usr/bin/affinityctl into $stage"; return 1; }
}
