/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * NUMA memory of running processes: moving the pages a process has already allocated from some
 * nodes to others (migrate_pages(2) through libnuma's numa_migrate_pages()), and counting how
 * many of its pages sit on each node (/proc/PID/numa_maps), so callers can report what moved.
 *
 * What can and can't be done from outside a running process:
 *  - its memory policy (set_mempolicy(2), mbind(2)) can only be set by itself; no syscall sets
 *    another task's, so "allocate new memory on node N" cannot be imposed on it directly;
 *  - under the default (local) policy a thread allocates on the node of the CPU it runs on:
 *    pinning its CPUs to one node makes its new memory local to that node;
 *  - pages already allocated can be moved, for the whole process, with migrate_pages(2); they
 *    are moved, not locked there: later allocations follow the policy and the CPUs again;
 *  - strict binding of a running process needs a cgroup: cpuset.mems (v1 with
 *    cpuset.memory_migrate = 1, or v2 cpuset.mems) binds every allocation of its tasks, which
 *    is what systemd's AllowedMemoryNodes= sets.
 * Node numbers are the kernel's NUMA node numbers (as in /sys/devices/system/node/nodeN), held
 * in a CpuSet (bit i = node i).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

/*
 * Moves the pages of process pid (0: the calling process) that are on the nodes in from to the
 * nodes in to, with numa_migrate_pages(3) (migrate_pages(2)), which maps the nodes the way
 * cpuset remapping does (the i-th node of from to the i-th node of to, wrapping around).
 * Pages shared with other processes move only if the caller has CAP_SYS_NICE (root does).
 * Every node of from and to must exist on this machine (at most numa_max_node() and in
 * numa_nodes_ptr, libnuma's set of configured nodes): a node that doesn't is -ENOENT before
 * any syscall.
 * Returns the number of pages that could NOT be moved (>= 0: 0 means everything that had to
 * move moved), -EINVAL (a set is NULL or empty, or pid < 0; from the kernel: a target node
 * without memory, or a process that has exited and has no memory left, a zombie), -ENOENT (a
 * node doesn't exist), -EOPNOTSUPP (no NUMA support: numa_available() < 0), -ESRCH (no such
 * process, = APPLY_GONE), -EPERM (no CAP_SYS_NICE over another user's process), -ENOMEM, -errno.
 */
int apply_numa_migrate(pid_t pid, const CpuSet *from, const CpuSet *to);

/* Pages of a process on one NUMA node, as /proc/PID/numa_maps counts them. */
typedef struct NumaNodePages {
        uint64_t pages; /* pages on this node, each of its mapping's page size (a 2 MiB huge page
                         * counts as one): the sum of the mappings' "N<node>=<pages>" */
        uint64_t kib;   /* the same in KiB: pages × kernelpagesize_kB of each mapping */
} NumaNodePages;

/*
 * Parses the text of a /proc/PID/numa_maps file (proc(5), numa(7)): one mapping per line,
 * "ADDRESS POLICY TOKEN...". For a mapping with resident pages the kernel ends the line with
 * "N<node>=<pages>" tokens (resident pages per node) and "kernelpagesize_kB=<n>" (its page
 * size); a line not ending in kernelpagesize_kB= has nothing resident and counts nothing. The
 * line is read from its end, because the kernel does not escape spaces in the file= path that
 * may come before; other tokens (anon=, dirty=, file=, huge, ...) are ignored.
 * *ret receives a newly allocated array indexed by node number, *ret_n its length (highest
 * node seen + 1; NULL and 0 when no page is on any node). Node numbers must be below
 * CPUSET_MAX_CPUS. Returns 0, -EBADMSG (malformed N or kernelpagesize_kB token, node too
 * large, line without an address), -ENOMEM. Out parameters written only on success.
 */
int apply_numa_parse_maps(const char *text, NumaNodePages **ret, size_t *ret_n);

/*
 * Reads and parses ROOT/proc/PID/numa_maps (root NULL or "/": the real /proc; pid > 0) as
 * apply_numa_parse_maps(). Reading another process's numa_maps needs ptrace read access
 * (root has it). A zombie's file is empty: no pages. Returns the same as
 * apply_numa_parse_maps(), and -ESRCH (the process is gone), -EACCES, -EINVAL, -errno.
 */
int apply_numa_read_pages(const char *root, pid_t pid, NumaNodePages **ret, size_t *ret_n);

/*
 * Sums an array from apply_numa_read_pages() over the nodes in nodes: pages and KiB on those
 * nodes (nodes beyond the array count nothing). For "N pages (M KiB) now on nodes X" reports:
 * count before and after apply_numa_migrate(), compare the sums over the target nodes.
 * Cannot fail.
 */
NumaNodePages apply_numa_sum(const NumaNodePages *per_node, size_t n, const CpuSet *nodes);
