#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# a. "active" means "placed": processes running before the daemon (a background process, a
# service's, a multi-threaded one) are on their policy's CPUs the moment `systemctl start
# affinityd` returns; `affinityctl status` and `processes` work over the system bus; the
# journal has each placement.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-a.yaml <<'YAML'
policies:
  - name: vmt-a
    match: { comm: vmt-a-probe }
    cpus: "2"
  - name: vmt-a-threads
    match: { comm: vmt-a-hog }
    cpus: "1,3"
YAML
bg_probe vmt-a-probe
p_bg=$BG_PID
unit vmt-a-svc "ExecStart=/usr/local/bin/vmt-a-probe infinity"
systemctl start vmt-a-svc.service
p_svc=$(main_pid vmt-a-svc.service)
install -m 0755 "$MEMHOG" /usr/local/bin/vmt-a-hog
rm -f /run/vmt-a.ready
/usr/local/bin/vmt-a-hog -t 3 -r /run/vmt-a.ready &
p_hog=$!
echo "$p_hog" >>/run/vmt-pids
wait_until 10 test -s /run/vmt-a.ready || abort "vmt-a-hog did not get ready"
say "before: bg $p_bg [$(task_masks $p_bg)], svc $p_svc [$(task_masks $p_svc)], hog $p_hog: $(task_masks $p_hog | wc -l) threads"

daemon_start || abort "systemctl start affinityd failed: $(systemctl status affinityd --no-pager 2>&1 | tail -n 20)"
# No waiting: the unit is active only after the first full placement.
expect_on "$p_bg" 2 "background vmt-a-probe right after systemctl start"
expect_on "$p_svc" 2 "vmt-a-svc.service's vmt-a-probe right after systemctl start"
expect_on "$p_hog" 1,3 "4-thread vmt-a-hog right after systemctl start"
expect_eq "threads of vmt-a-hog" 4 "$(task_masks $p_hog | wc -l)"

if status=$(affinityctl status 2>&1); then
        say "ok: affinityctl status"
        grep -Eq '^ *State: running$' <<<"$status" || fail "affinityctl status: no 'State: running' in: $status"
        grep -Eq '^ *Managed processes: 3$' <<<"$status" || fail "affinityctl status: expected 'Managed processes: 3' in: $status"
else
        fail "affinityctl status failed: $status"
fi
expect_eq "ManagedProcesses (busctl)" 3 "$(prop ManagedProcesses)"
procs=$(affinityctl processes --no-legend 2>&1)
for p in "$p_bg" "$p_svc" "$p_hog"; do
        grep -Eq "^ *$p " <<<"$procs" || fail "affinityctl processes: PID $p missing in: $procs"
done
say "affinityctl processes: $procs"

for p in "$p_bg" "$p_svc" "$p_hog"; do
        if wait_until 5 test "$(journal_placed "$p")" -ge 1; then
                say "ok: journal: $(journalctl -q -u affinityd MESSAGE_ID=$MSG_PLACED PID=$p -o cat)"
        else
                fail "no 'placed' message (MESSAGE_ID=$MSG_PLACED) with PID=$p in the journal"
        fi
done
finish
