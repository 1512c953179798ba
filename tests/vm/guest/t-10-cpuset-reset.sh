#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# d. The cgroup-v2 cpuset reset of kernel 6.1: a cgroup write in system.slice (systemd
# enabling the cpuset controller for a via: systemd unit, an operator's `systemctl
# set-property --runtime other.service AllowedCPUs=`) makes the kernel reset the CPU masks of
# the tasks of the cgroups it touches. With default settings (no drift-interval:) the daemon
# must put every managed thread back: at startup before `systemctl start` returns, and within
# 2 s (failure bound 5 s) of an operator's change. `affinityctl rescan` repairs a thread whose
# mask is its cgroup's whole cpuset (what the kernel's reset leaves), leaves alone one someone
# else moved elsewhere (on-drift: report), and `affinityctl processes` shows the CPUs the
# kernel reports now.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-d.yaml <<'YAML'
policies:
  - name: vmt-d-plain
    match: { unit: vmt-d1.service }
    cpus: "1"
  - name: vmt-d-sys
    match: { unit: vmt-d2.service }
    via: systemd
    cpus: "2-3"
  - name: vmt-d-threads
    match: { comm: vmt-d-hog }
    cpus: "0-1"
  - name: vmt-d-bg
    match: { comm: vmt-d-bg }
    cpus: "0"
YAML
install -m 0755 "$MEMHOG" /usr/local/bin/vmt-d-hog
unit vmt-d1
unit vmt-d2
unit vmt-d3 "ExecStart=/usr/local/bin/vmt-d-hog -t 3"
unit vmt-d-other
systemctl start vmt-d1.service vmt-d2.service vmt-d3.service vmt-d-other.service
bg_probe vmt-d-bg
p_bg=$BG_PID
p1=$(main_pid vmt-d1.service) p2=$(main_pid vmt-d2.service) p3=$(main_pid vmt-d3.service)
wait_until 10 test "$(ls /proc/$p3/task | wc -l)" == 4 || fail "vmt-d-hog has $(ls /proc/$p3/task | wc -l) threads, not 4"
say "system.slice cgroup.subtree_control before the daemon: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"

# Every managed thread on its policy's CPUs: prints the ones that are not.
misplaced() {
        local out=""
        on_cpus "$p1" 1 || out+=" vmt-d1[$p1]:$(task_masks $p1 | awk '{ printf " %s=%s", $1, $3 }')"
        on_cpus "$p2" 2-3 || out+=" vmt-d2[$p2]:$(task_masks $p2 | awk '{ printf " %s=%s", $1, $3 }')"
        on_cpus "$p3" 0-1 || out+=" vmt-d-hog[$p3]:$(task_masks $p3 | awk '{ printf " %s=%s", $1, $3 }')"
        on_cpus "$p_bg" 0 || out+=" vmt-d-bg[$p_bg]:$(task_masks $p_bg | awk '{ printf " %s=%s", $1, $3 }')"
        echo "$out"
}
all_placed() { [[ -z $(misplaced) ]]; }

daemon_start || abort "systemctl start affinityd failed"
bad=$(misplaced)
if [[ -z $bad ]]; then
        say "ok: when systemctl start returned, every managed thread was on its CPUs"
else
        fail "when systemctl start returned (via: systemd unit vmt-d2 in the slice): expected vmt-d1 on 1, vmt-d2 on 2-3, vmt-d-hog's 4 threads on 0-1, vmt-d-bg on 0; misplaced:$bad"
fi
say "system.slice cgroup.subtree_control after: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"
wait_until 5 all_placed || fail "5 s after systemctl start, still misplaced:$(misplaced)"

# An operator confines another unit of the slice.
for cpus in 0-1 3; do
        t_start=$(date +%s%N)
        systemctl set-property --runtime vmt-d-other.service AllowedCPUs=$cpus
        after=$(misplaced)
        if wait_until 5 all_placed; then
                ms=$((($(date +%s%N) - t_start) / 1000000))
                say "ok: after set-property vmt-d-other.service AllowedCPUs=$cpus every managed thread was back in $ms ms (right after the call:${after:- all placed})"
                [[ $ms -le 2000 ]] || fail "after set-property AllowedCPUs=$cpus: back only after $ms ms (expected within 2000)"
        else
                fail "after systemctl set-property --runtime vmt-d-other.service AllowedCPUs=$cpus: not back on their policy's CPUs within 5 s (no drift-interval); right after the call:${after:- all placed}; after 5 s:$(misplaced)"
        fi
done

# rescan: a mask reset to the whole cpuset is repaired; one moved elsewhere is reported, not
# undone (on-drift: report).
taskset -pc 0-3 "$p_bg" >/dev/null
affinityctl rescan || fail "affinityctl rescan failed"
expect_on "$p_bg" 0 "vmt-d-bg after its mask was reset to its cgroup's 0-3 and affinityctl rescan"
taskset -pc 3 "$p_bg" >/dev/null
affinityctl rescan || fail "affinityctl rescan failed"
expect_on "$p_bg" 3 "vmt-d-bg moved to 3 by taskset, after affinityctl rescan (on-drift: report leaves it)"
procs=$(affinityctl processes --no-legend 2>&1)
line=$(grep -E "^ *$p_bg " <<<"$procs")
cpus_col=$(awk '{ print $NF }' <<<"$line")
expect_eq "CPUs affinityctl processes shows for vmt-d-bg (what the kernel reports now)" 3 "$cpus_col"
say "affinityctl processes: $procs"
finish
