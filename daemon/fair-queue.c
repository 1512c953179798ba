/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fair-share queue: see fair-queue.h. */

#include <errno.h>
#include <stdlib.h>

#include "fair-queue.h"
#include "macro.h"
#include "util.h"

struct FairJob {
        FairJob *next;
        uid_t uid;
        bool running;
        void *data;
};

struct FairQueue {
        FairJob *head, *tail; /* in the order they came */
        size_t n_jobs;
        FairQueueLimits limits;
        CallerBudget *budget;
        fair_start_t start;
        void *userdata;
        sd_event_source *timer; /* at once after a kick, or when a waiting uid has time again */
        bool kicked;            /* a kick since the timer last ran */
};

static unsigned count_uid(const FairQueue *q, uid_t uid, bool running_only) {
        unsigned n = 0;

        for (const FairJob *j = q->head; j; j = j->next)
                n += j->uid == uid && (!running_only || j->running);
        return n;
}

static void arm(FairQueue *q, uint64_t usec) {
        if (sd_event_source_set_time(q->timer, usec) >= 0)
                (void)sd_event_source_set_enabled(q->timer, SD_EVENT_ONESHOT);
}

/* Starts the waiting jobs that may start, in order; the timer goes again at the first time a
 * waiting uid has time, unless a kick came meanwhile (then at once). */
static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        FairQueue *q = userdata;
        uint64_t now = now_monotonic_usec(), next = UINT64_MAX;
        FairJob *j, *following;

        q->kicked = false;
        for (j = q->head; j; j = following) {
                following = j->next; /* start() may finish j at once */
                if (j->running)
                        continue;
                if (j->uid != 0) {
                        uint64_t wait;

                        if (count_uid(q, j->uid, true) >= q->limits.running_per_uid)
                                continue; /* kicked again when one of them ran */
                        wait = caller_budget_wait(q->budget, j->uid, now);
                        if (wait > 0) {
                                next = MIN(next, now + wait);
                                continue;
                        }
                }
                j->running = true;
                if (q->start(j, q->userdata) < 0) {
                        j->running = false;
                        break; /* no room: kicked again as the running ones come back */
                }
        }
        if (q->kicked)
                arm(q, 0);
        else if (next != UINT64_MAX)
                arm(q, next);
        return 0;
}

int fair_queue_new(
        sd_event *e, int64_t priority, const char *description, CallerBudget *budget,
        const FairQueueLimits *limits, fair_start_t start, void *userdata, FairQueue **ret) {
        FairQueue *q;
        int r;

        if (!e || !budget || !limits || !start || limits->max_jobs == 0 || limits->max_per_uid == 0 ||
            limits->running_per_uid == 0)
                return -EINVAL;
        q = calloc(1, sizeof(FairQueue));
        if (!q)
                return -ENOMEM;
        *q = (FairQueue){.limits = *limits, .budget = budget, .start = start, .userdata = userdata};
        r = sd_event_add_time(e, &q->timer, CLOCK_MONOTONIC, 0, 1000, on_timer, q);
        if (r < 0) {
                free(q);
                return r;
        }
        (void)sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
        (void)sd_event_source_set_priority(q->timer, priority);
        (void)sd_event_source_set_description(q->timer, description);
        *ret = q;
        return 0;
}

FairQueue *fair_queue_free(FairQueue *q) {
        if (!q)
                return NULL;
        while (q->head)
                fair_queue_remove(q, q->head);
        sd_event_source_disable_unref(q->timer);
        free(q);
        return NULL;
}

void fair_queue_kick(FairQueue *q) {
        q->kicked = true;
        arm(q, 0);
}

int fair_queue_add(FairQueue *q, uid_t uid, void *data, FairJob **ret, FairRefusal *ret_refusal) {
        FairJob *j;

        if (q->n_jobs >= q->limits.max_jobs ||
            (uid != 0 && count_uid(q, uid, false) >= q->limits.max_per_uid)) {
                if (ret_refusal)
                        *ret_refusal =
                                q->n_jobs >= q->limits.max_jobs ? FAIR_REFUSED_FULL : FAIR_REFUSED_UID;
                return -EBUSY;
        }
        j = calloc(1, sizeof(FairJob));
        if (!j)
                return -ENOMEM;
        *j = (FairJob){.uid = uid, .data = data};
        if (q->tail)
                q->tail->next = j;
        else
                q->head = j;
        q->tail = j;
        q->n_jobs++;
        fair_queue_kick(q);
        if (ret)
                *ret = j;
        return 0;
}

void fair_queue_remove(FairQueue *q, FairJob *job) {
        FairJob *prev = NULL;

        for (FairJob *j = q->head; j; prev = j, j = j->next) {
                if (j != job)
                        continue;
                if (prev)
                        prev->next = j->next;
                else
                        q->head = j->next;
                if (q->tail == j)
                        q->tail = prev;
                q->n_jobs--;
                free(j);
                return;
        }
}

void fair_queue_ran(FairQueue *q, FairJob *job, uint64_t cost_usec, bool done) {
        if (job->uid != 0)
                caller_budget_charge(q->budget, job->uid, cost_usec, now_monotonic_usec());
        if (done)
                fair_queue_remove(q, job);
        else
                job->running = false;
        fair_queue_kick(q);
}

FairJob *fair_queue_find(FairQueue *q, bool (*match)(const void *data, const void *key), const void *key) {
        for (FairJob *j = q ? q->head : NULL; j; j = j->next)
                if (!match || match(j->data, key))
                        return j;
        return NULL;
}

size_t fair_queue_size(const FairQueue *q) {
        return q ? q->n_jobs : 0;
}

unsigned fair_queue_count_uid(const FairQueue *q, uid_t uid) {
        return q ? count_uid(q, uid, false) : 0;
}

void *fair_job_data(const FairJob *job) {
        return job->data;
}

uid_t fair_job_uid(const FairJob *job) {
        return job->uid;
}

bool fair_job_running(const FairJob *job) {
        return job->running;
}
