#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What `meson install` puts in place is what the installed daemon reads: installs the build
# into a scratch DESTDIR and checks that the configuration directory it created
# (SYSCONFDIR/affinityd/policy.d) and the unit's ExecStart= are the ones the installed
# affinityd and affinityctl name in --help, for whatever prefix and sysconfdir the build has.
# Arguments: the meson executable, the build directory, and the expected configuration,
# vendor policy and runtime directories as meson computed them.
set -euo pipefail
meson=$1 build=$2 conf_dir=$3 vendor_dir=$4 runtime_dir=$5

dest=$(mktemp -d /tmp/affinityd-install-XXXXXX)
trap 'rm -rf "$dest"' EXIT
"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null

fail=0
check() { # check WHAT CONDITION...
        local what=$1
        shift
        if ! "$@"; then
                echo "FAIL: $what" >&2
                fail=1
        fi
}

check "meson installed $conf_dir/policy.d" test -d "$dest$conf_dir/policy.d"
daemon=$(find "$dest" -path '*/sbin/affinityd' -type f | head -n1)
ctl=$(find "$dest" -path '*/bin/affinityctl' -type f | head -n1)
unit=$(find "$dest" -name affinityd.service -type f | head -n1)
check "affinityd installed" test -n "$daemon"
check "affinityctl installed" test -n "$ctl"
check "affinityd.service installed" test -n "$unit"

help=$("$daemon" --help)
for dir in "$conf_dir/affinityd.yaml" "$conf_dir/policy.d/" "$vendor_dir/" "$runtime_dir/policy.d/"; do
        check "affinityd --help names $dir (the directory it reads)" grep -qF -- "$dir" <<<"$help"
done
check "affinityd --help names no other configuration directory" \
        test -z "$(grep -oE '/[a-z/]*etc/affinityd' <<<"$help" | grep -vxF -- "$conf_dir" || true)"

# affinityctl validate with no path validates the standard path: an error in the installed
# configuration directory's policy.d would be reported by name. Checked on the strings of the
# binary, since running it would read the host's, not DESTDIR's, directories.
check "affinityctl reads $conf_dir" grep -qaF -- "$conf_dir/policy.d" "$ctl"

# The unit starts the installed daemon.
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
check "ExecStart=$exec_start is the installed daemon" test -x "$dest$exec_start"

# The Prometheus endpoint: its socket beside affinityd.service, and its service runs the
# installed affinityctl on the socket systemd passes.
unit_dir=$(dirname "$unit")
check "affinityd-metrics.socket installed beside affinityd.service" test -f "$unit_dir/affinityd-metrics.socket"
metrics_start=$(sed -n 's/^ExecStart=//p' "$unit_dir/affinityd-metrics.service" 2>/dev/null)
check "affinityd-metrics.service runs the installed affinityctl (ExecStart=$metrics_start)" \
        test "$metrics_start" = "${ctl#"$dest"} metrics --listen=systemd"
check "affinityd-metrics.service runs as the user of sysusers.d/affinityd-metrics.conf" \
        grep -qx "User=affinityd-metrics" "$unit_dir/affinityd-metrics.service"
check "sysusers.d/affinityd-metrics.conf installed" \
        test -n "$(find "$dest" -path '*/sysusers.d/affinityd-metrics.conf' -type f)"
check "metrics.md installed" test -n "$(find "$dest" -path '*/doc/affinityd/metrics.md' -type f)"

[ "$fail" = 0 ] && echo "ok: configuration $conf_dir, vendor policies $vendor_dir, runtime $runtime_dir"
exit $fail
