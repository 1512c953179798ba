/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager: state, event loop, process lifecycle, reload. See manager.h. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "apply-numa.h"
#include "apply-sched.h"
#include "cgroup.h"
#include "device-placement.h"
#include "cpuset-watch.h"
#include "drift.h"
#include "log.h"
#include "manager-bus.h"
#include "manager-devices.h"
#include "manager-state.h"
#include "manager.h"
#include "match.h"
#include "plan.h"
#include "policy-bus.h"
#include "policy-yaml.h"
#include "procfs.h"
#include "thread-placement.h"
#include "threadstat.h"
#include "unit-placement.h"
#include "util.h"

#define USEC_PER_SEC                  UINT64_C(1000000)
#define USEC_PER_MSEC                 UINT64_C(1000)
#define NSEC_PER_USEC                 UINT64_C(1000)
#define NSEC_PER_SEC                  UINT64_C(1000000000)
#define PROC_MONITOR_ACK_TIMEOUT_USEC (1 * USEC_PER_SEC)
#define POLL_INTERVAL_DEFAULT_USEC    (1 * USEC_PER_SEC)
#define SUMMARY_INTERVAL_USEC         (10 * USEC_PER_SEC)
#define BUS_GUARD_EVENTS              1024U /* on_bus_guard() */
#define BUS_GUARD_MESSAGES            8U
/* Command lines longer than this (bytes) are read and scanned off the event path. */
#define MATCH_CMDLINE_BUDGET (64U * 1024U)
/* How old systemd's child before its exec can be (is_service_manager_child()): it execs within
 * milliseconds of its fork. */
#define SERVICE_CHILD_AGE_MAX_NSEC (2 * NSEC_PER_SEC)
/* A rescan after lost events waits until the socket's queue is read, but not longer than this. */
#define RESCAN_DELAY_MAX_USEC (100 * USEC_PER_MSEC)
/* A re-plan after a CPU change waits this long for the rest of a burst. */
#define HOTPLUG_DEBOUNCE_USEC (100 * USEC_PER_MSEC)

static const char *const state_table[_MANAGER_STATE_MAX] = {
        [MANAGER_STARTING] = "starting",
        [MANAGER_RUNNING] = "running",
        [MANAGER_DEGRADED] = "degraded",
        [MANAGER_STOPPING] = "stopping",
};

static const char *const discovery_table[_MANAGER_DISCOVERY_MAX] = {
        [MANAGER_DISCOVERY_NETLINK] = "netlink",
        [MANAGER_DISCOVERY_POLLING] = "polling",
};

static const char *const bus_kind_table[_MANAGER_BUS_KIND_MAX] = {
        [MANAGER_BUS_SYSTEM] = "system",
        [MANAGER_BUS_SESSION] = "session",
        [MANAGER_BUS_NONE] = "none",
};

const char *manager_state_to_string(ManagerState s) {
        if (s < 0 || s >= _MANAGER_STATE_MAX)
                return NULL;
        return state_table[s];
}

const char *manager_discovery_to_string(ManagerDiscovery d) {
        if (d < 0 || d >= _MANAGER_DISCOVERY_MAX)
                return NULL;
        return discovery_table[d];
}

ManagerBusKind manager_bus_kind_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(bus_kind_table); i++)
                if (streq(s, bus_kind_table[i]))
                        return (ManagerBusKind)i;
        return _MANAGER_BUS_KIND_INVALID;
}

/* CLOCK_REALTIME in µs (LastReloadUSec). */
static uint64_t now_realtime_usec(void) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
}

/* ---- the tsearch(3) tables: TrackedProcess by pid, TrackedThread by tid ---- */

/* Both structs start with their pid_t key, so keys and stored elements compare alike
 * (compare_pid()). */
typedef struct TreeCollect {
        void **items;
        size_t n, size;
} TreeCollect;

static void tree_collect_action(const void *nodep, VISIT which, void *userdata) {
        TreeCollect *c = userdata;

        /* postorder (between the children) and leaf visit each node once, in ascending order */
        if ((which == postorder || which == leaf) && c->n < c->size)
                c->items[c->n++] = *(void *const *)nodep;
}

/* Every element of a tree of n elements, ascending, into a newly allocated array. */
static int tree_collect(const void *root, size_t n, void ***ret, size_t *ret_n) {
        TreeCollect c = {.size = n};

        c.items = calloc(MAX(n, (size_t)1), sizeof(void *));
        if (!c.items)
                return -ENOMEM;
        twalk_r(root, tree_collect_action, &c);
        *ret = c.items;
        *ret_n = c.n;
        return 0;
}

/* Frees a CpuSet allocated on its own (NULL is fine); returns NULL. */
static CpuSet *cpuset_free(CpuSet *s) {
        if (s)
                cpuset_done(s);
        return mfree(s);
}

/* *slot := NULL if value equals common (the common case, stored nowhere), else a heap copy of
 * value. Returns 0 or -ENOMEM (*slot untouched). */
static int cpuset_store_if_differs(CpuSet **slot, const CpuSet *value, const CpuSet *common) {
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
static const CpuSet *thread_original(const TrackedProcess *p, const TrackedThread *t) {
        return t->original ?: &p->original;
}

/* What the kernel kept of the thread's mask (meaningful when has_applied). */
static const CpuSet *thread_effective(const TrackedThread *t) {
        return t->effective ?: &t->applied;
}

/* Records what was applied to t and what the kernel made of it. Returns 0 or -ENOMEM. */
static int thread_set_applied(TrackedThread *t, const CpuSet *applied, const CpuSet *effective) {
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

static TrackedThread *tracked_process_find_thread(TrackedProcess *p, pid_t tid) {
        void **node = tfind(&tid, &p->threads, compare_pid);
        return node ? *node : NULL;
}

TrackedThread *tracked_process_thread(TrackedProcess *p, pid_t tid) {
        return tracked_process_find_thread(p, tid);
}

static int tracked_process_add_thread(TrackedProcess *p, pid_t tid, TrackedThread **ret) {
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
static void process_spread_release(TrackedProcess *p, pid_t tid) {
        if (p->spread)
                (void)spread_slots_release(&p->spread->slots, tid);
}

static ProcessSpread *process_spread_free(ProcessSpread *s) {
        if (!s)
                return NULL;
        spread_slots_done(&s->slots);
        cpuset_done(&s->handed);
        return mfree(s);
}

/* Forgets thread t of p; its spread slot, if any, is free for the next spread thread. */
static void tracked_process_remove_thread(TrackedProcess *p, TrackedThread *t) {
        process_spread_release(p, t->tid);
        if (tdelete(t, &p->threads, compare_pid))
                p->n_threads--;
        tracked_thread_free(t);
}

typedef bool (*thread_predicate_t)(const TrackedProcess *p, const TrackedThread *t);

/* Removes (and frees) every thread of p for which pred is true. Returns 0 or -ENOMEM. */
static int tracked_process_remove_threads_if(TrackedProcess *p, thread_predicate_t pred) {
        _cleanup_free_ void **threads = NULL;
        size_t n = 0;
        int r;

        r = tree_collect(p->threads, p->n_threads, &threads, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (pred(p, threads[i]))
                        tracked_process_remove_thread(p, threads[i]);
        return 0;
}

/* A thread the last full pass did not see: it exited without our hearing of it. */
static bool thread_not_seen(const TrackedProcess *p, const TrackedThread *t) {
        return t->generation != p->generation;
}

/* After exec only the leader's thread is left. */
static bool thread_not_leader(const TrackedProcess *p, const TrackedThread *t) {
        return t->tid != p->pid;
}

static CpusetRefusal *cpuset_refusal_free(CpusetRefusal *r) {
        if (!r)
                return NULL;
        cpuset_done(&r->wanted);
        cpuset_done(&r->allowed);
        return mfree(r);
}

static TrackedProcess *tracked_process_free(TrackedProcess *p) {
        if (!p)
                return NULL;
        tdestroy(p->threads, tracked_thread_free_void);
        cpuset_done(&p->original);
        process_spread_free(p->spread);
        cpuset_refusal_free(p->refusal);
        return mfree(p);
}

static void tracked_process_free_void(void *p) {
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

/* Adds a new entry for pid (which must not be tracked yet). */
static int manager_add_process(
        Manager *m, pid_t pid, uint64_t starttime, size_t policy, TrackedProcess **ret) {
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
        (void)drift_update(m->drift); /* the drift timer runs while something is tracked */
        *ret = p;
        return 0;
}

static void manager_remove_process(Manager *m, TrackedProcess *p) {
        manager_state_drop(m, p);
        if (tdelete(p, &m->processes, compare_pid))
                m->n_processes--;
        tracked_process_free(p);
}

/* The plan of p's policy, or NULL when it has none in the configuration in force (POLICY_NONE
 * after a reload, or any index out of range). Every use of p->policy goes through this. */
static const PolicyPlan *process_plan(const Manager *m, const TrackedProcess *p) {
        if (!m->plan || p->policy >= m->plan->n_policies || !m->plan->policies[p->policy].policy)
                return NULL;
        return &m->plan->policies[p->policy];
}

const PolicyPlan *manager_process_plan(const Manager *m, const TrackedProcess *p) {
        return process_plan(m, p);
}

const char *manager_process_policy_name(const Manager *m, const TrackedProcess *p) {
        const PolicyPlan *pp = process_plan(m, p);
        return pp ? pp->policy->name : "";
}

/* The policy name for messages: "" is not helpful there. */
static const char *process_policy_label(const Manager *m, const TrackedProcess *p) {
        return process_plan(m, p) ? manager_process_policy_name(m, p) : "(none)";
}

int manager_list_processes(Manager *m, TrackedProcess ***ret, size_t *ret_n) {
        return tree_collect(m->processes, m->n_processes, (void ***)ret, ret_n);
}

uint64_t manager_latency_usec(const Manager *m, double q) {
        uint64_t ns = q >= 1.0 ? m->latency.max_ns : latency_quantile(&m->latency, q);
        /* Round up, so a recorded placement never reads as 0 µs. */
        return (ns + NSEC_PER_USEC - 1) / NSEC_PER_USEC;
}

static size_t plan_n_pending(const Plan *plan) {
        size_t n = 0;
        for (size_t i = 0; plan && i < plan->n_policies; i++)
                if (plan->policies[i].pending_reason)
                        n++;
        return n;
}

int manager_degraded_reasons(const Manager *m, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        if (m->last_reload_error) {
                r = strv_extendf(&l, "the last reload failed; the previous configuration is in force");
                if (r < 0)
                        return r;
        }
        if (m->discovery == MANAGER_DISCOVERY_POLLING) {
                r = strv_extendf(
                        &l,
                        "process discovery fell back to polling /proc (the proc connector is unavailable)");
                if (r < 0)
                        return r;
        }
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

/*
 * Enters state s; MANAGER_RUNNING becomes MANAGER_DEGRADED while manager_degraded_reasons() has
 * any. Emits PropertiesChanged for State and DegradedReasons (the reasons may change while the
 * state does not: a failed reload while polling).
 */
static void manager_set_state(Manager *m, ManagerState s) {
        if (s == MANAGER_RUNNING && (m->last_reload_error || m->discovery == MANAGER_DISCOVERY_POLLING))
                s = MANAGER_DEGRADED;
        if (m->state != s)
                log_debug("State %s → %s", manager_state_to_string(m->state), manager_state_to_string(s));
        m->state = s;
        (void)manager_bus_emit_changed(m, "State", "DegradedReasons");
}

/* sd_notify(3) with the current STATUS= line, plus extra assignments (may be NULL). */
static void manager_notify(Manager *m, const char *extra) {
        size_t n_policies = m->plan ? m->plan->n_policies : 0;

        (void)sd_notifyf(
                false, "%s%sSTATUS=Managing %" PRIu32 " processes with %zu policies (%zu pending)%s",
                extra ?: "", extra ? "\n" : "", m->n_processes, n_policies, plan_n_pending(m->plan),
                m->discovery == MANAGER_DISCOVERY_POLLING ? ", polling /proc" : "");
}

/* ---- placement ---- */

typedef struct PlaceContext {
        Manager *manager;
        const char *policy_name; /* restore: the policy the process was under, for messages */
        TrackedProcess *process;
        bool force;         /* compare with the kernel's mask even where the target is what was
                             * applied last (write only if they differ) */
        bool verify;        /* where the target is what was applied last, ask the kernel: a mask
                             * equal to the cpuset's CPUs (a kernel reset, docs/cgroups.md) is
                             * written again; any other drift is left to the drift check */
        unsigned n_reset;   /* threads found on their cpuset's CPUs, and written again */
        bool refusal_new;   /* report_cpuset_conflict() reported a refusal not reported before */
        bool identify;      /* the TIDs come from events, not from a listing of /proc/PID/task:
                             * each is checked to be a thread of the process before any write */
        unsigned n_threads; /* threads seen */
        unsigned n_set;     /* threads whose affinity was written (or would be, dry run) */
        unsigned n_failed;  /* threads the kernel refused */
        int error;          /* the last refusal's negative errno (PlacementFailed), 0: none */
        char *error_text;   /* a better description of the refusal than the errno, or NULL */
        unsigned n_sched;   /* threads whose scheduling state was written */
        /* The cpuset of the process, read once per placement pass (place_context_cpuset()). */
        int cpuset_state; /* 0: not read yet; 1: cpuset_allowed holds it; -errno: none known */
        CpuSet cpuset_allowed;
        bool cpuset_conflict; /* the policy's CPUs and the cpuset are disjoint: reported, skipped */
        bool via_unit;        /* via: systemd is effective for the process's unit: threads whose
                               * target is the policy's set are left to the cgroup */
} PlaceContext;

static void place_context_done(PlaceContext *ctx) {
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
        const PolicyPlan *pp = process_plan(m, p);
        ThreadCpusChoice c = thread_cpus_choice(pp, thread_comm);
        int r;

        *ret = NULL;
        if (!pp || pp->pending_reason)
                return 0;
        if (c.kind == THREAD_CPUS_SPREAD) {
                if (!p->spread) {
                        p->spread = calloc(1, sizeof(ProcessSpread));
                        if (!p->spread)
                                return -ENOMEM;
                }
                r = spread_slots_acquire(&p->spread->slots, tid);
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
        switch (c.kind) {
        case THREAD_CPUS_RULE:
                *ret = &c.rule->cpus;
                return 0;
        case THREAD_CPUS_POLICY:
                return thread_policy_cpus(pp, p->spread ? &p->spread->slots : NULL, buf, ret);
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
        order = thread_spread_order(process_plan(m, p), &n_order);
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
        bool *reported = process_plan(m, p) ? &m->narrowing_reported[p->policy] : NULL;
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

        if (thread_mask_in_plan(process_plan(m, p), mask))
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

        restore = !thread_sched_spec(process_plan(m, p), thread_comm, &spec);
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
static int place_thread(PlaceContext *ctx, pid_t tid) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL, current = CPUSET_NULL, target_buf = CPUSET_NULL;
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        const PolicyPlan *pp = process_plan(m, p);
        const CpuSet *target, *allowed;
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

        t = tracked_process_find_thread(p, tid);
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
        r = apply_set_thread_affinity(tid, target, &effective);
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
        t = tracked_process_find_thread(p, tid);
        if (t)
                tracked_process_remove_thread(p, t);
        return -ESRCH;
}

static int place_thread_visitor(pid_t pid, pid_t tid, void *userdata) {
        return place_thread(userdata, tid);
}

static void manager_schedule_summary(Manager *m);

/* ---- Explain baselines ---- */

/* Threads sampled per iteration of the baseline source at most (a process is not split). */
#define BASELINE_THREAD_BUDGET 256U

typedef struct BaselineWalk {
        const TrackedProcess *process;
        unsigned n; /* threads looked at */
} BaselineWalk;

/* twalk_r(3) visitor: samples one thread that has no baseline yet. */
static void baseline_visit(const void *node, VISIT which, void *userdata) {
        TrackedThread *t = *(TrackedThread *const *)node;
        BaselineWalk *w = userdata;
        ThreadStat ts;

        if (which != postorder && which != leaf)
                return;
        w->n++;
        if (t->has_baseline || threadstat_read_counters(NULL, w->process->pid, t->tid, &ts) < 0)
                return;
        t->has_baseline = true;
        t->baseline = (ThreadBaseline){
                .run_delay_ns = ts.run_delay_ns,
                .nr_migrations = (uint32_t)ts.nr_migrations,
                .nonvoluntary = (uint32_t)ts.nonvoluntary,
        };
}

/* Samples the counters of every thread of p that has no baseline yet. Returns how many threads
 * were looked at (the work done). */
static unsigned baseline_sample_process(TrackedProcess *p) {
        BaselineWalk w = {.process = p};

        twalk_r(p->threads, baseline_visit, &w);
        return w.n;
}

/* The idle-priority pass: samples queued processes' threads, BASELINE_THREAD_BUDGET at a time,
 * and turns itself off when the queue is empty. */
static int on_baseline(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        unsigned work = 0;
        size_t done = 0;

        while (done < m->n_baseline_queue && work < BASELINE_THREAD_BUDGET) {
                TrackedProcess *p = manager_find_process(m, m->baseline_queue[done++]);
                if (p)
                        work += baseline_sample_process(p);
        }
        m->n_baseline_queue -= done;
        if (m->n_baseline_queue == 0) {
                m->baseline_queue = mfree(m->baseline_queue); /* a burst's queue is given back */
                (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        } else
                memmove(m->baseline_queue, m->baseline_queue + done, m->n_baseline_queue * sizeof(pid_t));
        return 0;
}

/*
 * Queues p for the baseline pass (a low-priority deferred source, armed only while the queue is
 * not empty), so that placement itself never reads the counters. Best effort: on failure the
 * threads report totals since they started.
 */
static void manager_queue_baseline(Manager *m, TrackedProcess *p) {
        size_t n = m->n_baseline_queue;
        int r;

        if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) { /* capacity: 16, then powers of two */
                pid_t *q = reallocarray(m->baseline_queue, n == 0 ? 16 : 2 * n, sizeof(pid_t));
                if (!q)
                        return;
                m->baseline_queue = q;
        }
        if (!m->baseline_source) {
                r = sd_event_add_defer(m->event, &m->baseline_source, on_baseline, m);
                if (r < 0)
                        return;
                (void)sd_event_source_set_priority(m->baseline_source, SD_EVENT_PRIORITY_IDLE);
                (void)sd_event_source_set_description(m->baseline_source, "explain-baseline");
        } else if (n == 0 && sd_event_source_set_enabled(m->baseline_source, SD_EVENT_ON) < 0)
                return;
        m->baseline_queue[m->n_baseline_queue++] = p->pid;
}

static void manager_record_latency(Manager *m, uint64_t timestamp_ns) {
        uint64_t now = now_monotonic_nsec();

        if (timestamp_ns > 0 && now >= timestamp_ns)
                latency_record(&m->latency, now - timestamp_ns);
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
        const PolicyPlan *pp = process_plan(m, p);
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
/*
 * via: systemd: places the unit of p (from its cgroup) through systemd, once per unit and plan.
 * True when that is effective, so p's threads need no affinity write; false for every other
 * policy and whenever the caller must fall back to placing p's threads (reported by
 * unit_placement_place()).
 */
static bool place_process_unit(Manager *m, TrackedProcess *p) {
        const PolicyPlan *pp = process_plan(m, p);
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

static int place_process(
        Manager *m, TrackedProcess *p, bool force, uint64_t timestamp_ns, unsigned n_threads) {
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

        (void)tracked_process_remove_threads_if(p, thread_not_seen);

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
        if ((!p->placed || ctx.verify) && !p->forked && !m->dry_run) {
                /* Cgroup writes that make the kernel reset its CPUs are watched from now on, and
                 * at each pass that reads back (a rescan, a reload, a cpuset check) in the
                 * cgroup it has moved to since. A child forked without exec is in its parent's
                 * cgroup, watched already. */
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
        if (ctx.n_set > 0 || first)
                manager_queue_baseline(m, p);
        /* PlacementFailed: a refusal by the cgroup only when it is new (it is one per process). */
        if (ctx.n_failed > 0 && (!ctx.cpuset_conflict || ctx.refusal_new)) {
                char why[256];

                snprintf(
                        why, sizeof(why), "%u of %u threads refused: %s", ctx.n_failed, ctx.n_threads,
                        ctx.error_text ?: strerror(-(ctx.error ?: -EIO)));
                (void)manager_bus_emit_placement_failed(
                        m, p->pid, p->comm, manager_process_policy_name(m, p), why);
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

                if (m->bus || info || debug) {
                        (void)tracked_process_cpus(p, &cpus);
                        text = cpuset_to_string(&cpus);
                }
                if (m->bus)
                        (void)manager_bus_emit_process_placed(
                                m, p->pid, p->comm, manager_process_policy_name(m, p), text ?: "");
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

/*
 * After one thread of p took or gave back a spread slot outside place_process() (a new thread,
 * a rename, an exit): places p's other threads again if the CPUs handed to spread threads
 * changed. Returns 0, -ESRCH (p is gone and was freed), or -ENOMEM.
 */
static int process_spread_settle(Manager *m, TrackedProcess *p) {
        int r = process_spread_update(m, p);

        if (r <= 0)
                return r;
        /* Writes only the threads whose target changed. */
        return place_process(m, p, false, 0, 0);
}

static int restore_thread_visitor(pid_t pid, pid_t tid, void *userdata) {
        PlaceContext *ctx = userdata;
        TrackedProcess *p = ctx->process;
        TrackedThread *t = tracked_process_find_thread(p, tid);
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
static void restore_process(Manager *m, TrackedProcess *p, const char *policy_name) {
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

/* ---- process events ---- */

/* Forgets a process that is gone; if its placement never completed, it counts as vanished. */
void manager_release_process(Manager *m, TrackedProcess *p) {
        manager_remove_process(m, p);
}

static void manager_forget_gone(Manager *m, TrackedProcess *p) {
        if (!p->placed)
                m->counters.processes_vanished++;
        manager_remove_process(m, p);
}

/*
 * True if the process whose /proc/PID/stat is st has exited: its leader is a zombie (or dead)
 * and no other thread is left. sched_setaffinity(2) succeeds on a zombie, so without this an
 * exited process would count as placed. A leader that called pthread_exit() is a zombie too
 * while the other threads live on: that process is alive. The stat line says both: a zombie
 * leader counts itself in num_threads until it is reaped, and every other thread leaves the
 * count when it exits (before its EXIT event is sent), so num_threads > 1 means some other
 * thread lives. No /proc/PID/task listing needed.
 */
static bool process_is_dead(pid_t pid, const ProcfsStat *st) {
        if (st->state != 'Z' && st->state != 'X' && st->state != 'x')
                return false;
        return st->n_threads <= 1;
}

/*
 * The policy pid matches (match_process(), explicit_only as it says), reading only the facts the
 * policies need; st, if not NULL, is its /proc/PID/stat read just before, whose comm is used
 * instead of reading /proc/PID/comm again. When it matched and ret_comm is non-NULL, its comm
 * goes there ("" if it could not be read). Returns a policy index, -ENOENT, -ESRCH (gone),
 * -ENOMEM.
 */
static int manager_match_pid_stat(
        Manager *m, pid_t pid, bool explicit_only, const ProcfsStat *st, char ret_comm[16]) {
        ProcessFacts facts;
        int k;

        process_facts_init(&facts, NULL, pid);
        facts.cmdline_budget = m->cmdline_budget;
        if (st) {
                memcpy(facts.comm, st->comm, sizeof(facts.comm));
                facts.loaded |= FACT_COMM;
        }
        k = match_process(m->plan, &facts, explicit_only);
        if (k >= 0 && ret_comm) {
                if (process_facts_load(&facts, FACT_COMM) >= 0 && (facts.loaded & FACT_COMM))
                        memcpy(ret_comm, facts.comm, sizeof(facts.comm));
                else
                        ret_comm[0] = '\0';
        }
        process_facts_done(&facts);
        return k;
}

static int manager_match_pid(Manager *m, pid_t pid, bool explicit_only, char ret_comm[16]) {
        return manager_match_pid_stat(m, pid, explicit_only, NULL, ret_comm);
}

/* Starts tracking pid under policy and places it. Counts it as matched. comm may be NULL or "".
 * n_threads as for place_process(). */
static int manager_track_new(
        Manager *m, pid_t pid, uint64_t starttime, size_t policy, const char *comm, bool explicit_only,
        uint64_t timestamp_ns, unsigned n_threads) {
        TrackedProcess *p;
        int r;

        if (drift_is_released(m->drift, pid, starttime))
                return 0; /* on-drift: respect let it go until it execs */
        r = manager_add_process(m, pid, starttime, policy, &p);
        if (r < 0)
                return log_debug_errno(r, "Failed to track process %d: %m", (int)pid);
        if (comm && comm[0]) {
                size_t l = strnlen(comm, sizeof(p->comm) - 1);

                memcpy(p->comm, comm, l);
                p->comm[l] = '\0';
        } else
                (void)procfs_read_comm(NULL, pid, 0, p->comm);
        p->explicit_only = explicit_only;
        m->counters.processes_matched++;
        return place_process(m, p, false, timestamp_ns, n_threads);
}

/*
 * Called on the EXIT of a leader, and on a thread's EXIT after its leader exited. The process
 * is gone when /proc/PID is gone or is another process, or when its leader is dead (a zombie)
 * and no other thread is left. A leader still alive means the EXIT was about an earlier
 * process with the same PID (events read late, PIDs wrapped): nothing is gone.
 */
static void manager_check_process_gone(Manager *m, TrackedProcess *p) {
        ProcfsStat st;
        int r;

        r = procfs_read_stat(NULL, p->pid, 0, &st);
        if (r < 0 && r != -ESRCH)
                return (void)log_debug_errno(
                        r, "Failed to read the state of %s[%d]: %m", p->comm, (int)p->pid);
        if (r >= 0 && st.starttime == p->starttime && !process_is_dead(p->pid, &st)) {
                if (st.state != 'Z' && st.state != 'X' && st.state != 'x')
                        p->leader_exited = false;
                return;
        }

        log_debug("%s[%d] exited", p->comm, (int)p->pid);
        manager_forget_gone(m, p);
}

/*
 * Checks that the tracked p is still the process /proc/PID shows (same start time) before an
 * event about its PID is acted on: after lost events, its EXIT may have been missed and the
 * PID reused by an unrelated process. A stale entry is dropped. Returns 1 (same process), 0
 * (stale: dropped, p is freed), -ESRCH (the PID is gone: whether it was p can't be told; p is
 * kept, its EXIT will come or a rescan will find it gone).
 */
static int manager_verify_process(Manager *m, TrackedProcess *p) {
        uint64_t starttime;
        int r;

        r = procfs_read_starttime(NULL, p->pid, &starttime);
        if (r == -ESRCH)
                return r;
        if (r < 0) {
                log_debug_errno(
                        r, "Failed to read the start time of %s[%d], trusting it: %m", p->comm, (int)p->pid);
                return 1;
        }
        if (starttime == p->starttime)
                return 1;
        log_debug(
                "PID %d is no longer %s (started at tick %" PRIu64 ", now %" PRIu64
                "): its exit was missed, forgetting it",
                (int)p->pid, p->comm, p->starttime, starttime);
        manager_forget_gone(m, p);
        return 0;
}

/*
 * Matches that need a command line longer than MATCH_CMDLINE_BUDGET are decided on the worker's
 * thread (worker.h), at nice 19: reading and scanning a command line of up to ARG_MAX never
 * delays the loop, which places everyone else meanwhile. The worker's time is shared out by the
 * process's real uid (m->match_budget, as the bus's callers): an unprivileged uid has one match
 * on the worker at a time, the next when its share has time again, and at most
 * MATCH_DEFERRED_PER_UID waiting; root's processes go to the worker at once and are not counted.
 * So one user's hostile command lines take at most their share of the worker and delay only
 * their own processes. Beyond MATCH_DEFERRED_PER_UID, or MATCH_DEFERRED_MAX in all, a process is
 * not decided (counted in MatchesUndecided, logged, rate-limited: it is placed by its next exec,
 * comm or uid change, or a rescan). Nothing is matched against less than the whole command
 * line.
 */
static int manager_rematch_decided(
        Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns, int k, char comm[16]);

/* On the worker's thread: the match, with the whole command line, under the plan lock. Fills
 * job->result (a policy index or -errno), comm, generation. */
static void decide_on_worker(WorkerJob *job) {
        Manager *m = job->userdata;
        WorkerJob *ret = job;
        ProcessFacts facts;

        if (!m->worker_scratch)
                m->worker_scratch = regex_scratch_new(); /* only this thread uses it */
        pthread_rwlock_rdlock(&m->plan_lock);
        ret->generation = m->plan_generation;
        if (!m->worker_scratch)
                ret->result = -ENOMEM;
        else {
                process_facts_init(&facts, NULL, job->pid);
                facts.scratch = m->worker_scratch;
                ret->result = match_process(m->plan, &facts, job->pid == m->self);
                if (ret->result >= 0 && process_facts_load(&facts, FACT_COMM) >= 0 &&
                    (facts.loaded & FACT_COMM))
                        memcpy(ret->comm, facts.comm, sizeof(ret->comm));
                process_facts_done(&facts);
        }
        pthread_rwlock_unlock(&m->plan_lock);
}

static void on_match_decided(const WorkerJob *res);

static int manager_submit_match(Manager *m, pid_t pid, uint64_t starttime) {
        return worker_submit(
                m->worker,
                &(WorkerJob){
                        .run = decide_on_worker,
                        .done = on_match_decided,
                        .userdata = m,
                        .pid = pid,
                        .starttime = starttime});
}

static DeferredMatch *deferred_find(Manager *m, pid_t pid, uint64_t starttime) {
        for (size_t i = 0; i < m->n_deferred; i++)
                if (m->deferred[i].pid == pid && m->deferred[i].starttime == starttime)
                        return &m->deferred[i];
        return NULL;
}

/* Whether uid has a match on the worker now. */
static bool deferred_uid_submitted(const Manager *m, uid_t uid) {
        for (size_t i = 0; i < m->n_deferred; i++)
                if (m->deferred[i].submitted && m->deferred[i].uid == uid)
                        return true;
        return false;
}

static void manager_deferred_kick(Manager *m);

static int on_match_share(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_deferred_kick(userdata);
        return 0;
}

/*
 * Submits the waiting matches that may go now (in the order they came), and sets a timer for the
 * first time one of the others may.
 */
static void manager_deferred_kick(Manager *m) {
        uint64_t now = now_monotonic_nsec() / 1000, next = UINT64_MAX;

        for (size_t i = 0; i < m->n_deferred; i++) {
                DeferredMatch *d = &m->deferred[i];
                uint64_t wait = 0;

                if (d->submitted)
                        continue;
                if (d->uid != 0) {
                        if (deferred_uid_submitted(m, d->uid))
                                continue; /* kicked again when that one is decided */
                        wait = caller_budget_wait(&m->match_budget, d->uid, now);
                }
                if (wait > 0) {
                        next = MIN(next, now + wait);
                        continue;
                }
                if (manager_submit_match(m, d->pid, d->starttime) < 0)
                        break; /* the worker is full: kicked again as its jobs come back */
                d->submitted = true;
        }
        if (next == UINT64_MAX)
                return;
        if (!m->match_share_source) {
                if (sd_event_add_time(
                            m->event, &m->match_share_source, CLOCK_MONOTONIC, next, 1000, on_match_share,
                            m) < 0)
                        return;
                (void)sd_event_source_set_description(m->match_share_source, "match-share");
                return;
        }
        if (sd_event_source_set_time(m->match_share_source, next) >= 0)
                (void)sd_event_source_set_enabled(m->match_share_source, SD_EVENT_ONESHOT);
}

/* On the loop: a decided match. Acted on if it is still that process and that configuration. */
static void on_match_decided(const WorkerJob *res) {
        Manager *m = res->userdata;
        DeferredMatch *slot = deferred_find(m, res->pid, res->starttime), d;
        char comm[16];
        uint64_t starttime;

        if (!slot)
                return;
        d = *slot;
        if (d.uid != 0)
                caller_budget_charge(&m->match_budget, d.uid, res->cpu_usec, now_monotonic_nsec() / 1000);
        if (res->generation != m->plan_generation) {
                /* Matched against a configuration replaced since: its indexes mean nothing now. */
                slot->submitted = false;
                manager_deferred_kick(m);
                return;
        }
        *slot = m->deferred[--m->n_deferred];
        manager_deferred_kick(m);
        if (procfs_read_starttime(NULL, d.pid, &starttime) < 0 || starttime != d.starttime)
                return; /* gone, or another process has the PID now */
        memcpy(comm, res->comm, sizeof(comm));
        (void)manager_rematch_decided(m, d.pid, d.exec, d.timestamp_ns, res->result, comm);
}

static int manager_defer_match(Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns) {
        DeferredMatch *d;
        uint64_t starttime;
        uid_t uids[4];
        gid_t gids[4];
        unsigned suppressed = 0, n_uid = 0;

        if (procfs_read_starttime(NULL, pid, &starttime) < 0)
                return 0; /* gone */
        d = deferred_find(m, pid, starttime);
        if (d) {
                d->exec = d->exec || exec;
                return 0;
        }
        if (procfs_read_ids(NULL, pid, uids, gids) < 0)
                return 0; /* gone */
        /* The real uid pays: a set-uid program runs for whoever started it. */
        for (size_t i = 0; uids[0] != 0 && i < m->n_deferred; i++)
                n_uid += m->deferred[i].uid == uids[0];
        if (m->n_deferred >= MATCH_DEFERRED_MAX || n_uid >= MATCH_DEFERRED_PER_UID) {
                char whose[48] = "";

                if (n_uid >= MATCH_DEFERRED_PER_UID)
                        snprintf(whose, sizeof(whose), " for its uid %u", (unsigned)uids[0]);
                m->counters.matches_undecided++;
                if (ratelimit_below(&m->failure_ratelimit, &suppressed))
                        log_warning(
                                "Process %d is not decided: %u matches with command lines over %u KiB are "
                                "waiting already%s; it is matched at its next exec, comm or uid change or "
                                "rescan%s",
                                (int)pid, n_uid >= MATCH_DEFERRED_PER_UID ? n_uid : (unsigned)m->n_deferred,
                                (unsigned)(MATCH_CMDLINE_BUDGET / 1024), whose,
                                suppressed > 0 ? " (more were not logged)" : "");
                return 0;
        }
        m->deferred[m->n_deferred++] = (DeferredMatch){
                .pid = pid,
                .uid = uids[0],
                .starttime = starttime,
                .exec = exec,
                .timestamp_ns = timestamp_ns,
        };
        log_debug(
                "Process %d (uid %u) has a command line over %u KiB: matched on the worker thread", (int)pid,
                (unsigned)uids[0], (unsigned)(MATCH_CMDLINE_BUDGET / 1024));
        manager_deferred_kick(m);
        return 0;
}

/*
 * True if a task with starttime (clock ticks since boot, /proc/PID/stat field 22) started no
 * later than the event sent at event_ns (CLOCK_MONOTONIC ns, the proc connector's timestamp).
 * The start time is CLOCK_BOOTTIME rounded down to a tick: a task the event is about always
 * passes; one that started later (a reused PID) fails unless it started within the same tick.
 * An event_ns of 0 (no event) passes.
 */
static bool started_before(uint64_t starttime, uint64_t event_ns) {
        static uint64_t tick_ns;
        struct timespec boot, mono;
        uint64_t offset;

        if (event_ns == 0)
                return true;
        if (tick_ns == 0) {
                long hz = sysconf(_SC_CLK_TCK);
                tick_ns = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
        }
        if (clock_gettime(CLOCK_BOOTTIME, &boot) < 0 || clock_gettime(CLOCK_MONOTONIC, &mono) < 0)
                return true;
        offset = (uint64_t)boot.tv_sec * NSEC_PER_SEC + (uint64_t)boot.tv_nsec -
                ((uint64_t)mono.tv_sec * NSEC_PER_SEC + (uint64_t)mono.tv_nsec);
        return starttime * tick_ns <= event_ns + offset;
}

static int on_fork_process(Manager *m, const ProcEvent *ev) {
        TrackedProcess *parent, *old, *p;
        const TrackedThread *forker;
        ProcfsStat st;
        int r;

        parent = manager_find_process(m, ev->parent_tgid);
        if (!parent)
                return 0;
        /* The parent's entry must be the process that forked. If its PID is gone already, the
         * parent exited right after forking (daemons do): the entry is the best knowledge. */
        if (manager_verify_process(m, parent) == 0)
                return 0;
        if (!process_plan(m, parent))
                return 0; /* its policy went away in a reload: the rescan decides for both */
        if (process_plan(m, parent)->pending_reason)
                return 0; /* kept as it is while a CPU change left its policy pending */

        r = procfs_read_stat(NULL, ev->pid, 0, &st);
        if (r < 0 && r != -ESRCH) {
                log_debug_errno(r, "Failed to read the stat of %d, skipping: %m", (int)ev->pid);
                return 0;
        }
        old = manager_find_process(m, ev->pid);
        if (old) {
                if (r >= 0 && old->starttime == st.starttime)
                        return 0;            /* the startup scan or a rescan already found it */
                manager_forget_gone(m, old); /* PID reused: its exit was missed */
        }
        if (r >= 0 && st.starttime < parent->starttime)
                return 0; /* an event older than the process now under the parent's PID */
        if (r >= 0 && st.ppid != parent->pid && !started_before(st.starttime, ev->timestamp_ns)) {
                /* Another process has the child's PID now: the child exited (its events are
                 * behind this one) and the PID was reused by a process started after the fork.
                 * (A child whose parent exited has another ppid too, but started before.) */
                log_debug(
                        "Fork of %s[%d]: PID %d is another process now (started after the fork), "
                        "not adopting it",
                        parent->comm, (int)parent->pid, (int)ev->pid);
                return 0;
        }
        if (r == -ESRCH || process_is_dead(ev->pid, &st)) {
                m->counters.processes_matched++;
                m->counters.processes_vanished++;
                return 0;
        }

        r = manager_add_process(m, ev->pid, st.starttime, parent->policy, &p);
        if (r < 0)
                return r;
        m->counters.processes_matched++;
        p->forked = true;
        p->parent = parent->pid;
        memcpy(p->comm, parent->comm, sizeof(p->comm));
        (void)procfs_read_comm(NULL, p->pid, 0, p->comm);

        /* The child's mask is a copy of the forking thread's, which is our doing: its original
         * is that thread's original. */
        forker = tracked_process_find_thread(parent, ev->parent_pid);
        if (forker && forker->has_original)
                r = cpuset_copy(&p->original, thread_original(parent, forker));
        else if (parent->has_original)
                r = cpuset_copy(&p->original, &parent->original);
        else
                r = -ENODATA;
        if (r == -ENOMEM)
                return r;
        p->has_original = r >= 0;
        /* Likewise its scheduling state (unless reset-on-fork reset it: then it is no copy). */
        if (forker && forker->sched) {
                p->sched_original = forker->sched->original;
                p->has_sched_original = true;
        } else if (parent->has_sched_original) {
                p->sched_original = parent->sched_original;
                p->has_sched_original = true;
        }

        log_debug(
                "%s[%d] forked %s[%d]: tracked under policy %s", parent->comm, (int)parent->pid, p->comm,
                (int)p->pid, manager_process_policy_name(m, p));
        /* Its masks are already ours: its originals go to the state dir now. */
        p->state_dirty = true;
        manager_state_save(m, p);
        r = place_process(m, p, false, ev->timestamp_ns, st.n_threads);
        return r == -ESRCH ? 0 : r;
}

static int on_fork_thread(Manager *m, const ProcEvent *ev) {
        _cleanup_(place_context_done) PlaceContext ctx = {};
        TrackedProcess *p;
        int r;

        /* The event's parent fields name the parent process, not the creating thread: find the
         * process by the child's tgid. */
        p = manager_find_process(m, ev->tgid);
        if (!p)
                return 0;
        if (manager_verify_process(m, p) <= 0)
                return 0; /* stale (dropped), or gone with the new thread */

        /* Written only if its mask (inherited from the creating thread) is not the target, and
         * only while ev->pid is a thread of p (the event may be handled late). */
        ctx = (PlaceContext){.manager = m, .process = p, .identify = true};
        r = place_thread(&ctx, ev->pid);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        if (ctx.n_set > 0)
                manager_record_latency(m, ev->timestamp_ns);
        log_debug(
                "New thread %d of %s[%d] %s (policy %s)", (int)ev->pid, p->comm, (int)p->pid,
                ctx.n_set > 0 ? "placed" : "already in place", process_policy_label(m, p));
        r = process_spread_settle(m, p); /* it may have taken a spread slot */
        return r == -ESRCH ? 0 : r;
}

/*
 * True for a child that systemd (PID 1, or a "systemd" user manager) forked to start a unit and
 * that has not exec'd yet: systemd names it "(BINARY)" and moves it into the unit's cgroup,
 * sets its user and so on before the exec. It is placed by its exec, not before (a unit: match
 * would place it twice). Reads the parent's comm and both executables only for a "(…" comm.
 */
static bool is_service_manager_child(pid_t pid, const ProcfsStat *st) {
        _cleanup_free_ char *exe = NULL, *parent_exe = NULL;
        char parent[16] = "";
        const char *base;
        ProcfsStat again;
        uint64_t now;

        if (st->comm[0] != '(' || st->ppid <= 0)
                return false;
        if (st->ppid != 1 && (procfs_read_comm(NULL, st->ppid, 0, parent) < 0 || !streq(parent, "systemd")))
                return false;
        /* Not exec'd yet: it still runs its parent's program (or systemd 255's executor). A
         * process that calls itself "(…" and was reparented to PID 1 runs its own. */
        if (procfs_read_exe(NULL, pid, &exe) < 0 || procfs_read_exe(NULL, st->ppid, &parent_exe) < 0)
                return false;
        base = strrchr(exe, '/');
        if (streq(exe, parent_exe) || streq(base ? base + 1 : exe, "systemd-executor"))
                return true;
        /* Another program: a daemon calling itself "(…", or the child is exec'ing (execve(2)
         * replaces the program before the comm): then its EXEC event follows this one. A child
         * is seconds old at most; such a daemon is older. */
        if (procfs_read_stat(NULL, pid, 0, &again) >= 0 && again.comm[0] != '(')
                return true;
        now = now_monotonic_nsec();
        return now <= SERVICE_CHILD_AGE_MAX_NSEC ||
                !started_before(st->starttime, now - SERVICE_CHILD_AGE_MAX_NSEC);
}

/*
 * Re-matches a process already running (exec, comm or uid change): places it under the policy
 * it now matches, starts tracking it if it didn't match before, gives back its originals and
 * forgets it if it no longer matches. exec: the process replaced its image.
 *
 * Matching comes first: an exec storm of processes that match nothing costs what matching
 * needs (mostly one comm read). Only a match, or a tracked PID, costs one read of
 * /proc/PID/stat, which gives identity (start time), the kernel-thread flag and the zombie
 * state at once.
 */
static int manager_rematch(Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns) {
        char comm[16] = "";
        int k;

        if (exec)
                drift_forget_released(m->drift, pid); /* a new image is managed again */
        /* On the event path a huge command line is not read and scanned now, before the events
         * of everyone else: the match is decided on the worker's thread. */
        m->cmdline_budget = MATCH_CMDLINE_BUDGET;
        k = manager_match_pid(m, pid, pid == m->self, comm);
        m->cmdline_budget = 0;
        if (k == -EAGAIN)
                return manager_defer_match(m, pid, exec, timestamp_ns);
        return manager_rematch_decided(m, pid, exec, timestamp_ns, k, comm);
}

/* manager_rematch() once the match is known: k (a policy index or -errno) and the comm read
 * with it. */
static int manager_rematch_decided(
        Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns, int k, char comm[16]) {
        TrackedProcess *p = manager_find_process(m, pid);
        bool explicit_only = pid == m->self;
        ProcfsStat st;
        int r;

        if (k == -ESRCH || k == -ENOMEM)
                return k == -ENOMEM ? k : 0; /* gone: its EXIT event will follow */
        if (k < 0 && k != -ENOENT) {
                log_debug_errno(k, "Failed to match process %d, skipping: %m", (int)pid);
                return 0;
        }
        if (k < 0 && !p)
                return 0;

        r = procfs_read_stat(NULL, pid, 0, &st);
        if (r < 0) {
                if (r != -ESRCH)
                        log_debug_errno(r, "Failed to read the stat of %d, skipping: %m", (int)pid);
                return 0;
        }
        if (p && p->starttime != st.starttime) {
                manager_forget_gone(m, p); /* a different process with a reused PID */
                p = NULL;
        }
        if (!exec && !p && k >= 0 && is_service_manager_child(pid, &st)) {
                log_debug(
                        "%s[%d] is systemd's child before its exec, placed when it execs", st.comm,
                        (int)pid);
                return 0;
        }
        if (process_is_dead(pid, &st)) {
                /* Exited already: its placement can't complete. */
                if (p)
                        manager_forget_gone(m, p);
                else if (k >= 0) {
                        m->counters.processes_matched++;
                        m->counters.processes_vanished++;
                }
                return 0;
        }
        if (k >= 0 && !explicit_only && (st.flags & PROCFS_PF_KTHREAD)) {
                explicit_only = true;
                k = manager_match_pid(m, pid, true, comm);
                if (k == -ESRCH || k == -ENOMEM)
                        return k == -ENOMEM ? k : 0;
                if (k < 0 && k != -ENOENT) {
                        log_debug_errno(k, "Failed to match process %d, skipping: %m", (int)pid);
                        return 0;
                }
        }

        if (k < 0) {
                if (p) {
                        restore_process(m, p, process_policy_label(m, p));
                        manager_remove_process(m, p);
                }
                return 0;
        }
        if (!p) {
                r = manager_track_new(
                        m, pid, st.starttime, (size_t)k, comm, explicit_only, timestamp_ns, st.n_threads);
                return r == -ENOMEM ? r : 0;
        }

        if (comm[0])
                memcpy(p->comm, comm, sizeof(p->comm));
        if (exec) {
                /* A new image: inherited tracking ends, and only the exec'ing thread is left. */
                p->forked = false;
                p->leader_exited = false;
                p->memory_generation = 0;
                r = tracked_process_remove_threads_if(p, thread_not_leader);
                if (r < 0)
                        return r;
        }
        if (p->policy != (size_t)k) {
                log_debug(
                        "%s[%d] moves from policy %s to %s", p->comm, (int)p->pid,
                        process_policy_label(m, p), m->plan->policies[k].policy->name);
                p->policy = (size_t)k;
        }
        /* After exec the thread entry left may describe the old leader, not the exec'ing thread:
         * write it again. Otherwise only threads whose target changed are written. */
        r = place_process(m, p, exec, timestamp_ns, st.n_threads);
        return r == -ENOMEM ? r : 0;
}

static int on_exec(Manager *m, const ProcEvent *ev) {
        return manager_rematch(m, ev->tgid, true, ev->timestamp_ns);
}

/* Re-evaluates one thread's rule (a thread renamed itself). */
static int manager_reevaluate_thread(Manager *m, TrackedProcess *p, pid_t tid, uint64_t timestamp_ns) {
        const PolicyPlan *pp = process_plan(m, p);
        _cleanup_(place_context_done) PlaceContext ctx = {.manager = m, .process = p};
        int r;

        if (!pp || pp->policy->n_threads == 0)
                return 0; /* no thread rules: a name changes nothing */
        r = place_thread(&ctx, tid);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        if (ctx.n_set > 0) {
                manager_record_latency(m, timestamp_ns);
                log_debug(
                        "Thread %d of %s[%d] renamed: placed by its thread rule", (int)tid, p->comm,
                        (int)p->pid);
        }
        r = process_spread_settle(m, p); /* it may have taken or given back a spread slot */
        return r == -ESRCH ? 0 : r;
}

static int on_comm(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p = manager_find_process(m, ev->tgid);

        if (ev->pid != ev->tgid)
                return p ? manager_reevaluate_thread(m, p, ev->pid, ev->timestamp_ns) : 0;

        if (p)
                memcpy(p->comm, ev->comm, sizeof(p->comm));
        if (p && p->forked) /* tracked under its parent's policy until it execs */
                return manager_reevaluate_thread(m, p, ev->pid, ev->timestamp_ns);
        if (p || (m->config->facts & FACT_COMM))
                return manager_rematch(m, ev->pid, false, ev->timestamp_ns);
        return 0;
}

static int on_uid(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p;

        if (ev->pid != ev->tgid || !(m->config->facts & FACT_UID))
                return 0;
        p = manager_find_process(m, ev->pid);
        if (p && p->forked)
                return 0;
        return manager_rematch(m, ev->pid, false, ev->timestamp_ns);
}

/*
 * True if the EXIT of p's leader, sent at timestamp_ns (the kernel's CLOCK_MONOTONIC), ends p
 * beyond doubt, so that no /proc/PID/stat read is needed to tell an exit from a leader's
 * pthread_exit() (docs/performance.md). It does when:
 *  - the event is about p, not about an earlier process with the same PID whose EXIT is read
 *    late: that one exited before p started, so before p's identity was read (identity_ns);
 *  - the thread table is complete: a full placement pass listed p's threads (placed), and
 *    every thread created since was announced by a FORK event, which its creator sends before
 *    clone() returns and so before the leader's EXIT when the creator is the leader, or before
 *    the creator's own EXIT otherwise. Not while a rescan after lost events is pending (a FORK
 *    may be among them; the rescan lists every tracked process's threads again);
 *  - and it holds no thread but the leader: every other thread it had is gone.
 * Otherwise manager_check_process_gone() reads /proc.
 */
static bool process_exit_is_final(const Manager *m, TrackedProcess *p, uint64_t timestamp_ns) {
        if (!p->placed || m->rescan_source || timestamp_ns <= p->identity_ns)
                return false;
        return p->n_threads == 0 || (p->n_threads == 1 && tracked_process_find_thread(p, p->pid));
}

static int on_exit_event(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p = manager_find_process(m, ev->tgid);
        TrackedThread *t;
        int r;

        if (!p)
                return 0;
        if (ev->pid != ev->tgid) {
                t = tracked_process_find_thread(p, ev->pid);
                if (t)
                        tracked_process_remove_thread(p, t); /* frees its spread slot */
                if (p->leader_exited) {
                        manager_check_process_gone(m, p);
                        return 0;
                }
                /* A spread slot given back: the threads no rule matches may get its CPU again. */
                r = process_spread_settle(m, p);
                return r == -ESRCH ? 0 : r;
        }
        if (process_exit_is_final(m, p, ev->timestamp_ns)) {
                log_debug("%s[%d] exited", p->comm, (int)p->pid);
                manager_forget_gone(m, p);
                return 0;
        }
        /* Also fires when the leader calls pthread_exit() and other threads live on. */
        p->leader_exited = true;
        manager_check_process_gone(m, p);
        return 0;
}

static int manager_rescan(Manager *m);
static void manager_settle_units(Manager *m);

/* Runs the rescan scheduled by on_lost(), from whichever of its two sources fires first. */
static void manager_run_scheduled_rescan(Manager *m) {
        m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
        m->rescan_timer_source = sd_event_source_disable_unref(m->rescan_timer_source);
        m->counters.rescans++;
        (void)manager_rescan(m);
}

int manager_rescan_all(Manager *m) {
        int r;

        if (m->topology_path)
                return -EOPNOTSUPP;
        m->counters.rescans++;
        r = manager_rescan(m);
        if (r < 0)
                return r;
        manager_settle_units(m);
        r = device_placement_apply(m->devices);
        manager_notify(m, NULL);
        return r;
}

static int on_rescan(sd_event_source *s, void *userdata) {
        manager_run_scheduled_rescan(userdata);
        return 0;
}

static int on_rescan_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_run_scheduled_rescan(userdata);
        return 0;
}

/*
 * Events were dropped. While the socket's queue stays full the kernel drops more without
 * telling again, so the rescan runs once the backlog is read: from a defer source one step
 * below normal priority, which sd-event dispatches only in an iteration where no
 * normal-priority source (the proc connector, the bus) has work. Sustained load could keep
 * that from ever happening, so a timer at normal priority runs it RESCAN_DELAY_MAX_USEC
 * later at the latest.
 */
static int on_lost(Manager *m) {
        unsigned suppressed = 0;
        int r;

        m->counters.events_lost++;
        if (ratelimit_below(&m->lost_ratelimit, &suppressed))
                log_warning(
                        "Process events were lost (receive queue overrun, or reading paused after an "
                        "error%s), rescanning /proc",
                        suppressed > 0 ? ", again" : "");
        if (m->rescan_source)
                return 0;

        r = sd_event_add_defer(m->event, &m->rescan_source, on_rescan, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->rescan_source, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r >= 0)
                r = sd_event_add_time_relative(
                        m->event, &m->rescan_timer_source, CLOCK_MONOTONIC, RESCAN_DELAY_MAX_USEC, 0,
                        on_rescan_timer, m);
        if (r < 0) {
                log_warning_errno(r, "Failed to schedule the rescan, rescanning now: %m");
                manager_run_scheduled_rescan(m);
                return 0;
        }
        (void)sd_event_source_set_description(m->rescan_source, "rescan-after-lost-events");
        (void)sd_event_source_set_description(m->rescan_timer_source, "rescan-after-lost-events-timer");
        return 0;
}

/* The proc connector failed to receive; the monitor pauses and then resumes with a LOST. */
static int on_monitor_error(Manager *m, const ProcEvent *ev) {
        unsigned suppressed = 0;

        if (ratelimit_below(&m->monitor_ratelimit, &suppressed))
                log_warning_errno(
                        ev->error,
                        "Failed to receive process events: %m; retrying in %" PRIu64
                        " ms, then rescanning /proc%s",
                        ev->retry_usec / USEC_PER_MSEC, suppressed > 0 ? " (the error persists)" : "");
        return 0;
}

static const char *proc_event_type_name(ProcEventType t) {
        static const char *const names[] = {
                [PROC_MONITOR_FORK] = "FORK",   [PROC_MONITOR_EXEC] = "EXEC", [PROC_MONITOR_UID] = "UID",
                [PROC_MONITOR_COMM] = "COMM",   [PROC_MONITOR_EXIT] = "EXIT", [PROC_MONITOR_LOST] = "LOST",
                [PROC_MONITOR_ERROR] = "ERROR",
        };
        return (size_t)t < ELEMENTSOF(names) && names[t] ? names[t] : "unknown";
}

static int manager_dispatch_proc_event(Manager *m, const ProcEvent *ev) {
        switch (ev->type) {
        case PROC_MONITOR_FORK:
                if (ev->parent_tgid == m->self)
                        return 0;
                return ev->pid == ev->tgid ? on_fork_process(m, ev) : on_fork_thread(m, ev);
        case PROC_MONITOR_EXEC:
                return on_exec(m, ev);
        case PROC_MONITOR_UID:
                return on_uid(m, ev);
        case PROC_MONITOR_COMM:
                return on_comm(m, ev);
        case PROC_MONITOR_EXIT:
                return on_exit_event(m, ev);
        case PROC_MONITOR_LOST:
                return on_lost(m);
        case PROC_MONITOR_ERROR:
                return on_monitor_error(m, ev);
        }
        return 0;
}

/*
 * The bus is served after the proc connector (AFFINITYD_BUS_EVENT_PRIORITY): under a storm of
 * events that never lets up it would not be served at all, and every call would time out. So
 * every BUS_GUARD_EVENTS events a source above them runs once, as soon as the proc connector's
 * dispatch returns (it handles 1024 datagrams at most, daemon/proc-monitor.c), and processes up to
 * BUS_GUARD_MESSAGES bus messages (a few µs when none is waiting): while events cost ~1-100 µs
 * each, a call waits ~1-100 ms behind them (more behind other messages: the bus's signals come
 * first). A source of its own, rather than sd_bus_process() from the event handler, so that
 * a method never runs in the middle of handling an event.
 */
static int on_bus_guard(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        for (unsigned i = 0; m->bus && i < BUS_GUARD_MESSAGES; i++)
                if (sd_bus_process(m->bus, NULL) <= 0)
                        break; /* nothing more waiting, or the bus failed (its own source tells) */
        return 0;
}

static void manager_bus_guard_count(Manager *m) {
        if (!m->bus || ++m->events_since_bus_guard < BUS_GUARD_EVENTS)
                return;
        m->events_since_bus_guard = 0;
        if (!m->bus_guard_source) {
                if (sd_event_add_defer(m->event, &m->bus_guard_source, on_bus_guard, m) < 0)
                        return;
                (void)sd_event_source_set_priority(m->bus_guard_source, SD_EVENT_PRIORITY_NORMAL - 1);
                (void)sd_event_source_set_description(m->bus_guard_source, "bus-guard");
        }
        (void)sd_event_source_set_enabled(m->bus_guard_source, SD_EVENT_ONESHOT);
}

static int on_proc_event(ProcMonitor *monitor, const ProcEvent *ev, void *userdata) {
        Manager *m = userdata;
        unsigned suppressed = 0;
        int r;

        m->counters.events_received++;
        manager_bus_guard_count(m);
        if (ev->type != PROC_MONITOR_LOST && ev->type != PROC_MONITOR_ERROR && ev->tgid == m->self)
                return 0;

        r = manager_dispatch_proc_event(m, ev);
        if (r < 0 && ratelimit_below(&m->event_ratelimit, &suppressed))
                log_warning_errno(
                        r, "Failed to handle the %s event of process %d: %m, skipping%s",
                        proc_event_type_name(ev->type), (int)ev->pid,
                        suppressed > 0 ? " (more such failures were not logged)" : "");
        return 0;
}

/* ---- scans ---- */

/* The index in plan of the active policy named name, or -ENOENT. */
static int plan_find_active(const Plan *plan, const char *name) {
        for (size_t i = 0; i < plan->n_policies; i++)
                if (plan->policies[i].policy && streq(plan->policies[i].policy->name, name))
                        return plan->policies[i].pending_reason ? -ENOENT : (int)i;
        return -ENOENT;
}

/* A process a scan found that the daemon does not track. */
typedef struct ScanCandidate {
        pid_t pid;
        ProcfsStat stat;
} ScanCandidate;

/* By start time (then PID): parents come before their children, whatever PID wrapping did. */
static int scan_candidate_compare(const void *a, const void *b) {
        const ScanCandidate *x = a, *y = b;

        if (x->stat.starttime != y->stat.starttime)
                return x->stat.starttime < y->stat.starttime ? -1 : 1;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * A process a scan found that matches no policy itself, but whose parent is tracked: most
 * likely a worker a tracked server forked without exec (nginx, postgres), started while the
 * daemon was not running or was losing events, which may have renamed itself so that it no
 * longer matches by comm. A FORK event would have put it under its parent's policy until it
 * execs; the scan does the same, if it has not exec'd since the fork. The kernel keeps no
 * such flag: the heuristic is that a child that has not exec'd runs its parent's executable
 * (/proc/PID/exe names the same file). A child that exec'd its parent's binary again can't be
 * told apart and is adopted too (it would usually match by comm itself anyway); one whose
 * exe can't be read is not adopted. Returns 1 (adopted), 0 (not), -ENOMEM.
 */
static int manager_adopt_child(Manager *m, pid_t pid, const ProcfsStat *st) {
        _cleanup_free_ char *exe = NULL, *parent_exe = NULL;
        TrackedProcess *parent, *p;
        int r;

        parent = manager_find_process(m, st->ppid);
        if (!parent || parent->explicit_only || !process_plan(m, parent) ||
            process_plan(m, parent)->pending_reason || parent->starttime > st->starttime)
                return 0;

        r = procfs_read_exe(NULL, pid, &exe);
        if (r >= 0)
                r = procfs_read_exe(NULL, parent->pid, &parent_exe);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !streq(exe, parent_exe))
                return 0;

        r = manager_add_process(m, pid, st->starttime, parent->policy, &p);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        m->counters.processes_matched++;
        p->forked = true;
        p->parent = parent->pid;
        memcpy(p->comm, parent->comm, sizeof(p->comm));
        (void)procfs_read_comm(NULL, pid, 0, p->comm);
        /* As for a FORK event: a thread whose mask is what the daemon gave the parent inherited
         * it, and gets the parent's original (thread_record_original()). */
        if (parent->has_original) {
                r = cpuset_copy(&p->original, &parent->original);
                if (r < 0)
                        return r;
                p->has_original = true;
        }
        if (parent->has_sched_original) {
                p->sched_original = parent->sched_original;
                p->has_sched_original = true;
        }

        log_debug(
                "%s[%d] is a child of %s[%d] that has not exec'd: tracked under policy %s", p->comm,
                (int)p->pid, parent->comm, (int)parent->pid, manager_process_policy_name(m, p));
        r = place_process(m, p, false, 0, st->n_threads);
        return r == -ENOMEM ? r : 1;
}

/*
 * Rescans /proc: tracked processes that are gone are forgotten; the others are re-matched
 * (children forked without exec follow their parent, or keep their policy when the parent is
 * gone) and placed again where their target changed, or restored and forgotten when nothing
 * matches any more; processes not tracked that match are tracked and placed, and so are
 * children of tracked processes that have not exec'd (manager_adopt_child()). Threads whose
 * target differs from what was applied are written; the others are read back (except in a
 * polling pass): one the kernel reset to its cpuset's CPUs is written again, one that moved
 * itself (or was moved) after placement is left alone unless its policy says on-drift: enforce.
 */
static int manager_rescan(Manager *m) {
        _cleanup_free_ TrackedProcess **list = NULL;
        _cleanup_free_ ScanCandidate *candidates = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, n_pids = 0, n_candidates = 0;
        bool progress;
        int r;

        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to rescan: %m");

        /* Forget what is gone; re-match the processes that matched by themselves. */
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];
                ProcfsStat st;

                r = procfs_read_stat(NULL, p->pid, 0, &st);
                if (r == -ESRCH ||
                    (r >= 0 && (st.starttime != p->starttime || process_is_dead(p->pid, &st)))) {
                        manager_forget_gone(m, p);
                        list[i] = NULL;
                        continue;
                }
                if (process_plan(m, p) && process_plan(m, p)->pending_reason) {
                        /* Kept as it is by a CPU change that made its policy pending
                         * (manager_replan_topology()), until the policy resolves again. */
                        p->rescan_policy = (int)p->policy;
                        continue;
                }
                p->rescan_policy = p->forked ? -EAGAIN /* decided below */
                                             : manager_match_pid(m, p->pid, p->explicit_only, NULL);
        }

        /* Forked children follow their parent (a chain resolves parent first); with the parent
         * gone they keep their policy if it is still active, else they match by themselves. */
        do {
                progress = false;
                for (size_t i = 0; i < n; i++) {
                        TrackedProcess *p = list[i], *parent;

                        if (!p || p->rescan_policy != -EAGAIN)
                                continue;
                        parent = manager_find_process(m, p->parent);
                        if (parent && parent->rescan_policy == -EAGAIN)
                                continue; /* not decided yet */
                        if (parent && (parent->rescan_policy >= 0 || parent->rescan_policy == -ENOENT))
                                p->rescan_policy = parent->rescan_policy;
                        else if (process_plan(m, p) && !process_plan(m, p)->pending_reason)
                                p->rescan_policy = (int)p->policy;
                        else
                                p->rescan_policy = manager_match_pid(m, p->pid, p->explicit_only, NULL);
                        progress = true;
                }
        } while (progress);

        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];

                if (!p)
                        continue;
                if (p->rescan_policy == -EAGAIN) { /* a cycle through reused PIDs: match by itself */
                        p->rescan_policy = manager_match_pid(m, p->pid, p->explicit_only, NULL);
                        p->forked = false;
                }
                if (p->rescan_policy == -ESRCH) { /* exited meanwhile */
                        manager_forget_gone(m, p);
                        continue;
                }
                if (p->rescan_policy < 0) {
                        const char *name = process_policy_label(m, p);

                        restore_process(m, p, name);
                        log_struct(
                                LOG_DEBUG, 0, name, p->pid, p->comm, NULL,
                                "%s[%d] no longer matches policy %s, forgotten", p->comm, (int)p->pid, name);
                        manager_remove_process(m, p);
                        continue;
                }
                p->policy = (size_t)p->rescan_policy;
                (void)procfs_read_comm(NULL, p->pid, 0, p->comm); /* an exec may have been missed */
                (void)place_process(m, p, m->force_placement, 0, 0);
        }

        /* Processes not tracked: one read of /proc/PID/stat each gives identity, parent,
         * kernel-thread flag and zombie state; then, parents before children, match them or
         * adopt them as children of tracked processes. */
        r = procfs_list_pids(NULL, &pids, &n_pids);
        if (r < 0)
                return log_error_errno(r, "Failed to list /proc: %m");
        candidates = calloc(MAX(n_pids, (size_t)1), sizeof(ScanCandidate));
        if (!candidates)
                return log_error_errno(-ENOMEM, "Failed to rescan: %m");
        for (size_t i = 0; i < n_pids; i++) {
                ScanCandidate *c = &candidates[n_candidates];

                if (manager_find_process(m, pids[i]))
                        continue;
                c->pid = pids[i];
                if (procfs_read_stat(NULL, c->pid, 0, &c->stat) < 0 || process_is_dead(c->pid, &c->stat))
                        continue; /* gone, or exited and not reaped yet */
                if (is_service_manager_child(c->pid, &c->stat))
                        continue; /* placed by its exec */
                n_candidates++;
        }
        qsort(candidates, n_candidates, sizeof(ScanCandidate), scan_candidate_compare);

        for (size_t i = 0; i < n_candidates; i++) {
                const ScanCandidate *c = &candidates[i];
                bool explicit_only = c->pid == m->self || (c->stat.flags & PROCFS_PF_KTHREAD);
                char comm[16] = "";
                int k;

                k = manager_match_pid_stat(m, c->pid, explicit_only, &c->stat, comm);
                if (k >= 0)
                        r = manager_track_new(
                                m, c->pid, c->stat.starttime, (size_t)k, comm, explicit_only, 0,
                                c->stat.n_threads);
                else if (k == -ENOENT && !explicit_only)
                        r = manager_adopt_child(m, c->pid, &c->stat);
                else
                        r = k;
                if (r == -ENOMEM)
                        return log_error_errno(r, "Failed to rescan: %m");
        }
        return 0;
}

/*
 * Asks the kernel about every managed thread (place_process() with verify) and writes again
 * those it reset to their cgroup's CPUs — on cgroup v1, and on v2 before Linux 6.2, it does
 * that to every task of a cgroup whose cpuset changes (docs/cgroups.md) — and those that drifted
 * under on-drift: enforce. why says what prompted it, for the debug log.
 */
static void manager_verify_all(Manager *m, const char *why) {
        _cleanup_free_ TrackedProcess **list = NULL;
        size_t n = 0;
        int enabled = SD_EVENT_OFF;

        if (m->dry_run || m->n_processes == 0)
                return;
        /* A re-plan after a CPU change is due: it writes every thread anyway. */
        if (m->hotplug_source && sd_event_source_get_enabled(m->hotplug_source, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return;
        if (manager_list_processes(m, &list, &n) < 0)
                return (void)log_warning_errno(-ENOMEM, "Failed to check managed threads after %s: %m", why);
        log_debug("Checking %zu managed processes against the kernel after %s", n, why);
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];

                if (!process_plan(m, p) || process_plan(m, p)->pending_reason)
                        continue;
                (void)place_process(m, p, false, 0, 0);
        }
}

static void on_cpuset_change(CpusetWatch *w, const char *dir, void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ char *why = NULL;

        if (asprintf(&why, "a cpuset change in %s", dir) < 0)
                why = NULL;
        manager_verify_all(m, why ?: "a cpuset change");
}

/* After systemd changed units' AllowedCPUs= (via: systemd, set or reset): the kernel has reset
 * the threads of those cgroups already, before the D-Bus call returned. */
static void manager_settle_units(Manager *m) {
        if (m->units && unit_placement_take_changed(m->units))
                manager_verify_all(m, "changing units' AllowedCPUs=");
}

/* ---- configuration ---- */

static void log_diagnostics(const Diagnostics *d, int error_level) {
        for (size_t i = 0; i < d->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                if (diagnostic_format(&d->items[i], &line) < 0)
                        continue;
                log_full(d->items[i].level == DIAGNOSTIC_ERROR ? error_level : LOG_WARNING, "%s", line);
        }
}

/* Logs what a plan resolved to: each policy's CPUs, pending policies and every warning,
 * each at the place in the files it is about (as affinityctl validate prints them). */
static void log_plan(Manager *m, const Plan *plan) {
        char where[PATH_MAX + 32];

        STRV_FOREACH (w, plan->warnings)
                log_warning(
                        "%swarning: %s",
                        location_prefix(
                                plan->config->has_reserve ? &plan->config->reserve_location : NULL, where,
                                sizeof(where)),
                        *w);

        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                const char *name = pp->policy->name;

                if (pp->pending_reason)
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL, "%spolicy %s is pending: %s",
                                location_prefix(
                                        pp->pending_location ?: &pp->policy->location, where, sizeof(where)),
                                name, pp->pending_reason);
                else if (log_level_enabled(LOG_INFO)) {
                        _cleanup_free_ char *cpus = pp->has_cpus ? cpuset_to_string(&pp->cpus) : NULL;
                        log_struct(
                                LOG_INFO, 0, name, 0, NULL, cpus, "Policy %s: CPUs %s", name,
                                pp->has_cpus ? strna(cpus) : "unchanged (no cpus:)");
                }
                for (size_t k = 0; pp->warnings && pp->warnings[k]; k++)
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL, "%swarning: policy %s: %s",
                                location_prefix(
                                        pp->warning_locations ? pp->warning_locations[k]
                                                              : &pp->policy->location,
                                        where, sizeof(where)),
                                name, pp->warnings[k]);
        }
}

/* Loads the configuration and makes a plan against t. Diagnostics go to *diag. */
static int manager_load(
        Manager *m, const Topology *t, Config **ret_config, Plan **ret_plan, Diagnostics *diag) {
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        int r;

        r = config_load(m->config_dir, &config, diag);
        if (r < 0)
                return r;
        r = plan_new(config, t, &plan);
        if (r < 0)
                return r;
        *ret_config = TAKE_PTR(config);
        *ret_plan = TAKE_PTR(plan);
        return 0;
}

static int manager_load_topology(Manager *m, Topology **ret) {
        if (m->topology_path)
                return topology_load_xml(m->topology_path, ret);
        return topology_load_live(ret);
}

typedef struct RemapContext {
        const Plan *old_plan;
        const Plan *new_plan;
        bool keep_pending;
} RemapContext;

static void remap_action(const void *nodep, VISIT which, void *userdata) {
        TrackedProcess *p = *(void *const *)nodep;
        const RemapContext *c = userdata;
        int k = -ENOENT;

        if (which != postorder && which != leaf)
                return;
        if (p->policy < c->old_plan->n_policies && c->old_plan->policies[p->policy].policy) {
                const char *name = c->old_plan->policies[p->policy].policy->name;
                const PolicyPlan *pp;

                k = plan_find_active(c->new_plan, name);
                if (k < 0 && c->keep_pending && (pp = plan_find_policy(c->new_plan, name)))
                        k = (int)(pp - c->new_plan->policies);
        }
        p->policy = k >= 0 ? (size_t)k : POLICY_NONE;
}

/*
 * After a reload (or a CPU change) installed new_plan: points every tracked process at the
 * policy of the same name in it, or at POLICY_NONE when that policy is gone or pending (the
 * rescan that follows re-matches it, or restores and forgets it). With keep_pending (a CPU
 * change), a process whose policy became pending stays under it, and the rescan leaves it as
 * it is. Allocates nothing and cannot fail, so no index into the old configuration survives
 * it, whatever the rescan does after. old_plan (and the configuration it borrows from) must
 * still be alive.
 */
static void manager_remap_policies(
        Manager *m, const Plan *old_plan, const Plan *new_plan, bool keep_pending) {
        RemapContext c = {.old_plan = old_plan, .new_plan = new_plan, .keep_pending = keep_pending};
        twalk_r(m->processes, remap_action, &c);
}

/* Installs a new config + plan, and the per-policy report flags sized for it. */
static int manager_install(Manager *m, Config *config, Plan *plan) {
        bool *flags = calloc(MAX(config->n_policies, (size_t)1), sizeof(bool));
        if (!flags)
                return -ENOMEM;
        free(m->narrowing_reported);
        m->narrowing_reported = flags;
        pthread_rwlock_wrlock(&m->plan_lock); /* the worker matches against the old ones */
        m->plan_generation++;
        m->config = config;
        m->plan = plan;
        pthread_rwlock_unlock(&m->plan_lock);
        (void)drift_update(m->drift); /* drift-interval may have changed */
        if (m->units)
                unit_placement_new_plan(m->units);
        return 0;
}

static char *strip_trailing_newlines(char *s) {
        size_t l = strlen(s);
        while (l > 0 && s[l - 1] == '\n')
                s[--l] = '\0';
        return s;
}

/*
 * What a configuration holds, for the "Loaded" and "Reloaded" lines: "3 policies (1 pending),
 * 1 irqs rule, 2 net rules from 4 files" — irqs: and net: rules named only when there are any,
 * as affinityctl validate counts them. Returns buf.
 */
static const char *config_counts(const Config *c, size_t n_pending, char *buf, size_t size) {
        size_t n = strv_length(c->files);
        int k;

        k = snprintf(
                buf, size, "%zu polic%s (%zu pending)", c->n_policies, c->n_policies == 1 ? "y" : "ies",
                n_pending);
        if (c->n_irq_rules > 0 && k >= 0 && (size_t)k < size)
                k += snprintf(
                        buf + k, size - (size_t)k, ", %zu irqs rule%s", c->n_irq_rules,
                        c->n_irq_rules == 1 ? "" : "s");
        if (c->n_net_rules > 0 && k >= 0 && (size_t)k < size)
                k += snprintf(
                        buf + k, size - (size_t)k, ", %zu net rule%s", c->n_net_rules,
                        c->n_net_rules == 1 ? "" : "s");
        if (k >= 0 && (size_t)k < size)
                (void)snprintf(buf + k, size - (size_t)k, " from %zu file%s", n, n == 1 ? "" : "s");
        return buf;
}

int manager_reload(Manager *m, char **ret_error) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(topology_freep) Topology *topology = NULL;
        _cleanup_free_ char *text = NULL;
        Config *old_config;
        Plan *old_plan;
        int r;

        m->counters.reloads++;
        m->last_reload_usec = now_realtime_usec();
        /* State stays what it was during a reload (RELOADING=1 says it to the service manager) */
        (void)sd_notify(false, "RELOADING=1\nSTATUS=Reloading configuration");
        log_info("Reloading configuration");

        r = manager_load_topology(m, &topology);
        if (r < 0) {
                log_warning_errno(r, "Failed to reload the topology, keeping the previous one: %m");
                topology = NULL;
        }

        r = manager_load(m, topology ?: m->topology, &config, &plan, &diag);
        if (r < 0) {
                if (diagnostics_format(&diag, &text) < 0)
                        text = NULL;
                if (!text || text[0] == '\0') {
                        free(text);
                        if (asprintf(&text, "Failed to load the configuration: %s", strerror(-r)) < 0)
                                text = NULL;
                }
                if (text)
                        strip_trailing_newlines(text);
                log_struct_id(
                        LOG_ERR, 0, AFFINITYD_MESSAGE_RELOAD_FAILED, NULL, 0, NULL, NULL,
                        "Reload failed, keeping the previous configuration:\n%s", strna(text));
                free(m->last_reload_error);
                m->last_reload_error = strdup(text ?: "Reload failed");
                (void)manager_bus_emit_changed(m, "Reloads", "LastReloadError", "LastReloadUSec");
                manager_set_state(m, MANAGER_RUNNING); /* degraded: an older configuration is in force */
                (void)manager_bus_emit_reloaded(m, false, m->last_reload_error ?: "");
                manager_notify(m, "READY=1");
                if (ret_error)
                        *ret_error = TAKE_PTR(text);
                return r;
        }
        log_diagnostics(&diag, LOG_ERR);
        log_plan(m, plan);

        old_config = m->config;
        old_plan = m->plan;
        r = manager_install(m, config, plan);
        if (r < 0) {
                (void)free_and_strdup(&m->last_reload_error, "Out of memory");
                (void)manager_bus_emit_changed(m, "Reloads", "LastReloadError", "LastReloadUSec");
                manager_set_state(m, MANAGER_RUNNING);
                (void)manager_bus_emit_reloaded(m, false, "Out of memory");
                manager_notify(m, "READY=1");
                if (ret_error)
                        *ret_error = strdup("Out of memory");
                return log_error_errno(r, "Failed to reload: %m");
        }
        TAKE_PTR(config);
        TAKE_PTR(plan);
        if (topology) {
                /* old_plan's pending reasons are text; nothing borrows from the old topology. */
                topology_free(m->topology);
                m->topology = TAKE_PTR(topology);
        }

        /* Tracked processes still hold indexes into old_config: remap them while it is alive, in
         * a step that can't fail, before anything else can. */
        manager_remap_policies(m, old_plan, m->plan, false);
        plan_free(old_plan);
        config_free(old_config);
        (void)manager_rescan(m);
        unit_placement_flush(m->units); /* units no longer placed get their properties reset */
        manager_settle_units(m);
        (void)device_placement_apply(m->devices); /* IRQs and queues: placed, or restored */

        m->last_reload_error = mfree(m->last_reload_error);
        (void)manager_bus_emit_changed(
                m, "Reloads", "LastReloadError", "LastReloadUSec", "PolicyFiles", "Topology", "OnlineCPUs",
                "ReservedCPUs");
        manager_set_state(m, MANAGER_RUNNING);
        (void)manager_bus_emit_reloaded(m, true, "");
        manager_notify(m, "READY=1");
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_RELOADED, NULL, 0, NULL, NULL,
                "Reloaded: %s; managing %" PRIu32 " processes",
                config_counts(m->config, plan_n_pending(m->plan), (char[256]){}, 256), m->n_processes);
        return 0;
}

/* ---- CPU hotplug ---- */

/* Names of the pending policies of plan, ", "-separated, newly allocated ("" when none); NULL on
 * OOM. */
static char *plan_pending_names(const Plan *plan) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        bool first = true;

        if (!f)
                return NULL;
        for (size_t i = 0; i < plan->n_policies; i++)
                if (plan->policies[i].pending_reason) {
                        fprintf(f, "%s%s", first ? "" : ", ", plan->policies[i].policy->name);
                        first = false;
                }
        if (fclose(f) < 0)
                return mfree(text);
        return text;
}

/*
 * The online CPUs changed: reloads the live topology, re-plans the configuration in force
 * against it, swaps the plan in as a reload does (manager_remap_policies(), keeping the
 * processes of policies that became pending as they are), and re-places every tracked process,
 * writing every thread: when a CPU goes offline the kernel moves the threads that had only
 * offline CPUs elsewhere by itself, and when it comes back nothing gives them their CPUs back
 * but this. Pending policies are retried: one that resolves again is matched and placed by the
 * rescan. Targets come from the plan, which holds online CPUs only, so no empty mask is ever
 * written (and the kernel refuses a mask with no online CPU). One info line per re-plan.
 */
static int manager_replan_topology(Manager *m) {
        _cleanup_(topology_freep) Topology *topology = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *online = NULL, *pending = NULL;
        Plan *old_plan;
        int r;

        if (!m->config)
                return 0;
        r = topology_load_live(&topology);
        if (r < 0)
                return log_warning_errno(
                        r,
                        "Failed to reload the topology after a CPU change, keeping the previous plan: %m");
        r = plan_new(m->config, topology, &plan);
        if (r < 0)
                return log_warning_errno(
                        r, "Failed to re-plan after a CPU change, keeping the previous plan: %m");

        old_plan = m->plan;
        r = manager_install(m, m->config, plan);
        if (r < 0)
                return log_warning_errno(
                        r, "Failed to re-plan after a CPU change, keeping the previous plan: %m");
        TAKE_PTR(plan);
        /* The same configuration: only the resolution changed. The old plan borrows the old
         * topology: free it first. */
        manager_remap_policies(m, old_plan, m->plan, true);
        plan_free(old_plan);
        topology_free(m->topology);
        m->topology = TAKE_PTR(topology);

        online = cpuset_to_string(topology_online_cpus(m->topology));
        pending = plan_pending_names(m->plan);
        log_info(
                "CPUs changed (online now: %s): re-planned %zu policies, %zu pending%s%s%s; re-placing "
                "%" PRIu32 " processes",
                strna(online), m->plan->n_policies, plan_n_pending(m->plan), pending && *pending ? " (" : "",
                pending && *pending ? pending : "", pending && *pending ? ")" : "", m->n_processes);
        if (log_level_enabled(LOG_DEBUG))
                log_plan(m, m->plan);

        m->force_placement = true;
        r = manager_rescan(m);
        m->force_placement = false;
        (void)device_placement_apply(m->devices); /* IRQ and queue masks follow the new plan */
        (void)manager_bus_emit_changed(m, "Topology", "OnlineCPUs", "ReservedCPUs");
        manager_notify(m, NULL);
        return r;
}

static int on_hotplug_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void)manager_replan_topology(m);
        return 0;
}

/* Re-plans HOTPLUG_DEBOUNCE_USEC from now, so that a burst of CPU changes costs one re-plan;
 * changes during that time join the pending re-plan (it reads the state when it runs). */
static void manager_schedule_replan(Manager *m) {
        int enabled = SD_EVENT_OFF, r;

        if (m->hotplug_source && sd_event_source_get_enabled(m->hotplug_source, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return;
        if (!m->hotplug_source) {
                r = sd_event_add_time_relative(
                        m->event, &m->hotplug_source, CLOCK_MONOTONIC, HOTPLUG_DEBOUNCE_USEC,
                        10 * USEC_PER_MSEC, on_hotplug_timer, m);
                if (r >= 0)
                        (void)sd_event_source_set_description(m->hotplug_source, "cpu-hotplug-replan");
        } else {
                r = sd_event_source_set_time_relative(m->hotplug_source, HOTPLUG_DEBOUNCE_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->hotplug_source, SD_EVENT_ONESHOT);
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to arm the re-plan timer, re-planning now: %m");
                (void)manager_replan_topology(m);
        }
}

static int on_cpu_uevent(UeventMonitor *monitor, const Uevent *ev, void *userdata) {
        Manager *m = userdata;
        int cpu = uevent_cpu_number(ev);

        if (cpu < 0 ||
            !(streq(ev->action, "online") || streq(ev->action, "offline") || streq(ev->action, "add") ||
              streq(ev->action, "remove")))
                return 0;
        log_debug("CPU %d: %s", cpu, ev->action);
        manager_schedule_replan(m);
        return 0;
}

static void on_uevent_lost(UeventMonitor *monitor, int error, void *userdata) {
        Manager *m = userdata;

        if (ratelimit_below(&m->uevent_ratelimit, NULL))
                log_warning_errno(
                        error,
                        "Kernel uevents may have been lost (%m), re-reading the topology in case CPUs "
                        "changed");
        manager_schedule_replan(m);
}

/*
 * Listens for CPU hotplug on the kernel's uevent socket (live topology only). Not fatal: without
 * it the daemon works on, but re-plans only on reload.
 */
static void manager_start_uevents(Manager *m) {
        int r;

        if (m->topology_path)
                return;
        r = uevent_monitor_new(m->event, &m->uevent_monitor);
        if (r >= 0)
                r = uevent_monitor_subscribe(
                        m->uevent_monitor, "cpu", on_cpu_uevent, on_uevent_lost, m, &m->cpu_subscription);
        if (r < 0) {
                m->uevent_monitor = uevent_monitor_free(m->uevent_monitor);
                m->cpu_subscription = NULL;
                log_warning_errno(
                        r, "Cannot receive kernel uevents: %m. CPU hotplug will be noticed only on reload.");
        }
}

/* ---- event sources ---- */

static int on_summary(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->summary_processes > 0)
                log_info(
                        "%s %" PRIu64 " processes (%" PRIu64 " threads) in the last %" PRIu64
                        " s; managing %" PRIu32 " processes",
                        m->dry_run ? "Would have placed" : "Placed", m->summary_processes,
                        m->summary_threads, SUMMARY_INTERVAL_USEC / USEC_PER_SEC, m->n_processes);
        m->summary_processes = m->summary_threads = 0;
        manager_notify(m, NULL);
        return 0;
}

/* Arms the one-shot summary timer, once per interval and only when something was placed. */
static void manager_schedule_summary(Manager *m) {
        int enabled = SD_EVENT_OFF, r;

        if (m->state == MANAGER_STARTING)
                return; /* the startup scan is summarised by manager_startup() */
        if (!m->summary_source) {
                r = sd_event_add_time_relative(
                        m->event, &m->summary_source, CLOCK_MONOTONIC, SUMMARY_INTERVAL_USEC, USEC_PER_SEC,
                        on_summary, m);
                if (r < 0)
                        return (void)log_debug_errno(r, "Failed to arm the summary timer: %m");
                (void)sd_event_source_set_description(m->summary_source, "placement-summary");
                return;
        }
        if (sd_event_source_get_enabled(m->summary_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(m->summary_source, SUMMARY_INTERVAL_USEC) >= 0)
                (void)sd_event_source_set_enabled(m->summary_source, SD_EVENT_ONESHOT);
}

/* The /proc scan period in polling discovery: poll-interval: from affinityd.yaml, else the
 * option's (default 1 s). Read at every tick, so a reload changes it. */
static uint64_t manager_poll_interval(const Manager *m) {
        if (m->config && m->config->poll_interval_usec > 0)
                return m->config->poll_interval_usec;
        return m->poll_interval_usec;
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        /* Discovery, once a second: what is placed already is not read back each time. */
        m->polling_pass = true;
        (void)manager_rescan(m);
        m->polling_pass = false;
        r = sd_event_source_set_time_relative(s, manager_poll_interval(m));
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to re-arm the /proc polling timer, discovery stops: %m");
        return 0;
}

static int manager_start_discovery(Manager *m) {
        int r;

        r = proc_monitor_new(m->event, PROC_MONITOR_ACK_TIMEOUT_USEC, on_proc_event, m, &m->monitor);
        if (r >= 0) {
                size_t rcvbuf = 0;
                int force_error = 0;

                m->discovery = MANAGER_DISCOVERY_NETLINK;
                log_debug("Subscribed to the proc connector");
                /* The kernel reports twice what it granted (bookkeeping). */
                if (proc_monitor_get_receive_buffer(m->monitor, &rcvbuf, &force_error) >= 0 &&
                    force_error < 0 && rcvbuf / 2 < PROC_MONITOR_RCVBUF_SIZE)
                        log_warning_errno(
                                force_error,
                                "Could not set the proc connector's receive buffer to %d KiB "
                                "(SO_RCVBUFFORCE: %m); got %zu KiB, capped by net.core.rmem_max. "
                                "Bursts of process events may be lost (and cost /proc rescans).",
                                PROC_MONITOR_RCVBUF_SIZE / 1024, rcvbuf / 2 / 1024);
                return 0;
        }

        log_warning_errno(
                r,
                "Cannot use the proc connector (%s): %m. Falling back to scanning /proc every %" PRIu64
                " ms; new processes will be placed late.",
                r == -ETIMEDOUT                       ? "no acknowledgement: a non-initial PID namespace?"
                        : r == -EPERM || r == -EACCES ? "CAP_NET_ADMIN missing"
                                                      : "unavailable",
                manager_poll_interval(m) / 1000);
        m->discovery = MANAGER_DISCOVERY_POLLING;
        (void)manager_bus_emit_changed(m, "Discovery");
        if (m->state == MANAGER_RUNNING || m->state == MANAGER_DEGRADED)
                manager_set_state(m, MANAGER_RUNNING); /* → degraded */
        r = sd_event_add_time_relative(
                m->event, &m->poll_source, CLOCK_MONOTONIC, manager_poll_interval(m),
                manager_poll_interval(m) / 10, on_poll, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the /proc polling timer: %m");
        (void)sd_event_source_set_description(m->poll_source, "proc-poll");
        return 0;
}

/*
 * Losing the bus (dbus-daemon restarted or killed) leaves affinityd unreachable for queries
 * and reloads while it keeps placing. Say so and exit with a failure, so that the service
 * manager (Restart=on-failure) starts it again on the new bus, rather than running on
 * unseen.
 */
static int on_bus_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        log_error("Lost the connection to the bus, exiting so the service manager can restart affinityd");
        return sd_event_exit(m->event, -ENOTCONN);
}

static int manager_connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (m->bus_address) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to allocate a bus: %m");
                (void)sd_bus_set_description(bus, "affinityd-bus");
                r = sd_bus_set_address(bus, m->bus_address);
                if (r < 0)
                        return log_error_errno(r, "Invalid bus address \"%s\": %m", m->bus_address);
                r = sd_bus_set_bus_client(bus, true);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the bus connection: %m");
                r = sd_bus_start(bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the bus at %s: %m", m->bus_address);
        } else if (m->bus_kind == MANAGER_BUS_SESSION) {
                r = sd_bus_open_user_with_description(&bus, "affinityd-bus");
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the session bus: %m");
        } else {
                r = sd_bus_open_system_with_description(&bus, "affinityd-bus");
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the system bus: %m");
        }

        r = sd_bus_add_object_vtable(
                bus, &m->bus_slot, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to register %s: %m", AFFINITYD_BUS_PATH);
        r = policy_bus_register(bus, m);
        if (r < 0)
                return log_error_errno(r, "Failed to register %s: %m", AFFINITYD_POLICY_PATH_PREFIX);
        r = sd_bus_attach_event(bus, m->event, AFFINITYD_BUS_EVENT_PRIORITY);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

        /* sd-bus synthesizes this local signal when the connection drops. */
        r = sd_bus_match_signal(
                bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for the bus disconnecting: %m");

        m->bus = TAKE_PTR(bus);
        return 0;
}

static int manager_request_name(Manager *m) {
        int r;

        if (!m->bus)
                return 0;
        r = sd_bus_request_name(m->bus, AFFINITYD_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_error_errno(
                        r, "The bus name %s is already owned: is affinityd running already?",
                        AFFINITYD_BUS_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire the bus name %s: %m", AFFINITYD_BUS_NAME);
        return 0;
}

/* restore-on-exit: every tracked process gets its originals back, its state file removed. */
static void manager_restore_all(Manager *m) {
        _cleanup_free_ TrackedProcess **processes = NULL;
        size_t n = 0;
        int r;

        r = manager_list_processes(m, &processes, &n);
        if (r < 0) {
                log_error_errno(r, "Failed to restore the managed processes: %m");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                restore_process(m, processes[i], process_policy_label(m, processes[i]));
                manager_state_drop(m, processes[i]);
        }
        unit_placement_reset_all(m->units);
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_RESTORED, NULL, 0, NULL, NULL,
                "restore-on-exit: gave %zu processes their original placement back", n);
        (void)device_placement_restore_all(m->devices);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_STOPPED, NULL, 0, NULL, NULL, "Received %s, exiting",
                si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        manager_set_state(m, MANAGER_STOPPING);
        (void)sd_notify(false, "STOPPING=1\nSTATUS=Shutting down");
        if (m->config && m->config->restore_on_exit && !m->dry_run)
                manager_restore_all(m);
        return sd_event_exit(m->event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received SIGHUP");
        (void)manager_reload(m, NULL);
        return 0;
}

static int add_signal(
        Manager *m, sd_event_source **ret, int sig, sd_event_signal_handler_t handler,
        const char *description) {
        int r;

        r = sd_event_add_signal(m->event, ret, sig, handler, m);
        if (r < 0)
                return r;
        return sd_event_source_set_description(*ret, description);
}

/*
 * A share of the daemon's time for unprivileged users (lib/caller-budget.h): rate µs per second
 * per uid, twice that saved up, twice that per second for all of them (four times saved up), as
 * the bus's (manager-bus.h, BUS_BUDGET_*); $variable sets the per-uid rate in µs and the rest in
 * proportion (affinityd(8), ENVIRONMENT).
 */
static void share_budget_init(CallerBudget *b, const char *variable, uint64_t rate) {
        const char *e = getenv(variable);
        char *end;

        if (e) {
                unsigned long long v = strtoull(e, &end, 10);

                if (*e && !*end && v >= 1 && v <= 1000000)
                        rate = v;
                else
                        log_warning("Ignoring $%s=%s: not a number of µs from 1 to 1000000", variable, e);
        }
        caller_budget_init(
                b, rate, rate * BUS_BUDGET_BURST_USEC / BUS_BUDGET_RATE_USEC,
                rate * BUS_BUDGET_ALL_RATE_USEC / BUS_BUDGET_RATE_USEC,
                rate * BUS_BUDGET_ALL_BURST_USEC / BUS_BUDGET_RATE_USEC, now_monotonic_nsec() / 1000);
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        sigset_t mask;
        int r;

        /*
         * hwloc dlopen()s every plugin it finds when the first topology is created, before our
         * component blacklist (lib/topology.c) applies: the OpenCL, GL (X11, xcb) and PCI
         * (libpciaccess) ones, and the libxml2 XML reader (libxml2, ICU, libstdc++). The daemon
         * uses none of them — I/O devices come from the core Linux backend, XML topologies
         * are read by hwloc's built-in parser — and they cost 2.8 MiB of RSS for as long as
         * the topology lives (docs/performance.md). hwloc reads this once, at its first
         * topology; an administrator's own setting wins.
         */
        (void)setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml", 0);

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->self = getpid();
        pthread_rwlock_init(&m->plan_lock, NULL);
        share_budget_init(&m->bus_budget, "AFFINITYD_BUS_SHARE_USEC", BUS_BUDGET_RATE_USEC);
        share_budget_init(&m->match_budget, "AFFINITYD_MATCH_SHARE_USEC", MATCH_BUDGET_RATE_USEC);
        m->state = MANAGER_STARTING;
        m->dry_run = o->dry_run || o->topology_path;
        m->bus_kind = o->bus_kind;
        m->poll_interval_usec = o->poll_interval_usec ?: POLL_INTERVAL_DEFAULT_USEC;
        m->lost_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 3};
        m->failure_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 10};
        m->placed_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 100};
        m->event_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 5};
        m->monitor_ratelimit = (RateLimit){.interval_usec = 60 * USEC_PER_SEC, .burst = 1};
        m->uevent_ratelimit = (RateLimit){.interval_usec = 60 * USEC_PER_SEC, .burst = 3};
        latency_reset(&m->latency);
        if ((o->config_dir && !(m->config_dir = strdup(o->config_dir))) ||
            (o->topology_path && !(m->topology_path = strdup(o->topology_path))) ||
            (o->bus_address && !(m->bus_address = strdup(o->bus_address))) ||
            !(m->state_dir = strdup(o->state_dir ?: STATE_DIR_DEFAULT)))
                return -ENOMEM;

        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        /* WATCHDOG=1 from the loop when the service manager asks for it ($WATCHDOG_USEC). */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return r;
        r = worker_new(m->event, "affinityd-work", MANAGER_WORKER_JOBS, &m->worker);
        if (r < 0)
                return r;
        r = manager_drift_new(m, &m->drift);
        if (r < 0)
                return r;
        r = unit_placement_new(o->systemd_bus_address, m->dry_run, &m->units);
        if (r < 0)
                return r;
        r = unit_placement_set_state_dir(m->units, m->state_dir);
        if (r < 0)
                return r;
        r = manager_devices_new(m, &m->devices);
        if (r < 0)
                return r;
        if (!m->dry_run) {
                r = cpuset_watch_new(m->event, 0, on_cpuset_change, m, &m->cpuset_watch);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning_errno(
                                r,
                                "Failed to watch cgroups for cpuset changes (drift-interval: still "
                                "finds what they do): %m");
        }

        /* sd_event_add_signal() needs the signals blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;

        r = add_signal(m, &m->sigterm_source, SIGTERM, on_exit_signal, "signal-SIGTERM");
        if (r < 0)
                return r;
        r = add_signal(m, &m->sigint_source, SIGINT, on_exit_signal, "signal-SIGINT");
        if (r < 0)
                return r;
        r = add_signal(m, &m->sighup_source, SIGHUP, on_sighup, "signal-SIGHUP");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        m->sigterm_source = sd_event_source_disable_unref(m->sigterm_source);
        m->sigint_source = sd_event_source_disable_unref(m->sigint_source);
        m->sighup_source = sd_event_source_disable_unref(m->sighup_source);
        m->poll_source = sd_event_source_disable_unref(m->poll_source);
        m->summary_source = sd_event_source_disable_unref(m->summary_source);
        m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
        m->rescan_timer_source = sd_event_source_disable_unref(m->rescan_timer_source);
        m->monitor = proc_monitor_free(m->monitor);
        m->hotplug_source = sd_event_source_disable_unref(m->hotplug_source);
        m->baseline_source = sd_event_source_disable_unref(m->baseline_source);
        m->bus_guard_source = sd_event_source_disable_unref(m->bus_guard_source);
        m->match_share_source = sd_event_source_disable_unref(m->match_share_source);
        /* The worker first: it may be matching against the plan freed below. */
        m->worker = worker_free(m->worker);
        m->worker_scratch = regex_scratch_free(m->worker_scratch);
        m->baseline_queue = mfree(m->baseline_queue);
        m->drift = drift_free(m->drift);
        m->units = unit_placement_free(m->units);
        m->cpuset_watch = cpuset_watch_free(m->cpuset_watch);
        /* Before the uevent monitor: it holds subscriptions to it. */
        m->devices = device_placement_free(m->devices);
        m->cpu_subscription = uevent_subscription_free(m->cpu_subscription);
        m->uevent_monitor = uevent_monitor_free(m->uevent_monitor);
        manager_bus_jobs_free(m);
        m->bus_slot = sd_bus_slot_unref(m->bus_slot);
        m->bus = sd_bus_flush_close_unref(m->bus);

        tdestroy(m->processes, tracked_process_free_void);
        m->processes = NULL;
        for (size_t i = 0; i < m->n_recovered; i++)
                state_process_done(&m->recovered[i]);
        free(m->recovered);
        free(m->state_dir);

        plan_free(m->plan);
        config_free(m->config);
        topology_free(m->topology);
        free(m->narrowing_reported);
        free(m->last_reload_error);
        free(m->config_dir);
        free(m->topology_path);
        free(m->bus_address);
        sd_event_unref(m->event);
        pthread_rwlock_destroy(&m->plan_lock);
        return mfree(m);
}

int manager_startup(Manager *m) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *summary = NULL;
        uint64_t begin = now_monotonic_nsec();
        int r;

        r = config_load(m->config_dir, &config, &diag);
        log_diagnostics(&diag, LOG_ERR);
        if (r == -EINVAL)
                return log_error_errno(
                        r, "Configuration in %s is invalid (%u error%s), refusing to start",
                        m->config_dir ?: "the standard directories", diag.n_errors,
                        diag.n_errors == 1 ? "" : "s");
        if (r < 0)
                return log_error_errno(r, "Failed to load the configuration: %m");

        /* CPU changes from here on re-plan: none is missed between the topology load and the
         * subscription. */
        manager_start_uevents(m);
        /* Link and queue events too (the same uevent socket, and rtnetlink); the device originals
         * a previous instance recorded are read. */
        r = device_placement_start(m->devices);
        if (r < 0)
                return log_error_errno(r, "Failed to start device placement: %m");
        r = manager_load_topology(m, &m->topology);
        if (r < 0)
                return log_error_errno(
                        r, "Failed to load the topology%s%s: %m", m->topology_path ? " from " : "",
                        m->topology_path ?: "");
        if (topology_summary(m->topology, &summary) >= 0)
                log_info(
                        "Topology: %s%s%s", summary, m->topology_path ? " from " : "",
                        m->topology_path ?: "");

        r = plan_new(config, m->topology, &plan);
        if (r < 0)
                return log_error_errno(r, "Failed to plan the configuration: %m");
        r = manager_install(m, config, plan);
        if (r < 0)
                return log_error_errno(r, "Failed to start: %m");
        TAKE_PTR(config);
        TAKE_PTR(plan);
        log_info(
                "Loaded %s%s", config_counts(m->config, plan_n_pending(m->plan), (char[256]){}, 256),
                m->dry_run ? "; dry run, writing nothing" : "");
        log_plan(m, m->plan);

        /* The name early, so a second instance stops before touching anything; calls wait in
         * the queue until the loop runs, and State says "starting" meanwhile. */
        if (m->bus_kind != MANAGER_BUS_NONE || m->bus_address) {
                r = manager_connect_bus(m);
                if (r < 0)
                        return r;
                r = manager_request_name(m);
                if (r < 0)
                        return r;
        }

        /* Subscribe first, then scan: nothing exec'd in between is missed. The originals a
         * previous instance persisted are read before the scan, which takes them over. */
        r = manager_start_discovery(m);
        if (r < 0)
                return r;
        r = manager_state_recover(m);
        if (r < 0)
                return log_error_errno(r, "Failed to read the state directory: %m");
        r = manager_rescan(m);
        if (r < 0)
                return r;
        manager_state_finish_recovery(m);
        /* READY=1 means placed: not before the kernel's resets that unit placements caused are
         * repaired. */
        manager_settle_units(m);
        r = device_placement_apply(m->devices);
        if (r < 0)
                return r;

        manager_set_state(m, MANAGER_RUNNING);
        manager_notify(m, "READY=1");
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_STARTED, NULL, 0, NULL, NULL,
                "Ready: %s %" PRIu64 " processes (%" PRIu64 " threads) in %" PRIu64 " ms; managing %" PRIu32
                " processes with %zu policies",
                m->dry_run ? "would place" : "placed", m->summary_processes, m->summary_threads,
                (now_monotonic_nsec() - begin) / (NSEC_PER_USEC * 1000), m->n_processes,
                m->config->n_policies);
        m->summary_processes = m->summary_threads = 0;
        return 0;
}

int manager_run(Manager *m) {
        return sd_event_loop(m->event);
}
