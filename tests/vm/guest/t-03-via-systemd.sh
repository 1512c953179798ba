#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# c. via: systemd is effective: the unit gets AllowedCPUs=, its cgroup's cpuset.cpus.effective
# is the policy's set, so is its task's mask, and a restarted unit starts there.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-c.yaml <<'YAML'
policies:
  - name: vmt-c
    match: { unit: vmt-c.service }
    via: systemd
    cpus: "2-3"
YAML
unit vmt-c
systemctl start vmt-c.service
p=$(main_pid vmt-c.service)
cg=$(unit_cgroup vmt-c.service)
daemon_start || abort "systemctl start affinityd failed"
effective() { cpulist_norm "$(cat "$cg/cpuset.cpus.effective" 2>/dev/null)"; }
wait_until 5 test "$(effective)" == 2-3
expect_eq "$cg/cpuset.cpus.effective" 2-3 "$(effective)"
expect_eq "$cg/cpuset.cpus" 2-3 "$(cpulist_norm "$(cat "$cg/cpuset.cpus" 2>/dev/null)")"
expect_eq "AllowedCPUs of vmt-c.service" 2-3 "$(systemctl show -P AllowedCPUs vmt-c.service)"
wait_on "$p" 2-3 "vmt-c.service's task"
say "journal: $(journalctl -q -u affinityd -o cat | grep -i vmt-c | tail -n 5)"

systemctl restart vmt-c.service
p2=$(main_pid vmt-c.service)
expect_on "$p2" 2-3 "vmt-c.service's task after a restart of the unit"
finish
