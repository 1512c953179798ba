/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"

#include "apply-sched.h"
#include "cgroup.h"
#include "cpuset.h"
#include "event-util.h"
#include "log.h"
#include "procfs.h"
#include "util.h"

/* A thread whose drift was reported: the value found, so the same one is not reported again. */
typedef struct DriftSeen {
        pid_t tid; /* first: the tsearch key */
        pid_t pid;
        unsigned pass; /* the check pass that last found it drifted (others are pruned) */
        CpuSet mask;
        bool has_sched;
        ThreadSched sched;
} DriftSeen;

typedef struct DriftReleased {
        pid_t pid;
        uint64_t starttime;
} DriftReleased;

struct Drift {
        DriftContext ctx;
        sd_event_source *timer;
        uint64_t interval_usec; /* the timer's period while armed */
        unsigned pass;
        void *seen; /* tsearch(3) root of DriftSeen */
        DriftReleased *released;
        size_t n_released;
};

static void drift_seen_free(void *p) {
        DriftSeen *s = p;
        if (!s)
                return;
        cpuset_done(&s->mask);
        free(s);
}

void drift_processes_free(DriftProcess *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                free(l[i].threads);
        free(l);
}

int drift_new(const DriftContext *c, Drift **ret) {
        Drift *d = calloc(1, sizeof(Drift));
        if (!d)
                return -ENOMEM;
        d->ctx = *c;
        *ret = d;
        return 0;
}

Drift *drift_free(Drift *d) {
        if (!d)
                return NULL;
        d->timer = sd_event_source_disable_unref(d->timer);
        tdestroy(d->seen, drift_seen_free);
        free(d->released);
        return mfree(d);
}

static uint64_t drift_interval(const Drift *d) {
        const Config *c = *d->ctx.config;
        if (!c || d->ctx.dry_run)
                return 0;
        return c->drift_interval_usec;
}

static int on_drift_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Drift *d = userdata;
        int r;

        r = drift_check(d);
        if (r < 0)
                log_warning_errno(r, "Failed to check managed threads for drift: %m");
        /* The source is one-shot: arm it again if there is still something to check. */
        (void)drift_update(d);
        return 0;
}

int drift_update(Drift *d) {
        uint64_t interval = drift_interval(d);

        return event_periodic_timer_update(
                d->ctx.event, &d->timer, &d->interval_usec, *d->ctx.n_processes == 0 ? 0 : interval,
                on_drift_timer, d, "drift-check", "drift timer");
}

bool drift_is_released(const Drift *d, pid_t pid, uint64_t starttime) {
        for (size_t i = 0; d && i < d->n_released; i++)
                if (d->released[i].pid == pid && d->released[i].starttime == starttime)
                        return true;
        return false;
}

void drift_forget_released(Drift *d, pid_t pid) {
        for (size_t i = 0; d && i < d->n_released;)
                if (d->released[i].pid == pid)
                        d->released[i] = d->released[--d->n_released];
                else
                        i++;
}

static int drift_add_released(Drift *d, pid_t pid, uint64_t starttime) {
        DriftReleased *a = reallocarray(d->released, d->n_released + 1, sizeof(DriftReleased));
        if (!a)
                return -ENOMEM;
        d->released = a;
        d->released[d->n_released++] = (DriftReleased){.pid = pid, .starttime = starttime};
        return 0;
}

/* Drops released entries whose process exited (or whose PID is another process now). */
static void drift_prune_released(Drift *d) {
        for (size_t i = 0; i < d->n_released;) {
                uint64_t starttime;

                if (procfs_read_starttime(NULL, d->released[i].pid, &starttime) == -ESRCH ||
                    starttime != d->released[i].starttime)
                        d->released[i] = d->released[--d->n_released];
                else
                        i++;
        }
}

static const char *drift_mode_to_string(DriftMode mode) {
        static const char *const names[] = {
                [DRIFT_REPORT] = "report",
                [DRIFT_ENFORCE] = "enforce",
                [DRIFT_RESPECT] = "respect",
        };
        return mode < _DRIFT_MODE_MAX ? names[mode] : "report";
}

static void drift_forget_seen(Drift *d, pid_t tid) {
        void **node = tfind(&tid, &d->seen, compare_pid);
        DriftSeen *s;

        if (!node)
                return;
        s = *node;
        tdelete(s, &d->seen, compare_pid);
        drift_seen_free(s);
}

/* Records what was found drifted for tid. Returns 1 if that is new (to be reported), 0 if it
 * was reported already, -ENOMEM. */
static int drift_note_seen(Drift *d, pid_t pid, pid_t tid, const CpuSet *mask, const ThreadSched *sched) {
        void **node = tfind(&tid, &d->seen, compare_pid);
        DriftSeen *s;
        int r;

        if (node) {
                s = *node;
                s->pass = d->pass;
                if (s->pid == pid && cpuset_equal(&s->mask, mask) && s->has_sched == !!sched &&
                    (!sched || apply_sched_equal(&s->sched, sched)))
                        return 0;
        } else {
                s = calloc(1, sizeof(DriftSeen));
                if (!s)
                        return -ENOMEM;
                s->tid = tid;
                node = tsearch(s, &d->seen, compare_pid);
                if (!node) {
                        free(s);
                        return -ENOMEM;
                }
        }
        s->pid = pid;
        s->pass = d->pass;
        r = cpuset_copy(&s->mask, mask);
        if (r < 0)
                return r;
        s->has_sched = !!sched;
        if (sched)
                s->sched = *sched;
        return 1;
}

/*
 * True if tid is a thread of p still: p's PID has p's start time (/proc/PID/stat) and tid is
 * listed under it with a start time not before it (/proc/PID/task/TID/stat). Read right before
 * a write, so that a reused PID or TID is never written.
 */
static bool thread_is_of(const DriftProcess *p, pid_t tid) {
        ProcfsStat st;

        if (procfs_read_stat(NULL, p->pid, 0, &st) < 0 || st.starttime != p->starttime)
                return false;
        if (tid == p->pid)
                return true;
        return procfs_read_stat(NULL, p->pid, tid, &st) >= 0 && st.starttime >= p->starttime;
}

/* Checks the threads of p. Returns 1 if p is to be released (on-drift: respect), 0, -ENOMEM. */
static int drift_check_process(Drift *d, const DriftProcess *p) {
        DriftMode mode = p->on_drift;
        bool release = false;
        int r = 0;

        for (size_t i = 0; i < p->n_threads && !release; i++) {
                const DriftThread *t = &p->threads[i];
                const CpuSet *expected = t->expected;
                _cleanup_(cpuset_done) CpuSet cur = {};
                _cleanup_free_ char *cur_text = NULL, *expected_text = NULL;
                ThreadSched cur_sched = {};
                bool mask_drift = false, sched_drift = false;
                int k;

                if (t->has_applied) {
                        k = apply_get_thread_affinity(t->tid, &cur);
                        if (k == APPLY_GONE)
                                continue;
                        if (k < 0) {
                                log_debug_errno(
                                        k, "Failed to read the affinity of thread %d: %m", (int)t->tid);
                                continue;
                        }
                        mask_drift = !cpuset_equal(&cur, expected);
                }
                if (t->sched) {
                        k = apply_get_thread_sched(t->tid, &cur_sched);
                        if (k == APPLY_GONE)
                                continue;
                        if (k < 0)
                                log_debug_errno(
                                        k, "Failed to read the scheduling state of thread %d: %m",
                                        (int)t->tid);
                        else
                                sched_drift = !apply_sched_equal(&cur_sched, t->sched);
                }
                if (!mask_drift && !sched_drift) {
                        drift_forget_seen(d, t->tid);
                        continue;
                }

                k = drift_note_seen(d, p->pid, t->tid, &cur, sched_drift ? &cur_sched : NULL);
                if (k < 0) {
                        r = k;
                        break;
                }
                if (k == 0)
                        continue; /* this very value was reported already */

                (*d->ctx.n_detected)++;
                cur_text = cpuset_to_string(&cur);
                expected_text = cpuset_to_string(expected);
                {
                        char target[64];

                        snprintf(target, sizeof(target), "%d/%d", (int)p->pid, (int)t->tid);
                        if (d->ctx.drift_detected)
                                d->ctx.drift_detected(
                                        d->ctx.userdata, "thread", target, p->policy,
                                        mask_drift ? strempty(cur_text) : "another scheduling state",
                                        drift_mode_to_string(mode));
                }
                log_struct_id(
                        LOG_WARNING, 0, AFFINITYD_MESSAGE_DRIFT, p->policy, p->pid, p->comm, cur_text ?: "",
                        "Drift: thread %d of %s[%d] has %s%s%s%s where policy %s applied CPUs %s "
                        "(on-drift: %s)",
                        (int)t->tid, p->comm, (int)p->pid, mask_drift ? "CPUs " : "",
                        mask_drift ? strempty(cur_text) : "", mask_drift && sched_drift ? " and " : "",
                        sched_drift ? "another scheduling state" : "", p->policy, strempty(expected_text),
                        drift_mode_to_string(mode));

                if (mode == DRIFT_RESPECT) {
                        release = true;
                        break;
                }
                if (mode != DRIFT_ENFORCE)
                        continue;

                /* Still the thread that drifted? Its EXIT may have been lost and its TID reused
                 * since the read above. */
                if (!thread_is_of(p, t->tid))
                        continue;
                k = 0;
                if (mask_drift)
                        k = apply_set_thread_affinity(t->tid, t->applied, NULL);
                if (k >= 0 && sched_drift)
                        k = apply_set_thread_sched(NULL, t->tid, t->sched, NULL);
                if (k == APPLY_GONE)
                        continue;
                if (k < 0) {
                        _cleanup_(cpuset_done) CpuSet allowed = {};
                        _cleanup_free_ char *why = NULL;

                        /* EINVAL: the kernel refuses a mask that the cpuset leaves nothing of. */
                        if (k == -EINVAL && cgroup_read_cpuset(NULL, p->pid, t->tid, &allowed, NULL) >= 0 &&
                            !cpuset_intersects(&allowed, t->applied))
                                (void)cgroup_format_cpuset_conflict(
                                        p->policy, t->applied, p->pid, &allowed, &why);
                        if (why)
                                log_struct(
                                        LOG_WARNING, k, p->policy, p->pid, p->comm, strempty(expected_text),
                                        "Cannot put back the placement of thread %d of %s[%d]: %s (its "
                                        "cpuset changed), leaving it",
                                        (int)t->tid, p->comm, (int)p->pid, why);
                        else
                                log_struct(
                                        LOG_WARNING, k, p->policy, p->pid, p->comm, strempty(expected_text),
                                        "Failed to put back the placement of thread %d of %s[%d]: %m, "
                                        "leaving it",
                                        (int)t->tid, p->comm, (int)p->pid);
                        continue;
                }
                (*d->ctx.n_corrected)++;
                drift_forget_seen(d, t->tid); /* a new drift to the same value is reported again */
                log_struct(
                        LOG_INFO, 0, p->policy, p->pid, p->comm, strempty(expected_text),
                        "Drift: thread %d of %s[%d] put back on CPUs %s", (int)t->tid, p->comm, (int)p->pid,
                        strempty(expected_text));
        }
        if (r < 0)
                return r;
        return release;
}

typedef struct StaleSearch {
        unsigned pass;
        pid_t *tids;
        size_t n, size;
        bool oom;
} StaleSearch;

static void stale_seen_action(const void *nodep, VISIT which, void *userdata) {
        const DriftSeen *s = *(DriftSeen *const *)nodep;
        StaleSearch *st = userdata;

        if ((which != postorder && which != leaf) || s->pass == st->pass)
                return;
        if (st->n == st->size) {
                size_t size = MAX(st->size * 2, (size_t)16);
                pid_t *a = reallocarray(st->tids, size, sizeof(pid_t));
                if (!a) {
                        st->oom = true;
                        return;
                }
                st->tids = a;
                st->size = size;
        }
        st->tids[st->n++] = s->tid;
}

int drift_check(Drift *d) {
        DriftProcess *processes = NULL;
        StaleSearch stale = {};
        size_t n = 0;
        int r;

        /* A CPU change is being handled: the kernel moved threads itself, the re-plan will
         * write them again. Not drift. Or events were lost: tracked entries may name tasks that
         * exited (and PIDs reused since) until the rescan that is due has confirmed them. */
        if (d->ctx.paused && d->ctx.paused(d->ctx.userdata))
                return 0;

        d->pass++;
        r = d->ctx.list_processes(d->ctx.userdata, &processes, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const DriftProcess *p = &processes[i];

                r = drift_check_process(d, p);
                if (r == 0)
                        continue;
                if (r > 0)
                        r = drift_add_released(d, p->pid, p->starttime);
                if (r < 0) {
                        drift_processes_free(processes, n);
                        return r;
                }
                log_struct(
                        LOG_NOTICE, 0, p->policy, p->pid, p->comm, NULL,
                        "%s[%d] changed its placement itself: no longer managed (policy %s, on-drift: "
                        "respect) until it execs",
                        p->comm, (int)p->pid, p->policy);
                d->ctx.release_process(d->ctx.userdata, p->pid);
        }
        drift_processes_free(processes, n);

        /* Forget reports about threads that are no longer drifted or gone (not seen this pass). */
        stale.pass = d->pass;
        twalk_r(d->seen, stale_seen_action, &stale);
        for (size_t i = 0; i < stale.n; i++)
                drift_forget_seen(d, stale.tids[i]);
        free(stale.tids);
        drift_prune_released(d);
        return stale.oom ? -ENOMEM : 0;
}
