/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Applying per-thread scheduling state: CPU affinity (sched_setaffinity(2) /
 * sched_getaffinity(2) on a TID), and scheduling class, priority, nice and I/O priority
 * (below). This module never decides what to apply; it writes, reads back, and reports.
 */

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cpuset.h"
#include "policy.h"

/* Named outcomes callers branch on. */
#define APPLY_GONE (-ESRCH) /* the thread exited: normal, not a failure */

/*
 * Reads the affinity mask of thread tid (any thread of any process) with sched_getaffinity(2),
 * which reports it ANDed with the active CPUs; while a CPU goes offline or comes online that can
 * read empty, and then the mask is read from Cpus_allowed_list of /proc/TID/task/TID/status
 * (proc(5)). Never returns an empty set. Returns 0, APPLY_GONE, -EBADMSG, -ENOMEM, -errno.
 */
int apply_get_thread_affinity(pid_t tid, CpuSet *ret);

/*
 * Sets the affinity of thread tid to cpus and reads it back into *ret_effective (may be NULL).
 * The kernel intersects the mask with the task's cpuset and online CPUs, so the effective
 * mask may be narrower than asked: callers compare. A read-back narrower than cpus is confirmed
 * from /proc/TID/task/TID/status, as sched_getaffinity(2) also leaves out CPUs that are online
 * but not active yet, or no longer (CPU hotplug in progress). Refuses an empty set with -EINVAL before
 * calling the kernel, so no task is ever left with an empty mask.
 * Returns 0, APPLY_GONE, -EINVAL (empty set, or no CPU of cpus is allowed for the task:
 * the mask is left as it was), -EPERM, -errno.
 */
int apply_set_thread_affinity(pid_t tid, const CpuSet *cpus, CpuSet *ret_effective);

/*
 * Scheduling class, priority and I/O priority of threads: sched_setattr(2) / sched_getattr(2)
 * and ioprio_set(2) / ioprio_get(2) (IOPRIO_WHO_PROCESS on a TID: one thread), raw syscalls.
 * These are per thread: each TID of a process has its own, and a new thread inherits those of
 * the thread that created it. CAP_SYS_NICE is needed to raise a priority, to lower a nice
 * value and for real-time classes; CAP_SYS_ADMIN or CAP_SYS_NICE for the realtime I/O class.
 */

/*
 * SCHED_FIFO / SCHED_RR refused because the task's v1 cpu cgroup has cpu.rt_runtime_us = 0
 * (CONFIG_RT_GROUP_SCHED: a child cgroup starts with no real-time runtime, and the kernel then
 * fails sched_setattr(2) with EPERM even for root). Distinct from a plain -EPERM so callers can
 * explain it (apply_explain_rt_no_runtime()); its strerror() ("Disk quota exceeded") is not
 * meant to be shown: EDQUOT is used because none of these syscalls returns it and the cgroup's
 * real-time quota is indeed exhausted.
 */
#define APPLY_RT_NO_RUNTIME (-EDQUOT)

/* I/O priority classes and the highest real-time priority: the model's (policy.h). */
#define APPLY_IOPRIO_CLASS_NONE  POLICY_IOPRIO_CLASS_NONE
#define APPLY_IOPRIO_CLASS_RT    POLICY_IOPRIO_CLASS_RT
#define APPLY_IOPRIO_CLASS_BE    POLICY_IOPRIO_CLASS_BE
#define APPLY_IOPRIO_CLASS_IDLE  POLICY_IOPRIO_CLASS_IDLE
#define APPLY_SCHED_PRIORITY_MAX POLICY_SCHED_PRIORITY_MAX

/*
 * The scheduling state of one thread: what the daemon records before changing a thread (to
 * restore it later) and what it sets.
 */
typedef struct ThreadSched {
        int policy;         /* SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO or SCHED_RR (<sched.h>);
                             * read back, also SCHED_DEADLINE or another class (never set) */
        unsigned priority;  /* real-time priority: 1..99 for SCHED_FIFO / SCHED_RR, 0 for the others */
        int nice;           /* -20..19: the weight under SCHED_OTHER / SCHED_BATCH; kept without
                             * effect under SCHED_IDLE (set there with setpriority(2)); under
                             * SCHED_FIFO / SCHED_RR the kernel keeps it but neither sets nor
                             * reports it (read back as 0) */
        bool reset_on_fork; /* SCHED_FLAG_RESET_ON_FORK: children start with SCHED_OTHER (from a
                             * real-time class) and nice 0 (from a negative nice) */
        int io_class;       /* APPLY_IOPRIO_CLASS_* */
        unsigned
                io_level; /* 0 (highest) .. 7; always 0 for NONE (the kernel's rule), meaningless for IDLE */
} ThreadSched;

/* The names of scheduling policies and I/O priority classes: sched_policy_from_string(),
 * sched_policy_to_string(), ioprio_class_from_string() and ioprio_class_to_string() of the model
 * (policy.h), which say what they return. */
int apply_sched_policy_from_string(const char *s);
const char *apply_sched_policy_to_string(int policy);
int apply_ioprio_class_from_string(const char *s);
const char *apply_ioprio_class_to_string(int io_class);

/*
 * Checks that s can be set: policy one of SCHED_OTHER / BATCH / IDLE / FIFO / RR (else
 * -EOPNOTSUPP for SCHED_DEADLINE and other known-but-unsettable classes, -EINVAL otherwise);
 * priority 1..99 for FIFO / RR and 0 for the others (-ERANGE); nice -20..19 (-ERANGE); io_class
 * an APPLY_IOPRIO_CLASS_* (-EINVAL); io_level 0..7 (-ERANGE), and 0 for NONE (-ERANGE).
 * Pure: no syscall. Returns 0 or the error.
 */
int apply_sched_validate(const ThreadSched *s);

/* true if a and b hold the same scheduling state (for drift checks): every field, except nice
 * under SCHED_FIFO / SCHED_RR, which the kernel does not report there. */
bool apply_sched_equal(const ThreadSched *a, const ThreadSched *b);

/*
 * Reads the scheduling state of thread tid (0: the calling thread): sched_getattr(2) for
 * policy, priority, nice and reset_on_fork, ioprio_get(2) (IOPRIO_WHO_PROCESS, tid) for the
 * I/O priority. Returns 0, APPLY_GONE, -errno; *ret written only on success.
 */
int apply_get_thread_sched(pid_t tid, ThreadSched *ret);

/*
 * Sets the scheduling state of thread tid (0: the calling thread) to *s — one sched_setattr(2)
 * with policy, priority, nice and SCHED_FLAG_RESET_ON_FORK (and setpriority(2) for the nice
 * value under SCHED_IDLE, which sched_setattr(2) leaves alone), then ioprio_set(2) — and reads it
 * back into *ret_effective (may be NULL). The I/O priority hint bits (IOPRIO_HINT_*) are
 * neither read nor kept. s is validated first (apply_sched_validate(): an
 * invalid s reaches no syscall). When sched_setattr(2) fails nothing has changed; when
 * ioprio_set(2) fails the scheduling class has already been set (callers restore from their
 * recorded original).
 * When a real-time class is refused with EPERM, the thread's v1 cpu cgroup is looked up under
 * root (NULL or "/" = the real /proc and /sys; ROOT/proc/TID/cgroup and
 * ROOT/sys/fs/cgroup/<cpu hierarchy>/PATH/cpu.rt_runtime_us, see cgroup.h): if its
 * rt_runtime_us is 0 the result is APPLY_RT_NO_RUNTIME.
 * Returns 0, APPLY_GONE, APPLY_RT_NO_RUNTIME, -EPERM (other refusals: missing CAP_SYS_NICE,
 * RLIMIT_RTPRIO, a SCHED_DEADLINE task), the errors of apply_sched_validate(), -errno.
 */
int apply_set_thread_sched(const char *root, pid_t tid, const ThreadSched *s, ThreadSched *ret_effective);

/* I/O priority of thread tid alone: ioprio_get(2) / ioprio_set(2) with IOPRIO_WHO_PROCESS.
 * Classes and levels as in ThreadSched (the setter validates them the same way: -EINVAL,
 * -ERANGE). Return 0, APPLY_GONE, -EPERM (realtime class without CAP_SYS_ADMIN/CAP_SYS_NICE),
 * -errno; out parameters written only on success. */
int apply_get_thread_ioprio(pid_t tid, int *ret_class, unsigned *ret_level);
int apply_set_thread_ioprio(pid_t tid, int io_class, unsigned io_level);

/*
 * The explanation for APPLY_RT_NO_RUNTIME on thread tid, newly allocated in *ret:
 * "RT_GROUP_SCHED: cgroup /PATH has no real-time runtime (cpu.rt_runtime_us is 0)", read from
 * the same files under root as apply_set_thread_sched(). Returns 0, -ESRCH, the errors of
 * cgroup_read_rt_runtime(), -ENOMEM; -EAGAIN if the runtime is no longer 0 (someone granted it
 * meanwhile: retrying may succeed).
 */
int apply_explain_rt_no_runtime(const char *root, pid_t tid, char **ret);
