/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A thread of its own for the work the event loop must not do, because a local user decides how
 * long it takes:
 * - matches that need a command line longer than the loop's budget (manager-events.c,
 *   MATCH_CMDLINE_BUDGET): any user can exec a program with an argv of up to ARG_MAX, and reading
 *   it from /proc/PID/cmdline and scanning it with every cmdline: regex costs milliseconds per MiB;
 * - Explain's per-thread /proc reads (manager-bus-explain.c, manager_explain_read()): ~60 µs a thread,
 *   and any user can ask about a process of thousands.
 * On the loop that time would delay every other process's placement (docs/security.md,
 * docs/performance.md).
 *
 * The worker takes jobs in order, runs each job's run function on its thread (at nice 19, so the
 * loop's thread and every normal task come first), and hands each job back on the event loop
 * through an eventfd, to its done function, in the order run. It keeps at most max_jobs jobs,
 * queued or run and not yet handed back; the callers bound and deduplicate what they submit.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

typedef struct WorkerJob WorkerJob;

/* Runs on the worker's thread: does the job and fills in its result fields. Must touch only what
 * is safe to share with the loop's thread. */
typedef void (*worker_run_t)(WorkerJob *job);
/* Runs on the event loop: one job that was run. */
typedef void (*worker_done_t)(const WorkerJob *job);

/* A job, copied in and out by value. */
struct WorkerJob {
        worker_run_t run;
        worker_done_t done;
        void *userdata;     /* the caller's; must outlive the job (or the worker) */
        pid_t pid;          /* the task the job is about */
        uint64_t starttime; /* its /proc/PID/stat field 22 when submitted: its identity */
        /* filled in by run: */
        int result;          /* a value >= 0, or -errno */
        char comm[16];       /* a comm run read, or "" */
        uint64_t generation; /* run's own mark (the configuration it matched against, ...) */
        /* filled in by the worker: */
        uint64_t cpu_usec; /* CPU time the worker's thread spent in run (CLOCK_THREAD_CPUTIME_ID) */
};

typedef struct Worker Worker;

/*
 * Starts the worker thread, named name (at most 15 bytes; see pthread_setname_np(3)), and
 * attaches its eventfd to e (priority: SD_EVENT_PRIORITY_NORMAL). max_jobs >= 1. Returns 0 and
 * *ret, -EINVAL, -ENOMEM, or -errno from eventfd(2), pthread_create(3) or sd-event.
 */
int worker_new(sd_event *e, const char *name, size_t max_jobs, Worker **ret);

/* Queues a copy of job (job->run and job->done set). Returns 0, or -EBUSY when max_jobs are
 * queued or not yet handed back. */
int worker_submit(Worker *w, const WorkerJob *job);

/* Jobs queued or run and not yet handed back. */
size_t worker_pending(Worker *w);

/* Stops the thread (after the job it is running, if any), joins it, drops what is left without
 * calling done. NULL accepted; returns NULL. */
Worker *worker_free(Worker *w);
