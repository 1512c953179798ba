#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# l. With restore-on-exit: true, `systemctl stop affinityd` gives every placed thread its
# original mask back (and leaves no live record in the originals journal).
. /usr/lib/affinityd-vm-tests/lib.sh
reset

settings <<'YAML'
restore-on-exit: true
YAML
policy 50-l.yaml <<'YAML'
policies:
  - name: vmt-l
    match: { comm: [vmt-l-probe, vmt-l-hog] }
    cpus: "2"
YAML
bg_probe vmt-l-probe 0,1,3
p=$BG_PID
install -m 0755 "$MEMHOG" /usr/local/bin/vmt-l-hog
rm -f /run/vmt-l.ready
taskset -c 1 /usr/local/bin/vmt-l-hog -t 2 -r /run/vmt-l.ready &
hog=$!
echo "$hog" >>/run/vmt-pids
wait_until 10 test -s /run/vmt-l.ready || abort "vmt-l-hog did not get ready"
expect_on "$p" 0-1,3 "vmt-l-probe before the daemon"

daemon_start || abort "systemctl start affinityd failed"
expect_on "$p" 2 "vmt-l-probe placed"
expect_on "$hog" 2 "vmt-l-hog placed"
say "originals journal records: $(journal_live)"
expect_eq "journal records the probe and the hog" "$(printf '%s\n' "$p" "$hog" | sort -n | tr '\n' ' ' | sed 's/ $//')" "$(journal_live)"

systemctl stop affinityd.service || fail "systemctl stop affinityd failed"
expect_eq "affinityd after stop" inactive "$(systemctl is-active affinityd.service)"
expect_on "$p" 0-1,3 "vmt-l-probe after systemctl stop (its original)"
expect_on "$hog" 1 "vmt-l-hog after systemctl stop (its original)"
expect_eq "records left in /run/affinityd/originals" "" "$(journal_live)"
finish
