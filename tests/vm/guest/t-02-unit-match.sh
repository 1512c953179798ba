#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# b. match: unit: places every process of a service started while the daemon runs (the main
# process and a child it forked), and nothing of another unit.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-b.yaml <<'YAML'
policies:
  - name: vmt-b
    match: { unit: vmt-b.service }
    cpus: "3"
YAML
probe vmt-b-kid >/dev/null
unit vmt-b "ExecStart=/bin/sh -c '/usr/local/bin/vmt-b-kid infinity & exec /usr/local/bin/vmt-b infinity'"
unit vmt-b-other
daemon_start || abort "systemctl start affinityd failed"
systemctl start vmt-b.service vmt-b-other.service
p=$(main_pid vmt-b.service)
kid=$(pgrep -x vmt-b-kid)
other=$(main_pid vmt-b-other.service)
wait_on "$p" 3 "vmt-b.service main process" 2
[[ -n $kid ]] && wait_on "$kid" 3 "vmt-b.service's forked vmt-b-kid" 2 || fail "vmt-b-kid is not running"
expect_on "$other" 0-3 "vmt-b-other.service (no policy)"
procs=$(affinityctl processes --no-legend 2>&1)
grep -Eq "^ *$p +vmt-b +vmt-b +3 *$" <<<"$procs" || fail "affinityctl processes: expected '$p vmt-b vmt-b 3' in: $procs"
finish
