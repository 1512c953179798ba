/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Applying CPU affinity to threads: sched_setaffinity(2) / sched_getaffinity(2) on a TID.
 * This module never decides what to apply; it writes, reads back, and reports.
 */

#include <sys/types.h>

#include "cpuset.h"

/* Named outcomes callers branch on. */
#define APPLY_GONE (-ESRCH) /* the thread exited: normal, not a failure */

/*
 * Reads the affinity mask of thread tid (any thread of any process). Returns 0, APPLY_GONE,
 * -errno.
 */
int apply_get_thread_affinity(pid_t tid, CpuSet *ret);

/*
 * Sets the affinity of thread tid to cpus and reads it back into *ret_effective (may be NULL).
 * The kernel intersects the mask with the task's cpuset and online CPUs, so the effective
 * mask may be narrower than asked: callers compare. Refuses an empty set with -EINVAL before
 * calling the kernel, so no task is ever left with an empty mask.
 * Returns 0, APPLY_GONE, -EINVAL (empty set, or no CPU of cpus is allowed for the task:
 * the mask is left as it was), -EPERM, -errno.
 */
int apply_set_thread_affinity(pid_t tid, const CpuSet *cpus, CpuSet *ret_effective);
