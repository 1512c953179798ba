/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A thread of its own for the matches the event loop must not do: those that need a command
 * line longer than the loop's budget (manager.c, MATCH_CMDLINE_BUDGET). Any user can exec a
 * program with an argv of up to ARG_MAX; reading it from /proc/PID/cmdline and scanning it with
 * every cmdline: regex costs milliseconds per MiB, and on the loop that time would delay every
 * other process's placement (docs/security.md, docs/performance.md).
 *
 * The worker takes jobs in order, runs the caller's decide function on its thread (at nice 19,
 * so the loop's thread and every normal task come first), and hands each result back on the
 * event loop through an eventfd, in the order decided. It keeps at most max_jobs jobs, queued
 * or decided and not yet handed back; the caller bounds and deduplicates what it submits.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

typedef struct MatchJob {
        pid_t pid;
        uint64_t starttime; /* /proc/PID/stat field 22 when submitted: the process's identity */
} MatchJob;

typedef struct MatchResult {
        MatchJob job;
        int k;               /* what decide returned: a policy index, or -errno */
        char comm[16];       /* the comm decide read, or "" */
        uint64_t generation; /* decide's own mark (the configuration it matched against) */
} MatchResult;

typedef struct MatchWorker MatchWorker;

/* Runs on the worker's thread: decides job into *ret (ret->job is set already). Must touch only
 * what is safe to share with the loop's thread. */
typedef void (*match_worker_decide_t)(void *userdata, const MatchJob *job, MatchResult *ret);
/* Runs on the event loop: one decided job. */
typedef void (*match_worker_done_t)(void *userdata, const MatchResult *result);

/*
 * Starts the worker thread and attaches its eventfd to e (priority: SD_EVENT_PRIORITY_NORMAL).
 * max_jobs >= 1. Returns 0 and *ret, -ENOMEM, or -errno from eventfd(2), pthread_create(3) or
 * sd-event.
 */
int match_worker_new(
        sd_event *e, size_t max_jobs, match_worker_decide_t decide, match_worker_done_t done, void *userdata,
        MatchWorker **ret);

/* Queues job. Returns 0, or -EBUSY when max_jobs are queued or not yet handed back. */
int match_worker_submit(MatchWorker *w, const MatchJob *job);

/* Jobs queued or decided and not yet handed back. */
size_t match_worker_pending(MatchWorker *w);

/* Stops the thread (after the job it is deciding, if any), joins it, drops what is left.
 * NULL accepted; returns NULL. */
MatchWorker *match_worker_free(MatchWorker *w);
