#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest is the machine the lane promises (systemd 252 as PID 1, cgroup v2 with cpuset, 2
# NUMA nodes of one core with 2 SMT siblings each, kernel 6.1), and the enabled affinityd was
# started at boot on the system bus.
. /usr/lib/affinityd-vm-tests/lib.sh

expect_eq "PID 1" systemd "$(cat /proc/1/comm)"
expect_eq "systemd version" 252 "$(systemctl --version | awk 'NR == 1 { print $2 }')"
expect_eq "kernel" 6.1 "$(uname -r | cut -d. -f1-2)"
expect_eq "/sys/fs/cgroup" cgroup2fs "$(stat -f -c %T /sys/fs/cgroup)"
grep -qw cpuset /sys/fs/cgroup/cgroup.controllers && say "ok: cpuset controller available" ||
        fail "no cpuset in /sys/fs/cgroup/cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
expect_eq "online CPUs" 0-3 "$(cat /sys/devices/system/cpu/online)"
expect_eq "NUMA nodes" 0-1 "$(cat /sys/devices/system/node/online)"
expect_eq "node0 CPUs" 0-1 "$(cat /sys/devices/system/node/node0/cpulist)"
expect_eq "node1 CPUs" 2-3 "$(cat /sys/devices/system/node/node1/cpulist)"
for c in 0 1 2 3; do
        expect_eq "cpu$c SMT siblings" "$([[ $c -lt 2 ]] && echo 0-1 || echo 2-3)" \
                "$(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"
        expect_eq "cpu$c package" "$((c / 2))" "$(cat /sys/devices/system/cpu/cpu$c/topology/physical_package_id)"
done
say "numactl --hardware: $(numactl --hardware | tr '\n' ';')"
if n=$(nic); then
        say "NIC $n ($NIC_MODE): $(ls /sys/class/net/$n/queues | tr '\n' ' ')"
else
        fail "no virtio-net interface: $(ls /sys/class/net)"
fi

expect_eq "affinityd at boot" active "$(systemctl is-active affinityd.service)"
expect_eq "State" running "$(prop State)"
expect_eq "Discovery" netlink "$(prop Discovery)"
say "Topology: $(prop Topology)"
say "$(affinityctl status 2>&1)"
finish
