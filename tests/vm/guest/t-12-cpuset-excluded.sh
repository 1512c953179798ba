#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# f. A process whose cgroup cpuset excludes the policy's CPUs (a unit with AllowedCPUs=2-3, a
# policy with cpus "0") is a placement failure, not a placement; it is logged once — not again
# after `affinityctl rescan`, `systemctl reload affinityd` or `systemctl restart affinityd` —
# and `affinityctl explain` says the cpuset is why.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-f.yaml <<'YAML'
policies:
  - name: vmt-f
    match: { unit: vmt-f.service }
    cpus: "0"
YAML
unit vmt-f "AllowedCPUs=2-3"
systemctl start vmt-f.service
p=$(main_pid vmt-f.service)
daemon_start || abort "systemctl start affinityd failed"
expect_on "$p" 2-3 "vmt-f's task (kept by its cpuset)"
expect_eq "ProcessesPlaced" 0 "$(prop ProcessesPlaced)"
failures_now=$(prop PlacementFailures)
[[ $failures_now -ge 1 ]] && say "ok: PlacementFailures = $failures_now" || fail "PlacementFailures: expected at least 1, found $failures_now"

lines() {
        journal_sync
        journal_pid_lines "$p"
}
wait_until 5 test "$(lines)" -ge 1
expect_eq "daemon messages about PID $p after start" 1 "$(lines)"
say "journal: $(journalctl -q -u affinityd PID=$p -o cat)"
affinityctl rescan || fail "affinityctl rescan failed"
sleep 1
expect_eq "daemon messages about PID $p after affinityctl rescan" 1 "$(lines)"
systemctl reload affinityd.service || fail "systemctl reload affinityd failed"
sleep 1
expect_eq "daemon messages about PID $p after systemctl reload affinityd" 1 "$(lines)"
systemctl restart affinityd.service || fail "systemctl restart affinityd failed"
sleep 1
expect_eq "daemon messages about PID $p after systemctl restart affinityd" 1 "$(lines)"
expect_eq "ProcessesPlaced after the restart" 0 "$(prop ProcessesPlaced)"
[[ $(lines) == 1 ]] || say "journal: $(journalctl -q -u affinityd PID=$p -o short-monotonic)"

explain=$(affinityctl explain "$p" 2>&1)
grep -qi cpuset <<<"$explain" && say "ok: affinityctl explain mentions the cpuset" ||
        fail "affinityctl explain $p: expected a reason mentioning the cpuset, got: $explain"
say "explain: $explain"
finish
