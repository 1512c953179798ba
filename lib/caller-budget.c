/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Token buckets of daemon time for unprivileged D-Bus callers (caller-budget.h). */

#include <stdbool.h>
#include <stddef.h>

#include "caller-budget.h"

static void refill(CallerBucket *k, uint64_t rate, uint64_t burst, uint64_t now) {
        if (now > k->last_usec) {
                /* rate µs per second of elapsed time; computed in two steps so it can't overflow */
                uint64_t dt = now - k->last_usec,
                         add = (dt / 1000000) * rate + (dt % 1000000) * rate / 1000000;
                int64_t t = k->tokens_usec +
                        (int64_t)(add > (uint64_t)INT64_MAX / 2 ? (uint64_t)INT64_MAX / 2 : add);

                k->tokens_usec = t > (int64_t)burst ? (int64_t)burst : t;
                k->last_usec = now;
        }
}

void caller_budget_init(
        CallerBudget *b, uint64_t rate_usec, uint64_t burst_usec, uint64_t all_rate_usec,
        uint64_t all_burst_usec, uint64_t now_usec) {
        *b = (CallerBudget){
                .rate_usec = rate_usec,
                .burst_usec = burst_usec,
                .all_rate_usec = all_rate_usec,
                .all_burst_usec = all_burst_usec,
                .all = {.tokens_usec = (int64_t)all_burst_usec, .last_usec = now_usec},
        };
}

/* uid's bucket, refilled; a new one (full) if it has none. */
static CallerBucket *bucket(CallerBudget *b, uid_t uid, uint64_t now, bool create) {
        CallerBucket *lru = NULL;

        for (unsigned i = 0; i < b->n_slots; i++) {
                CallerBucket *k = &b->slots[i];

                if (k->uid == uid) {
                        refill(k, b->rate_usec, b->burst_usec, now);
                        return k;
                }
                if (!lru || k->last_usec < lru->last_usec)
                        lru = k;
        }
        if (!create)
                return NULL;
        if (b->n_slots < CALLER_BUDGET_SLOTS)
                lru = &b->slots[b->n_slots++];
        *lru = (CallerBucket){.uid = uid, .tokens_usec = (int64_t)b->burst_usec, .last_usec = now};
        return lru;
}

/* µs until bucket k holds time again at rate. */
static uint64_t wait_for(const CallerBucket *k, uint64_t rate) {
        if (k->tokens_usec > 0)
                return 0;
        if (rate == 0)
                return UINT64_MAX;
        return ((uint64_t)(-k->tokens_usec) * 1000000 + rate - 1) / rate + 1;
}

uint64_t caller_budget_wait(CallerBudget *b, uid_t uid, uint64_t now_usec) {
        CallerBucket *k = bucket(b, uid, now_usec, false);
        uint64_t w = 0, a;

        refill(&b->all, b->all_rate_usec, b->all_burst_usec, now_usec);
        if (k)
                w = wait_for(k, b->rate_usec);
        a = wait_for(&b->all, b->all_rate_usec);
        return a > w ? a : w;
}

void caller_budget_charge(CallerBudget *b, uid_t uid, uint64_t cost_usec, uint64_t now_usec) {
        CallerBucket *k = bucket(b, uid, now_usec, true);
        int64_t c = cost_usec > (uint64_t)INT32_MAX ? INT32_MAX : (int64_t)cost_usec;

        refill(&b->all, b->all_rate_usec, b->all_burst_usec, now_usec);
        k->tokens_usec -= c;
        b->all.tokens_usec -= c;
}
