/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The fair-share queue of the work a local user can make long: matches that need a long command
 * line (manager-events.c) and Explain's per-thread reads (manager-bus-explain.c). Jobs wait in
 * the order they came; each belongs to a uid (a process's real uid, a caller's). An unprivileged
 * uid has at most max_per_uid jobs in the queue and running_per_uid of them running at once, and
 * a job of its starts only while its share of time (a CallerBudget, lib/caller-budget.h) holds
 * some: what a job ran for is charged to its uid. Root (uid 0) is neither capped nor charged. So
 * one user's hostile work takes at most their share and delays only their own.
 *
 * The queue decides when a job starts; its start callback does the work's hand-off (to the
 * worker thread, worker.h, or a small step on the loop) and the owner reports back with
 * fair_queue_ran(), a step at a time: the results go to the owner's own callbacks, never
 * through the queue, so no call circle appears. Starting is done from a timer of the event loop
 * (at once, or when the first waiting uid has time again), never from within the owner's calls.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "caller-budget.h"

typedef struct FairQueue FairQueue;
typedef struct FairJob FairJob;

typedef struct FairQueueLimits {
        size_t max_jobs;          /* jobs in the queue at once, waiting or running, >= 1 */
        unsigned max_per_uid;     /* of one unprivileged uid at once, >= 1 */
        unsigned running_per_uid; /* of one unprivileged uid running at once, >= 1 */
} FairQueueLimits;

/*
 * Starts job (on the loop): hands its next step off and returns 0 — the job then runs until the
 * owner calls fair_queue_ran() — or -EBUSY when there is no room for it now (the worker is full):
 * the job stays waiting and the queue stops starting others until the next fair_queue_kick().
 * The callback may call fair_queue_ran() for job itself (a step done at once).
 */
typedef int (*fair_start_t)(FairJob *job, void *userdata);

/*
 * A queue on e with these limits, charging budget (borrowed: it must outlive the queue), whose
 * jobs start through start(job, userdata). The timer is named description and runs at priority.
 * Returns 0, -EINVAL (limits of 0), -ENOMEM, or sd-event's error.
 */
int fair_queue_new(
        sd_event *e, int64_t priority, const char *description, CallerBudget *budget,
        const FairQueueLimits *limits, fair_start_t start, void *userdata, FairQueue **ret);
/* Frees q and every job in it (their data is the owner's: free it first, fair_queue_first()).
 * NULL accepted; returns NULL. */
FairQueue *fair_queue_free(FairQueue *q);

/* Why fair_queue_add() refused a job. */
typedef enum FairRefusal {
        FAIR_REFUSED_FULL = 1, /* max_jobs in the queue */
        FAIR_REFUSED_UID,      /* max_per_uid of the uid in the queue */
} FairRefusal;

/*
 * Queues a job of uid carrying data (the owner's), waiting, and kicks the queue. Returns 0 and
 * *ret (may be NULL), -EBUSY with *ret_refusal set (NULL accepted) when a limit refuses it, or
 * -ENOMEM.
 */
int fair_queue_add(FairQueue *q, uid_t uid, void *data, FairJob **ret, FairRefusal *ret_refusal);

/*
 * The running job's step took cost_usec (CLOCK_MONOTONIC or thread CPU µs, the owner's measure),
 * charged to its uid. With done the job leaves the queue (freed); otherwise it waits for its
 * next step (or its step again, when the result was void), behind the others of its uid's
 * share. Kicks the queue.
 */
void fair_queue_ran(FairQueue *q, FairJob *job, uint64_t cost_usec, bool done);

/* Removes job, waiting or running (freed; a running step's result is the owner's to ignore). */
void fair_queue_remove(FairQueue *q, FairJob *job);

/* Asks for the waiting jobs that may start to be started, from the timer, at once. */
void fair_queue_kick(FairQueue *q);

/* The first job (in the order they came) for which match(data, key) is true, or NULL (also for
 * q NULL); match NULL: the first job. */
FairJob *fair_queue_find(FairQueue *q, bool (*match)(const void *data, const void *key), const void *key);

/* Jobs in the queue; of uid (waiting or running). 0 for q NULL. */
size_t fair_queue_size(const FairQueue *q);
unsigned fair_queue_count_uid(const FairQueue *q, uid_t uid);

void *fair_job_data(const FairJob *job);
uid_t fair_job_uid(const FairJob *job);
bool fair_job_running(const FairJob *job);
