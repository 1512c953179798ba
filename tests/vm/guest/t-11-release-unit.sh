#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# e. Releasing a via: systemd unit (its policy removed, reload) while another unit of the
# slice keeps AllowedCPUs= (so the cpuset controller stays on in system.slice): the released
# unit may use every CPU again — cpuset.cpus.effective 0-3 — and the other keeps its own.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-e.yaml <<'YAML'
policies:
  - name: vmt-e
    match: { unit: vmt-e1.service }
    via: systemd
    cpus: "2-3"
YAML
unit vmt-e1
unit vmt-e2 "AllowedCPUs=0-1"
systemctl start vmt-e1.service vmt-e2.service
p1=$(main_pid vmt-e1.service) p2=$(main_pid vmt-e2.service)
cg1=$(unit_cgroup vmt-e1.service) cg2=$(unit_cgroup vmt-e2.service)
eff() { cpulist_norm "$(cat "$1/cpuset.cpus.effective" 2>/dev/null)"; }
daemon_start || abort "systemctl start affinityd failed"
wait_until 5 test "$(eff "$cg1")" == 2-3
expect_eq "vmt-e1 cpuset.cpus.effective while placed" 2-3 "$(eff "$cg1")"
say "system.slice cgroup.subtree_control: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"

rm "$POLICY_DIR/50-e.yaml"
systemctl reload affinityd.service || fail "systemctl reload affinityd failed"
wait_until 5 test "$(eff "$cg1")" == 0-3
expect_eq "vmt-e1 cpuset.cpus.effective after its policy was removed" 0-3 "$(eff "$cg1")"
say "vmt-e1 cpuset.cpus: '$(cat "$cg1/cpuset.cpus" 2>&1)', AllowedCPUs: '$(systemctl show -P AllowedCPUs vmt-e1.service)'"
expect_on "$p1" 0-3 "vmt-e1's task after the release"
expect_eq "vmt-e2 cpuset.cpus.effective (its own AllowedCPUs=0-1)" 0-1 "$(eff "$cg2")"
expect_on "$p2" 0-1 "vmt-e2's task"
finish
