/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The settle queue: processes placed in the last second or so, each due for its settle pass
 * (daemon/placement.c, manager_queue_settle()) SETTLE_DELAY_USEC after it was queued, run in
 * batches on an idle-priority timer of the event loop so that a process that lives for 50 ms
 * never costs one. An entry is 8 bytes (a PID and a due time); a PID reused meanwhile settles
 * the process that has it now a little early, which is harmless. The queue's memory is given
 * back when it empties (a startup scan's burst).
 */

#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#define SETTLE_DELAY_USEC    (UINT64_C(1000000))
#define SETTLE_THREAD_BUDGET 256U                     /* work (threads) per run of the timer */
#define SETTLE_BATCH_USEC    (SETTLE_DELAY_USEC / 4U) /* between two runs of the timer, at least */

/* Settles pid: returns the work done (threads looked at, counted against SETTLE_THREAD_BUDGET),
 * 0 when pid is not (or no longer) a tracked process, or a negative errno (the process went). */
typedef int (*settle_fn_t)(pid_t pid, void *userdata);

typedef struct SettleQueue SettleQueue;

/* A queue on event calling settle for each due entry. Returns 0 or -ENOMEM. */
int settle_queue_new(sd_event *event, settle_fn_t settle, void *userdata, SettleQueue **ret);
/* Frees q and its timer; NULL accepted; returns NULL. */
SettleQueue *settle_queue_free(SettleQueue *q);

/*
 * Queues pid, due SETTLE_DELAY_USEC from the loop's time (sd_event_now(3)). Returns 0, or a
 * negative errno (-ENOMEM, the timer's error) when it could not be queued: the caller settles
 * it now.
 */
int settle_queue_add(SettleQueue *q, pid_t pid);

/* The number of entries queued. */
size_t settle_queue_size(const SettleQueue *q);
