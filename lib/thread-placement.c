/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <sched.h>

#include "match.h"
#include "thread-placement.h"

ThreadCpusChoice thread_cpus_choice(const PolicyPlan *pp, const char *thread_comm) {
        const ThreadPlan *tp = NULL;

        if (!pp || pp->pending_reason)
                return (ThreadCpusChoice){THREAD_CPUS_NONE, NULL};
        if (pp->policy->n_threads > 0 && pp->threads) {
                int k = match_thread(pp->policy, thread_comm);

                if (k >= 0)
                        tp = &pp->threads[k];
        }
        if (tp && tp->spread && tp->n_spread_order > 0)
                return (ThreadCpusChoice){THREAD_CPUS_SPREAD, tp};
        if (tp && tp->has_cpus)
                return (ThreadCpusChoice){THREAD_CPUS_RULE, tp};
        if (pp->n_process_order > 0)
                return (ThreadCpusChoice){THREAD_CPUS_PROCESS, NULL};
        if (pp->has_cpus)
                return (ThreadCpusChoice){THREAD_CPUS_POLICY, NULL};
        return (ThreadCpusChoice){THREAD_CPUS_NONE, NULL};
}

const unsigned *thread_spread_order(const PolicyPlan *pp, size_t *ret_n) {
        for (size_t i = 0; pp && !pp->pending_reason && pp->threads && i < pp->policy->n_threads; i++)
                if (pp->threads[i].spread && pp->threads[i].n_spread_order > 0) {
                        *ret_n = pp->threads[i].n_spread_order;
                        return pp->threads[i].spread_order;
                }
        *ret_n = 0;
        return NULL;
}

int thread_policy_cpus(const PolicyPlan *pp, const SpreadSlots *slots, CpuSet *buf, const CpuSet **ret) {
        const unsigned *order;
        size_t n_order;
        int r;

        if (!slots || spread_slots_n_held(slots) == 0 || !(order = thread_spread_order(pp, &n_order))) {
                *ret = &pp->cpus;
                return 0;
        }
        r = spread_rest_cpus(&pp->cpus, slots, order, n_order, buf);
        if (r < 0)
                return r;
        *ret = buf;
        return 0;
}

int process_spread_cpus(const PolicyPlan *pp, int slot, CpuSet *ret) {
        int cpu;

        cpuset_clear(ret);
        if (pp->n_process_order == 0)
                return 0;
        if (slot < 0) {
                /* Every CPU of the order: the policy's set, or what it spreads over without cpus:. */
                for (size_t i = 0; i < pp->n_process_order; i++)
                        if (cpuset_add(ret, pp->process_order[i]) < 0)
                                return -ENOMEM;
                return 1;
        }
        cpu = spread_cpu_of_slot(pp->process_order, pp->n_process_order, (size_t)slot);
        if (cpu < 0)
                return 0;
        return cpuset_add(ret, (unsigned)cpu) < 0 ? -ENOMEM : 1;
}

bool thread_mask_in_plan(const PolicyPlan *pp, const CpuSet *mask) {
        if (!pp || pp->pending_reason)
                return false;
        if (pp->has_cpus && cpuset_equal(mask, &pp->cpus))
                return true;
        for (size_t i = 0; pp->threads && i < pp->policy->n_threads; i++)
                if (pp->threads[i].has_cpus && cpuset_equal(mask, &pp->threads[i].cpus))
                        return true;
        return false;
}

bool thread_sched_spec(const PolicyPlan *pp, const char *thread_comm, SchedulerSpec *ret) {
        const SchedulerSpec *rule = NULL;
        int k;

        *ret = (SchedulerSpec){};
        if (!pp || pp->pending_reason)
                return false;
        *ret = pp->policy->scheduler;
        if (pp->policy->n_threads > 0 && (k = match_thread(pp->policy, thread_comm)) >= 0)
                rule = &pp->policy->threads[k].scheduler;
        if (rule && rule->has_policy) {
                ret->has_policy = true;
                ret->policy = rule->policy;
        }
        if (rule && rule->has_priority) {
                ret->has_priority = true;
                ret->priority = rule->priority;
        }
        if (rule && rule->has_nice) {
                ret->has_nice = true;
                ret->nice = rule->nice;
        }
        if (rule && rule->has_reset_on_fork) {
                ret->has_reset_on_fork = true;
                ret->reset_on_fork = rule->reset_on_fork;
        }
        if (rule && rule->has_io) {
                ret->has_io = true;
                ret->io_class = rule->io_class;
                ret->io_level = rule->io_level;
        }
        return ret->has_policy || ret->has_priority || ret->has_nice || ret->has_reset_on_fork ||
                ret->has_io;
}

static bool sched_is_realtime(int policy) {
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

ThreadSched thread_sched_target(const ThreadSched *original, const SchedulerSpec *spec) {
        ThreadSched t = *original;

        if (spec->has_policy)
                t.policy = spec->policy;
        if (spec->has_priority)
                t.priority = spec->priority;
        if (!sched_is_realtime(t.policy))
                t.priority = 0;
        else if (t.priority == 0)
                t.priority = 1;
        if (spec->has_nice)
                t.nice = spec->nice;
        if (spec->has_reset_on_fork)
                t.reset_on_fork = spec->reset_on_fork;
        if (spec->has_io) {
                t.io_class = spec->io_class;
                t.io_level = spec->io_class == APPLY_IOPRIO_CLASS_IDLE ? 0 : spec->io_level;
        }
        return t;
}

bool thread_sched_inherited(const ThreadSched *cur, const ThreadSched *set, const ThreadSched *original) {
        for (unsigned mask = 0; mask < 8; mask++) {
                ThreadSched mix = *original;

                if (mask & 1) {
                        mix.policy = set->policy;
                        mix.priority = set->priority;
                        mix.reset_on_fork = set->reset_on_fork;
                }
                if (mask & 2)
                        mix.nice = set->nice;
                if (mask & 4) {
                        mix.io_class = set->io_class;
                        mix.io_level = set->io_level;
                }
                if (apply_sched_equal(cur, &mix))
                        return true;
        }
        return false;
}
