/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proc connector's events (fork, exec, comm, uid, exit, lost): new and changed processes
 * matched (manager-match.c; on the worker thread for long command lines), placed, or forgotten;
 * a rescan after lost events. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "device-placement.h"
#include "drift.h"
#include "fair-queue.h"
#include "log.h"
#include "manager-originals.h"
#include "manager.h"
#include "match.h"
#include "plan.h"
#include "procfs.h"
#include "util.h"
#include "manager-internal.h"

/* ---- process events ---- */

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
        if (r >= 0 && st.starttime == p->starttime && !procfs_stat_is_dead(&st)) {
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

/* ---- matches deferred to the worker ---- */

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
        Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns, int k, char comm[16], const ProcfsStat *st);

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
                facts.kube = m->kube;
                ret->result = match_process(m->plan, &facts, job->pid == m->self);
                if (ret->result >= 0 && process_facts_load(&facts, FACT_COMM) >= 0 &&
                    (facts.loaded & FACT_COMM))
                        memcpy(ret->comm, facts.comm, sizeof(ret->comm));
                process_facts_done(&facts);
        }
        pthread_rwlock_unlock(&m->plan_lock);
}

static void on_match_decided(const WorkerJob *res);

/* The match queue's start callback (fair_start_t): the match goes to the worker. */
static int match_start(FairJob *job, void *userdata) {
        Manager *m = userdata;
        const DeferredMatch *d = fair_job_data(job);

        return worker_submit(
                m->worker,
                &(WorkerJob){
                        .run = decide_on_worker,
                        .done = on_match_decided,
                        .userdata = m,
                        .pid = d->pid,
                        .starttime = d->starttime});
}

int manager_match_queue_new(Manager *m) {
        return fair_queue_new(
                m->event, SD_EVENT_PRIORITY_NORMAL, "match-share", &m->match_budget,
                &(FairQueueLimits){
                        .max_jobs = MATCH_DEFERRED_MAX,
                        .max_per_uid = MATCH_DEFERRED_PER_UID,
                        .running_per_uid = 1},
                match_start, m, &m->match_queue);
}

void manager_match_queue_free(Manager *m) {
        for (FairJob *j; (j = fair_queue_find(m->match_queue, NULL, NULL));) {
                free(fair_job_data(j));
                fair_queue_remove(m->match_queue, j);
        }
        m->match_queue = fair_queue_free(m->match_queue);
}

static bool deferred_is(const void *data, const void *key) {
        const DeferredMatch *d = data, *k = key;

        return d->pid == k->pid && d->starttime == k->starttime;
}

static FairJob *deferred_find(Manager *m, pid_t pid, uint64_t starttime) {
        return fair_queue_find(
                m->match_queue, deferred_is, &(DeferredMatch){.pid = pid, .starttime = starttime});
}

/* On the loop: a decided match. Acted on if it is still that process and that configuration. */
static void on_match_decided(const WorkerJob *res) {
        Manager *m = res->userdata;
        FairJob *job = deferred_find(m, res->pid, res->starttime);
        _cleanup_free_ DeferredMatch *d = NULL;
        char comm[16];
        uint64_t starttime;

        if (!job)
                return;
        if (res->generation != m->plan_generation) {
                /* Matched against a configuration replaced since: its indexes mean nothing now. */
                fair_queue_ran(m->match_queue, job, res->cpu_usec, false);
                return;
        }
        d = fair_job_data(job);
        fair_queue_ran(m->match_queue, job, res->cpu_usec, true);
        if (procfs_read_starttime(NULL, d->pid, &starttime) < 0 || starttime != d->starttime)
                return; /* gone, or another process has the PID now */
        memcpy(comm, res->comm, sizeof(comm));
        (void)manager_rematch_decided(m, d->pid, d->exec, d->timestamp_ns, res->result, comm, NULL);
}

static int manager_defer_match(Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns) {
        _cleanup_free_ DeferredMatch *d = NULL;
        FairRefusal why = 0;
        FairJob *job;
        uint64_t starttime;
        uid_t uids[4];
        gid_t gids[4];
        unsigned suppressed = 0;
        int r;

        if (procfs_read_starttime(NULL, pid, &starttime) < 0)
                return 0; /* gone */
        job = deferred_find(m, pid, starttime);
        if (job) {
                DeferredMatch *old = fair_job_data(job);

                old->exec = old->exec || exec;
                return 0;
        }
        if (procfs_read_ids(NULL, pid, uids, gids) < 0)
                return 0; /* gone */
        d = calloc(1, sizeof(DeferredMatch));
        if (!d)
                return -ENOMEM;
        *d = (DeferredMatch){
                .pid = pid,
                .uid = uids[0], /* the real uid pays: a set-uid program runs for whoever started it */
                .starttime = starttime,
                .exec = exec,
                .timestamp_ns = timestamp_ns,
        };
        r = fair_queue_add(m->match_queue, d->uid, d, NULL, &why);
        if (r == -EBUSY) {
                char whose[48] = "";

                if (why == FAIR_REFUSED_UID)
                        snprintf(whose, sizeof(whose), " for its uid %u", (unsigned)d->uid);
                m->counters.matches_undecided++;
                if (ratelimit_below(&m->failure_ratelimit, &suppressed))
                        log_warning(
                                "Process %d is not decided: %u matches with command lines over %u KiB are "
                                "waiting already%s; it is matched at its next exec, comm or uid change or "
                                "rescan%s",
                                (int)pid,
                                why == FAIR_REFUSED_UID ? fair_queue_count_uid(m->match_queue, d->uid)
                                                        : (unsigned)fair_queue_size(m->match_queue),
                                (unsigned)(MATCH_CMDLINE_BUDGET / 1024), whose,
                                suppressed > 0 ? " (more were not logged)" : "");
                return 0;
        }
        if (r < 0)
                return r;
        d = NULL; /* the queue's now */
        log_debug(
                "Process %d (uid %u) has a command line over %u KiB: matched on the worker thread", (int)pid,
                (unsigned)uids[0], (unsigned)(MATCH_CMDLINE_BUDGET / 1024));
        return 0;
}

/* ---- fork, exec, comm, uid, exit ---- */

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
        if (!manager_process_plan(m, parent))
                return 0; /* its policy went away in a reload: the rescan decides for both */
        if (manager_process_plan(m, parent)->pending_reason)
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
        if (r >= 0 && st.ppid != parent->pid && !procfs_started_before(st.starttime, ev->timestamp_ns)) {
                /* Another process has the child's PID now: the child exited (its events are
                 * behind this one) and the PID was reused by a process started after the fork.
                 * (A child whose parent exited has another ppid too, but started before.) */
                log_debug(
                        "Fork of %s[%d]: PID %d is another process now (started after the fork), "
                        "not adopting it",
                        parent->comm, (int)parent->pid, (int)ev->pid);
                return 0;
        }
        if (r == -ESRCH || procfs_stat_is_dead(&st)) {
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
        forker = tracked_process_thread(parent, ev->parent_pid);
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
        manager_originals_save(m, p);
        r = process_spread_note_child(m, parent, p); /* a pre-fork master gives its slot up */
        if (r < 0)
                return r;
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
 * Re-matches a process already running (exec, comm or uid change): places it under the policy
 * it now matches, starts tracking it if it didn't match before, gives back its originals and
 * forgets it if it no longer matches. exec: the process replaced its image.
 *
 * One read of /proc/PID/stat per event gives what matching by comm needs and, for a match or a
 * tracked PID, identity (start time), the kernel-thread flag and the zombie state: an exec
 * storm of processes that match nothing costs that one read (and what other keys need), a
 * match no second one.
 */
static int manager_rematch(Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns) {
        char comm[16] = "";
        ProcfsStat st;
        int k, r;

        if (exec)
                drift_forget_released(m->drift, pid); /* a new image is managed again */
        /* On the event path a huge command line is not read and scanned now, before the events
         * of everyone else: the match is decided on the worker's thread. */
        r = procfs_read_stat(NULL, pid, 0, &st);
        if (r == -ESRCH)
                return 0; /* gone: its EXIT event will follow */
        m->cmdline_budget = MATCH_CMDLINE_BUDGET;
        k = manager_match_pid_stat(m, pid, pid == m->self, r >= 0 ? &st : NULL, comm);
        m->cmdline_budget = 0;
        if (k == -EAGAIN)
                return manager_defer_match(m, pid, exec, timestamp_ns);
        return manager_rematch_decided(m, pid, exec, timestamp_ns, k, comm, r >= 0 ? &st : NULL);
}

int manager_rematch_process(Manager *m, pid_t pid) {
        return manager_rematch(m, pid, false, 0);
}

/* manager_rematch() once the match is known: k (a policy index or -errno) and the comm read
 * with it; stat_read, if not NULL, the /proc/PID/stat read before the match (else it is read
 * now: a match decided on the worker's thread). */
static int manager_rematch_decided(
        Manager *m, pid_t pid, bool exec, uint64_t timestamp_ns, int k, char comm[16],
        const ProcfsStat *stat_read) {
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

        if (stat_read)
                st = *stat_read;
        else {
                r = procfs_read_stat(NULL, pid, 0, &st);
                if (r < 0) {
                        if (r != -ESRCH)
                                log_debug_errno(r, "Failed to read the stat of %d, skipping: %m", (int)pid);
                        return 0;
                }
        }
        if (p && p->starttime != st.starttime) {
                manager_forget_gone(m, p); /* a different process with a reused PID */
                p = NULL;
        }
        if (!exec && !p && k >= 0 && procfs_is_service_manager_child(NULL, pid, &st)) {
                log_debug(
                        "%s[%d] is systemd's child before its exec, placed when it execs", st.comm,
                        (int)pid);
                return 0;
        }
        if (procfs_stat_is_dead(&st)) {
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
                        m, pid, st.starttime, (size_t)k, comm, explicit_only, timestamp_ns, st.n_threads,
                        st.ppid);
                return r == -ENOMEM ? r : 0;
        }

        if (comm[0])
                memcpy(p->comm, comm, sizeof(p->comm));
        if (exec) {
                /* A new image: inherited tracking ends, and only the exec'ing thread is left. */
                p->forked = false;
                p->leader_exited = false;
                p->spread_master = false; /* a new image holds a slot until it forks workers */
                p->memory_generation = 0;
                r = tracked_process_remove_threads_if(m, p, thread_not_leader);
                if (r < 0)
                        return r;
        }
        if (p->policy != (size_t)k) {
                log_debug(
                        "%s[%d] moves from policy %s to %s", p->comm, (int)p->pid,
                        process_policy_label(m, p), m->plan->policies[k].policy->name);
                tracked_process_set_policy(m, p, (size_t)k);
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
        const PolicyPlan *pp = manager_process_plan(m, p);
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
 *    every thread created since was announced by a FORK event (subscribed to: see
 *    manager_proc_events()), which its creator sends before
 *    clone() returns and so before the leader's EXIT when the creator is the leader, or before
 *    the creator's own EXIT otherwise. Not while a rescan after lost events is pending (a FORK
 *    may be among them; the rescan lists every tracked process's threads again);
 *  - and it holds no thread but the leader: every other thread it had is gone.
 * Otherwise manager_check_process_gone() reads /proc.
 */
static bool process_exit_is_final(const Manager *m, TrackedProcess *p, uint64_t timestamp_ns) {
        if (!p->placed || m->rescan_source || timestamp_ns <= p->identity_ns)
                return false;
        if (!(proc_monitor_get_events(m->monitor) & PROC_MONITOR_EVENT(PROC_MONITOR_FORK)))
                return false; /* no FORK events: new threads are not announced */
        return p->n_threads == 0 || (p->n_threads == 1 && tracked_process_thread(p, p->pid));
}

static int on_exit_event(Manager *m, const ProcEvent *ev) {
        TrackedProcess *p = manager_find_process(m, ev->tgid);
        TrackedThread *t;
        int r;

        if (!p)
                return 0;
        if (ev->pid != ev->tgid) {
                t = tracked_process_thread(p, ev->pid);
                if (t)
                        tracked_process_remove_thread(m, p, t); /* frees its spread slot */
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

/* ---- lost events ---- */

/* Runs the rescan scheduled by on_lost(), from whichever of its two sources fires first. */
static void manager_run_scheduled_rescan(Manager *m) {
        m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
        m->rescan_timer_source = sd_event_source_disable_unref(m->rescan_timer_source);
        m->counters.rescans++;
        (void)manager_rescan(m);
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

/* ---- which events ---- */

static const char *proc_event_type_name(ProcEventType t) {
        static const char *const names[] = {
                [PROC_MONITOR_FORK] = "FORK",   [PROC_MONITOR_EXEC] = "EXEC", [PROC_MONITOR_UID] = "UID",
                [PROC_MONITOR_COMM] = "COMM",   [PROC_MONITOR_EXIT] = "EXIT", [PROC_MONITOR_LOST] = "LOST",
                [PROC_MONITOR_ERROR] = "ERROR",
        };
        return (size_t)t < ELEMENTSOF(names) && names[t] ? names[t] : "unknown";
}

/*
 * The proc connector's event types (PROC_MONITOR_EVENT() bits) the handlers above need under
 * configuration c (NULL: none loaded):
 *  - EXEC always: processes are matched and placed when they exec;
 *  - EXIT always: tracked processes and threads are forgotten, spread slots given back;
 *  - FORK with any policy: a tracked process's forked child is tracked under its policy
 *    (on_fork_process()), its new threads get their thread rule, spread slot or the policy's
 *    CPUs (on_fork_thread()), and process_exit_is_final() relies on every new thread of a
 *    tracked process being announced;
 *  - COMM with any policy: a thread's rename re-evaluates its thread rule, and a tracked
 *    process's rename updates its comm and re-matches it (it may match another policy now,
 *    by comm or by what else changed), besides a comm: key matching a process that renamed
 *    itself. The kernel can't send the renames of tracked processes only, so any policy
 *    needs them all;
 *  - UID only when a policy has a user: key (on_uid() ignores the others).
 * GID, SID, PTRACE and COREDUMP are never needed. Pure.
 */
unsigned manager_proc_events(const Config *c) {
        unsigned events = PROC_MONITOR_EVENT(PROC_MONITOR_EXEC) | PROC_MONITOR_EVENT(PROC_MONITOR_EXIT);

        if (!c)
                return events;
        if (c->n_policies > 0)
                events |= PROC_MONITOR_EVENT(PROC_MONITOR_FORK) | PROC_MONITOR_EVENT(PROC_MONITOR_COMM);
        if (c->facts & FACT_UID)
                events |= PROC_MONITOR_EVENT(PROC_MONITOR_UID);
        return events;
}

const char *proc_events_format(unsigned events, char *buf, size_t size) {
        size_t k = 0;

        if (size == 0)
                return buf;
        buf[0] = '\0';
        for (ProcEventType t = PROC_MONITOR_FORK; t <= PROC_MONITOR_EXIT; t++)
                if ((events & PROC_MONITOR_EVENT(t)) && k < size) {
                        int n = snprintf(
                                buf + k, size - k, "%s%s", k > 0 ? " " : "", proc_event_type_name(t));
                        if (n < 0)
                                break;
                        k += (size_t)n;
                }
        return buf;
}

/*
 * Points the proc connector at the event types the configuration in force needs, when they
 * changed (a reload). Called before the reload's rescan: a type added is delivered from then
 * on, and what happened before is what the rescan finds. A failure is logged, not returned.
 */
void manager_update_proc_events(Manager *m) {
        unsigned events;
        char names[64];
        int r;

        if (!m->monitor)
                return;
        events = manager_proc_events(m->config);
        if (events == proc_monitor_get_events(m->monitor))
                return;
        proc_events_format(events, names, sizeof(names));
        r = proc_monitor_set_events(m->monitor, events);
        if (r < 0)
                return (void)log_warning_errno(
                        r,
                        "Failed to subscribe the proc connector to %s: %m; events of the types added "
                        "are missed until the next reload",
                        names);
        log_debug(
                "Proc connector: subscribed to %s%s", names,
                proc_monitor_is_filtered(m->monitor) ? "" : " (the kernel sends every type)");
}

/* ---- dispatch, and the bus between events ---- */

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

/* The proc connector's handler (proc_monitor_handler_t, userdata the Manager): counts the event,
 * lets the bus in every BUS_GUARD_EVENTS events, and dispatches
 * it unless it is about the daemon itself. Returns 0; a failure is
 * logged, rate-limited, not returned (the monitor goes on). */
int on_proc_event(ProcMonitor *monitor, const ProcEvent *ev, void *userdata) {
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
