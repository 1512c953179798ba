/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread scheduling state (apply-sched.h): CPU affinity through sched_setaffinity(2) /
 * sched_getaffinity(2), class, priority and nice through sched_setattr(2) / sched_getattr(2),
 * I/O priority through ioprio_set(2) / ioprio_get(2). Decides nothing: writes what it is
 * given, reads back what the kernel kept.
 */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apply-sched.h"
#include "cgroup.h"
#include "macro.h"
#include "policy.h"
#include "procfs.h"

static void cpu_freep(cpu_set_t **c) {
        if (*c)
                CPU_FREE(*c);
}

/* sched_getaffinity(2): the mask ANDed with the CPUs active now. */
static int get_active_affinity(pid_t tid, CpuSet *ret) {
        /* The kernel refuses (EINVAL) a buffer smaller than its nr_cpu_ids: grow until it fits. */
        for (unsigned n = 1024;; n *= 2) {
                _cleanup_(cpu_freep) cpu_set_t *c = NULL;
                size_t size;

                c = CPU_ALLOC(n);
                if (!c)
                        return -ENOMEM;
                size = CPU_ALLOC_SIZE(n);
                CPU_ZERO_S(size, c);

                if (sched_getaffinity(tid, size, c) < 0) {
                        if (errno == EINVAL && n < CPUSET_MAX_CPUS)
                                continue;
                        if (errno == ESRCH)
                                return APPLY_GONE;
                        return -errno;
                }
                return cpuset_from_cpu_set(c, size, ret);
        }
}

/*
 * The mask itself: Cpus_allowed_list of /proc/TID/task/TID/status (proc(5)). sched_getaffinity(2)
 * reports it ANDed with the active CPUs, and a CPU going offline leaves the active set before the
 * kernel moves its tasks (sched_cpu_deactivate()), as one coming online joins it after the online
 * set: in that window a mask of such CPUs reads narrower than it is, or empty.
 */
static int get_kept_affinity(pid_t tid, CpuSet *ret) {
        int r = procfs_read_cpus_allowed(NULL, tid, tid, ret);
        return r == -ESRCH || r == -ENOENT ? APPLY_GONE : r;
}

int apply_get_thread_affinity(pid_t tid, CpuSet *ret) {
        int r = get_active_affinity(tid, ret);

        /* A task's mask is never empty: an empty read is the hotplug window. */
        if (r >= 0 && cpuset_is_empty(ret))
                return get_kept_affinity(tid, ret);
        return r;
}

int apply_set_thread_affinity(pid_t tid, const CpuSet *cpus, CpuSet *ret_effective) {
        _cleanup_(cpu_freep) cpu_set_t *c = NULL;
        size_t size;
        int r;

        if (!cpus || cpuset_is_empty(cpus))
                return -EINVAL;

        r = cpuset_to_cpu_set(cpus, &c, &size);
        if (r < 0)
                return r;

        /* The kernel intersects with the task's cpuset and the online CPUs; if nothing is
         * left it fails with EINVAL and leaves the mask alone. */
        if (sched_setaffinity(tid, size, c) < 0) {
                if (errno == ESRCH)
                        return APPLY_GONE;
                return -errno;
        }

        if (!ret_effective)
                return 0;
        r = get_active_affinity(tid, ret_effective);
        /* Narrower than written: what the cpuset allows, or the hotplug window; status tells.
         * (If it can't, the first read stands: the write itself succeeded.) */
        if (r >= 0 && !cpuset_equal(ret_effective, cpus)) {
                _cleanup_cpuset_ CpuSet kept = CPUSET_NULL;

                r = get_kept_affinity(tid, &kept);
                if (r == APPLY_GONE || r == -ENOMEM)
                        return r;
                if (r >= 0 && !cpuset_is_empty(&kept))
                        return cpuset_copy(ret_effective, &kept);
                r = 0;
        }
        return r;
}

/* Scheduling class and I/O priority. glibc 2.36 wraps neither sched_setattr(2) nor ioprio_set(2):
 * raw syscalls with the kernel's structure, under a name of our own so that a newer glibc's
 * struct sched_attr can't clash. */

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* struct sched_attr of include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER1 (56 bytes). */
struct kernel_sched_attr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
        uint32_t sched_util_min;
        uint32_t sched_util_max;
};

#define IOPRIO_WHO_PROCESS_    1
#define IOPRIO_CLASS_SHIFT_    13
#define IOPRIO_LEVEL_MASK_     0x7
#define IOPRIO_NR_LEVELS_      8U
#define IOPRIO_VALUE(cl, data) (((cl) << IOPRIO_CLASS_SHIFT_) | (int)(data))

static int sys_sched_setattr(pid_t tid, struct kernel_sched_attr *a) {
        return (int)syscall(SYS_sched_setattr, tid, a, 0U);
}

static int sys_sched_getattr(pid_t tid, struct kernel_sched_attr *a) {
        return (int)syscall(SYS_sched_getattr, tid, a, (unsigned)sizeof(*a), 0U);
}

int apply_sched_policy_from_string(const char *s) {
        return sched_policy_from_string(s);
}

const char *apply_sched_policy_to_string(int policy) {
        return sched_policy_to_string(policy);
}

int apply_ioprio_class_from_string(const char *s) {
        return ioprio_class_from_string(s);
}

const char *apply_ioprio_class_to_string(int io_class) {
        return ioprio_class_to_string(io_class);
}

static bool is_rt(int policy) {
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int validate_ioprio(int io_class, unsigned io_level) {
        if (io_class < APPLY_IOPRIO_CLASS_NONE || io_class > APPLY_IOPRIO_CLASS_IDLE)
                return -EINVAL;
        if (io_level >= IOPRIO_NR_LEVELS_)
                return -ERANGE;
        if (io_class == APPLY_IOPRIO_CLASS_NONE && io_level != 0)
                return -ERANGE;
        return 0;
}

int apply_sched_validate(const ThreadSched *s) {
        if (!s)
                return -EINVAL;
        switch (s->policy) {
        case SCHED_OTHER:
        case SCHED_BATCH:
        case SCHED_IDLE:
                if (s->priority != 0)
                        return -ERANGE;
                break;
        case SCHED_FIFO:
        case SCHED_RR:
                if (s->priority < 1 || s->priority > APPLY_SCHED_PRIORITY_MAX)
                        return -ERANGE;
                break;
        case SCHED_DEADLINE:
                return -EOPNOTSUPP;
        default:
                return -EINVAL;
        }
        if (s->nice < -20 || s->nice > 19)
                return -ERANGE;
        return validate_ioprio(s->io_class, s->io_level);
}

bool apply_sched_equal(const ThreadSched *a, const ThreadSched *b) {
        return a->policy == b->policy && a->priority == b->priority &&
                (is_rt(a->policy) || a->nice == b->nice) && a->reset_on_fork == b->reset_on_fork &&
                a->io_class == b->io_class && a->io_level == b->io_level;
}

int apply_get_thread_ioprio(pid_t tid, int *ret_class, unsigned *ret_level) {
        long v;

        if (tid < 0)
                return -EINVAL;
        v = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, tid);
        if (v < 0)
                return errno == ESRCH ? APPLY_GONE : -errno;
        if (ret_class)
                *ret_class = (int)(v >> IOPRIO_CLASS_SHIFT_);
        if (ret_level)
                *ret_level = (unsigned)(v & IOPRIO_LEVEL_MASK_);
        return 0;
}

int apply_set_thread_ioprio(pid_t tid, int io_class, unsigned io_level) {
        int r;

        if (tid < 0)
                return -EINVAL;
        r = validate_ioprio(io_class, io_level);
        if (r < 0)
                return r;
        if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, tid, IOPRIO_VALUE(io_class, io_level)) < 0)
                return errno == ESRCH ? APPLY_GONE : -errno;
        return 0;
}

int apply_get_thread_sched(pid_t tid, ThreadSched *ret) {
        struct kernel_sched_attr a = {};
        ThreadSched s = {};
        int r;

        if (tid < 0 || !ret)
                return -EINVAL;
        if (sys_sched_getattr(tid, &a) < 0)
                return errno == ESRCH ? APPLY_GONE : -errno;
        s.policy = (int)a.sched_policy;
        s.priority = a.sched_priority;
        s.nice = a.sched_nice;
        s.reset_on_fork = a.sched_flags & SCHED_FLAG_RESET_ON_FORK;

        r = apply_get_thread_ioprio(tid, &s.io_class, &s.io_level);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

/* After EPERM for a real-time class: is it the cgroup's missing real-time runtime? */
static int classify_rt_eperm(const char *root, pid_t tid) {
        int64_t runtime;
        int r;

        r = cgroup_read_rt_runtime(root, tid > 0 ? tid : gettid(), 0, &runtime, NULL);
        if (r == -ESRCH)
                return APPLY_GONE;
        if (r >= 0 && runtime == 0)
                return APPLY_RT_NO_RUNTIME;
        return -EPERM;
}

int apply_set_thread_sched(const char *root, pid_t tid, const ThreadSched *s, ThreadSched *ret_effective) {
        struct kernel_sched_attr a = {.size = sizeof(a)};
        int r;

        if (tid < 0)
                return -EINVAL;
        r = apply_sched_validate(s);
        if (r < 0)
                return r;

        a.sched_policy = (uint32_t)s->policy;
        a.sched_priority = s->priority;
        a.sched_nice = s->nice;
        a.sched_flags = s->reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0;
        if (sys_sched_setattr(tid, &a) < 0) {
                if (errno == ESRCH)
                        return APPLY_GONE;
                if (errno == EPERM && is_rt(s->policy))
                        return classify_rt_eperm(root, tid);
                return -errno;
        }

        /* sched_setattr(2) applies sched_nice only under SCHED_OTHER / SCHED_BATCH; under
         * SCHED_IDLE the nice value is kept, without effect until the class changes, and
         * setpriority(2) on the TID is what sets it. */
        if (s->policy == SCHED_IDLE &&
            setpriority(PRIO_PROCESS, (id_t)(tid > 0 ? tid : gettid()), s->nice) < 0)
                return errno == ESRCH ? APPLY_GONE : -errno;

        r = apply_set_thread_ioprio(tid, s->io_class, s->io_level);
        if (r < 0)
                return r;

        if (ret_effective)
                return apply_get_thread_sched(tid, ret_effective);
        return 0;
}

int apply_explain_rt_no_runtime(const char *root, pid_t tid, char **ret) {
        _cleanup_free_ char *path = NULL;
        int64_t runtime;
        char *m = NULL;
        int r;

        if (tid < 0 || !ret)
                return -EINVAL;
        r = cgroup_read_rt_runtime(root, tid > 0 ? tid : gettid(), 0, &runtime, &path);
        if (r < 0)
                return r;
        if (runtime != 0)
                return -EAGAIN;
        if (asprintf(
                    &m, "RT_GROUP_SCHED: cgroup %s has no real-time runtime (cpu.rt_runtime_us is 0)",
                    path) < 0)
                return -ENOMEM;
        *ret = m;
        return 0;
}
