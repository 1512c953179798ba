/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU affinity of single threads through sched_setaffinity(2) / sched_getaffinity(2)
 * (apply-sched.h). Decides nothing: writes what it is given, reads back what the kernel kept.
 */

#include <errno.h>
#include <sched.h>

#include "apply-sched.h"
#include "macro.h"

static void cpu_freep(cpu_set_t **c) {
        if (*c)
                CPU_FREE(*c);
}

int apply_get_thread_affinity(pid_t tid, CpuSet *ret) {
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

        if (ret_effective)
                return apply_get_thread_affinity(tid, ret_effective);
        return 0;
}
