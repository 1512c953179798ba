#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# d. The cgroup-v2 cpuset reset of kernel 6.1: a cgroup write in system.slice (systemd
# enabling the cpuset controller for a via: systemd unit, an operator's `systemctl
# set-property --runtime other.service AllowedCPUs=`) makes the kernel reset the CPU masks of
# the tasks of the cgroups it touches. With default settings (no drift-interval:) the daemon
# must put every managed thread back: at startup before `systemctl start` returns, and within
# 2 s (failure bound 5 s) of an operator's change. `affinityctl rescan` repairs a thread whose
# mask is its cgroup's whole cpuset (what the kernel's reset leaves) and leaves alone one
# someone else moved elsewhere (on-drift: report); after the repairs `affinityctl processes`
# shows the CPUs the kernel reports, and `affinityctl explain` the kernel's mask of a drifted
# thread (NOW).
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
all_placed() { on_cpus "$p1" 1 && on_cpus "$p2" 2-3 && on_cpus "$p3" 0-1 && on_cpus "$p_bg" 0; }

daemon_start || abort "systemctl start affinityd failed"
bad=$(misplaced)
if [[ -z $bad ]]; then
        say "ok: when systemctl start returned, every managed thread was on its CPUs"
else
        fail "when systemctl start returned (via: systemd unit vmt-d2 in the slice): expected vmt-d1 on 1, vmt-d2 on 2-3, vmt-d-hog's 4 threads on 0-1, vmt-d-bg on 0; misplaced:$bad"
fi
say "system.slice cgroup.subtree_control after: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"
wait_until 5 all_placed || fail "5 s after systemctl start, still misplaced:$(misplaced)"

# An operator confines units of the slice: another unit (its cgroup's write resets only its
# own tasks, none managed: nothing may move), then managed units themselves (their tasks are
# reset to the new cpuset, which still holds their policy's CPUs). The bound counts from the
# return of systemctl set-property (the kernel's reset happens during the call, whose time is
# shown). How many repairs the daemon logged is shown as a hint.
repairs() { journalctl -q -u affinityd.service -o cat | grep -c "taken for the kernel.s reset"; }
for change in vmt-d-other.service:0-1 vmt-d-other.service:3 vmt-d1.service:0-2 vmt-d3.service:0-2; do
        u=${change%:*} cpus=${change#*:}
        r0=$(repairs)
        t_call=$(now_ms)
        systemctl set-property --runtime "$u" AllowedCPUs="$cpus"
        t_ret=$(now_ms)
        after=$(misplaced)
        if wait_until 5 all_placed; then
                ms=$(($(now_ms) - t_ret))
                journal_sync
                say "ok: set-property $u AllowedCPUs=$cpus (took $((t_ret - t_call)) ms): every managed thread back $ms ms after it returned (misplaced when it returned:${after:- none}; repairs logged: $(($(repairs) - r0)))"
                [[ $ms -le 2000 ]] || fail "after set-property $u AllowedCPUs=$cpus: back only $ms ms after the call returned (expected within 2000); misplaced when it returned:${after:- none}"
        else
                fail "after systemctl set-property --runtime $u AllowedCPUs=$cpus: not back on their policy's CPUs within 5 s (no drift-interval); when the call returned:${after:- all placed}; after 5 s:$(misplaced)"
        fi
done

# What affinityctl processes shows after the repairs is what the kernel reports.
procs=$(affinityctl processes --no-legend 2>&1)
say "affinityctl processes: $procs"
for p in "$p1" "$p3" "$p_bg"; do
        read_mask /proc/$p/status
        expect_eq "CPUs affinityctl processes shows for PID $p after the repairs (the kernel: $REPLY)" "$REPLY" \
                "$(awk -v p="$p" '$1 == p { print $NF }' <<<"$procs")"
done

# rescan: a mask reset to the whole cpuset is repaired; one moved elsewhere is reported, not
# undone (on-drift: report), and explain shows the kernel's mask next to the applied one.
taskset -pc 0-3 "$p_bg" >/dev/null
affinityctl rescan || fail "affinityctl rescan failed"
expect_on "$p_bg" 0 "vmt-d-bg after its mask was reset to its cgroup's 0-3 and affinityctl rescan"
taskset -pc 3 "$p_bg" >/dev/null
affinityctl rescan || fail "affinityctl rescan failed"
expect_on "$p_bg" 3 "vmt-d-bg moved to 3 by taskset, after affinityctl rescan (on-drift: report leaves it)"
explain=$(affinityctl explain "$p_bg" 2>&1)
expect_eq "NOW column of affinityctl explain for the drifted vmt-d-bg" 3 \
        "$(awk -v p="$p_bg" '$1 == p && NF >= 5 { print $5 }' <<<"$explain")"
say "explain: $explain"
say "affinityctl processes after the drift: $(affinityctl processes --no-legend 2>&1 | grep -E "^ *$p_bg ")"
finish
