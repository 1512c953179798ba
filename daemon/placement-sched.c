/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The scheduler: part of a thread's placement: class, real-time priority, nice and I/O priority
 * (docs/policy-format.md, scheduler:), recorded on first touch and restored like the affinity. */

#include <errno.h>
#include <sched.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>

#include "apply-sched.h"
#include "log.h"
#include "manager-originals.h"
#include "manager.h"
#include "thread-placement.h"
#include "manager-internal.h"

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
void report_sched_failure(
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
        const StateProcess *rec = manager_originals_recovered(m, p);
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
int place_thread_sched(PlaceContext *ctx, TrackedThread *t, pid_t tid, const char *thread_comm) {
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

        manager_originals_save(m, p); /* the originals reach the state dir before the first write */
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
