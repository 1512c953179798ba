/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a task's control groups allow, read from /proc and /sys/fs/cgroup under a configurable
 * root (NULL or "/" = the real ones; tests point it at a fixture tree):
 *  - the CPUs its cpuset allows, so a plan can be intersected with them before it is applied
 *    (sched_setaffinity(2) silently narrows to the cpuset, or fails with EINVAL when nothing of
 *    the mask is left: the daemon must say why instead);
 *  - the real-time runtime of its v1 cpu cgroup (CONFIG_RT_GROUP_SCHED), which explains why
 *    SCHED_FIFO / SCHED_RR is refused with EPERM even to root.
 *
 * Layouts understood (cgroups(7)):
 *  - unified (v2): ROOT/sys/fs/cgroup is a cgroup2 mount, /proc/PID/cgroup has one line "0::/path";
 *  - hybrid: v1 controllers under ROOT/sys/fs/cgroup/<controllers>, cgroup2 at
 *    ROOT/sys/fs/cgroup/unified (usually without controllers);
 *  - legacy (v1 only).
 * A v1 hierarchy is looked for where systemd and the distributions mount it: the directory named
 * after its comma-joined controller list as /proc/PID/cgroup writes it ("cpu,cpuacct"), then one
 * named after the controller itself ("cpu": a mount of its own, or systemd's symlink to
 * "cpu,cpuacct"). Cgroup paths are those of /proc/PID/cgroup, relative to the hierarchy's root
 * as the reader's cgroup namespace sees it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

/*
 * For the whole process: the paths of /proc/PID/cgroup can't be looked up under the
 * /sys/fs/cgroup it sees (the process's cgroup namespace is not the one the mount is rooted at:
 * daemon/cgroup-ns.h found it). From then on every function here that would look a task's
 * cgroup up under /sys/fs/cgroup returns -EXDEV instead of reading another cgroup's files.
 */
void cgroup_set_unresolvable(bool unresolvable);

/*
 * The CPUs the cpuset of thread tid of process pid (tid 0: the process, i.e. its leader) allows:
 *  - if the cpuset controller is on the unified hierarchy ("cpuset" in the cgroup2 root's
 *    cgroup.controllers) and the task has a "0::" line: cpuset.cpus.effective of its v2 cgroup,
 *    or of the nearest ancestor that has the file (the controller is not enabled below it);
 *  - else the v1 hierarchy whose controller list holds "cpuset": cpuset.effective_cpus of its
 *    cgroup there, or cpuset.cpus where the kernel has no effective_cpus file.
 * Files read: ROOT/proc/PID[/task/TID]/cgroup, ROOT/sys/fs/cgroup[/unified]/cgroup.controllers,
 * and the cpuset file. CPU numbers are OS numbers.
 * *ret_allowed receives the set as the kernel wrote it (it is never empty for a cgroup holding
 * a task). ret_path (may be NULL) receives the cgroup path the set was read for, as in
 * /proc/PID/cgroup (for messages), newly allocated.
 * Returns 0, -ESRCH (the task is gone), -ENODATA (the task is in no cpuset: no controller on
 * either hierarchy, or its v1 hierarchy is not mounted where expected), -ENOENT (the cgroup
 * directory or its cpuset file is missing, e.g. removed meanwhile), -EXDEV (its cgroup is outside
 * the reader's cgroup namespace: a path starting with "/.."; or cgroup_set_unresolvable()),
 * -EBADMSG (unparsable file),
 * -EINVAL (pid <= 0 or tid < 0), -ENOMEM, -errno.
 */
int cgroup_read_cpuset(const char *root, pid_t pid, pid_t tid, CpuSet *ret_allowed, char **ret_path);

/*
 * ROOT/proc/PID/cgroup, whole, newly allocated into *ret: what cgroups the process is in, one
 * "hierarchy-ID:controllers:path" line per hierarchy. Returns 0, -ESRCH, -EINVAL, -ENOMEM,
 * -errno.
 */
int cgroup_read_membership(const char *root, pid_t pid, char **ret);

/*
 * The cgroup directories whose cpuset files decide the CPUs of a process whose
 * /proc/PID/cgroup says text (cgroup_read_membership()): its own cgroup's directory first, then
 * each ancestor's up to the hierarchy's root directory, on the hierarchy cgroup_read_cpuset()
 * reads (the unified one when it has the cpuset controller, else the v1 cpuset hierarchy). A
 * write to cpuset.cpus or cgroup.subtree_control in any of them can make the kernel set the
 * affinity of the process's threads (docs/cgroups.md). *ret_dirs receives a NULL-terminated,
 * newly allocated strv (ROOT/sys/fs/cgroup/... paths). Reads ROOT/sys/fs/cgroup's
 * cgroup.controllers.
 * Returns 0, -ENODATA (in no cpuset hierarchy), -EXDEV (outside the reader's cgroup namespace),
 * -EBADMSG, -EINVAL, -ENOMEM, -errno.
 */
int cgroup_cpuset_dirs(const char *root, const char *text, char ***ret_dirs);

/*
 * The v1 hierarchy of thread tid of process pid (tid 0: the process) that holds the named
 * controller ("cpuset", "cpu", "name=systemd"): *ret_dir receives the directory of that cgroup
 * (ROOT/sys/fs/cgroup/<hierarchy>/<path>, ready to append "/cpu.rt_runtime_us"), *ret_path the
 * cgroup path from /proc/PID/cgroup; both newly allocated, ret_path may be NULL.
 * Returns 0, -ESRCH, -ENODATA (no v1 line with that controller, or its hierarchy is not mounted
 * under ROOT/sys/fs/cgroup), -EINVAL, -ENOMEM, -errno.
 */
int cgroup_find_v1(
        const char *root, pid_t pid, pid_t tid, const char *controller, char **ret_dir, char **ret_path);

/*
 * cpu.rt_runtime_us of the v1 cpu cgroup of thread tid of process pid (tid 0: the process; a
 * bare TID also works as pid, /proc/TID being the thread's own view): the real-time runtime, in
 * µs per cpu.rt_period_us, that RT_GROUP_SCHED grants the group's SCHED_FIFO / SCHED_RR tasks;
 * -1 means unlimited. A child cgroup starts with 0, and then the kernel refuses any real-time
 * policy for its tasks with EPERM, whatever the caller's capabilities. ret_path (may be NULL)
 * receives the cgroup path, newly allocated.
 * Only cgroup v1 has the file (cgroup2 has no RT_GROUP_SCHED interface).
 * Returns 0, -ESRCH, -ENODATA (no v1 cpu hierarchy), -ENOENT (no cpu.rt_runtime_us: a kernel
 * without CONFIG_RT_GROUP_SCHED, or the cgroup vanished), -EBADMSG, -EINVAL, -ENOMEM, -errno.
 */
int cgroup_read_rt_runtime(const char *root, pid_t pid, pid_t tid, int64_t *ret_runtime_us, char **ret_path);

/*
 * Formats the per-process error for a plan that a task's cpuset rules out entirely:
 * "policy web wants 8-15, PID 4242's cgroup allows 0-3" (cpu-lists of OS CPU numbers; an empty
 * set is written "no CPU"). policy is the policy's name. Newly allocated into *ret.
 * Returns 0, -EINVAL (policy or a set is NULL), -ENOMEM.
 */
int cgroup_format_cpuset_conflict(
        const char *policy, const CpuSet *wanted, pid_t pid, const CpuSet *allowed, char **ret);
