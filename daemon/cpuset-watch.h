/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Watching the cgroups that decide managed processes' CPUs. On cgroup v2 before Linux 6.2 (no
 * user_cpus_ptr) and on v1, the kernel sets the affinity of every task of a cgroup to its
 * cpuset's CPUs when cpuset.cpus of that cgroup or an ancestor is written, when the cpuset
 * controller is switched on or off above it (cgroup.subtree_control), and when a task is moved
 * into it (cgroup.procs): systemd does all three for AllowedCPUs= and unit starts. Nothing
 * tells a placer; but the write itself is a write(2) to a cgroupfs file, which inotify reports
 * as IN_MODIFY to a watch on the file's directory. So the directories of each managed process's
 * cgroup and of its ancestors (lib/cgroup.h: cgroup_cpuset_dirs()) are watched, and the callback
 * runs CPUSET_WATCH_DEBOUNCE_USEC after the last such write of a burst (at most
 * CPUSET_WATCH_MAX_DELAY_USEC after its first): the manager then checks what the kernel
 * reports now (docs/cgroups.md).
 *
 * The watches are not removed when processes exit. A removed cgroup's watch is dropped when its
 * parent's watch reports the directory deleted (IN_DELETE): cgroupfs sends no IN_IGNORED for
 * it. Their number is bounded by CPUSET_WATCH_MAX.
 */

#include <sys/types.h>

#include <systemd/sd-event.h>

typedef struct CpusetWatch CpusetWatch;

/* The quiet time after the last cpuset write of a burst before the callback runs, in µs. */
#define CPUSET_WATCH_DEBOUNCE_USEC (100 * 1000)
/* At most this long after the first write of a burst, in µs, however long the burst goes on. */
#define CPUSET_WATCH_MAX_DELAY_USEC (1000 * 1000)
/* At most this many directories are watched; beyond it new cgroups are not watched (logged once
 * each time the limit is reached). */
#define CPUSET_WATCH_MAX 4096

/* Called on the event loop after a burst of cpuset writes; dir is the directory of the last
 * one (for messages). */
typedef void (*cpuset_watch_handler_t)(CpusetWatch *w, const char *dir, void *userdata);

/*
 * A watch on event (an inotify fd as an sd-event I/O source at priority priority, not watching
 * anything yet). root (copied; NULL: "/") is the tree /proc and /sys/fs/cgroup are read and
 * watched under, as in lib/cgroup.h; tests give a fixture tree. Returns 0 and *ret, -EINVAL,
 * -ENOMEM, or inotify_init1(2)'s -errno.
 */
int cpuset_watch_new(
        sd_event *event, int64_t priority, const char *root, cpuset_watch_handler_t handler, void *userdata,
        CpusetWatch **ret);
/* Closes the inotify fd and frees w. NULL accepted, returns NULL. */
CpusetWatch *cpuset_watch_free(CpusetWatch *w);

/*
 * Watches the cgroup directories of process pid (its own and its ancestors', where the kernel
 * takes its cpuset from). Reads /proc/PID/cgroup; the same membership as the last call's costs
 * nothing more, a directory already watched a lookup.
 * Returns 1 if a directory was added, 0 if all were watched already (or pid is in no cpuset
 * hierarchy, or the limit is reached), -ESRCH, -ENOMEM; other failures are 0 (logged at debug).
 */
int cpuset_watch_add_process(CpusetWatch *w, pid_t pid);

/* How many cgroup directories w watches now (at most CPUSET_WATCH_MAX). NULL: 0. */
size_t cpuset_watch_count(const CpusetWatch *w);
