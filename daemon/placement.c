/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placement and restore: writes a tracked process's threads' affinity, scheduling and memory
 * nodes (lib/apply-*.c), after checking each task is still the one recorded, and puts back what
 * they had. See docs/architecture.md ("apply"). */

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-numa.h"
#include "apply-sched.h"
#include "cgroup.h"
#include "cpuset-watch.h"
#include "log.h"
#include "manager-originals.h"
#include "manager.h"
#include "match.h"
#include "placement-decision.h"
#include "plan.h"
#include "procfs.h"
#include "settle-queue.h"
#include "thread-placement.h"
#include "unit-placement.h"
#include "manager-internal.h"

/* ---- placement ---- */

/* Releases what ctx holds (its cpuset, its error text); for _cleanup_. */
void place_context_done(PlaceContext *ctx) {
        cpuset_done(&ctx->cpuset_allowed);
        ctx->error_text = mfree(ctx->error_text);
}

/*
 * The CPUs thread tid, named thread_comm, should get under p's policy: *ret points at them (into
 * the plan, or at buf), or is NULL when the policy sets none, or p has no policy in force or a
 * pending one (a process a CPU change made pending is left as it is, spread slots included). A
 * thread that matches a spread rule takes a spread slot (or keeps the one it holds) and gets the
 * slot's CPU; any other thread gives back the slot it may hold, and gets its rule's CPUs, or the
 * policy's set without the CPUs handed to spread threads (docs/policy-format.md, `threads:`;
 * the choice is thread_cpus_choice()'s). Returns 0 or -ENOMEM.
 */
static int thread_target(
        Manager *m, TrackedProcess *p, pid_t tid, const char *thread_comm, CpuSet *buf, const CpuSet **ret) {
        const PolicyPlan *pp = manager_process_plan(m, p);
        ThreadCpusChoice c = thread_cpus_choice(pp, thread_comm);
        PolicySpread *ps = manager_policy_spread(m, p);
        int r;

        *ret = NULL;
        if (!pp || pp->pending_reason)
                return 0;
        if (c.kind == THREAD_CPUS_SPREAD) {
                SpreadSlots *slots;

                if (c.rule->spread_over_policy && ps) {
                        process_spread_release(p, tid);
                        slots = &ps->threads;
                } else {
                        policy_spread_release_thread(m, p, tid);
                        if (!p->spread) {
                                p->spread = calloc(1, sizeof(ProcessSpread));
                                if (!p->spread)
                                        return -ENOMEM;
                        }
                        slots = &p->spread->slots;
                }
                r = spread_slots_acquire(slots, tid);
                if (r < 0)
                        return r;
                r = spread_cpu_of_slot(c.rule->spread_order, c.rule->n_spread_order, (size_t)r);
                cpuset_clear(buf);
                r = cpuset_add(buf, (unsigned)r);
                if (r < 0)
                        return r;
                *ret = buf;
                return 0;
        }

        process_spread_release(p, tid);
        policy_spread_release_thread(m, p, tid);
        switch (c.kind) {
        case THREAD_CPUS_RULE:
                *ret = &c.rule->cpus;
                return 0;
        case THREAD_CPUS_POLICY:
                return thread_policy_cpus(pp, p->spread ? &p->spread->slots : NULL, buf, ret);
        case THREAD_CPUS_PROCESS: {
                int slot = -1;

                /* The process's slot, taken by its first thread that follows it. */
                if (!p->spread_master && ps) {
                        slot = spread_slots_acquire(&ps->processes, p->pid);
                        if (slot < 0)
                                return slot;
                }
                r = process_spread_cpus(pp, slot, buf);
                if (r < 0)
                        return r;
                *ret = r > 0 ? buf : NULL;
                return 0;
        }
        default:
                return 0;
        }
}

/*
 * Whether the CPUs handed to p's spread threads changed since its other threads were last
 * placed; records the new ones. Returns 1 (changed: the other threads need placing again), 0,
 * or -ENOMEM.
 */
int process_spread_update(Manager *m, TrackedProcess *p) {
        _cleanup_cpuset_ CpuSet handed = CPUSET_NULL;
        const unsigned *order;
        size_t n_order;
        int r;

        if (!p->spread)
                return 0;
        order = thread_spread_order(manager_process_plan(m, p), &n_order);
        r = spread_slots_cpus(&p->spread->slots, order, n_order, &handed);
        if (r < 0)
                return r;
        if (cpuset_equal(&handed, &p->spread->handed))
                return 0;
        cpuset_done(&p->spread->handed);
        p->spread->handed = handed;
        handed = CPUSET_NULL;
        return 1;
}

static void report_failure(
        Manager *m, const TrackedProcess *p, const char *policy_name, pid_t tid, const CpuSet *cpus,
        int error) {
        _cleanup_free_ char *text = NULL;
        unsigned suppressed = 0;

        m->counters.placement_failures++;
        if (!ratelimit_below(&m->failure_ratelimit, &suppressed))
                return;
        if (suppressed > 0)
                log_warning("Suppressed %u placement failure messages", suppressed);
        text = cpuset_to_string(cpus);
        log_struct_id(
                LOG_WARNING, error, AFFINITYD_MESSAGE_PLACEMENT_FAILED, policy_name, p->pid, p->comm, text,
                "Failed to set affinity of %s[%d] thread %d to %s (policy %s): %m, skipping", p->comm,
                (int)p->pid, (int)tid, strna(text), strna(policy_name));
}

static void report_narrowing(
        Manager *m, const TrackedProcess *p, pid_t tid, const CpuSet *requested, const CpuSet *effective) {
        _cleanup_free_ char *req = NULL, *eff = NULL;
        /* Sized for the configuration in force; no flag for a process without a policy in it. */
        bool *reported = manager_process_plan(m, p) ? &m->narrowing_reported[p->policy] : NULL;
        NarrowingReport how = thread_narrowing_report(
                cpuset_is_subset(effective, requested), !reported || *reported,
                log_level_enabled(LOG_DEBUG));

        if (how == NARROWING_QUIET)
                return;
        if (how == NARROWING_OUTSIDE && !ratelimit_below(&m->failure_ratelimit, NULL))
                return;

        req = cpuset_to_string(requested);
        eff = cpuset_to_string(effective);
        switch (how) {
        case NARROWING_OUTSIDE:
                log_struct(
                        LOG_WARNING, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel set %s[%d] thread %d to CPUs %s, outside the requested %s (policy %s)",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req), process_policy_label(m, p));
                break;
        case NARROWING_ONCE:
                *reported = true;
                log_struct(
                        LOG_INFO, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s (policy %s; a "
                        "cgroup cpuset or offline CPUs?). Reported once per policy.",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req), process_policy_label(m, p));
                break;
        case NARROWING_DEBUG:
                log_debug(
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s", p->comm,
                        (int)p->pid, (int)tid, strna(eff), strna(req));
                break;
        case NARROWING_QUIET:
                break;
        }
}

typedef struct MaskSearch {
        const CpuSet *mask;
        bool found;
} MaskSearch;

static void effective_search_action(const void *nodep, VISIT which, void *userdata) {
        const TrackedThread *t = *(void *const *)nodep;
        MaskSearch *s = userdata;

        if ((which == postorder || which == leaf) && !s->found && t->has_applied)
                s->found = cpuset_equal(thread_effective(t), s->mask);
}

/*
 * True if mask is one the daemon gave a thread of p: its policy's set or a thread rule's, or
 * what the kernel made of one of them (the effective mask of a placed thread, when a cpuset
 * narrowed it).
 */
static bool mask_is_ours(Manager *m, const TrackedProcess *p, const CpuSet *mask) {
        MaskSearch s = {.mask = mask};

        if (thread_mask_in_plan(manager_process_plan(m, p), mask))
                return true;
        twalk_r(p->threads, effective_search_action, &s);
        return s.found;
}

/*
 * Records t's original affinity the first time the daemon touches it. current: the thread's
 * mask now. A mask the daemon handed out was inherited from a thread it had placed (a thread
 * created after placement, a child forked by a placed process), not chosen by the program:
 * such a thread gets the process's original instead.
 */
static int thread_record_original(PlaceContext *ctx, TrackedThread *t, const CpuSet *current) {
        TrackedProcess *p = ctx->process;
        const StateProcess *rec = manager_originals_recovered(ctx->manager, p);
        int r;

        if (t->has_original)
                return 0;
        if (rec && rec->has_affinity) {
                /* Placed by a previous instance: its masks now are that instance's doing. */
                const StateThread *st = state_process_find_thread(rec, t->tid);

                if (!p->has_original) {
                        r = cpuset_copy(&p->original, &rec->affinity);
                        if (r < 0)
                                return r;
                        p->has_original = true;
                }
                if (st && st->has_affinity) {
                        r = cpuset_store_if_differs(&t->original, &st->affinity, &p->original);
                        if (r < 0)
                                return r;
                }
                t->has_original = true;
                p->state_dirty = true;
                return 0;
        }
        if (!p->has_original) {
                /* The first original seen is the process's, and the default of its threads. */
                r = cpuset_copy(&p->original, current);
                if (r < 0)
                        return r;
                p->has_original = true;
                p->state_dirty = true;
        } else if (!mask_is_ours(ctx->manager, p, current)) {
                r = cpuset_store_if_differs(&t->original, current, &p->original);
                if (r < 0)
                        return r;
                if (t->original)
                        p->state_dirty = true; /* the file lists threads that differ */
        }
        t->has_original = true;
        return 0;
}

/*
 * The CPUs p's cpuset allows, read at most once per placement pass (ctx caches it), when the
 * kernel refused a mask; NULL when none is known (no cpuset controller, or it could not be
 * read).
 */
static const CpuSet *place_context_cpuset(PlaceContext *ctx) {
        TrackedProcess *p = ctx->process;
        int r;

        if (ctx->cpuset_state == 0) {
                r = cgroup_read_cpuset(NULL, p->pid, 0, &ctx->cpuset_allowed, NULL);
                if (r < 0 && r != -ENODATA)
                        log_debug_errno(
                                r, "Failed to read the cpuset of %s[%d], leaving it to the kernel: %m",
                                p->comm, (int)p->pid);
                ctx->cpuset_state = r < 0 ? r : 1;
        }
        return ctx->cpuset_state > 0 ? &ctx->cpuset_allowed : NULL;
}

/*
 * within: cpuset: makes p's own plan (TrackedProcess.within) from its policy's plan and the CPUs
 * its cgroup allows now (read once per pass, place_context_cpuset()), unless the one it has was
 * made for the same CPUs, policy and plan. A process of another policy has none; one whose
 * cpuset can't be read gets the policy's plan, not narrowed (the kernel narrows the mask to the
 * cpuset itself). A change of the cgroup's CPUs is logged: the threads then get the new targets.
 * Returns 0 or -ENOMEM.
 */
static int process_refresh_within(PlaceContext *ctx) {
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        const PolicyPlan *base = NULL;
        _cleanup_free_ char *was = NULL, *now = NULL, *cpus = NULL;
        const ProcessWithin *old;
        const CpuSet *allowed;
        ProcessWithin *w;
        bool same_policy;
        int r;

        if (m->plan && p->policy < m->plan->n_policies && m->plan->policies[p->policy].policy)
                base = &m->plan->policies[p->policy];
        if (!policy_plan_within_cpuset(base) || !(allowed = place_context_cpuset(ctx)))
                return manager_set_within(m, p, NULL);
        old = manager_find_within(m, p);
        same_policy = old && old->policy == p->policy;
        if (same_policy && old->generation == m->plan_generation && cpuset_equal(&old->allowed, allowed))
                return 0;

        w = calloc(1, sizeof(ProcessWithin));
        if (!w)
                return -ENOMEM;
        w->policy = p->policy;
        w->generation = m->plan_generation;
        r = plan_narrow_to_cpuset(base, m->topology, allowed, &w->plan);
        if (r > 0 && cpuset_copy(&w->allowed, allowed) < 0)
                r = -ENOMEM;
        if (r <= 0) {
                process_within_free(w);
                (void)manager_set_within(m, p, NULL);
                return r;
        }
        if (same_policy && !cpuset_equal(&old->allowed, allowed)) {
                /* One line per process and change, at info while they come at a human pace (a
                 * cgroup's change re-places all of its processes at once). */
                int level = ratelimit_below(&m->placed_ratelimit, NULL) ? LOG_INFO : LOG_DEBUG;

                was = cpuset_to_string(&old->allowed);
                now = cpuset_to_string(allowed);
                cpus = cpuset_to_string(&w->plan.cpus);
                if (cpuset_is_subset(&w->plan.cpus, allowed))
                        log_struct(
                                level, 0, base->policy->name, p->pid, p->comm, cpus,
                                "The cgroup of %s[%d] allows CPUs %s now (before: %s): placing it within "
                                "them, on %s (policy %s, within: cpuset)",
                                p->comm, (int)p->pid, strna(now), strna(was), strna(cpus),
                                base->policy->name);
                else
                        log_struct(
                                level, 0, base->policy->name, p->pid, p->comm, cpus,
                                "The cgroup of %s[%d] allows CPUs %s now (before: %s), none of the policy's "
                                "(policy %s, within: cpuset)",
                                p->comm, (int)p->pid, strna(now), strna(was), base->policy->name);
                /* Its memory: local nodes may be others now: migrate: moves the pages again. */
                if (!cpuset_equal(&old->plan.memory_nodes, &w->plan.memory_nodes))
                        p->memory_generation = 0;
        }
        return manager_set_within(m, p, w);
}

/* True if what p's refusal recorded is wanted and allowed. */
static bool refusal_is(const CpusetRefusal *r, const CpuSet *wanted, const CpuSet *allowed) {
        return r && cpuset_equal(&r->wanted, wanted) && cpuset_equal(&r->allowed, allowed);
}

/*
 * The policy's CPUs and p's cpuset are disjoint: the mask is left as it is. Counted as a
 * placement failure and logged once per process and (wanted, allowed) pair — not again on a
 * rescan, reload or, through the state file, a restart — and kept for Explain (p->refusal).
 */
static void report_cpuset_conflict(PlaceContext *ctx, const CpuSet *wanted) {
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        _cleanup_free_ char *text = NULL;
        const char *name = process_policy_label(m, p);
        const StateProcess *rec;
        bool logged_before;
        int r;

        if (ctx->cpuset_conflict)
                return;
        ctx->cpuset_conflict = true;
        r = cgroup_format_cpuset_conflict(name, wanted, p->pid, &ctx->cpuset_allowed, &text);
        if (r >= 0 && !ctx->error_text)
                ctx->error_text = strdup(text); /* for PlacementFailed; NULL on OOM is fine */
        if (refusal_is(p->refusal, wanted, &ctx->cpuset_allowed))
                return; /* reported already */
        ctx->refusal_new = true;

        p->refusal = cpuset_refusal_free(p->refusal);
        p->refusal = calloc(1, sizeof(CpusetRefusal));
        if (p->refusal &&
            (cpuset_copy(&p->refusal->wanted, wanted) < 0 ||
             cpuset_copy(&p->refusal->allowed, &ctx->cpuset_allowed) < 0))
                p->refusal = cpuset_refusal_free(p->refusal);
        p->state_dirty = true; /* a restarted daemon knows it was logged */
        m->counters.placement_failures++;

        rec = manager_originals_recovered(m, p);
        logged_before = rec && rec->has_refusal && cpuset_equal(&rec->refusal_wanted, wanted) &&
                cpuset_equal(&rec->refusal_allowed, &ctx->cpuset_allowed);
        if (logged_before || !ratelimit_below(&m->failure_ratelimit, NULL))
                return;
        if (r < 0)
                return (void)log_warning_errno(
                        r, "Failed to describe the cpuset of %s[%d]: %m", p->comm, (int)p->pid);
        log_struct_id(
                LOG_WARNING, 0, AFFINITYD_MESSAGE_PLACEMENT_FAILED, name, p->pid, p->comm, NULL,
                "Cannot place %s[%d]: %s; its affinity is left as it is (logged once; "
                "affinityctl explain %d)",
                p->comm, (int)p->pid, text, (int)p->pid);
}

/*
 * True if current, a thread's mask that is not what the daemon last gave it, is what the kernel
 * sets by itself when a cgroup's cpuset changes: the cpuset's CPUs (or, in no cpuset, the online
 * CPUs). Such a reset is no one's choice: it is repaired whatever on-drift: says.
 */
static bool mask_is_cpuset_reset(PlaceContext *ctx, const CpuSet *current) {
        const CpuSet *allowed = place_context_cpuset(ctx);

        if (allowed)
                return cpuset_equal(current, allowed);
        return ctx->manager->topology && cpuset_equal(current, topology_online_cpus(ctx->manager->topology));
}

/*
 * Whether error, a refused write of target, is the task's cpuset's (thread_write_refusal()):
 * then it is reported as such (once per process) and counted, and true is returned.
 */
static bool place_refused_by_cpuset(PlaceContext *ctx, int error, const CpuSet *target) {
        const CpuSet *allowed = error == -EINVAL ? place_context_cpuset(ctx) : NULL;

        if (thread_write_refusal(error, allowed, allowed && cpuset_intersects(target, allowed)) !=
            THREAD_REFUSAL_CPUSET_CONFLICT)
                return false;
        report_cpuset_conflict(ctx, target);
        ctx->n_failed++;
        ctx->error = -EINVAL;
        return true;
}

/* Places one thread. Returns 0 (placed, refused, or nothing to do), -ESRCH (gone), -ENOMEM. */
int place_thread(PlaceContext *ctx, pid_t tid) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL, current = CPUSET_NULL, target_buf = CPUSET_NULL;
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        const PolicyPlan *pp = manager_process_plan(m, p);
        const CpuSet *target;
        bool read_current = false, kept_all, same;
        char comm[16] = "";
        TrackedThread *t;
        int r;

        if (ctx->identify && tid != p->pid) {
                /* A TID from an event may have exited and been reused by another task since:
                 * /proc/PID/task/TID exists only for a thread of PID (whose identity the caller
                 * checked), and a thread starts after its process. One read gives the comm too. */
                ProcfsStat st;

                r = procfs_read_stat(NULL, p->pid, tid, &st);
                if (r == -ESRCH || r == -ENOENT || (r >= 0 && st.starttime < p->starttime))
                        goto gone;
                if (r < 0)
                        return 0; /* not known to be ours: not touched */
                memcpy(comm, st.comm, sizeof(comm));
        } else if (pp && pp->policy->n_threads > 0) {
                r = procfs_read_comm(NULL, p->pid, tid, comm);
                if (r == -ESRCH)
                        goto gone;
                if (r < 0)
                        log_debug_errno(
                                r, "Failed to read comm of %s[%d] thread %d, using the policy's set: %m",
                                p->comm, (int)p->pid, (int)tid);
        }

        t = tracked_process_thread(p, tid);
        if (!t) {
                r = tracked_process_add_thread(p, tid, &t);
                if (r < 0)
                        return r;
        }
        t->generation = p->generation;
        ctx->n_threads++;

        r = place_thread_sched(ctx, t, tid, comm);
        if (r == -ESRCH)
                goto gone;
        if (r < 0)
                return r;

        r = thread_target(m, p, tid, comm, &target_buf, &target);
        if (r < 0)
                return r;

        switch (thread_affinity_step(&(ThreadAffinityFacts){
                .has_target = target != NULL,
                .left_to_unit = target && ctx->via_unit && pp && cpuset_equal(target, &pp->cpus),
                .applied_is_target = target && t->has_applied && cpuset_equal(&t->applied, target),
                .force = ctx->force,
                .verify = ctx->verify,
                .dry_run = m->dry_run})) {
        case THREAD_AFFINITY_KEEP:
                return 0;
        case THREAD_AFFINITY_RECHECK:
                /* What the kernel reports now, not what was written last. Forced (an exec, CPU
                 * hotplug: the entry may not describe the thread's mask any more), a mask that
                 * is what the kernel made of the target already is not written again. */
                r = apply_get_thread_affinity(tid, &current);
                if (r == -ESRCH)
                        goto gone;
                same = r >= 0 && cpuset_equal(&current, thread_effective(t));
                /* The cpuset is read only when its answer counts: a known mask that differs,
                 * unforced. */
                switch (thread_affinity_recheck(
                        r >= 0, same, r >= 0 && !same && !ctx->force && mask_is_cpuset_reset(ctx, &current),
                        ctx->force)) {
                case THREAD_RECHECK_KEEP:
                case THREAD_RECHECK_DRIFT: /* moved by someone: the drift check's (on-drift:) */
                        return 0;
                case THREAD_RECHECK_RESET:
                        ctx->n_reset++;
                        break;
                case THREAD_RECHECK_WRITE:
                        break;
                }
                break;
        case THREAD_AFFINITY_WRITE:
                break;
        }

        if (!t->has_original) {
                /* First touch: its mask now is its original, and may be the target already (a
                 * thread inherits its creator's mask): then there is nothing to write. */
                r = apply_get_thread_affinity(tid, &current);
                if (r == -ESRCH)
                        goto gone;
                read_current = r >= 0;
                if (r >= 0)
                        r = thread_record_original(ctx, t, &current);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* Never change what could not be restored. */
                        report_failure(m, p, process_policy_label(m, p), tid, target, r);
                        ctx->n_failed++;
                        ctx->error = r;
                        return 0;
                }
                if (cpuset_equal(&current, target))
                        return thread_set_applied(t, target, &current);
        }

        if (m->dry_run) {
                r = thread_set_applied(t, target, target);
                if (r < 0)
                        return r;
                ctx->n_set++;
                return 0;
        }

        /*
         * The kernel intersects the mask with the task's cpuset (and online CPUs) and refuses an
         * empty intersection with EINVAL, leaving the mask as it was; a narrower result is
         * reported below as narrowing. The cpuset is read only to explain a refusal, so the
         * common path costs no cgroup reads.
         */
        /* Refused by the cgroup before, for this target: write again only if its cpuset changed. */
        if (p->refusal && cpuset_equal(&p->refusal->wanted, target) &&
            place_refused_by_cpuset(ctx, -EINVAL, target))
                return 0;

        manager_originals_save(m, p); /* the originals reach the state dir before the first write */
        /* Read back what the kernel kept, unless it can only be the target: the mask read just
         * now lies within the task's cpuset and the active CPUs, and so does a target within it
         * (the first placement after an exec, most often). */
        kept_all = read_current && cpuset_is_subset(target, &current);
        if (kept_all && cpuset_copy(&effective, target) < 0)
                return -ENOMEM;
        r = apply_set_thread_affinity(tid, target, kept_all ? NULL : &effective);
        if (r == -ESRCH)
                goto gone;
        if (r < 0) {
                if (!place_refused_by_cpuset(ctx, r, target)) {
                        report_failure(m, p, process_policy_label(m, p), tid, target, r);
                        ctx->n_failed++;
                        ctx->error = r;
                }
                return 0;
        }

        r = thread_set_applied(t, target, &effective);
        if (r < 0)
                return r;
        ctx->n_set++;

        if (!cpuset_equal(&effective, target))
                report_narrowing(m, p, tid, target, &effective);
        return 0;

gone:
        t = tracked_process_thread(p, tid);
        if (t)
                tracked_process_remove_thread(m, p, t);
        return -ESRCH;
}

static int place_thread_visitor(pid_t pid, pid_t tid, void *userdata) {
        return place_thread(userdata, tid);
}

/*
 * memory: with migrate: moves the pages p has on other nodes to its policy's memory nodes
 * (migrate_pages(2)), once per plan installed and per exec, and logs what moved, counted from
 * /proc/PID/numa_maps before and after. A failure is reported and counted, never fatal.
 */
static void process_migrate_memory(Manager *m, TrackedProcess *p) {
        _cleanup_free_ NumaNodePages *before = NULL, *after = NULL;
        _cleanup_cpuset_ CpuSet from = CPUSET_NULL, off = CPUSET_NULL;
        _cleanup_free_ char *nodes = NULL;
        const PolicyPlan *pp = manager_process_plan(m, p);
        size_t n_before = 0, n_after = 0;
        NumaNodePages a, b;
        int r;

        if (!pp || pp->pending_reason || !pp->has_memory || !pp->policy->memory.migrate ||
            p->memory_generation == m->plan_generation)
                return;
        p->memory_generation = m->plan_generation;
        nodes = cpuset_to_string(&pp->memory_nodes);
        if (m->dry_run) {
                log_info(
                        "Would move the memory of %s[%d] to nodes %s (policy %s)", p->comm, (int)p->pid,
                        strna(nodes), pp->policy->name);
                return;
        }

        /* Every node that holds pages of it (the kernel leaves those already on a target node). */
        r = apply_numa_read_pages(NULL, p->pid, &before, &n_before);
        for (size_t i = 0; r >= 0 && i < n_before; i++)
                if (before[i].pages > 0)
                        r = cpuset_add(&from, (unsigned)i);
        if (r >= 0 && cpuset_is_empty(&from))
                return (void)log_debug("%s[%d] has no memory to move", p->comm, (int)p->pid);
        if (r >= 0)
                r = apply_numa_migrate(p->pid, &from, &pp->memory_nodes);
        if (r == -ESRCH)
                return;
        if (r < 0) {
                m->counters.placement_failures++;
                log_struct(
                        LOG_WARNING, r, pp->policy->name, p->pid, p->comm, NULL,
                        "Failed to move the memory of %s[%d] to nodes %s (policy %s): %m, skipping", p->comm,
                        (int)p->pid, strna(nodes), pp->policy->name);
                return;
        }

        /* What moved is what left the other nodes (the process may allocate meanwhile). */
        if (cpuset_copy(&off, &from) < 0)
                return;
        cpuset_andnot(&off, &pp->memory_nodes);
        b = apply_numa_sum(before, n_before, &off);
        if (apply_numa_read_pages(NULL, p->pid, &after, &n_after) < 0)
                return;
        a = apply_numa_sum(after, n_after, &off);
        /* Nothing moved (a reload with the pages in place already) is not news. */
        log_struct(
                b.kib > a.kib || r > 0 ? LOG_INFO : LOG_DEBUG, 0, pp->policy->name, p->pid, p->comm, NULL,
                "Moved %" PRIu64 " KiB of %s[%d] to nodes %s (policy %s; %" PRIu64
                " KiB there now, %d pages could not be moved)",
                b.kib > a.kib ? b.kib - a.kib : 0, p->comm, (int)p->pid, strna(nodes), pp->policy->name,
                apply_numa_sum(after, n_after, &pp->memory_nodes).kib, r);
}

/*
 * via: systemd: places the unit of p (from its cgroup) through systemd, once per unit and plan.
 * True when that is effective, so p's threads need no affinity write; false for every other
 * policy and whenever the caller must fall back to placing p's threads (reported by
 * unit_placement_place()).
 */
static bool place_process_unit(Manager *m, TrackedProcess *p) {
        const PolicyPlan *pp = manager_process_plan(m, p);
        _cleanup_(process_facts_done) ProcessFacts f = {};
        int r;

        if (!pp || pp->policy->via != VIA_SYSTEMD || !pp->has_cpus || !m->units)
                return false;
        process_facts_init(&f, NULL, p->pid);
        r = process_facts_load(&f, FACT_UNIT);
        if (r < 0 || !(f.loaded & FACT_UNIT) || !f.unit) {
                log_struct(
                        LOG_DEBUG, 0, pp->policy->name, p->pid, p->comm, NULL,
                        "%s[%d]: no systemd unit known (policy %s, via: systemd), placing it directly",
                        p->comm, (int)p->pid, pp->policy->name);
                return false;
        }
        r = unit_placement_place(
                m->units, f.unit, pp->policy->name, &pp->cpus, pp->has_memory ? &pp->memory_nodes : NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to place unit %s through systemd: %m", f.unit);
        return r > 0;
}

/*
 * ProcessPlaced for a pass over p (ctx): the bus signal to subscribers, and one journal entry
 * (POLICY=, PID=, COMM=, CPUS=: `journalctl POLICY=db`) at the level process_placed_log_level()
 * gives. The text is made only when something will carry it.
 */
static void report_placed(Manager *m, TrackedProcess *p, const PlaceContext *ctx) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        _cleanup_free_ char *text = NULL;
        unsigned suppressed = 0;
        bool wrote = ctx->n_set > 0, info = log_level_enabled(LOG_INFO);
        PlacedLogLevel level = process_placed_log_level(
                wrote, info, log_level_enabled(LOG_DEBUG),
                wrote && info && (m->dry_run || ratelimit_below(&m->placed_ratelimit, &suppressed)));
        bool report = manager_report_events_wanted(m);

        if (!report && level == PLACED_LOG_NONE)
                return;
        (void)tracked_process_cpus(p, &cpus);
        text = cpuset_to_string(&cpus);
        if (report)
                (void)manager_report(
                        m, process_placed, p->pid, p->comm, manager_process_policy_name(m, p), text ?: "");
        if (level != PLACED_LOG_NONE)
                log_struct_id(
                        level == PLACED_LOG_INFO ? LOG_INFO : LOG_DEBUG, 0, AFFINITYD_MESSAGE_PROCESS_PLACED,
                        manager_process_policy_name(m, p), p->pid, p->comm, text,
                        "%s %s[%d] (%u of %u threads) on CPUs %s (policy %s)%s%s",
                        m->dry_run ? "Would place" : "Placed", p->comm, (int)p->pid, ctx->n_set,
                        ctx->n_threads, strna(text), manager_process_policy_name(m, p),
                        ctx->n_reset > 0 ? "; they were on their cgroup's CPUs, taken for the kernel's "
                                           "reset after a cpuset change"
                                         : "",
                        suppressed > 0 ? "; earlier placements of a burst were not logged one by one "
                                         "(see the summary)"
                                       : "");
}

/*
 * Places every thread of p under its policy (threads created meanwhile included). On
 * completion counts p as placed (once). If the process is gone: counts it as vanished if its
 * placement had never completed, removes it, and returns -ESRCH (p is freed). timestamp_ns is
 * the event's kernel timestamp for the latency histogram, 0 for scans. n_threads: the
 * num_threads of a /proc/PID/stat read just before, 0 if unknown.
 *
 * With the proc connector, a thread created after the threads are listed is announced by its
 * FORK event, handled after this (on_fork_thread()): one pass over /proc/PID/task is enough,
 * and none for a process that had one thread (the leader, as after every exec). Only /proc
 * polling needs the passes that catch threads created meanwhile. See docs/performance.md.
 */
int place_process(Manager *m, TrackedProcess *p, bool force, uint64_t timestamp_ns, unsigned n_threads) {
        _cleanup_(place_context_done) PlaceContext ctx = {
                .manager = m,
                .process = p,
                .force = force,
                .verify = !m->polling_pass,
        };
        ProcessPassActions act;
        unsigned n_passes = 0;
        int r;

        ctx.via_unit = place_process_unit(m, p);
        r = process_refresh_within(&ctx);
        if (r < 0)
                return log_warning_errno(
                        r, "Failed to place %s[%d] (policy %s): %m", p->comm, (int)p->pid,
                        manager_process_policy_name(m, p));
again:
        p->generation++;
        ctx.n_threads = 0;
        if (m->discovery != MANAGER_DISCOVERY_NETLINK)
                r = procfs_foreach_thread(NULL, p->pid, place_thread_visitor, &ctx);
        else if (n_threads == 1) {
                r = place_thread(&ctx, p->pid);
                if (r >= 0)
                        r = 1;
        } else
                r = procfs_foreach_thread_once(NULL, p->pid, place_thread_visitor, &ctx);
        if (r == -ESRCH || r == 0) {
                log_debug("%s[%d] exited while being placed", p->comm, (int)p->pid);
                if (!p->placed)
                        m->counters.processes_vanished++;
                manager_remove_process(m, p);
                return -ESRCH;
        }
        if (r < 0)
                return log_warning_errno(
                        r, "Failed to place %s[%d] (policy %s): %m", p->comm, (int)p->pid,
                        manager_process_policy_name(m, p));

        (void)tracked_process_remove_threads_if(m, p, thread_not_seen);

        /* Spread slots taken or given back in this pass change what the threads no rule matches
         * get: one more pass writes those (the others are in place already). Bounded: a pass
         * that follows one takes no new slot, unless threads appeared meanwhile. */
        r = process_spread_update(m, p);
        if (r < 0)
                return log_warning_errno(
                        r, "Failed to place %s[%d] (policy %s): %m", p->comm, (int)p->pid,
                        manager_process_policy_name(m, p));
        if (r > 0 && ++n_passes < 3) {
                ctx.force = false;
                n_threads = 0;
                goto again;
        }

        if (ctx.n_set > 0)
                manager_record_latency(m, timestamp_ns);

        process_migrate_memory(m, p);

        act = process_pass_actions(&(ProcessPassFacts){
                .n_set = ctx.n_set,
                .n_failed = ctx.n_failed,
                .cpuset_conflict = ctx.cpuset_conflict,
                .refusal_new = ctx.refusal_new,
                .had_refusal = p->refusal != NULL,
                .placed = p->placed,
                .settled = p->settled,
                .verify = ctx.verify,
                .forked = p->forked,
                .dry_run = m->dry_run});
        /* Refused by its cgroup (report_cpuset_conflict()): not placed, and persisted as reported. */
        if (act.drop_refusal) {
                p->refusal = cpuset_refusal_free(p->refusal); /* its cgroup allows it now */
                p->state_dirty = true;
        }
        if (act.save_state)
                manager_originals_save(m, p);
        if (act.watch_cgroup) {
                /* Settled (its cgroup watched since its settle pass): at each pass that reads
                 * back (a rescan, a reload, a cpuset check), the cgroup it has moved to since
                 * is watched too. */
                r = cpuset_watch_add_process(m->cpuset_watch, p->pid);
                if (r == -ENOMEM)
                        return log_warning_errno(
                                r, "Failed to watch the cgroup of %s[%d]: %m", p->comm, (int)p->pid);
        }
        if (act.first) {
                p->placed = true;
                m->counters.processes_placed++;
        }
        if (act.queue_settle)
                manager_queue_settle(m, p);
        if (act.report_failed) {
                char why[256];

                snprintf(
                        why, sizeof(why), "%u of %u threads refused: %s", ctx.n_failed, ctx.n_threads,
                        ctx.error_text ?: strerror(-(ctx.error ?: -EIO)));
                (void)manager_report(
                        m, placement_failed, p->pid, p->comm, manager_process_policy_name(m, p), why);
        }
        if (act.count_summary) {
                m->summary_processes++;
                m->summary_threads += ctx.n_set;
                manager_schedule_summary(m);
        }
        if (act.report_placed)
                report_placed(m, p, &ctx);
        return 0;
}

/* ---- the settle pass ---- */

/*
 * What placing a process leaves for later, done SETTLE_DELAY_USEC (to SETTLE_DELAY_USEC +
 * SETTLE_BATCH_USEC) after its placement if it still runs then, from the settle queue
 * (settle-queue.h): the build farm's compiler that lives for 50 ms never costs it.
 *  - Its cgroup is watched (cpuset_watch_add_process(): /proc/PID/cgroup read). A cgroup that
 *    was not watched yet may have had its cpuset changed since the placement, unseen: the
 *    process is then placed again with a read-back (place_process() verifies), which writes
 *    again what the kernel reset.
 *  - Explain's baselines of its threads are sampled (manager_sample_baseline(): /proc/PID/task/
 *    TID/sched and schedstat), so Explain's "since placement" counts from about a second after
 *    the placement; before that Explain reports the totals since the thread started.
 * With replace false, a cgroup seen first is only watched (the caller is placing p). Returns
 * the work done (threads looked at), or -ESRCH if p went away (freed only with replace).
 */
static int settle_process(Manager *m, TrackedProcess *p, bool replace) {
        int r;

        if (!p->settled && !p->forked && !m->dry_run) {
                p->settled = true;
                r = cpuset_watch_add_process(m->cpuset_watch, p->pid);
                if (r == -ESRCH)
                        return r; /* its EXIT event will come */
                if (r == -ENOMEM)
                        log_warning_errno(
                                r, "Failed to watch the cgroup of %s[%d]: %m", p->comm, (int)p->pid);
                if (r > 0 && p->placed && replace) {
                        /* a cgroup seen first now: anything the kernel reset meanwhile is put
                         * right */
                        r = place_process(m, p, false, 0, 0);
                        if (r == -ESRCH)
                                return r;
                }
        }
        p->settled = true;
        return (int)manager_sample_baseline(p);
}

/* The settle queue's callback (settle_fn_t). */
static int on_settle_due(pid_t pid, void *userdata) {
        Manager *m = userdata;
        TrackedProcess *p = manager_find_process(m, pid);

        if (!p)
                return 0;
        p->settle_queued = false;
        return settle_process(m, p, true);
}

/*
 * Queues p for its settle pass (above). Best effort: when there is no event loop, or memory or
 * the timer fails, the pass runs now.
 */
void manager_queue_settle(Manager *m, TrackedProcess *p) {
        if (p->settle_queued)
                return;
        if (!m->settle && m->event && settle_queue_new(m->event, on_settle_due, m, &m->settle) < 0)
                m->settle = NULL;
        if (m->settle && settle_queue_add(m->settle, p->pid) >= 0) {
                p->settle_queued = true;
                return;
        }
        (void)settle_process(m, p, false);
}

static int restore_thread_visitor(pid_t pid, pid_t tid, void *userdata) {
        PlaceContext *ctx = userdata;
        TrackedProcess *p = ctx->process;
        TrackedThread *t = tracked_process_thread(p, tid);
        const ThreadSched *sched = NULL;
        const CpuSet *original;
        int r;

        /* Its scheduling state first: class, priority, nice, reset-on-fork, I/O priority. */
        if (t && t->sched && t->sched->has_applied)
                sched = &t->sched->original;
        else if (!t && p->has_sched_original)
                sched = &p->sched_original; /* appeared unseen: it inherited a state we set */
        if (sched && !ctx->manager->dry_run) {
                r = apply_set_thread_sched(NULL, tid, sched, NULL);
                if (r == -ESRCH)
                        return r;
                if (r < 0)
                        report_sched_failure(ctx->manager, p, ctx->policy_name, tid, sched, r);
                else
                        ctx->n_sched++;
        }

        if (t && t->has_applied && t->has_original)
                original = thread_original(p, t);
        else if (!t && p->has_original)
                original = &p->original; /* appeared unseen: its mask came from a placed thread */
        else
                return 0;

        ctx->n_threads++;
        if (ctx->manager->dry_run)
                return 0;
        r = apply_set_thread_affinity(tid, original, NULL);
        if (r == -ESRCH)
                return r;
        if (r < 0) {
                report_failure(ctx->manager, p, ctx->policy_name, tid, original, r);
                return 0;
        }
        ctx->n_set++;
        return 0;
}

/* Gives p's threads back the affinity they had before the daemon touched them. */
void restore_process(Manager *m, TrackedProcess *p, const char *policy_name) {
        PlaceContext ctx = {.manager = m, .process = p, .policy_name = policy_name};
        _cleanup_free_ char *text = NULL;
        int r;

        if (!p->has_original && !p->has_sched_original)
                return;
        r = procfs_foreach_thread(NULL, p->pid, restore_thread_visitor, &ctx);
        if (r < 0 && r != -ESRCH)
                log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", p->comm, (int)p->pid);
        if (r >= 0 && !m->dry_run && ctx.n_set + ctx.n_sched > 0)
                m->counters.restores++;
        if (r < 0 || !log_level_enabled(LOG_DEBUG))
                return;
        text = p->has_original ? cpuset_to_string(&p->original) : strdup("unchanged");
        log_struct_id(
                LOG_DEBUG, 0, AFFINITYD_MESSAGE_RESTORED, policy_name, p->pid, p->comm, text,
                "%s %s[%d] no longer matches policy %s: restored %u threads (original CPUs %s), the "
                "scheduling of %u",
                m->dry_run ? "Would restore:" : "Restored:", p->comm, (int)p->pid, strna(policy_name),
                ctx.n_set, strna(text), ctx.n_sched);
}
