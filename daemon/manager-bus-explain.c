/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.affinityd1.Manager.Explain: the reply built in steps, the threads read on the worker within
 * the caller's share of the loop (manager-explain.c has the data). See manager-bus-internal.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bus-caller.h"
#include "bus-util.h"
#include "fair-queue.h"
#include "procfs.h"
#include "manager-bus-internal.h"
#include "manager-explain.h"
#include "util.h"

/*
 * The reply to Explain(): (comm, policy, cpus, explanation, unmatched, threads), built as the
 * threads are explained: begin appends everything but the threads and opens their array;
 * explain_reply_threads() appends e->threads[from..]; explain_reply_send() closes and sends.
 */
static int explain_reply_begin(sd_bus_message *message, const ManagerExplanation *e, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *b1 = NULL, *b2 = NULL;
        const char *comm_s, *policy_s;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        comm_s = bus_string(e->comm, &b1);
        policy_s = bus_string(e->policy, &b2);
        if (!comm_s || !policy_s)
                return -ENOMEM;
        r = sd_bus_message_append(reply, "sss", comm_s, policy_s, strempty(e->cpus));
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        STRV_FOREACH (line, e->explanation) {
                r = bus_append_string(reply, *line);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        for (char **u = e->unmatched; u && u[0] && u[1]; u += 2) {
                _cleanup_free_ char *c1 = NULL, *c2 = NULL;
                const char *name = bus_string(u[0], &c1), *why = bus_string(u[1], &c2);

                if (!name || !why)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ss)", name, why);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "(ussssuttt)");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

static int explain_reply_threads(sd_bus_message *reply, const ManagerExplanation *e, size_t from) {
        int r;

        for (size_t i = from; i < e->n_threads; i++) {
                const ManagerExplainThread *t = &e->threads[i];
                _cleanup_free_ char *c1 = NULL, *c2 = NULL;
                const char *comm = bus_string(t->comm, &c1), *rule = bus_string(t->rule, &c2);

                if (!comm || !rule)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ussssuttt)", (uint32_t)t->tid, comm, rule, strempty(t->applied),
                        strempty(t->kernel), t->last_cpu, t->migrations, t->run_delay_ns, t->nonvoluntary);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int explain_reply_send(sd_bus_message *reply) {
        int r = sd_bus_message_close_container(reply);

        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Replaces the executable path in the "exe ..." explanation line: /proc/PID/exe needs ptrace
 * access, which the caller does not have. */
static int redact_exe(ManagerExplanation *e) {
        for (char **line = e->explanation; line && *line; line++) {
                char *q, *end, *n;

                if (!startswith(*line, "exe \"") || !(q = *line + strlen("exe ")) ||
                    !(end = strstr(q + 1, "\" ")))
                        continue;
                if (asprintf(
                            &n, "exe (not shown: reading /proc/%d/exe needs ptrace access)%s", (int)e->pid,
                            end + 1) < 0)
                        return -ENOMEM;
                free(*line);
                *line = n;
        }
        return 0;
}

/* ---- Explain(), answered in steps ---- */

/*
 * The threads are read on the worker's thread (worker.h), EXPLAIN_READ_THREADS at a time (~4 ms
 * of /proc reads, at nice 19); the loop only merges them with the tracked state and appends them
 * to the reply (a few µs each). When the worker has no room, a step reads EXPLAIN_STEP_THREADS on
 * the loop instead. Both kinds of time count against an unprivileged caller's share.
 */
#define EXPLAIN_READ_THREADS MANAGER_EXPLAIN_READ_MAX
#define EXPLAIN_STEP_THREADS 8  /* ~0.5 ms of /proc reads on the loop */
#define EXPLAIN_JOBS_PER_UID 2U /* being answered at once, of one unprivileged uid */

typedef struct ExplainJob {
        Manager *manager;
        sd_bus_message *message;
        sd_bus_message *reply; /* explain_reply_begin()'s, e->threads[..n_sent] appended */
        size_t n_sent;
        ManagerExplanation *e; /* the worker's while a step reads, until on_explain_read() */
        FairJob *job;          /* in m->explain_queue: a step at a time, within the caller's share */
} ExplainJob;

/* Frees j, and takes it out of the queue (unless already out: job NULL). */
static void explain_job_free(ExplainJob *j) {
        if (j->job)
                fair_queue_remove(j->manager->explain_queue, j->job);
        sd_bus_message_unref(j->reply);
        sd_bus_message_unref(j->message);
        manager_explanation_free(j->e);
        free(j);
}

/* The daemon frees the worker first (manager_free()): no job is then being read. */
void manager_bus_jobs_free(Manager *m) {
        for (FairJob *x; (x = fair_queue_find(m->explain_queue, NULL, NULL));)
                explain_job_free(fair_job_data(x));
        m->explain_queue = fair_queue_free(m->explain_queue);
        bus_callers_free(m);
}

/* On the loop, after a read (r: its result): merges, appends, and answers, or leaves the next
 * step to the queue (within the caller's share). cost_usec: the read's time, counted with the
 * merge's. */
static void explain_job_continue(ExplainJob *j, int r, uint64_t cost_usec) {
        Manager *m = j->manager;
        uint64_t t0 = now_monotonic_usec();
        FairJob *job = j->job;
        int k;

        k = manager_explain_merge(m, j->e);
        if (r >= 0)
                r = k;
        if (r >= 0) {
                k = explain_reply_threads(j->reply, j->e, j->n_sent);
                j->n_sent = j->e->n_threads;
                if (k < 0)
                        r = k;
        }
        cost_usec += now_monotonic_usec() - t0;
        if (r == 0) {
                /* More threads: after whatever else is pending, and within the caller's share. */
                fair_queue_ran(m->explain_queue, job, cost_usec, false);
                return;
        }
        if (r < 0)
                (void)sd_bus_reply_method_errnof(j->message, r, "Explain failed: %m");
        else
                (void)explain_reply_send(j->reply);
        j->job = NULL;
        fair_queue_ran(m->explain_queue, job, cost_usec, true);
        explain_job_free(j);
}

/* On the worker's thread. */
static void explain_read_on_worker(WorkerJob *job) {
        ExplainJob *j = job->userdata;

        job->result = manager_explain_read(j->e, EXPLAIN_READ_THREADS);
}

static void on_explain_read(const WorkerJob *job) {
        ExplainJob *j = job->userdata;

        explain_job_continue(j, job->result, job->cpu_usec);
}

/* The queue's start callback (fair_start_t): the next step goes to the worker, or, when it has
 * no room, a small step runs here. */
static int explain_start(FairJob *job, void *userdata) {
        ExplainJob *j = fair_job_data(job);
        uint64_t t0;
        int r;

        r = worker_submit(
                j->manager->worker,
                &(WorkerJob){
                        .run = explain_read_on_worker,
                        .done = on_explain_read,
                        .userdata = j,
                        .pid = j->e->pid});
        if (r >= 0)
                return 0;
        t0 = now_monotonic_usec();
        r = manager_explain_read(j->e, EXPLAIN_STEP_THREADS);
        explain_job_continue(j, r, now_monotonic_usec() - t0);
        return 0;
}

int method_explain(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(manager_explanation_freep) ManagerExplanation *e = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Caller c = {};
        Manager *m = userdata;
        ExplainJob *j;
        unsigned n_uid = 0;
        uint64_t t0, wait;
        uint32_t pid;
        gid_t gid = 0;
        bool has_gid = false;
        int hidepid, r;

        r = sd_bus_message_read(message, "u", &pid);
        if (r < 0)
                return r;
        r = bus_caller_get(m, message, &c);
        if (r < 0)
                return r;
        if (c.uid != 0) {
                wait = caller_budget_wait(&m->bus_budget, c.uid, now_monotonic_usec());
                if (wait > 0)
                        return bus_caller_reply_busy(error, c.uid, wait);
        }
        if (!m->explain_queue) {
                r = fair_queue_new(
                        sd_bus_get_event(sd_bus_message_get_bus(message)), AFFINITYD_BUS_EVENT_PRIORITY + 1,
                        "explain-step", &m->bus_budget,
                        &(FairQueueLimits){
                                .max_jobs = EXPLAIN_JOBS_MAX,
                                .max_per_uid = EXPLAIN_JOBS_PER_UID,
                                .running_per_uid = EXPLAIN_JOBS_PER_UID},
                        explain_start, m, &m->explain_queue);
                if (r < 0)
                        return r;
        }
        /* Refused before any work is done for it. */
        n_uid = c.uid != 0 ? fair_queue_count_uid(m->explain_queue, c.uid) : 0;
        if (fair_queue_size(m->explain_queue) >= EXPLAIN_JOBS_MAX || n_uid >= EXPLAIN_JOBS_PER_UID)
                return sd_bus_error_setf(
                        error, AFFINITYD_ERROR_BUSY, "%u Explain calls are being answered; try again later",
                        n_uid >= EXPLAIN_JOBS_PER_UID ? n_uid : (unsigned)fair_queue_size(m->explain_queue));

        hidepid = c.uid != 0 ? procfs_hidepid(NULL, &gid, &has_gid) : 0;
        r = pid > INT32_MAX ? -ESRCH : bus_caller_visibility(&c, (pid_t)pid, hidepid, gid, has_gid);
        if (r == -EACCES)
                return sd_bus_error_setf(
                        error, SD_BUS_ERROR_ACCESS_DENIED,
                        "/proc is mounted with hidepid=noaccess: process %" PRIu32 " is not yours", pid);
        t0 = now_monotonic_usec();
        if (r >= 0)
                r = manager_explain_begin(m, (pid_t)pid, &e);
        if (c.uid != 0)
                caller_budget_charge(&m->bus_budget, c.uid, now_monotonic_usec() - t0, now_monotonic_usec());
        if (r == -ESRCH)
                return sd_bus_error_setf(error, AFFINITYD_ERROR_NO_SUCH_PROCESS, "No process %" PRIu32, pid);
        if (r < 0)
                return r;
        /* Visible, but the executable is behind ptrace access (the PID may be a thread's). */
        if (c.uid != 0 && !bus_caller_may_ptrace(&c, e->pid)) {
                r = redact_exe(e);
                if (r < 0)
                        return r;
        }
        r = explain_reply_begin(message, e, &reply);
        if (r < 0)
                return r;
        if (manager_explain_done(e))
                return explain_reply_send(reply);

        j = calloc(1, sizeof(ExplainJob));
        if (!j)
                return -ENOMEM;
        *j = (ExplainJob){
                .manager = m,
                .message = sd_bus_message_ref(message),
                .reply = TAKE_PTR(reply),
                .e = TAKE_PTR(e)};
        r = fair_queue_add(m->explain_queue, c.uid, j, &j->job, NULL);
        if (r < 0) {
                explain_job_free(j);
                return r;
        }
        return 1; /* answered by explain_job_continue() */
}
