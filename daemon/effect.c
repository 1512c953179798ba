/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Effect sampling of managed threads on a timer, totals per policy (effect.h). */

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "effect.h"

#include "event-util.h"
#include "log.h"
#include "procfs.h"
#include "util.h"

/* The previous sample of a thread. */
typedef struct EffectThread {
        pid_t tid; /* first: the tsearch key */
        pid_t pid;
        EffectSample sample;
} EffectThread;

/* A policy's totals, by name. */
typedef struct EffectPolicy {
        char *name; /* first: the tsearch key */
        EffectTotals totals;
} EffectPolicy;

struct Effect {
        EffectContext ctx;
        sd_event_source *timer;
        uint64_t interval_usec; /* the timer's period while armed */
        void *threads;          /* tsearch tree of EffectThread, by tid */
        size_t n_threads;
        void *policies; /* tsearch tree of EffectPolicy, by name */
        size_t n_policies;
};

static int thread_compare(const void *a, const void *b) {
        pid_t x = ((const EffectThread *)a)->tid, y = ((const EffectThread *)b)->tid;
        return x < y ? -1 : x > y;
}

static int policy_compare(const void *a, const void *b) {
        return strcmp(((const EffectPolicy *)a)->name, ((const EffectPolicy *)b)->name);
}

static void policy_free(void *p) {
        EffectPolicy *ep = p;

        free(ep->name);
        free(ep);
}

int effect_new(const EffectContext *c, Effect **ret) {
        Effect *e = calloc(1, sizeof(Effect));

        if (!e)
                return -ENOMEM;
        e->ctx = *c;
        *ret = e;
        return 0;
}

Effect *effect_free(Effect *e) {
        if (!e)
                return NULL;
        e->timer = sd_event_source_disable_unref(e->timer);
        tdestroy(e->threads, free);
        tdestroy(e->policies, policy_free);
        free(e);
        return NULL;
}

static uint64_t effect_interval(const Effect *e) {
        return config_effect_interval_usec(*e->ctx.config);
}

static int on_effect_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Effect *e = userdata;
        int r;

        r = effect_sample(e);
        if (r < 0)
                log_warning_errno(r, "Failed to sample managed threads for effect metrics: %m");
        (void)effect_update(e);
        return 0;
}

int effect_update(Effect *e) {
        if (!e)
                return 0;
        return event_periodic_timer_update(
                e->ctx.event, &e->timer, &e->interval_usec,
                *e->ctx.n_processes == 0 || !*e->ctx.config ? 0 : effect_interval(e), on_effect_timer, e,
                "effect-sample", "effect timer");
}

/* The totals of policy name, made on first use. NULL: out of memory. */
static EffectTotals *policy_totals(Effect *e, const char *name) {
        EffectPolicy key = {.name = (char *)name}, *ep, **found;

        found = tfind(&key, &e->policies, policy_compare);
        if (found)
                return &(*found)->totals;
        ep = calloc(1, sizeof(EffectPolicy));
        if (!ep)
                return NULL;
        ep->name = strdup(name);
        if (!ep->name || !tsearch(ep, &e->policies, policy_compare)) {
                policy_free(ep);
                return NULL;
        }
        e->n_policies++;
        return &ep->totals;
}

/* Samples one thread: its previous sample moves from *old to *new (made when new). */
static int sample_thread(
        Effect *e, void **old, void **new, size_t *n_new, pid_t pid, const DriftThread *dt,
        const CpuSet *policy_cpus, EffectTotals *totals) {
        EffectThread key = {.tid = dt->tid}, *t = NULL, **found;
        EffectSample now;
        const EffectSample *prev = NULL;
        int r;

        found = tfind(&key, old, thread_compare);
        if (found) {
                t = *found;
                (void)tdelete(&key, old, thread_compare);
                if (t->pid == pid)
                        prev = &t->sample;
        }
        r = effect_sample_thread(e->ctx.root, pid, dt->tid, prev, &now);
        if (r < 0) {
                free(t);
                if (r == -ESRCH)
                        return 0; /* gone: forgotten */
                log_debug_errno(
                        r, "Failed to sample thread %d of process %d, skipping: %m", (int)dt->tid, (int)pid);
                return r == -ENOMEM ? r : 0;
        }
        effect_totals_add(totals, prev, &now, dt->has_applied && dt->expected ? dt->expected : policy_cpus);
        if (!t) {
                t = malloc(sizeof(EffectThread));
                if (!t)
                        return -ENOMEM;
        }
        *t = (EffectThread){.tid = dt->tid, .pid = pid, .sample = now};
        if (!tsearch(t, new, thread_compare)) {
                free(t);
                return -ENOMEM;
        }
        (*n_new)++;
        return 0;
}

int effect_sample(Effect *e) {
        DriftProcess *l = NULL;
        void *new = NULL;
        size_t n = 0, n_new = 0;
        int r;

        r = e->ctx.list_processes(e->ctx.userdata, &l, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                DriftProcess *p = l + i;
                EffectTotals *totals;
                uint64_t starttime;

                /* Identity as the placement path checks it: an entry may name a reused PID. */
                if (procfs_read_starttime(e->ctx.root, p->pid, &starttime) < 0 || starttime != p->starttime)
                        continue;
                totals = policy_totals(e, p->policy);
                if (!totals) {
                        r = -ENOMEM;
                        break;
                }
                for (size_t j = 0; j < p->n_threads && r >= 0; j++)
                        r = sample_thread(
                                e, &e->threads, &new, &n_new, p->pid, p->threads + j, p->cpus, totals);
        }
        drift_processes_free(l, n);
        /* What is left in the old tree was not seen: gone, or no longer tracked. */
        tdestroy(e->threads, free);
        e->threads = new;
        e->n_threads = n_new;
        return r < 0 ? r : 0;
}

size_t effect_n_threads(const Effect *e) {
        return e ? e->n_threads : 0;
}

typedef struct TotalsList {
        EffectPolicyTotals *l;
        size_t n, size;
} TotalsList;

static void collect_totals(const void *nodep, VISIT which, void *userdata) {
        const EffectPolicy *ep = *(EffectPolicy *const *)nodep;
        TotalsList *tl = userdata;

        if ((which != postorder && which != leaf) || tl->n >= tl->size)
                return;
        tl->l[tl->n++] = (EffectPolicyTotals){.policy = ep->name, .totals = ep->totals};
}

int effect_list_totals(const Effect *e, EffectPolicyTotals **ret, size_t *ret_n) {
        TotalsList tl = {.size = e ? e->n_policies : 0};

        tl.l = calloc(MAX(tl.size, (size_t)1), sizeof(EffectPolicyTotals));
        if (!tl.l)
                return -ENOMEM;
        if (e)
                twalk_r(e->policies, collect_totals, &tl);
        *ret = tl.l;
        *ret_n = tl.n;
        return 0;
}
