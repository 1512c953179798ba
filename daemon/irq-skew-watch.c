/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event-util.h"
#include "irq-skew-watch.h"
#include "log.h"

struct IrqSkewWatch {
        IrqSkewWatchContext ctx;
        char *interrupts_path, *softirqs_path;
        sd_event_source *timer;
        uint64_t interval_usec;
        InterruptTable *prev_irqs, *prev_softirqs; /* the previous reading; NULL: none */
        uint64_t prev_usec;                        /* when, CLOCK_MONOTONIC µs */
        IrqSkewWatchEntry *entries;
        size_t n_entries;
        bool full_logged; /* the entry table is full: said once */
};

int irq_skew_watch_new(const IrqSkewWatchContext *c, IrqSkewWatch **ret) {
        IrqSkewWatch *w = calloc(1, sizeof(IrqSkewWatch));
        const char *root = c->root ? c->root : "/";

        if (!w)
                return -ENOMEM;
        w->ctx = *c;
        if (asprintf(&w->interrupts_path, "%s/proc/interrupts", root) < 0 ||
            asprintf(&w->softirqs_path, "%s/proc/softirqs", root) < 0) {
                w->interrupts_path = NULL;
                w->softirqs_path = NULL;
                irq_skew_watch_free(w);
                return -ENOMEM;
        }
        w->ctx.root = root;
        *ret = w;
        return 0;
}

static void drop_readings(IrqSkewWatch *w) {
        w->prev_irqs = interrupt_table_free(w->prev_irqs);
        w->prev_softirqs = interrupt_table_free(w->prev_softirqs);
}

IrqSkewWatch *irq_skew_watch_free(IrqSkewWatch *w) {
        if (!w)
                return NULL;
        w->timer = sd_event_source_disable_unref(w->timer);
        drop_readings(w);
        for (size_t i = 0; i < w->n_entries; i++)
                free(w->entries[i].device);
        free(w->entries);
        free(w->interrupts_path);
        free(w->softirqs_path);
        return mfree(w);
}

const IrqSkewWatchEntry *irq_skew_watch_entries(const IrqSkewWatch *w, size_t *ret_n) {
        *ret_n = w ? w->n_entries : 0;
        return w ? w->entries : NULL;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static IrqSkewWatchEntry *entry_get(IrqSkewWatch *w, const char *device, IrqSkewKind kind) {
        IrqSkewWatchEntry *a;

        for (size_t i = 0; i < w->n_entries; i++)
                if (w->entries[i].kind == kind && streq(w->entries[i].device, device))
                        return &w->entries[i];
        if (w->n_entries >= IRQ_SKEW_WATCH_MAX_ENTRIES) {
                if (!w->full_logged)
                        log_warning(
                                "IRQ skew: %u devices tracked already, not tracking %s",
                                IRQ_SKEW_WATCH_MAX_ENTRIES, device);
                w->full_logged = true;
                return NULL;
        }
        a = reallocarray(w->entries, w->n_entries + 1, sizeof(IrqSkewWatchEntry));
        if (!a)
                return NULL;
        w->entries = a;
        a = &w->entries[w->n_entries];
        *a = (IrqSkewWatchEntry){.device = strdup(device), .kind = kind};
        if (!a->device)
                return NULL;
        w->n_entries++;
        return a;
}

/* Steps every entry of kind by this window: skewed when a finding names it. */
static int episodes_step(IrqSkewWatch *w, IrqSkewKind kind, const IrqSkewFinding *f, size_t n) {
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        bool *stepped = calloc(w->n_entries + n + 1, sizeof(bool));

        if (!stepped)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                IrqSkewWatchEntry *e = entry_get(w, f[k].device, kind);

                if (!e)
                        continue;
                stepped[e - w->entries] = true;
                if (irq_skew_episode_step(&e->episode, true, f[k].cpu, th.end_after) == IRQ_SKEW_BEGIN &&
                    w->ctx.skew_detected)
                        w->ctx.skew_detected(w->ctx.userdata, &f[k]);
        }
        for (size_t i = 0; i < w->n_entries; i++)
                if (w->entries[i].kind == kind && !stepped[i])
                        (void)irq_skew_episode_step(&w->entries[i].episode, false, 0, th.end_after);
        free(stepped);
        return 0;
}

/*
 * Steps the NET_RX entries by this window (f: the finding, NULL when not skewed). NET_RX is one
 * count for the machine: an episode on continues whatever the single-queue devices named now.
 */
static int episodes_step_net_rx(IrqSkewWatch *w, const IrqSkewFinding *f) {
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewWatchEntry *e = NULL;

        if (f)
                for (size_t i = 0; i < w->n_entries && !e; i++)
                        if (w->entries[i].kind == IRQ_SKEW_NET_RX && w->entries[i].episode.active)
                                e = &w->entries[i];
        if (f && !e)
                e = entry_get(w, f->device, IRQ_SKEW_NET_RX);
        for (size_t i = 0; i < w->n_entries; i++) {
                IrqSkewWatchEntry *x = &w->entries[i];

                if (x->kind != IRQ_SKEW_NET_RX)
                        continue;
                if (irq_skew_episode_step(&x->episode, x == e, f ? f->cpu : 0, th.end_after) ==
                            IRQ_SKEW_BEGIN &&
                    w->ctx.skew_detected)
                        w->ctx.skew_detected(w->ctx.userdata, f);
        }
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        IrqSkewWatch *w = userdata;
        int r;

        r = irq_skew_watch_check(w);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to check %s for IRQ skew, trying again next interval: %m",
                        w->interrupts_path);
        (void)irq_skew_watch_update(w); /* one-shot: armed again */
        return 0;
}

int irq_skew_watch_update(IrqSkewWatch *w) {
        const Config *c = *w->ctx.config;
        uint64_t interval = c ? config_effect_interval_usec(c) : 0;

        if (interval == 0)
                drop_readings(w);
        return event_periodic_timer_update(
                w->ctx.event, &w->timer, &w->interval_usec, interval, on_timer, w, "irq-skew-check",
                "IRQ skew timer");
}

int irq_skew_watch_check(IrqSkewWatch *w) {
        _cleanup_(interrupt_table_freep) InterruptTable *irqs = NULL, *softirqs = NULL;
        _cleanup_(irq_skew_devices_freep) IrqSkewDevices *devs = NULL;
        _cleanup_(irq_skew_findings_freep) IrqSkewFindings *found = NULL;
        _cleanup_strv_free_ char **single = NULL;
        _cleanup_free_ char *error = NULL;
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewFinding rx = {};
        uint64_t now, window;
        int r;

        r = interrupts_read_full(w->interrupts_path, INTERRUPTS_SKIP_BAD_LINES, &irqs, &error);
        if (r < 0) {
                drop_readings(w);
                return r;
        }
        error = mfree(error);
        r = interrupts_read_full(w->softirqs_path, INTERRUPTS_SKIP_BAD_LINES, &softirqs, &error);
        if (r < 0)
                softirqs = NULL; /* no NET_RX check this window */
        now = now_usec();
        window = now - w->prev_usec;

        if (w->prev_irqs && window > 0) {
                r = irq_skew_devices_load(w->ctx.root, irqs, &devs);
                if (r < 0)
                        log_debug_errno(r, "IRQ skew: failed to list network devices: %m");
                else {
                        r = irq_skew_detect_irqs(w->prev_irqs, irqs, window, devs, &th, &found);
                        if (r < 0)
                                return r;
                        r = episodes_step(w, IRQ_SKEW_IRQ, found->findings, found->n_findings);
                        if (r < 0)
                                return r;
                        r = irq_skew_devices_single_queue(devs, &single);
                        if (r < 0)
                                return r;
                }
        }
        if (w->prev_softirqs && softirqs && window > 0) {
                r = irq_skew_detect_net_rx(w->prev_softirqs, softirqs, window, single, &th, &rx);
                if (r < 0)
                        return r;
                r = episodes_step_net_rx(w, r > 0 ? &rx : NULL);
                irq_skew_finding_done(&rx);
                if (r < 0)
                        return r;
        }

        interrupt_table_free(w->prev_irqs);
        w->prev_irqs = TAKE_PTR(irqs);
        interrupt_table_free(w->prev_softirqs);
        w->prev_softirqs = TAKE_PTR(softirqs);
        w->prev_usec = now;
        return 0;
}
