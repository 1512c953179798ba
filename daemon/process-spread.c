/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The effects of processes: spread and of spread thread rules on a process's placement: which
 * slot a process found running takes, a pre-fork master giving its slot back, and placing the
 * other threads again when the CPUs handed to spread threads change (docs/policy-format.md,
 * processes: spread, threads: spread). The slots themselves are lib/spread.c's; the decisions
 * of where a thread goes, lib/thread-placement.c's. */

#include <errno.h>

#include "apply-sched.h"
#include "log.h"
#include "manager.h"
#include "spread.h"
#include "thread-placement.h"
#include "manager-internal.h"

int process_spread_prefer_current(Manager *m, TrackedProcess *p) {
        _cleanup_cpuset_ CpuSet mask = CPUSET_NULL;
        const PolicyPlan *pp = manager_process_plan(m, p);
        PolicySpread *ps = manager_policy_spread(m, p);
        int r, cpu;

        if (!pp || pp->pending_reason || pp->n_process_order == 0 || !ps || p->spread_master)
                return 0;
        r = apply_get_thread_affinity(p->pid, &mask);
        if (r < 0 || cpuset_count(&mask) != 1)
                return 0; /* gone, or not on one CPU: the lowest free slot, when it is placed */
        cpu = cpuset_next(&mask, -1);
        /* The lowest free slot standing for that CPU: order[i % n], up to one round past the
         * slots held. */
        for (size_t i = 0; i < ps->processes.n_owners + pp->n_process_order; i++) {
                if (pp->process_order[i % pp->n_process_order] != (unsigned)cpu)
                        continue;
                r = spread_slots_acquire_at(&ps->processes, p->pid, i);
                if (r == -EBUSY)
                        continue;
                return r == -ENOMEM ? r : 0;
        }
        return 0;
}

int process_spread_note_child(Manager *m, TrackedProcess *parent, const TrackedProcess *child) {
        const PolicyPlan *pp = manager_process_plan(m, parent);
        PolicySpread *ps = manager_policy_spread(m, parent);
        int r;

        if (parent->spread_master || parent->policy != child->policy || !ps || !pp || pp->pending_reason ||
            pp->n_process_order == 0)
                return 0;
        parent->spread_master = true;
        r = spread_slots_release(&ps->processes, parent->pid);
        log_debug(
                "%s[%d] forks processes of policy %s (%s[%d]): a pre-fork master, it holds no slot of "
                "processes: spread",
                parent->comm, (int)parent->pid, pp->policy->name, child->comm, (int)child->pid);
        if (r < 0)
                return 0; /* it held none: nothing of it to place again */
        r = place_process(m, parent, false, 0, 0);
        return r == -ENOMEM ? r : 0;
}

/*
 * After one thread of p took or gave back a spread slot outside place_process() (a new thread,
 * a rename, an exit): places p's other threads again if the CPUs handed to spread threads
 * changed. Returns 0, -ESRCH (p is gone and was freed), or -ENOMEM.
 */
int process_spread_settle(Manager *m, TrackedProcess *p) {
        int r = process_spread_update(m, p);

        if (r <= 0)
                return r;
        /* Writes only the threads whose target changed. */
        return place_process(m, p, false, 0, 0);
}
