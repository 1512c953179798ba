/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager: state, event loop, process lifecycle, reload. See manager.h. */

#include <errno.h>
#include <inttypes.h>
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

#include "apply-sched.h"
#include "log.h"
#include "manager-bus.h"
#include "manager.h"
#include "match.h"
#include "plan.h"
#include "policy-yaml.h"
#include "procfs.h"

#define USEC_PER_SEC                  UINT64_C(1000000)
#define NSEC_PER_USEC                 UINT64_C(1000)
#define PROC_MONITOR_ACK_TIMEOUT_USEC (1 * USEC_PER_SEC)
#define POLL_INTERVAL_DEFAULT_USEC    (1 * USEC_PER_SEC)
#define SUMMARY_INTERVAL_USEC         (10 * USEC_PER_SEC)

static const char *const state_table[_MANAGER_STATE_MAX] = {
        [MANAGER_STARTING] = "starting",
        [MANAGER_RUNNING] = "running",
        [MANAGER_RELOADING] = "reloading",
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

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC * NSEC_PER_USEC + (uint64_t)ts.tv_nsec;
}

/* ---- the tsearch(3) tables: TrackedProcess by pid, TrackedThread by tid ---- */

/* Both structs start with their pid_t key, so keys and stored elements compare alike. */
static int pid_compare(const void *a, const void *b) {
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
        return (x > y) - (x < y);
}

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

static TrackedThread *tracked_thread_free(TrackedThread *t) {
        if (!t)
                return NULL;
        cpuset_done(&t->original);
        cpuset_done(&t->applied);
        cpuset_done(&t->effective);
        return mfree(t);
}

static void tracked_thread_free_void(void *p) {
        tracked_thread_free(p);
}

static TrackedThread *tracked_process_find_thread(TrackedProcess *p, pid_t tid) {
        void **node = tfind(&tid, &p->threads, pid_compare);
        return node ? *node : NULL;
}

static int tracked_process_add_thread(TrackedProcess *p, pid_t tid, TrackedThread **ret) {
        TrackedThread *t;
        void **node;

        t = calloc(1, sizeof(TrackedThread));
        if (!t)
                return -ENOMEM;
        t->tid = tid;
        node = tsearch(t, &p->threads, pid_compare);
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

static void tracked_process_remove_thread(TrackedProcess *p, TrackedThread *t) {
        if (tdelete(t, &p->threads, pid_compare))
                p->n_threads--;
        tracked_thread_free(t);
}

static TrackedProcess *tracked_process_free(TrackedProcess *p) {
        if (!p)
                return NULL;
        tdestroy(p->threads, tracked_thread_free_void);
        cpuset_done(&p->original);
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
                        r = cpuset_or(&u, &t->effective);
                        if (r < 0)
                                return r;
                }
        }
        cpuset_done(ret);
        *ret = u;
        u = CPUSET_NULL;
        return 0;
}

static TrackedProcess *manager_find_process(Manager *m, pid_t pid) {
        void **node = tfind(&pid, &m->processes, pid_compare);
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
        p->policy = policy;
        node = tsearch(p, &m->processes, pid_compare);
        if (!node || *node != p) {
                free(p);
                return node ? -EEXIST : -ENOMEM;
        }
        m->n_processes++;
        *ret = p;
        return 0;
}

static void manager_remove_process(Manager *m, TrackedProcess *p) {
        if (tdelete(p, &m->processes, pid_compare))
                m->n_processes--;
        tracked_process_free(p);
}

const char *manager_process_policy_name(const Manager *m, const TrackedProcess *p) {
        if (!m->config || p->policy >= m->config->n_policies)
                return "";
        return m->config->policies[p->policy].name;
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

static void manager_set_state(Manager *m, ManagerState s) {
        if (m->state == s)
                return;
        log_debug("State %s → %s", manager_state_to_string(m->state), manager_state_to_string(s));
        m->state = s;
        (void)manager_bus_emit_changed(m, "State");
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
        bool force;            /* write even where the target is what was applied last */
        bool inherit_original; /* a thread first seen now inherited its mask from a placed one */
        unsigned n_threads;    /* threads seen */
        unsigned n_set;        /* threads whose affinity was written (or would be, dry run) */
        unsigned n_failed;     /* threads the kernel refused */
} PlaceContext;

/* The CPUs thread_comm should get under p's policy, or NULL when the policy sets none. */
static const CpuSet *thread_target(Manager *m, const TrackedProcess *p, const char *thread_comm) {
        const Policy *policy = &m->config->policies[p->policy];
        const PolicyPlan *pp = &m->plan->policies[p->policy];

        if (policy->n_threads > 0) {
                int k = match_thread(policy, thread_comm);
                if (k >= 0 && pp->threads[k].has_cpus)
                        return &pp->threads[k].cpus;
        }
        return pp->has_cpus ? &pp->cpus : NULL;
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
        log_struct(
                LOG_WARNING, error, policy_name, p->pid, p->comm, text,
                "Failed to set affinity of %s[%d] thread %d to %s (policy %s): %m, skipping", p->comm,
                (int)p->pid, (int)tid, strna(text), strna(policy_name));
}

static void report_narrowing(
        Manager *m, const TrackedProcess *p, pid_t tid, const CpuSet *requested, const CpuSet *effective) {
        _cleanup_free_ char *req = NULL, *eff = NULL;
        bool subset = cpuset_is_subset(effective, requested);

        if (subset && m->narrowing_reported[p->policy] && !log_level_enabled(LOG_DEBUG))
                return;
        if (!subset && !ratelimit_below(&m->failure_ratelimit, NULL))
                return;

        req = cpuset_to_string(requested);
        eff = cpuset_to_string(effective);
        if (!subset)
                log_struct(
                        LOG_WARNING, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel set %s[%d] thread %d to CPUs %s, outside the requested %s (policy %s)",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req),
                        manager_process_policy_name(m, p));
        else if (!m->narrowing_reported[p->policy]) {
                m->narrowing_reported[p->policy] = true;
                log_struct(
                        LOG_INFO, 0, manager_process_policy_name(m, p), p->pid, p->comm, eff,
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s (policy %s; a "
                        "cgroup "
                        "cpuset or offline CPUs?). Reported once per policy.",
                        p->comm, (int)p->pid, (int)tid, strna(eff), strna(req),
                        manager_process_policy_name(m, p));
        } else
                log_debug(
                        "Kernel narrowed %s[%d] thread %d to CPUs %s of the requested %s", p->comm,
                        (int)p->pid, (int)tid, strna(eff), strna(req));
}

/* Records the thread's original affinity the first time the daemon touches it. */
/* True if mask is one the policy of p hands out (its set or a thread rule's). */
static bool mask_is_ours(Manager *m, const TrackedProcess *p, const CpuSet *mask) {
        const PolicyPlan *pp = &m->plan->policies[p->policy];

        if (pp->has_cpus && cpuset_equal(mask, &pp->cpus))
                return true;
        for (size_t i = 0; i < pp->policy->n_threads; i++)
                if (pp->threads[i].has_cpus && cpuset_equal(mask, &pp->threads[i].cpus))
                        return true;
        return false;
}

static int thread_record_original(PlaceContext *ctx, TrackedThread *t) {
        TrackedProcess *p = ctx->process;
        int r;

        if (t->has_original)
                return 0;
        if (ctx->inherit_original && p->has_original)
                r = cpuset_copy(&t->original, &p->original);
        else {
                r = apply_get_thread_affinity(t->tid, &t->original);
                /* A thread created during this pass by one we already placed inherited our
                 * mask, not its original: it gets the process's original instead. */
                if (r >= 0 && ctx->n_set > 0 && p->has_original &&
                    mask_is_ours(ctx->manager, p, &t->original))
                        r = cpuset_copy(&t->original, &p->original);
        }
        if (r < 0)
                return r;
        t->has_original = true;
        if (!p->has_original) {
                r = cpuset_copy(&p->original, &t->original);
                if (r < 0)
                        return r;
                p->has_original = true;
        }
        return 0;
}

/* Places one thread. Returns 0 (placed, refused, or nothing to do), -ESRCH (gone), -ENOMEM. */
static int place_thread(PlaceContext *ctx, pid_t tid) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL;
        Manager *m = ctx->manager;
        TrackedProcess *p = ctx->process;
        const CpuSet *target;
        char comm[16] = "";
        TrackedThread *t;
        int r;

        if (m->config->policies[p->policy].n_threads > 0) {
                r = procfs_read_comm(NULL, p->pid, tid, comm);
                if (r == -ESRCH)
                        goto gone;
                if (r < 0)
                        log_debug_errno(
                                r, "Failed to read comm of %s[%d] thread %d, using the policy's set: %m",
                                p->comm, (int)p->pid, (int)tid);
        }
        target = thread_target(m, p, comm);

        t = tracked_process_find_thread(p, tid);
        if (!t) {
                r = tracked_process_add_thread(p, tid, &t);
                if (r < 0)
                        return r;
        }
        t->generation = p->generation;
        ctx->n_threads++;

        if (!target)
                return 0;
        if (!ctx->force && t->has_applied && cpuset_equal(&t->applied, target))
                return 0;

        r = thread_record_original(ctx, t);
        if (r == -ESRCH)
                goto gone;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Never change what could not be restored. */
                report_failure(m, p, manager_process_policy_name(m, p), tid, target, r);
                ctx->n_failed++;
                return 0;
        }

        if (m->dry_run) {
                r = cpuset_copy(&t->applied, target);
                if (r < 0)
                        return r;
                r = cpuset_copy(&t->effective, target);
                if (r < 0)
                        return r;
                t->has_applied = true;
                ctx->n_set++;
                return 0;
        }

        r = apply_set_thread_affinity(tid, target, &effective);
        if (r == -ESRCH)
                goto gone;
        if (r < 0) {
                report_failure(m, p, manager_process_policy_name(m, p), tid, target, r);
                ctx->n_failed++;
                return 0;
        }

        r = cpuset_copy(&t->applied, target);
        if (r < 0)
                return r;
        cpuset_done(&t->effective);
        t->effective = effective;
        effective = CPUSET_NULL;
        t->has_applied = true;
        ctx->n_set++;

        if (!cpuset_equal(&t->effective, target))
                report_narrowing(m, p, tid, target, &t->effective);
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

static void manager_record_latency(Manager *m, uint64_t timestamp_ns) {
        uint64_t now = now_nsec();

        if (timestamp_ns > 0 && now >= timestamp_ns)
                latency_record(&m->latency, now - timestamp_ns);
}

/* Drops the threads a full pass did not see: they exited without us hearing of it. */
static int tracked_process_prune_threads(TrackedProcess *p) {
        _cleanup_free_ void **threads = NULL;
        size_t n = 0;
        int r;

        r = tree_collect(p->threads, p->n_threads, &threads, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                TrackedThread *t = threads[i];
                if (t->generation != p->generation)
                        tracked_process_remove_thread(p, t);
        }
        return 0;
}

/* Leaves only the leader's thread entry (after exec, every other thread is gone). */
static int tracked_process_drop_other_threads(TrackedProcess *p) {
        _cleanup_free_ void **threads = NULL;
        size_t n = 0;
        int r;

        r = tree_collect(p->threads, p->n_threads, &threads, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                TrackedThread *t = threads[i];
                if (t->tid != p->pid)
                        tracked_process_remove_thread(p, t);
        }
        return 0;
}

/*
 * Places every thread of p under its policy (threads created meanwhile included). On
 * completion counts p as placed (once). If the process is gone: counts it as vanished if its
 * placement had never completed, removes it, and returns -ESRCH (p is freed). timestamp_ns is
 * the event's kernel timestamp for the latency histogram, 0 for scans.
 */
static int place_process(Manager *m, TrackedProcess *p, bool force, uint64_t timestamp_ns) {
        PlaceContext ctx = {
                .manager = m,
                .process = p,
                .force = force,
                .inherit_original = p->placed || p->forked,
        };
        int r;

        p->generation++;
        r = procfs_foreach_thread(NULL, p->pid, place_thread_visitor, &ctx);
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

        if (ctx.n_set > 0)
                manager_record_latency(m, timestamp_ns);
        (void)tracked_process_prune_threads(p);

        if (!p->placed) {
                p->placed = true;
                m->counters.processes_placed++;
        }

        if (ctx.n_set > 0) {
                m->summary_processes++;
                m->summary_threads += ctx.n_set;
                manager_schedule_summary(m);
        }

        if (ctx.n_set > 0 && (m->dry_run || log_level_enabled(LOG_DEBUG))) {
                _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
                _cleanup_free_ char *text = NULL;

                (void)tracked_process_cpus(p, &cpus);
                text = cpuset_to_string(&cpus);
                log_struct(
                        m->dry_run ? LOG_INFO : LOG_DEBUG, 0, manager_process_policy_name(m, p), p->pid,
                        p->comm, text, "%s %s[%d] (%u of %u threads) on CPUs %s (policy %s)",
                        m->dry_run ? "Would place" : "Placed", p->comm, (int)p->pid, ctx.n_set,
                        ctx.n_threads, strna(text), manager_process_policy_name(m, p));
        }
        return 0;
}

static int restore_thread_visitor(pid_t pid, pid_t tid, void *userdata) {
        PlaceContext *ctx = userdata;
        TrackedProcess *p = ctx->process;
        TrackedThread *t = tracked_process_find_thread(p, tid);
        const CpuSet *original;
        int r;

        if (t && t->has_applied && t->has_original)
                original = &t->original;
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

        if (!p->has_original)
                return;
        r = procfs_foreach_thread(NULL, p->pid, restore_thread_visitor, &ctx);
        if (r < 0 && r != -ESRCH)
                log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", p->comm, (int)p->pid);
        if (r < 0 || !log_level_enabled(LOG_DEBUG))
                return;
        text = cpuset_to_string(&p->original);
        log_struct(
                LOG_DEBUG, 0, policy_name, p->pid, p->comm, text,
                "%s %s[%d] no longer matches policy %s: restored %u threads (original CPUs %s)",
                m->dry_run ? "Would restore:" : "Restored:", p->comm, (int)p->pid, strna(policy_name),
                ctx.n_set, strna(text));
}

/* ---- process events ---- */

/* Starts tracking pid under policy and places it. Counts it as matched. */
static int manager_track_new(
        Manager *m, pid_t pid, uint64_t starttime, size_t policy, const char *comm, uint64_t timestamp_ns) {
        TrackedProcess *p;
        int r;

        r = manager_add_process(m, pid, starttime, policy, &p);
        if (r < 0)
                return log_debug_errno(r, "Failed to track process %d: %m", (int)pid);
        if (comm)
                strncpy(p->comm, comm, sizeof(p->comm) - 1);
        else
                (void)procfs_read_comm(NULL, pid, 0, p->comm);
        m->counters.processes_matched++;
        return place_process(m, p, true, timestamp_ns);
}

/*
 * Called on the EXIT of a leader, and on a thread's EXIT after its leader exited. The process
 * is gone when /proc/PID is gone or is another process, or when its leader is dead (a zombie)
 * and no other thread is left. A leader still alive means the EXIT was about an earlier
 * process with the same PID (events read late, PIDs wrapped): nothing is gone.
 */
static void manager_check_process_gone(Manager *m, TrackedProcess *p) {
        _cleanup_free_ pid_t *tids = NULL;
        ProcfsStat st;
        bool gone;
        size_t n = 0;
        int r;

        r = procfs_read_stat(NULL, p->pid, 0, &st);
        if (r == -ESRCH || (r >= 0 && st.starttime != p->starttime))
                gone = true;
        else if (r < 0)
                return (void)log_debug_errno(
                        r, "Failed to read the state of %s[%d]: %m", p->comm, (int)p->pid);
        else if (st.state != 'Z' && st.state != 'X' && st.state != 'x') {
                p->leader_exited = false;
                return;
        } else {
                r = procfs_list_tids(NULL, p->pid, &tids, &n);
                if (r < 0 && r != -ESRCH)
                        return (void)log_debug_errno(
                                r, "Failed to list the threads of %s[%d]: %m", p->comm, (int)p->pid);
                gone = true;
                for (size_t i = 0; r >= 0 && i < n; i++)
                        if (tids[i] != p->pid)
                                gone = false;
        }
        if (!gone)
                return;

        log_debug("%s[%d] exited", p->comm, (int)p->pid);
        if (!p->placed)
                m->counters.processes_vanished++;
        manager_remove_process(m, p);
}

static int on_fork_process(Manager *m, const ProcEvent *ev) {
        TrackedProcess *parent, *old, *p;
        const TrackedThread *forker;
        uint64_t starttime;
        int r;

        parent = manager_find_process(m, ev->parent_tgid);
        if (!parent)
                return 0;

        r = procfs_read_starttime(NULL, ev->pid, &starttime);
        old = manager_find_process(m, ev->pid);
        if (old) {
                if (r >= 0 && old->starttime == starttime)
                        return 0;               /* the startup scan or a rescan already found it */
                manager_remove_process(m, old); /* PID reused: its exit was missed */
        }
        if (r == -ESRCH) {
                m->counters.processes_matched++;
                m->counters.processes_vanished++;
                return 0;
        }
        if (r < 0)
                return log_debug_errno(r, "Failed to read the start time of %d: %m", (int)ev->pid);

        r = manager_add_process(m, ev->pid, starttime, parent->policy, &p);
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
                r = cpuset_copy(&p->original, &forker->original);
        else if (parent->has_original)
                r = cpuset_copy(&p->original, &parent->original);
        else
                r = -ENODATA;
        if (r == -ENOMEM)
                return r;
        p->has_original = r >= 0;

        log_debug(
                "%s[%d] forked %s[%d]: tracked under policy %s", parent->comm, (int)parent->pid, p->comm,
                (int)p->pid, manager_process_policy_name(m, p));
        return place_process(m, p, true, ev->timestamp_ns);
}

static int on_fork_thread(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p;
        PlaceContext ctx;
        int r;

        /* The event's parent fields name the parent process, not the creating thread: find the
         * process by the child's tgid. */
        p = manager_find_process(m, ev->tgid);
        if (!p)
                return 0;

        ctx = (PlaceContext){.manager = m, .process = p, .force = true, .inherit_original = true};
        r = place_thread(&ctx, ev->pid);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        if (ctx.n_set > 0)
                manager_record_latency(m, ev->timestamp_ns);
        log_debug(
                "New thread %d of %s[%d] placed (policy %s)", (int)ev->pid, p->comm, (int)p->pid,
                manager_process_policy_name(m, p));
        return 0;
}

/*
 * Re-matches a process already running (exec, comm or uid change): places it under the policy
 * it now matches, starts tracking it if it didn't match before, gives back its originals and
 * forgets it if it no longer matches. exec: the process replaced its image.
 */
static int manager_rematch(Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns) {
        ProcessFacts facts;
        TrackedProcess *p;
        ProcfsStat st;
        int r, k;

        p = manager_find_process(m, pid);

        process_facts_init(&facts, NULL, pid);
        k = match_process(m->plan, &facts);
        if (k == -ESRCH) {
                process_facts_done(&facts);
                return 0; /* gone: its EXIT event will follow */
        }
        if (k < 0) {
                process_facts_done(&facts);
                if (k != -ENOENT)
                        return log_debug_errno(k, "Failed to match process %d: %m", (int)pid);
                if (p) {
                        restore_process(m, p, manager_process_policy_name(m, p));
                        manager_remove_process(m, p);
                }
                return 0;
        }
        if (process_facts_load(&facts, FACT_COMM) >= 0 && (facts.loaded & FACT_COMM) && p)
                memcpy(p->comm, facts.comm, sizeof(p->comm));

        r = procfs_read_stat(NULL, pid, 0, &st);
        if (r < 0) {
                process_facts_done(&facts);
                return r == -ESRCH ? 0 : log_debug_errno(r, "Failed to read the stat of %d: %m", (int)pid);
        }
        if (p && p->starttime != st.starttime) {
                manager_remove_process(m, p); /* a different process with a reused PID */
                p = NULL;
        }

        if (!p) {
                if (st.flags & PROCFS_PF_KTHREAD) {
                        process_facts_done(&facts);
                        return 0;
                }
                r = manager_track_new(
                        m, pid, st.starttime, (size_t)k, (facts.loaded & FACT_COMM) ? facts.comm : NULL,
                        timestamp_ns);
                process_facts_done(&facts);
                return r == -ESRCH ? 0 : r;
        }
        process_facts_done(&facts);

        if (exec) {
                /* A new image: inherited tracking ends, and only the exec'ing thread is left. */
                p->forked = false;
                p->leader_exited = false;
                r = tracked_process_drop_other_threads(p);
                if (r < 0)
                        return r;
        }
        if (p->policy != (size_t)k) {
                log_debug(
                        "%s[%d] moves from policy %s to %s", p->comm, (int)p->pid,
                        manager_process_policy_name(m, p), m->config->policies[k].name);
                p->policy = (size_t)k;
                exec = true; /* a full placement */
        }
        r = place_process(m, p, exec, timestamp_ns);
        return r == -ESRCH ? 0 : r;
}

static int on_exec(Manager *m, const ProcEvent *ev) {
        return manager_rematch(m, ev->tgid, true, ev->timestamp_ns);
}

/* Re-evaluates one thread's rule (a thread renamed itself). */
static int manager_reevaluate_thread(Manager *m, TrackedProcess *p, pid_t tid, uint64_t timestamp_ns) {
        PlaceContext ctx = {.manager = m, .process = p, .inherit_original = true};
        int r;

        if (m->config->policies[p->policy].n_threads == 0)
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
        return 0;
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
        return manager_rematch(m, ev->pid, false, 0);
}

static int on_exit_event(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p = manager_find_process(m, ev->tgid);
        TrackedThread *t;

        if (!p)
                return 0;
        if (ev->pid != ev->tgid) {
                t = tracked_process_find_thread(p, ev->pid);
                if (t)
                        tracked_process_remove_thread(p, t);
                if (p->leader_exited)
                        manager_check_process_gone(m, p);
                return 0;
        }
        /* Also fires when the leader calls pthread_exit() and other threads live on. */
        p->leader_exited = true;
        manager_check_process_gone(m, p);
        return 0;
}

static int manager_rescan(Manager *m, bool force, const Config *old_config);

static int on_rescan(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
        m->counters.rescans++;
        (void)manager_rescan(m, true, NULL);
        return 0;
}

/*
 * Events were dropped. While the socket's queue stays full the kernel drops more without
 * telling again, so the rescan runs once the backlog is read: from a defer source at idle
 * priority, which sd-event dispatches only when no event is waiting.
 */
static int on_lost(Manager *m) {
        unsigned suppressed = 0;
        int r;

        m->counters.events_lost++;
        if (ratelimit_below(&m->lost_ratelimit, &suppressed))
                log_warning(
                        "The kernel dropped process events (receive buffer overrun%s), rescanning /proc",
                        suppressed > 0 ? ", again" : "");
        if (m->rescan_source)
                return 0;

        r = sd_event_add_defer(m->event, &m->rescan_source, on_rescan, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->rescan_source, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                log_warning_errno(r, "Failed to schedule the rescan, rescanning now: %m");
                m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
                m->counters.rescans++;
                return manager_rescan(m, true, NULL);
        }
        (void)sd_event_source_set_description(m->rescan_source, "rescan-after-lost-events");
        return 0;
}

static int on_proc_event(ProcMonitor *monitor, const ProcEvent *ev, void *userdata) {
        Manager *m = userdata;

        m->counters.events_received++;
        if (ev->type != PROC_MONITOR_LOST && ev->tgid == m->self)
                return 0;

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
        }
        return 0;
}

/* ---- scans ---- */

/* match_process() on a fresh set of facts: a policy index, -ENOENT, -ESRCH. */
static int match_pid(Manager *m, pid_t pid) {
        ProcessFacts facts;
        int k;

        process_facts_init(&facts, NULL, pid);
        k = match_process(m->plan, &facts);
        process_facts_done(&facts);
        return k;
}

/* The index in m->plan of the active policy named name, or -ENOENT. */
static int plan_find_active(const Plan *plan, const char *name) {
        for (size_t i = 0; i < plan->n_policies; i++)
                if (streq(plan->policies[i].policy->name, name))
                        return plan->policies[i].pending_reason ? -ENOENT : (int)i;
        return -ENOENT;
}

/*
 * Rescans /proc: tracked processes that are gone are forgotten; the others are re-matched
 * (children forked without exec follow their parent, or keep their policy when the parent is
 * gone) and placed again, or restored and forgotten when nothing matches any more; processes
 * not tracked that match are tracked and placed. force: write every thread (else only where
 * the target changed). old_config: the configuration p->policy indexes refer to (reload),
 * NULL for m->config.
 */
static int manager_rescan(Manager *m, bool force, const Config *old_config) {
        _cleanup_free_ TrackedProcess **list = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, n_pids = 0;
        bool progress;
        int r;

        if (!old_config)
                old_config = m->config;

        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to rescan: %m");

        /* Forget what is gone; re-match the processes that matched by themselves. */
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];
                uint64_t starttime;

                r = procfs_read_starttime(NULL, p->pid, &starttime);
                if (r == -ESRCH || (r >= 0 && starttime != p->starttime)) {
                        manager_remove_process(m, p);
                        list[i] = NULL;
                        continue;
                }
                p->rescan_policy = p->forked ? -EAGAIN /* decided below */ : match_pid(m, p->pid);
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
                        else {
                                p->rescan_policy =
                                        plan_find_active(m->plan, old_config->policies[p->policy].name);
                                if (p->rescan_policy < 0)
                                        p->rescan_policy = match_pid(m, p->pid);
                        }
                        progress = true;
                }
        } while (progress);

        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];

                if (!p)
                        continue;
                if (p->rescan_policy == -EAGAIN) { /* a cycle through reused PIDs: match by itself */
                        p->rescan_policy = match_pid(m, p->pid);
                        p->forked = false;
                }
                if (p->rescan_policy == -ESRCH) { /* exited meanwhile */
                        manager_remove_process(m, p);
                        continue;
                }
                if (p->rescan_policy < 0) {
                        const char *name = old_config->policies[p->policy].name;

                        restore_process(m, p, name);
                        log_struct(
                                LOG_DEBUG, 0, name, p->pid, p->comm, NULL,
                                "%s[%d] no longer matches policy %s, forgotten", p->comm, (int)p->pid, name);
                        manager_remove_process(m, p);
                        continue;
                }
                p->policy = (size_t)p->rescan_policy;
                (void)procfs_read_comm(NULL, p->pid, 0, p->comm); /* an exec may have been missed */
                (void)place_process(m, p, force, 0);
        }

        /* New processes. */
        r = procfs_list_pids(NULL, &pids, &n_pids);
        if (r < 0)
                return log_error_errno(r, "Failed to list /proc: %m");
        for (size_t i = 0; i < n_pids; i++) {
                pid_t pid = pids[i];
                ProcessFacts facts;
                ProcfsStat st;
                int k;

                if (pid == m->self || manager_find_process(m, pid))
                        continue;
                process_facts_init(&facts, NULL, pid);
                k = match_process(m->plan, &facts);
                if (k < 0 || procfs_read_stat(NULL, pid, 0, &st) < 0 || (st.flags & PROCFS_PF_KTHREAD)) {
                        process_facts_done(&facts);
                        continue;
                }
                if (!(facts.loaded & FACT_COMM))
                        (void)process_facts_load(&facts, FACT_COMM);
                r = manager_track_new(
                        m, pid, st.starttime, (size_t)k, (facts.loaded & FACT_COMM) ? facts.comm : NULL, 0);
                process_facts_done(&facts);
                if (r == -ENOMEM)
                        return log_error_errno(r, "Failed to rescan: %m");
        }
        return 0;
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

static void log_plan(Manager *m, const Plan *plan) {
        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                const char *name = pp->policy->name;

                if (pp->pending_reason)
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL, "%s:%u: policy %s is pending: %s",
                                strna(pp->policy->location.file), pp->policy->location.line, name,
                                pp->pending_reason);
                else if (log_level_enabled(LOG_INFO)) {
                        _cleanup_free_ char *cpus = pp->has_cpus ? cpuset_to_string(&pp->cpus) : NULL;
                        log_struct(
                                LOG_INFO, 0, name, 0, NULL, cpus, "Policy %s: CPUs %s", name,
                                pp->has_cpus ? strna(cpus) : "unchanged (no cpus:)");
                }
                STRV_FOREACH (w, pp->warnings)
                        log_struct(LOG_WARNING, 0, name, 0, NULL, NULL, "Policy %s: %s", name, *w);
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

/* Installs a new config + plan, and the per-policy report flags sized for it. */
static int manager_install(Manager *m, Config *config, Plan *plan) {
        bool *flags = calloc(MAX(config->n_policies, (size_t)1), sizeof(bool));
        if (!flags)
                return -ENOMEM;
        free(m->narrowing_reported);
        m->narrowing_reported = flags;
        m->config = config;
        m->plan = plan;
        return 0;
}

static char *strip_trailing_newlines(char *s) {
        size_t l = strlen(s);
        while (l > 0 && s[l - 1] == '\n')
                s[--l] = '\0';
        return s;
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
        manager_set_state(m, MANAGER_RELOADING);
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
                log_error("Reload failed, keeping the previous configuration:\n%s", strna(text));
                free(m->last_reload_error);
                m->last_reload_error = text ? strdup(text) : NULL;
                (void)manager_bus_emit_changed(m, "Reloads", "LastReloadError");
                manager_set_state(m, MANAGER_RUNNING);
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
                manager_set_state(m, MANAGER_RUNNING);
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

        (void)manager_rescan(m, true, old_config);
        plan_free(old_plan);
        config_free(old_config);

        m->last_reload_error = mfree(m->last_reload_error);
        (void)manager_bus_emit_changed(m, "Reloads", "LastReloadError", "PolicyFiles");
        manager_set_state(m, MANAGER_RUNNING);
        manager_notify(m, "READY=1");
        log_info(
                "Reloaded: %zu policies (%zu pending) from %zu files; managing %" PRIu32 " processes",
                m->config->n_policies, plan_n_pending(m->plan), strv_length(m->config->files),
                m->n_processes);
        return 0;
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

        (void)manager_rescan(m, false, NULL);
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
                m->discovery = MANAGER_DISCOVERY_NETLINK;
                log_debug("Subscribed to the proc connector");
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
        r = sd_event_add_time_relative(
                m->event, &m->poll_source, CLOCK_MONOTONIC, manager_poll_interval(m),
                manager_poll_interval(m) / 10, on_poll, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the /proc polling timer: %m");
        (void)sd_event_source_set_description(m->poll_source, "proc-poll");
        return 0;
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
        r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

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

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, exiting", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        manager_set_state(m, MANAGER_STOPPING);
        (void)sd_notify(false, "STOPPING=1\nSTATUS=Shutting down");
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

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        sigset_t mask;
        int r;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->self = getpid();
        m->state = MANAGER_STARTING;
        m->dry_run = o->dry_run || o->topology_path;
        m->bus_kind = o->bus_kind;
        m->poll_interval_usec = o->poll_interval_usec ?: POLL_INTERVAL_DEFAULT_USEC;
        m->lost_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 3};
        m->failure_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 10};
        latency_reset(&m->latency);
        if ((o->config_dir && !(m->config_dir = strdup(o->config_dir))) ||
            (o->topology_path && !(m->topology_path = strdup(o->topology_path))) ||
            (o->bus_address && !(m->bus_address = strdup(o->bus_address))))
                return -ENOMEM;

        r = sd_event_new(&m->event);
        if (r < 0)
                return r;

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
        m->monitor = proc_monitor_free(m->monitor);
        m->bus_slot = sd_bus_slot_unref(m->bus_slot);
        m->bus = sd_bus_flush_close_unref(m->bus);

        tdestroy(m->processes, tracked_process_free_void);
        m->processes = NULL;

        plan_free(m->plan);
        config_free(m->config);
        topology_free(m->topology);
        free(m->narrowing_reported);
        free(m->last_reload_error);
        free(m->config_dir);
        free(m->topology_path);
        free(m->bus_address);
        sd_event_unref(m->event);
        return mfree(m);
}

int manager_startup(Manager *m) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *summary = NULL;
        uint64_t begin = now_nsec();
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
                "Loaded %zu policies (%zu pending) from %zu files%s", m->config->n_policies,
                plan_n_pending(m->plan), strv_length(m->config->files),
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

        /* Subscribe first, then scan: nothing exec'd in between is missed. */
        r = manager_start_discovery(m);
        if (r < 0)
                return r;
        r = manager_rescan(m, true, NULL);
        if (r < 0)
                return r;

        manager_set_state(m, MANAGER_RUNNING);
        manager_notify(m, "READY=1");
        log_info(
                "Ready: %s %" PRIu64 " processes (%" PRIu64 " threads) in %" PRIu64 " ms; managing %" PRIu32
                " processes with %zu policies",
                m->dry_run ? "would place" : "placed", m->summary_processes, m->summary_threads,
                (now_nsec() - begin) / (NSEC_PER_USEC * 1000), m->n_processes, m->config->n_policies);
        m->summary_processes = m->summary_threads = 0;
        return 0;
}

int manager_run(Manager *m) {
        return sd_event_loop(m->event);
}
