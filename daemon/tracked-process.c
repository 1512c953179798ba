/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tracked-process table: TrackedProcess by PID and TrackedThread by TID in tsearch(3)
 * trees, with what each thread had and was given. See manager-internal.h. */

#include <errno.h>
#include <search.h>
#include <stdlib.h>

#include "drift.h"
#include "effect.h"
#include "manager.h"
#include "plan.h"
#include "util.h"
#include "manager-internal.h"

/* Frees a CpuSet allocated on its own (NULL is fine); returns NULL. */
static CpuSet *cpuset_free(CpuSet *s) {
        if (s)
                cpuset_done(s);
        return mfree(s);
}

/* *slot := NULL if value equals common (the common case, stored nowhere), else a heap copy of
 * value. Returns 0 or -ENOMEM (*slot untouched). */
int cpuset_store_if_differs(CpuSet **slot, const CpuSet *value, const CpuSet *common) {
        _cleanup_free_ CpuSet *n = NULL;
        int r;

        if (cpuset_equal(value, common)) {
                *slot = cpuset_free(*slot);
                return 0;
        }
        if (*slot)
                return cpuset_copy(*slot, value);
        n = calloc(1, sizeof(CpuSet));
        if (!n)
                return -ENOMEM;
        r = cpuset_copy(n, value);
        if (r < 0)
                return r;
        *slot = TAKE_PTR(n);
        return 0;
}

/* The thread's original mask (meaningful when has_original). */
const CpuSet *thread_original(const TrackedProcess *p, const TrackedThread *t) {
        return t->original ?: &p->original;
}

/* What the kernel kept of the thread's mask (meaningful when has_applied). */
const CpuSet *thread_effective(const TrackedThread *t) {
        return t->effective ?: &t->applied;
}

/* Records what was applied to t and what the kernel made of it. Returns 0 or -ENOMEM. */
int thread_set_applied(TrackedThread *t, const CpuSet *applied, const CpuSet *effective) {
        int r;

        /* new CPUs: Explain's "since placement" starts again (sampled by the baseline pass) */
        if (t->has_applied && t->has_baseline && !cpuset_equal(&t->applied, applied))
                t->has_baseline = false;

        r = cpuset_copy(&t->applied, applied);
        if (r < 0)
                return r;
        r = cpuset_store_if_differs(&t->effective, effective, &t->applied);
        if (r < 0)
                return r;
        t->has_applied = true;
        return 0;
}

/* ---- the tsearch(3) tables: TrackedProcess by pid, TrackedThread by tid ---- */

/* Both structs start with their pid_t key, so keys and stored elements compare alike
 * (compare_pid(), lib/util.h). */
static TrackedThread *tracked_thread_free(TrackedThread *t) {
        if (!t)
                return NULL;
        cpuset_free(t->original);
        cpuset_done(&t->applied);
        cpuset_free(t->effective);
        free(t->sched);
        return mfree(t);
}

static void tracked_thread_free_void(void *p) {
        tracked_thread_free(p);
}

TrackedThread *tracked_process_thread(TrackedProcess *p, pid_t tid) {
        void **node = tfind(&tid, &p->threads, compare_pid);
        return node ? *node : NULL;
}

/* The entry of thread tid of p, made when missing; one already there is given as it is (its
 * state kept). Returns 0 and *ret, or -ENOMEM. */
int tracked_process_add_thread(TrackedProcess *p, pid_t tid, TrackedThread **ret) {
        TrackedThread *t;
        void **node;

        t = calloc(1, sizeof(TrackedThread));
        if (!t)
                return -ENOMEM;
        t->tid = tid;
        node = tsearch(t, &p->threads, compare_pid);
        if (!node) {
                free(t);
                return -ENOMEM;
        }
        if (*node != t) { /* already there: keep the existing one */
                free(t);
                *ret = *node;
                return 0;
        }
        p->n_threads++;
        *ret = t;
        return 0;
}

/* Gives back tid's spread slot, if it holds one. */
void process_spread_release(TrackedProcess *p, pid_t tid) {
        if (p->spread)
                (void)spread_slots_release(&p->spread->slots, tid);
}

PolicySpread *manager_policy_spread(const Manager *m, const TrackedProcess *p) {
        return p->policy < m->n_policy_spreads ? &m->policy_spreads[p->policy] : NULL;
}

void policy_spread_release_thread(Manager *m, const TrackedProcess *p, pid_t tid) {
        PolicySpread *ps = manager_policy_spread(m, p);

        if (ps && spread_slots_n_held(&ps->threads) > 0)
                (void)spread_slots_release(&ps->threads, tid);
}

void policy_spread_forget(Manager *m, TrackedProcess *p) {
        PolicySpread *ps = manager_policy_spread(m, p);

        if (!ps)
                return;
        (void)spread_slots_release(&ps->processes, p->pid);
        /* Its threads' slots: TIDs of p's threads among the owners (a short array). */
        for (size_t i = 0; i < ps->threads.n_owners; i++) {
                pid_t tid = ps->threads.owners[i];

                if (tid > 0 && tracked_process_thread(p, tid))
                        (void)spread_slots_release(&ps->threads, tid);
        }
}

void tracked_process_set_policy(Manager *m, TrackedProcess *p, size_t policy) {
        if (p->policy == policy)
                return;
        policy_spread_forget(m, p);
        p->spread_master = false;
        p->policy = policy;
}

PolicySpread *policy_spreads_free(PolicySpread *a, size_t n) {
        for (size_t i = 0; a && i < n; i++) {
                spread_slots_done(&a[i].processes);
                spread_slots_done(&a[i].threads);
        }
        return mfree(a);
}

static ProcessSpread *process_spread_free(ProcessSpread *s) {
        if (!s)
                return NULL;
        spread_slots_done(&s->slots);
        cpuset_done(&s->handed);
        return mfree(s);
}

/* Forgets thread t of p; its spread slot, if any, is free for the next spread thread. */
void tracked_process_remove_thread(Manager *m, TrackedProcess *p, TrackedThread *t) {
        process_spread_release(p, t->tid);
        policy_spread_release_thread(m, p, t->tid);
        if (tdelete(t, &p->threads, compare_pid))
                p->n_threads--;
        tracked_thread_free(t);
}

/* Removes (and frees) every thread of p for which pred is true. Returns 0 or -ENOMEM. */
int tracked_process_remove_threads_if(Manager *m, TrackedProcess *p, thread_predicate_t pred) {
        _cleanup_free_ void **threads = NULL;
        size_t n = 0;
        int r;

        r = tree_collect(p->threads, p->n_threads, &threads, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (pred(p, threads[i]))
                        tracked_process_remove_thread(m, p, threads[i]);
        return 0;
}

/* A thread the last full pass did not see: it exited without our hearing of it. */
bool thread_not_seen(const TrackedProcess *p, const TrackedThread *t) {
        return t->generation != p->generation;
}

/* After exec only the leader's thread is left. */
bool thread_not_leader(const TrackedProcess *p, const TrackedThread *t) {
        return t->tid != p->pid;
}

/* Frees r (NULL accepted); returns NULL. */
CpusetRefusal *cpuset_refusal_free(CpusetRefusal *r) {
        if (!r)
                return NULL;
        cpuset_done(&r->wanted);
        cpuset_done(&r->allowed);
        return mfree(r);
}

/* Frees p with its threads, spread slots and refusal, not touching the table (NULL accepted);
 * returns NULL. */
ProcessWithin *process_within_free(ProcessWithin *w) {
        if (!w)
                return NULL;
        policy_plan_clear(&w->plan);
        cpuset_done(&w->allowed);
        return mfree(w);
}

/* process_within_free() as a tdestroy(3) callback. */
void process_within_free_void(void *w) {
        process_within_free(w);
}

TrackedProcess *tracked_process_free(TrackedProcess *p) {
        if (!p)
                return NULL;
        tdestroy(p->threads, tracked_thread_free_void);
        cpuset_done(&p->original);
        process_spread_free(p->spread);
        cpuset_refusal_free(p->refusal);
        return mfree(p);
}

/* tracked_process_free() as a tdestroy(3) callback. */
void tracked_process_free_void(void *p) {
        tracked_process_free(p);
}

int tracked_process_cpus(const TrackedProcess *p, CpuSet *ret) {
        _cleanup_free_ void **threads = NULL;
        _cleanup_cpuset_ CpuSet u = CPUSET_NULL;
        size_t n = 0;
        int r;

        r = tree_collect(p->threads, p->n_threads, &threads, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const TrackedThread *t = threads[i];
                if (t->has_applied) {
                        r = cpuset_or(&u, thread_effective(t));
                        if (r < 0)
                                return r;
                }
        }
        cpuset_done(ret);
        *ret = u;
        u = CPUSET_NULL;
        return 0;
}

TrackedProcess *manager_find_process(Manager *m, pid_t pid) {
        void **node = tfind(&pid, &m->processes, compare_pid);
        return node ? *node : NULL;
}

/*
 * Adds a new entry for pid under policy (an index into m->plan's policies), starttime its
 * /proc/PID/stat start time. The first entry arms the drift timer (drift_update()), which runs
 * only while something is tracked. Returns 0 and *ret; -EEXIST when pid is tracked already, or
 * -ENOMEM (*ret untouched).
 */
int manager_add_process(Manager *m, pid_t pid, uint64_t starttime, size_t policy, TrackedProcess **ret) {
        TrackedProcess *p;
        void **node;

        p = calloc(1, sizeof(TrackedProcess));
        if (!p)
                return -ENOMEM;
        p->pid = pid;
        p->starttime = starttime;
        p->identity_ns = now_monotonic_nsec(); /* starttime was read before this */
        p->policy = policy;
        node = tsearch(p, &m->processes, compare_pid);
        if (!node || *node != p) {
                free(p);
                return node ? -EEXIST : -ENOMEM;
        }
        m->n_processes++;
        if (m->drift)
                (void)drift_update(m->drift); /* the drift timer runs while something is tracked */
        (void)effect_update(m->effect);       /* and the effect sampler (NULL: no-op) */
        *ret = p;
        return 0;
}

/* Takes p out of m's table and frees it (the table's half of manager_remove_process()). */
void tracked_process_remove(Manager *m, TrackedProcess *p) {
        manager_set_within(m, p, NULL);
        policy_spread_forget(m, p);
        if (tdelete(p, &m->processes, compare_pid))
                m->n_processes--;
        tracked_process_free(p);
}

ProcessWithin *manager_find_within(const Manager *m, const TrackedProcess *p) {
        void *const *node = tfind(&p->pid, &m->within_plans, compare_pid);
        ProcessWithin *w = node ? *node : NULL;

        return w && w->starttime == p->starttime ? w : NULL;
}

int manager_set_within(Manager *m, const TrackedProcess *p, ProcessWithin *w) {
        void **node = tfind(&p->pid, &m->within_plans, compare_pid);

        if (node) {
                ProcessWithin *old = *node;

                (void)tdelete(old, &m->within_plans, compare_pid);
                process_within_free(old);
        }
        if (!w)
                return 0;
        w->pid = p->pid;
        w->starttime = p->starttime;
        if (!tsearch(w, &m->within_plans, compare_pid)) {
                process_within_free(w);
                return -ENOMEM;
        }
        return 0;
}

/* See manager.h. Every use of p->policy goes through this. */
const PolicyPlan *manager_process_plan(const Manager *m, const TrackedProcess *p) {
        const PolicyPlan *pp;
        const ProcessWithin *w;

        if (!m->plan || p->policy >= m->plan->n_policies || !m->plan->policies[p->policy].policy)
                return NULL;
        pp = &m->plan->policies[p->policy];
        if (!pp->within_cpuset)
                return pp;
        w = manager_find_within(m, p);
        if (w && w->policy == p->policy && w->generation == m->plan_generation)
                return &w->plan;
        return pp;
}

const char *manager_process_policy_name(const Manager *m, const TrackedProcess *p) {
        const PolicyPlan *pp = manager_process_plan(m, p);
        return pp ? pp->policy->name : "";
}

/* The policy name for messages: "" is not helpful there. */
const char *process_policy_label(const Manager *m, const TrackedProcess *p) {
        return manager_process_plan(m, p) ? manager_process_policy_name(m, p) : "(none)";
}

int manager_list_processes(Manager *m, TrackedProcess ***ret, size_t *ret_n) {
        return tree_collect(m->processes, m->n_processes, (void ***)ret, ret_n);
}
