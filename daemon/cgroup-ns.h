/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The cgroup namespace the daemon reads cgroup paths in. In a container (a Kubernetes DaemonSet
 * with hostPID: true) the daemon sees the node's processes, but the runtime gives it a cgroup
 * namespace of its own: /proc/PID/cgroup then shows every other process's path relative to the
 * container's cgroup ("/../../kubepods-pod<uid>.slice/…"), which cgroup: globs written for the
 * host don't match and which can't be looked up under the host's /sys/fs/cgroup. With hostPID,
 * the kernel's threads are visible, and they are in the node's (the initial) cgroup namespace:
 * the daemon joins that one at start (setns(2), CAP_SYS_ADMIN), so it reads paths as the node
 * does. See docs/kubernetes.md.
 */

/*
 * Joins the cgroup namespace of PID 2 when it is kthreadd, a kernel thread (/proc/2/stat's
 * flags; in a PID namespace of a container's own there is none), and its namespace is not the
 * caller's (/proc/2/ns/cgroup and /proc/self/ns/cgroup differ, by device and inode). Then,
 * joined or not, checks that /sys/fs/cgroup shows the tree the daemon's cgroup paths are in
 * (the directory its own path names there lists it in cgroup.procs); where it does not, no
 * path is looked up from then on (lib/cgroup.h: cgroup_set_unresolvable()) rather than the
 * files of another cgroup read. Logs what it did (info), why it could not join (notice: paths
 * stay relative, pod:, namespace: and container: still work) and a tree that is not the
 * namespace's (a warning: cpusets are not read). Called once, before any thread is started.
 * Returns 1 (joined), 0 (nothing to do: no cgroup namespaces, no kernel thread to be seen, or
 * the node's namespace is ours already), or the -errno of open(2) or setns(2) (not joined).
 */
int cgroup_ns_join_init(void);
