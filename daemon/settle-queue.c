/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The settle queue: see settle-queue.h. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "settle-queue.h"

#define USEC_PER_MSEC UINT64_C(1000)

typedef struct SettleEntry {
        pid_t pid;
        uint32_t due_msec; /* CLOCK_MONOTONIC ms, modulo 2^32 */
} SettleEntry;

struct SettleQueue {
        sd_event *event;
        sd_event_source *source; /* idle-priority timer: the front entry's due time */
        SettleEntry *entries;    /* due times ascending (queued in order, all with one delay) */
        size_t n_entries;
        settle_fn_t settle;
        void *userdata;
};

/* Whether the entry is due at now_usec (CLOCK_MONOTONIC), wrap-around included. */
static bool settle_due(const SettleEntry *e, uint64_t now_usec) {
        return (int32_t)((uint32_t)(now_usec / USEC_PER_MSEC) - e->due_msec) >= 0;
}

/* The entry's due time, as a CLOCK_MONOTONIC µs near now_usec. */
static uint64_t settle_due_usec(const SettleEntry *e, uint64_t now_usec) {
        int32_t ahead = (int32_t)(e->due_msec - (uint32_t)(now_usec / USEC_PER_MSEC));

        return ahead <= 0 ? now_usec : now_usec + (uint64_t)ahead * USEC_PER_MSEC;
}

static int on_settle(sd_event_source *s, uint64_t usec, void *userdata) {
        SettleQueue *q = userdata;
        unsigned work = 0;
        size_t done = 0;

        while (done < q->n_entries && work < SETTLE_THREAD_BUDGET && settle_due(&q->entries[done], usec)) {
                int r = q->settle(q->entries[done++].pid, q->userdata);

                if (r > 0)
                        work += (unsigned)r;
        }
        q->n_entries -= done;
        if (q->n_entries == 0) {
                q->entries = mfree(q->entries); /* a burst's queue is given back */
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        }
        memmove(q->entries, q->entries + done, q->n_entries * sizeof(SettleEntry));
        /* Processes are queued one per exec: run again for a batch of them, not for the next
         * one (a timer due at every iteration would be set again at every iteration). Right
         * away only when the budget cut this run short. */
        (void)sd_event_source_set_time(
                s,
                work >= SETTLE_THREAD_BUDGET
                        ? usec
                        : MAX(settle_due_usec(&q->entries[0], usec), usec + SETTLE_BATCH_USEC));
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int settle_queue_new(sd_event *event, settle_fn_t settle, void *userdata, SettleQueue **ret) {
        SettleQueue *q = calloc(1, sizeof(SettleQueue));

        if (!q)
                return -ENOMEM;
        q->event = sd_event_ref(event);
        q->settle = settle;
        q->userdata = userdata;
        *ret = q;
        return 0;
}

SettleQueue *settle_queue_free(SettleQueue *q) {
        if (!q)
                return NULL;
        sd_event_source_disable_unref(q->source);
        sd_event_unref(q->event);
        free(q->entries);
        free(q);
        return NULL;
}

int settle_queue_add(SettleQueue *q, pid_t pid) {
        size_t n = q->n_entries;
        uint64_t now;
        int r;

        if (!q->event)
                return -ENXIO;
        r = sd_event_now(q->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) { /* capacity: 16, then powers of two */
                SettleEntry *e = reallocarray(q->entries, n == 0 ? 16 : 2 * n, sizeof(SettleEntry));

                if (!e)
                        return -ENOMEM;
                q->entries = e;
        }
        if (!q->source) {
                r = sd_event_add_time(
                        q->event, &q->source, CLOCK_MONOTONIC, now + SETTLE_DELAY_USEC,
                        SETTLE_DELAY_USEC / 4, on_settle, q);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_priority(q->source, SD_EVENT_PRIORITY_IDLE);
                (void)sd_event_source_set_description(q->source, "settle");
        } else if (n == 0) {
                r = sd_event_source_set_time(q->source, now + SETTLE_DELAY_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(q->source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return r;
        }
        q->entries[q->n_entries++] =
                (SettleEntry){.pid = pid, .due_msec = (uint32_t)((now + SETTLE_DELAY_USEC) / USEC_PER_MSEC)};
        return 0;
}

size_t settle_queue_size(const SettleQueue *q) {
        return q ? q->n_entries : 0;
}
