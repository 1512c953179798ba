/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A share of the daemon's time for unprivileged D-Bus callers: a token bucket of microseconds
 * per uid, and one for all of them together. A call runs while its uid's bucket and the common
 * one hold time; what it took (measured by the caller, CLOCK_MONOTONIC µs) is taken from both.
 * Buckets refill at their rate up to their burst. A bounded table: when every slot is taken, the
 * least recently charged uid's slot is reused, full (so a caller can gain nothing by cycling
 * through more uids than there are slots: the common bucket still holds them all).
 */

#include <stdint.h>
#include <sys/types.h>

#define CALLER_BUDGET_SLOTS 64

typedef struct CallerBucket {
        uid_t uid;
        int64_t tokens_usec; /* may go negative: a call's cost is known only afterwards */
        uint64_t last_usec;  /* when last refilled */
} CallerBucket;

typedef struct CallerBudget {
        uint64_t rate_usec;                     /* per uid: µs of daemon time granted per second */
        uint64_t burst_usec;                    /* per uid: at most this much saved up */
        uint64_t all_rate_usec, all_burst_usec; /* every unprivileged uid together */
        CallerBucket all;
        CallerBucket slots[CALLER_BUDGET_SLOTS];
        unsigned n_slots;
} CallerBudget;

/* An empty table (every uid full) with these rates and bursts (µs per second, µs). */
void caller_budget_init(
        CallerBudget *b, uint64_t rate_usec, uint64_t burst_usec, uint64_t all_rate_usec,
        uint64_t all_burst_usec, uint64_t now_usec);

/* How long (µs) uid must wait before a call may run: 0 when its bucket and the common one hold
 * time now. */
uint64_t caller_budget_wait(CallerBudget *b, uid_t uid, uint64_t now_usec);

/* Takes cost_usec from uid's bucket and the common one. */
void caller_budget_charge(CallerBudget *b, uid_t uid, uint64_t cost_usec, uint64_t now_usec);
