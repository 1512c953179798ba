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
#include "manager-state.h"
#include "manager.h"
#include "match.h"
#include "plan.h"
#include "procfs.h"
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
static int process_spread_update(Manager *m, TrackedProcess *p) {
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
        bool subset = cpuset_is_subset(effective, requested);
        /* Sized for the configuration in force; no flag for a process without a policy in it. */
        bool *reported = manager_process_plan(m, p) ? &m->narrowing_reported[p->policy] : NULL;
        bool already = !reported || *reported;

        if (subset && already && !log_level_enabled(LOG_DEBUG))
                return;
        if (!subset && !ratelimit_below(&m->failure_ratelimit, NULL))
                return;

        req = cpuset_to_string(requested);
        eff = cpuset_to_string(effective);
        if (!subset)
                log_struct(
                        LOG_WARNING, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel set %s[%d] thread %d to CPUs %s, outside the requested %s (policy %s)",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req), process_policy_label(m, p));
        else if (!already) {
                *reported = true;
                log_struct(
                        LOG_INFO, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s (policy %s; a "
                        "cgroup cpuset or offline CPUs?). Reported once per policy.",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req), process_policy_label(m, p));
        } else
                log_debug(
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s", p->comm,
                        (int)p->pid, (int)tid, strna(eff), strna(req));
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
        const StateProcess *rec = manager_state_recovered(ctx->manager, p);
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

/* ---- scheduling class, priority, nice and I/O priority (scheduler:) ---- */

static bool sched_is_realtime(int policy) {
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* "fifo 10, nice 0, io best-effort 4" for messages, into buf. */
static const char *thread_sched_format(const ThreadSched *s, char *buf, size_t size) {
        const char *io = apply_ioprio_class_to_string(s->io_class);

        if (sched_is_realtime(s->policy))
                snprintf(
                        buf, size, "%s %u, io %s %u", strna(apply_sched_policy_to_string(s->policy)),
                        s->priority, strna(io), s->io_level);
        else
                snprintf(
                        buf, size, "%s, nice %d, io %s %u", strna(apply_sched_policy_to_string(s->policy)),
                        s->nice, strna(io), s->io_level);
        return buf;
}

/* Counts and reports (rate-limited) a scheduling state s (NULL: unknown) refused for tid;
 * APPLY_RT_NO_RUNTIME gets its RT_GROUP_SCHED explanation. */
static void report_sched_failure(
        Manager *m, const TrackedProcess *p, const char *policy_name, pid_t tid, const ThreadSched *s,
        int error) {
        _cleanup_free_ char *why = NULL;
        unsigned suppressed = 0;
        char text[96];

        m->counters.placement_failures++;
        if (!ratelimit_below(&m->failure_ratelimit, &suppressed))
                return;
        if (suppressed > 0)
                log_warning("Suppressed %u placement failure messages", suppressed);
        if (s)
                thread_sched_format(s, text, sizeof(text));
        else
                snprintf(text, sizeof(text), "%s", "its policy's (its current state is unreadable)");
        if (error == APPLY_RT_NO_RUNTIME && apply_explain_rt_no_runtime(NULL, tid, &why) >= 0)
                log_struct_id(
                        LOG_WARNING, 0, AFFINITYD_MESSAGE_PLACEMENT_FAILED, policy_name, p->pid, p->comm,
                        NULL,
                        "Failed to set the scheduling of %s[%d] thread %d to %s (policy %s): %s, skipping",
                        p->comm, (int)p->pid, (int)tid, text, strna(policy_name), why);
        else if (error == APPLY_RT_NO_RUNTIME)
                log_struct_id(
                        LOG_WARNING, 0, AFFINITYD_MESSAGE_PLACEMENT_FAILED, policy_name, p->pid, p->comm,
                        NULL,
                        "Failed to set the scheduling of %s[%d] thread %d to %s (policy %s): "
                        "RT_GROUP_SCHED: "
                        "its cpu cgroup has no real-time runtime (cpu.rt_runtime_us is 0), skipping",
                        p->comm, (int)p->pid, (int)tid, text, strna(policy_name));
        else
                log_struct_id(
                        LOG_WARNING, error, AFFINITYD_MESSAGE_PLACEMENT_FAILED, policy_name, p->pid, p->comm,
                        NULL,
                        "Failed to set the scheduling of %s[%d] thread %d to %s (policy %s): %m, skipping",
                        p->comm, (int)p->pid, (int)tid, text, strna(policy_name));
}

typedef struct SchedSearch {
        const ThreadSched *sched;
        const ThreadSched *original; /* the process's original */
        bool found;
} SchedSearch;

static void sched_search_action(const void *nodep, VISIT which, void *userdata) {
        const TrackedThread *t = *(void *const *)nodep;
        SchedSearch *s = userdata;

        if ((which == postorder || which == leaf) && !s->found && t->sched && t->sched->has_applied)
                s->found = thread_sched_inherited(s->sched, &t->sched->applied, s->original);
}

/* Records t's original scheduling state on first touch, as thread_record_original() does for
 * the affinity: a state the daemon set on another thread of p was inherited from it, and such a
 * thread gets the process's original. Returns 0 or -ENOMEM. */
static int thread_record_sched_original(
        Manager *m, TrackedProcess *p, TrackedThread *t, const ThreadSched *current,
        const SchedulerSpec *spec) {
        const StateProcess *rec = manager_state_recovered(m, p);
        SchedSearch s = {.sched = current, .original = &p->sched_original};

        if (t->sched)
                return 0;
        t->sched = calloc(1, sizeof(ThreadSchedState));
        if (!t->sched)
                return -ENOMEM;
        if (rec && rec->has_sched) {
                /* Placed by a previous instance: its state now is that instance's doing. */
                const StateThread *st = state_process_find_thread(rec, t->tid);

                if (!p->has_sched_original) {
                        p->sched_original = rec->sched;
                        p->has_sched_original = true;
                }
                t->sched->original = st && st->has_sched ? st->sched : p->sched_original;
                p->state_dirty = true;
                return 0;
        }
        if (!p->has_sched_original) {
                p->sched_original = *current;
                p->has_sched_original = true;
        } else {
                /* A forked child's threads inherit what the daemon set on its parent. */
                ThreadSched inherited = thread_sched_target(&p->sched_original, spec);
                s.found = thread_sched_inherited(current, &inherited, &p->sched_original);
        }
        twalk_r(p->threads, sched_search_action, &s);
        t->sched->original = s.found ? p->sched_original : *current;
        if (!apply_sched_equal(&t->sched->original, &p->sched_original) || !p->state_saved)
                p->state_dirty = true; /* the file lists threads that differ */
        return 0;
}

/*
 * Applies the scheduling state of thread tid (t) under p's policy: the thread rule's scheduler
 * keys over the policy's. Without any key, a thread the daemon changed before (a reload
 * dropped the keys) gets its original back. Returns 0 (set, refused, or nothing to do),
 * -ESRCH (gone), -ENOMEM.
 */
static int place_thread_sched(PlaceContext *ctx, TrackedThread *t, pid_t tid, const char *thread_comm) {
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        SchedulerSpec spec;
        ThreadSched current, target, effective;
        bool restore;
        int r;

        restore = !thread_sched_spec(manager_process_plan(m, p), thread_comm, &spec);
        if (restore && (!t->sched || !t->sched->has_applied))
                return 0;
        if (!t->sched) {
                r = apply_get_thread_sched(tid, &current);
                if (r == -ESRCH)
                        return r;
                if (r < 0) {
                        /* Never change what could not be restored. */
                        report_sched_failure(m, p, process_policy_label(m, p), tid, NULL, r);
                        ctx->n_failed++;
                        ctx->error = r;
                        return 0;
                }
                r = thread_record_sched_original(m, p, t, &current, &spec);
                if (r < 0)
                        return r;
                target = thread_sched_target(&t->sched->original, &spec);
                if (apply_sched_equal(&current, &target)) {
                        t->sched->applied = current;
                        t->sched->has_applied = true;
                        return 0;
                }
        } else
                target = restore ? t->sched->original : thread_sched_target(&t->sched->original, &spec);

        if (!ctx->force && t->sched->has_applied && apply_sched_equal(&t->sched->applied, &target))
                goto done;
        if (m->dry_run) {
                t->sched->applied = target;
                t->sched->has_applied = true;
                ctx->n_sched++;
                goto done;
        }

        manager_state_save(m, p); /* the originals reach the state dir before the first write */
        r = apply_set_thread_sched(NULL, tid, &target, &effective);
        if (r == -ESRCH)
                return r;
        if (r < 0) {
                report_sched_failure(m, p, process_policy_label(m, p), tid, &target, r);
                ctx->n_failed++;
                ctx->error = r;
                /* ioprio_set(2) may have failed after the class was set: put the original back. */
                if (apply_set_thread_sched(NULL, tid, &t->sched->original, NULL) >= 0)
                        t->sched->has_applied = false;
                return 0;
        }
        t->sched->applied = effective;
        t->sched->has_applied = true;
        ctx->n_sched++;
        if (log_level_enabled(LOG_DEBUG)) {
                char text[96];
                log_debug(
                        "Set the scheduling of %s[%d] thread %d to %s (policy %s)", p->comm, (int)p->pid,
                        (int)tid, thread_sched_format(&effective, text, sizeof(text)),
                        process_policy_label(m, p));
        }
done:
        if (restore)
                t->sched->has_applied = false; /* back to its original: no longer ours */
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

        rec = manager_state_recovered(m, p);
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

/* Places one thread. Returns 0 (placed, refused, or nothing to do), -ESRCH (gone), -ENOMEM. */
int place_thread(PlaceContext *ctx, pid_t tid) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL, current = CPUSET_NULL, target_buf = CPUSET_NULL;
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        const PolicyPlan *pp = manager_process_plan(m, p);
        const CpuSet *target, *allowed;
        bool read_current = false, kept_all;
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

        if (!target)
                return 0;
        if (ctx->via_unit && pp && cpuset_equal(target, &pp->cpus))
                return 0; /* systemd's AllowedCPUs= on its unit does it */
        if (t->has_applied && cpuset_equal(&t->applied, target) && !(ctx->force && m->dry_run)) {
                if (!ctx->force && (!ctx->verify || m->dry_run))
                        return 0;
                /* What the kernel reports now, not what was written last. Forced (an exec, CPU
                 * hotplug: the entry may not describe the thread's mask any more), a mask that
                 * is what the kernel made of the target already is not written again. */
                r = apply_get_thread_affinity(tid, &current);
                if (r == -ESRCH)
                        goto gone;
                if (r >= 0 && cpuset_equal(&current, thread_effective(t)))
                        return 0;
                if (!ctx->force) {
                        if (r < 0 || !mask_is_cpuset_reset(ctx, &current))
                                return 0; /* moved by someone: drift, the drift check's (on-drift:) */
                        ctx->n_reset++;
                }
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
        if (p->refusal && cpuset_equal(&p->refusal->wanted, target)) {
                allowed = place_context_cpuset(ctx);
                if (allowed && !cpuset_intersects(target, allowed)) {
                        report_cpuset_conflict(ctx, target);
                        ctx->n_failed++;
                        ctx->error = -EINVAL;
                        return 0;
                }
        }

        manager_state_save(m, p); /* the originals reach the state dir before the first write */
        /* Read back what the kernel kept, unless it can only be the target: the mask read just
         * now lies within the task's cpuset and the active CPUs, and so does a target within it
         * (the first placement after an exec, most often). */
        kept_all = read_current && cpuset_is_subset(target, &current);
        if (kept_all && cpuset_copy(&effective, target) < 0)
                return -ENOMEM;
        r = apply_set_thread_affinity(tid, target, kept_all ? NULL : &effective);
        if (r == -ESRCH)
                goto gone;
        if (r == -EINVAL) {
                allowed = place_context_cpuset(ctx);
                if (allowed && !cpuset_intersects(target, allowed)) {
                        report_cpuset_conflict(ctx, target);
                        ctx->n_failed++;
                        ctx->error = -EINVAL;
                        return 0;
                }
        }
        if (r < 0) {
                report_failure(m, p, process_policy_label(m, p), tid, target, r);
                ctx->n_failed++;
                ctx->error = r;
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
        unsigned n_passes = 0;
        bool first, refused;
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

        /* Refused by its cgroup (report_cpuset_conflict()): not placed, and persisted as reported. */
        refused = ctx.cpuset_conflict && ctx.n_set == 0;
        if (refused)
                manager_state_save(m, p);
        else if (p->refusal && ctx.n_failed == 0) {
                p->refusal = cpuset_refusal_free(p->refusal); /* its cgroup allows it now */
                p->state_dirty = true;
                manager_state_save(m, p);
        }
        if (p->settled && ctx.verify && !p->forked && !m->dry_run) {
                /* Settled (its cgroup watched since its settle pass): at each pass that reads
                 * back (a rescan, a reload, a cpuset check), the cgroup it has moved to since
                 * is watched too. A child forked without exec is in its parent's cgroup,
                 * watched already. */
                r = cpuset_watch_add_process(m->cpuset_watch, p->pid);
                if (r == -ENOMEM)
                        return log_warning_errno(
                                r, "Failed to watch the cgroup of %s[%d]: %m", p->comm, (int)p->pid);
        }

        first = !p->placed && !refused;
        if (first) {
                p->placed = true;
                m->counters.processes_placed++;
        }
        if (ctx.n_set > 0 || first || !p->settled)
                manager_queue_settle(m, p);
        /* PlacementFailed: a refusal by the cgroup only when it is new (it is one per process). */
        if (ctx.n_failed > 0 && (!ctx.cpuset_conflict || ctx.refusal_new)) {
                char why[256];

                snprintf(
                        why, sizeof(why), "%u of %u threads refused: %s", ctx.n_failed, ctx.n_threads,
                        ctx.error_text ?: strerror(-(ctx.error ?: -EIO)));
                (void)manager_report(
                        m, placement_failed, p->pid, p->comm, manager_process_policy_name(m, p), why);
        }

        if (ctx.n_set > 0) {
                m->summary_processes++;
                m->summary_threads += ctx.n_set;
                manager_schedule_summary(m);
        }

        /* ProcessPlaced: once per pass that wrote something, or that completed the first one */
        if (ctx.n_set > 0 || first) {
                _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
                _cleanup_free_ char *text = NULL;
                unsigned suppressed = 0;
                /* One journal entry per placement (POLICY=, PID=, COMM=, CPUS=: `journalctl
                 * POLICY=db`), at info while they come at a human pace; in a burst beyond the rate
                 * limit they go to debug and the periodic summary counts them. Decided first:
                 * the text is made only when something will carry it. */
                bool info = ctx.n_set > 0 && log_level_enabled(LOG_INFO) &&
                        (m->dry_run || ratelimit_below(&m->placed_ratelimit, &suppressed));
                bool debug = ctx.n_set > 0 && !info && log_level_enabled(LOG_DEBUG);

                bool report = manager_report_events_wanted(m);

                if (report || info || debug) {
                        (void)tracked_process_cpus(p, &cpus);
                        text = cpuset_to_string(&cpus);
                }
                if (report)
                        (void)manager_report(
                                m, process_placed, p->pid, p->comm, manager_process_policy_name(m, p),
                                text ?: "");
                if (info || debug)
                        log_struct_id(
                                info ? LOG_INFO : LOG_DEBUG, 0, AFFINITYD_MESSAGE_PROCESS_PLACED,
                                manager_process_policy_name(m, p), p->pid, p->comm, text,
                                "%s %s[%d] (%u of %u threads) on CPUs %s (policy %s)%s%s",
                                m->dry_run ? "Would place" : "Placed", p->comm, (int)p->pid, ctx.n_set,
                                ctx.n_threads, strna(text), manager_process_policy_name(m, p),
                                ctx.n_reset > 0 ? "; they were on their cgroup's CPUs, taken for the "
                                                  "kernel's reset after a cpuset change"
                                                : "",
                                suppressed > 0 ? "; earlier placements of a burst were not "
                                                 "logged one by one (see the summary)"
                                               : "");
        }
        return 0;
}

/* ---- the settle pass ---- */

/*
 * What placing a process leaves for later, done SETTLE_DELAY_USEC (to SETTLE_DELAY_USEC +
 * SETTLE_BATCH_USEC) after its placement if it still runs then, in batches on an idle-priority
 * timer: the build farm's compiler that lives for 50 ms never costs it.
 *  - Its cgroup is watched (cpuset_watch_add_process(): /proc/PID/cgroup read). A cgroup that
 *    was not watched yet may have had its cpuset changed since the placement, unseen: the
 *    process is then placed again with a read-back (place_process() verifies), which writes
 *    again what the kernel reset.
 *  - Explain's baselines of its threads are sampled (manager_sample_baseline(): /proc/PID/task/
 *    TID/sched and schedstat), so Explain's "since placement" counts from about a second after
 *    the placement; before that Explain reports the totals since the thread started.
 */
#define SETTLE_DELAY_USEC    (1 * USEC_PER_SEC)
#define SETTLE_THREAD_BUDGET 256U               /* threads sampled per run of the timer, at most */
#define SETTLE_BATCH_USEC    (USEC_PER_SEC / 4) /* between two runs of the timer, at least */

/* 8 bytes: one per process placed in the last second or so (a startup scan queues them all). A
 * PID reused meanwhile settles the process that has it now a little early, which is harmless. */
typedef struct SettleEntry {
        pid_t pid;
        uint32_t due_msec; /* CLOCK_MONOTONIC ms, modulo 2^32 */
} SettleEntry;

/* Whether the entry is due at now_usec (CLOCK_MONOTONIC), wrap-around included. */
static bool settle_due(const SettleEntry *e, uint64_t now_usec) {
        return (int32_t)((uint32_t)(now_usec / USEC_PER_MSEC) - e->due_msec) >= 0;
}

/* The entry's due time, as a CLOCK_MONOTONIC µs near now_usec. */
static uint64_t settle_due_usec(const SettleEntry *e, uint64_t now_usec) {
        int32_t ahead = (int32_t)(e->due_msec - (uint32_t)(now_usec / USEC_PER_MSEC));

        return ahead <= 0 ? now_usec : now_usec + (uint64_t)ahead * USEC_PER_MSEC;
}

/* The settle pass of p; with replace false, a cgroup seen first is only watched (the caller is
 * placing p). Returns the work done (threads looked at), or -ESRCH if p went away (freed only
 * with replace). */
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

static int on_settle(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        unsigned work = 0;
        size_t done = 0;

        while (done < m->n_settle_queue && work < SETTLE_THREAD_BUDGET &&
               settle_due(&m->settle_queue[done], usec)) {
                const SettleEntry *e = &m->settle_queue[done++];
                TrackedProcess *p = manager_find_process(m, e->pid);
                int r;

                if (!p)
                        continue;
                p->settle_queued = false;
                r = settle_process(m, p, true);
                if (r > 0)
                        work += (unsigned)r;
        }
        m->n_settle_queue -= done;
        if (m->n_settle_queue == 0) {
                m->settle_queue = mfree(m->settle_queue); /* a burst's queue is given back */
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        }
        memmove(m->settle_queue, m->settle_queue + done, m->n_settle_queue * sizeof(SettleEntry));
        /* Processes are queued one per exec: run again for a batch of them, not for the next
         * one (a timer due at every iteration would be set again at every iteration). Right
         * away only when the budget cut this run short. */
        (void)sd_event_source_set_time(
                s,
                work >= SETTLE_THREAD_BUDGET
                        ? usec
                        : MAX(settle_due_usec(&m->settle_queue[0], usec), usec + SETTLE_BATCH_USEC));
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/*
 * Queues p for its settle pass (above), SETTLE_DELAY_USEC from the loop's time. Best effort:
 * when memory or the timer fails, the pass runs now.
 */
void manager_queue_settle(Manager *m, TrackedProcess *p) {
        size_t n = m->n_settle_queue;
        uint64_t now = 0;
        int r;

        if (p->settle_queued)
                return;
        if (!m->event || sd_event_now(m->event, CLOCK_MONOTONIC, &now) < 0)
                goto now;
        if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) { /* capacity: 16, then powers of two */
                SettleEntry *q = reallocarray(m->settle_queue, n == 0 ? 16 : 2 * n, sizeof(SettleEntry));
                if (!q)
                        goto now;
                m->settle_queue = q;
        }
        if (!m->settle_source) {
                r = sd_event_add_time(
                        m->event, &m->settle_source, CLOCK_MONOTONIC, now + SETTLE_DELAY_USEC,
                        SETTLE_DELAY_USEC / 4, on_settle, m);
                if (r < 0)
                        goto now;
                (void)sd_event_source_set_priority(m->settle_source, SD_EVENT_PRIORITY_IDLE);
                (void)sd_event_source_set_description(m->settle_source, "settle");
        } else if (n == 0) {
                if (sd_event_source_set_time(m->settle_source, now + SETTLE_DELAY_USEC) < 0 ||
                    sd_event_source_set_enabled(m->settle_source, SD_EVENT_ONESHOT) < 0)
                        goto now;
        }
        m->settle_queue[m->n_settle_queue++] = (SettleEntry){
                .pid = p->pid, .due_msec = (uint32_t)((now + SETTLE_DELAY_USEC) / USEC_PER_MSEC)};
        p->settle_queued = true;
        return;
now:
        (void)settle_process(m, p, false);
}

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
