#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# n. cpus: { within: cpuset } on cgroup v2: a unit's AllowedCPUs= stands for the exclusive CPUs
# the kubelet gives a Guaranteed pod. Each worker thread (threads: spread) gets its own CPU of
# the unit's cgroup, one per core first, the main thread what they leave; when the cgroup's
# CPUs change (systemctl set-property --runtime ... AllowedCPUs=, which kernel 6.1 answers by
# resetting the tasks' masks), the daemon places them again within the new set.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-n.yaml <<'YAML'
policies:
  - name: vmt-n
    match: { unit: vmt-n.service }
    cpus: { within: cpuset }
    threads:
      - name: "hog-worker-*"
        cpus: spread
YAML
install -m 0755 "$MEMHOG" /usr/local/bin/vmt-n-hog
unit vmt-n "ExecStart=/usr/local/bin/vmt-n-hog -t 2" "AllowedCPUs=2-3"
systemctl start vmt-n.service
p=$(main_pid vmt-n.service)
wait_until 10 test "$(ls /proc/$p/task | wc -l)" == 3 || fail "vmt-n-hog has $(ls /proc/$p/task | wc -l) threads, not 3"
daemon_start || abort "systemctl start affinityd failed"

siblings() { cat /sys/devices/system/cpu/cpu$1/topology/thread_siblings_list; }
# masks: "COMM=CPUS ..." of the threads of p, sorted by comm (the workers' names differ)
masks() { task_masks "$p" | awk '{ print $2 "=" $3 }' | sort | tr '\n' ' ' | sed 's/ $//'; }
# spread_over ALLOWED: each worker on one CPU of ALLOWED, the two on different cores if ALLOWED
# has two, and the main thread on ALLOWED but the workers' CPUs (all of ALLOWED if none is left)
spread_over() {
        local w0 w1 main
        w0=$(task_masks "$p" | awk '$2 == "hog-worker-0" { print $3 }')
        w1=$(task_masks "$p" | awk '$2 == "hog-worker-1" { print $3 }')
        main=$(task_masks "$p" | awk '$2 == "vmt-n-hog" { print $3 }')
        [[ $w0 =~ ^[0-9]+$ && $w1 =~ ^[0-9]+$ && $w0 != "$w1" ]] || return 1
        case $1 in
        2-3) [[ $main == 2-3 ]] ;;
        0-3)
                local rest c
                rest=$(for c in 0 1 2 3; do [[ $c != "$w0" && $c != "$w1" ]] && echo "$c"; done | paste -sd,)
                [[ $(siblings "$w0") != "$(siblings "$w1")" && $main == "$(cpulist_norm "$rest")" ]]
                ;;
        *) return 1 ;;
        esac
}

# One core's two siblings: a worker on each, the main thread on both (nothing is left).
if wait_until 10 spread_over 2-3; then
        say "ok: AllowedCPUs=2-3: $(masks)"
else
        fail "AllowedCPUs=2-3: expected a worker on 2 and one on 3, the main thread on 2-3, found: $(masks)"
fi

# The cgroup widened to both cores: the workers on different cores, the main thread on the rest.
systemctl set-property --runtime vmt-n.service AllowedCPUs=0-3 || fail "set-property AllowedCPUs=0-3 failed"
if wait_until 10 spread_over 0-3; then
        say "ok: AllowedCPUs=0-3: $(masks)"
else
        fail "AllowedCPUs=0-3: expected the workers on two different cores, the main thread on the other CPUs, found: $(masks)"
fi

# Narrowed to one CPU: everything there.
systemctl set-property --runtime vmt-n.service AllowedCPUs=1 || fail "set-property AllowedCPUs=1 failed"
wait_on "$p" 1 "vmt-n-hog with AllowedCPUs=1" 10

journal_sync
n=$(journalctl -q -u affinityd.service -o cat --no-pager | grep -c "The cgroup of vmt-n-hog\[$p\] allows CPUs")
[[ $n -ge 2 ]] && say "ok: the daemon logged $n cgroup changes of PID $p" ||
        fail "expected at least 2 'The cgroup of vmt-n-hog[$p] allows CPUs' messages, found $n"
explain=$(affinityctl explain "$p" 2>&1)
grep -q "within: cpuset: its cgroup allows 1" <<<"$explain" && say "ok: affinityctl explain shows the cgroup's CPUs" ||
        fail "affinityctl explain $p: expected 'within: cpuset: its cgroup allows 1', got: $explain"
finish
