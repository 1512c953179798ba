/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "devinventory.h"
#include "devplan.h"
#include "irq-skew.h"
#include "irq.h"
#include "netdev.h"
#include "util.h"

static const char *const irq_skew_kind_table[_IRQ_SKEW_KIND_MAX] = {
        [IRQ_SKEW_IRQ] = "irq",
        [IRQ_SKEW_NET_RX] = "net-rx",
};

const char *irq_skew_kind_to_string(IrqSkewKind k) {
        return (unsigned)k < _IRQ_SKEW_KIND_MAX ? irq_skew_kind_table[k] : NULL;
}

/* An (key, index) pair: a CPU number or an IRQ number and its column or line. */
typedef struct KeyIndex {
        unsigned key;
        size_t index;
} KeyIndex;

static int key_index_compare(const void *a, const void *b) {
        const KeyIndex *x = a, *y = b;

        return x->key < y->key ? -1 : x->key > y->key;
}

/* The columns both readings have, matched by OS CPU number: prev_col[i], cur_col[i], cpu[i]. */
typedef struct CommonColumns {
        size_t *prev_col, *cur_col;
        unsigned *cpu;
        size_t n;
} CommonColumns;

static void common_columns_done(CommonColumns *c) {
        free(c->prev_col);
        free(c->cur_col);
        free(c->cpu);
        *c = (CommonColumns){};
}

static int common_columns(const InterruptTable *prev, const InterruptTable *cur, CommonColumns *ret) {
        _cleanup_free_ KeyIndex *p = NULL, *c = NULL;
        CommonColumns cc = {};
        size_t m = MIN(prev->n_cpus, cur->n_cpus);

        p = calloc(MAX(prev->n_cpus, 1U), sizeof(KeyIndex));
        c = calloc(MAX(cur->n_cpus, 1U), sizeof(KeyIndex));
        cc.prev_col = calloc(MAX(m, 1U), sizeof(size_t));
        cc.cur_col = calloc(MAX(m, 1U), sizeof(size_t));
        cc.cpu = calloc(MAX(m, 1U), sizeof(unsigned));
        if (!p || !c || !cc.prev_col || !cc.cur_col || !cc.cpu) {
                common_columns_done(&cc);
                return -ENOMEM;
        }
        for (size_t i = 0; i < prev->n_cpus; i++)
                p[i] = (KeyIndex){prev->cpus[i], i};
        for (size_t i = 0; i < cur->n_cpus; i++)
                c[i] = (KeyIndex){cur->cpus[i], i};
        qsort(p, prev->n_cpus, sizeof(KeyIndex), key_index_compare);
        qsort(c, cur->n_cpus, sizeof(KeyIndex), key_index_compare);
        for (size_t i = 0, j = 0; i < prev->n_cpus && j < cur->n_cpus;) {
                if (p[i].key < c[j].key)
                        i++;
                else if (p[i].key > c[j].key)
                        j++;
                else {
                        cc.prev_col[cc.n] = p[i].index;
                        cc.cur_col[cc.n] = c[j].index;
                        cc.cpu[cc.n++] = p[i].key;
                        i++, j++;
                }
        }
        *ret = cc;
        return 0;
}

/* The numeric lines of t sorted by IRQ number (for bsearch). */
static int line_index(const InterruptTable *t, KeyIndex **ret, size_t *ret_n) {
        KeyIndex *k = calloc(MAX(t->n_lines, 1U), sizeof(KeyIndex));
        size_t n = 0;

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_lines; i++)
                if (t->lines[i].numeric)
                        k[n++] = (KeyIndex){t->lines[i].irq, i};
        qsort(k, n, sizeof(KeyIndex), key_index_compare);
        *ret = k;
        *ret_n = n;
        return 0;
}

static const InterruptLine *line_find(const InterruptTable *t, const KeyIndex *idx, size_t n, unsigned irq) {
        KeyIndex key = {irq, 0};
        const KeyIndex *k = bsearch(&key, idx, n, sizeof(KeyIndex), key_index_compare);

        return k ? &t->lines[k->index] : NULL;
}

/* The line with id (a non-numeric line: "NET_RX"), or NULL. */
static const InterruptLine *line_find_id(const InterruptTable *t, const char *id) {
        for (size_t i = 0; i < t->n_lines; i++)
                if (streq(t->lines[i].id, id))
                        return &t->lines[i];
        return NULL;
}

/*
 * Adds the per-CPU deltas of line a → b (common columns cc) to acc, their sum to *sum. Returns
 * false, adding nothing, when a counter went down (the number was reallocated, or the counters
 * reset).
 */
static bool line_delta_add(
        const InterruptLine *a, const InterruptLine *b, const CommonColumns *cc, uint64_t *acc,
        uint64_t *sum) {
        for (size_t i = 0; i < cc->n; i++) {
                uint64_t x = cc->prev_col[i] < a->n_counts ? a->counts[cc->prev_col[i]] : 0,
                         y = cc->cur_col[i] < b->n_counts ? b->counts[cc->cur_col[i]] : 0;
                if (y < x)
                        return false;
        }
        for (size_t i = 0; i < cc->n; i++) {
                uint64_t x = cc->prev_col[i] < a->n_counts ? a->counts[cc->prev_col[i]] : 0,
                         y = cc->cur_col[i] < b->n_counts ? b->counts[cc->cur_col[i]] : 0;
                acc[i] += y - x;
                *sum += y - x;
        }
        return true;
}

static bool thresholds_valid(const IrqSkewThresholds *th) {
        return th && th->min_share > 0 && th->min_share <= 1 && th->min_rate >= 0;
}

/* Whether acc (per common column) is skewed: fills count, rate, cpu, share. */
static bool window_skewed(
        const uint64_t *acc, const CommonColumns *cc, uint64_t window_usec, const IrqSkewThresholds *th,
        IrqSkewFinding *f) {
        uint64_t total = 0, top = 0;
        size_t top_i = 0;

        for (size_t i = 0; i < cc->n; i++) {
                total += acc[i];
                if (acc[i] > top) {
                        top = acc[i];
                        top_i = i;
                }
        }
        if (total == 0 || total < th->min_count)
                return false;
        f->count = total;
        f->rate = (double)total * 1e6 / (double)window_usec;
        f->share = (double)top / (double)total;
        f->cpu = cc->cpu[top_i];
        return f->rate >= th->min_rate && f->share >= th->min_share;
}

void irq_skew_finding_done(IrqSkewFinding *f) {
        if (!f)
                return;
        free(f->device);
        free(f->irqs);
        free(f->irqs_text);
        free(f->suggestion);
        *f = (IrqSkewFinding){};
}

IrqSkewFindings *irq_skew_findings_free(IrqSkewFindings *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_findings; i++)
                irq_skew_finding_done(&f->findings[i]);
        free(f->findings);
        free(f);
        return NULL;
}

static char *irqs_format(const unsigned *irqs, size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%u", i ? "," : "", irqs[i]);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

int irq_skew_detect_irqs(
        const InterruptTable *prev, const InterruptTable *cur, uint64_t window_usec,
        const IrqSkewDevices *devs, const IrqSkewThresholds *th, IrqSkewFindings **ret) {
        _cleanup_(irq_skew_findings_freep) IrqSkewFindings *out = NULL;
        _cleanup_(common_columns_done) CommonColumns cc = {};
        _cleanup_free_ KeyIndex *pidx = NULL, *cidx = NULL;
        _cleanup_free_ uint64_t *acc = NULL;
        _cleanup_free_ unsigned *fired = NULL;
        size_t n_pidx = 0, n_cidx = 0, max_irqs = 1;
        int r;

        if (!prev || !cur || !devs || !ret || window_usec == 0 || !thresholds_valid(th))
                return -EINVAL;
        out = calloc(1, sizeof(IrqSkewFindings));
        if (!out)
                return -ENOMEM;
        r = common_columns(prev, cur, &cc);
        if (r < 0)
                return r;
        if (cc.n < 2) {
                *ret = TAKE_PTR(out);
                return 0;
        }
        r = line_index(prev, &pidx, &n_pidx);
        if (r < 0)
                return r;
        r = line_index(cur, &cidx, &n_cidx);
        if (r < 0)
                return r;
        for (size_t d = 0; d < devs->n_devices; d++)
                max_irqs = MAX(max_irqs, devs->devices[d].n_irqs);
        acc = calloc(cc.n, sizeof(uint64_t));
        fired = calloc(max_irqs, sizeof(unsigned));
        out->findings = calloc(MAX(devs->n_devices, 1U), sizeof(IrqSkewFinding));
        if (!acc || !fired || !out->findings)
                return -ENOMEM;

        for (size_t d = 0; d < devs->n_devices; d++) {
                const IrqSkewDevice *dev = &devs->devices[d];
                IrqSkewFinding f = {.kind = IRQ_SKEW_IRQ};
                size_t n_fired = 0;

                if (dev->n_irqs < 2 || dev->n_queues < 2)
                        continue;
                memset(acc, 0, cc.n * sizeof(uint64_t));
                for (size_t k = 0; k < dev->n_irqs; k++) {
                        const InterruptLine *a = line_find(prev, pidx, n_pidx, dev->irqs[k]),
                                            *b = line_find(cur, cidx, n_cidx, dev->irqs[k]);
                        uint64_t sum = 0;

                        if (!a || !b || !streq_ptr(a->chip, b->chip) || !streq_ptr(a->hwirq, b->hwirq))
                                continue;
                        if (line_delta_add(a, b, &cc, acc, &sum) && sum > 0)
                                fired[n_fired++] = dev->irqs[k];
                }
                if (!window_skewed(acc, &cc, window_usec, th, &f))
                        continue;
                f.device = strdup(dev->name);
                f.irqs = malloc(MAX(n_fired, 1U) * sizeof(unsigned));
                f.irqs_text = irqs_format(fired, n_fired);
                if (f.irqs)
                        memcpy(f.irqs, fired, n_fired * sizeof(unsigned));
                f.n_irqs = n_fired;
                if (asprintf(
                            &f.suggestion,
                            "irqs: [{ name: %s-spread, match: { device: \"%s\" }, cpus: { near: \"%s\" }, "
                            "spread: true }]",
                            dev->name, dev->name, dev->name) < 0)
                        f.suggestion = NULL;
                if (!f.device || !f.irqs || !f.irqs_text || !f.suggestion) {
                        irq_skew_finding_done(&f);
                        return -ENOMEM;
                }
                out->findings[out->n_findings++] = f;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

int irq_skew_detect_net_rx(
        const InterruptTable *prev, const InterruptTable *cur, uint64_t window_usec,
        char *const *single_queue, const IrqSkewThresholds *th, IrqSkewFinding *ret) {
        _cleanup_(common_columns_done) CommonColumns cc = {};
        _cleanup_(cpuset_donep) CpuSet others = CPUSET_NULL;
        _cleanup_free_ uint64_t *acc = NULL;
        _cleanup_free_ char *list = NULL;
        IrqSkewFinding f = {.kind = IRQ_SKEW_NET_RX};
        const InterruptLine *a, *b;
        int r;

        if (!prev || !cur || !ret || window_usec == 0 || !thresholds_valid(th))
                return -EINVAL;
        a = line_find_id(prev, "NET_RX");
        b = line_find_id(cur, "NET_RX");
        if (!a || !b)
                return 0;
        r = common_columns(prev, cur, &cc);
        if (r < 0)
                return r;
        if (cc.n < 2)
                return 0;
        acc = calloc(cc.n, sizeof(uint64_t));
        if (!acc)
                return -ENOMEM;
        uint64_t sum = 0;
        if (!line_delta_add(a, b, &cc, acc, &sum))
                return 0;
        if (!window_skewed(acc, &cc, window_usec, th, &f))
                return 0;

        for (size_t i = 0; i < cur->n_cpus; i++)
                if (cur->cpus[i] != f.cpu) {
                        r = cpuset_add(&others, cur->cpus[i]);
                        if (r < 0)
                                return r;
                }
        r = cpuset_format_list(&others, &list);
        if (r < 0)
                return r;
        f.device = strv_length(single_queue) > 0 ? strv_join(single_queue, ",") : strdup("*");
        f.irqs_text = strdup("");
        if (f.device &&
            asprintf(
                    &f.suggestion, "net: [{ device: \"%s\", rps: \"%s\" }]",
                    strv_length(single_queue) == 1 ? single_queue[0] : "*", list) < 0)
                f.suggestion = NULL;
        if (!f.device || !f.irqs_text || !f.suggestion) {
                irq_skew_finding_done(&f);
                return -ENOMEM;
        }
        *ret = f;
        return 1;
}

static void irq_skew_device_done(IrqSkewDevice *d) {
        free(d->name);
        free(d->irqs);
        *d = (IrqSkewDevice){};
}

IrqSkewDevices *irq_skew_devices_free(IrqSkewDevices *d) {
        if (!d)
                return NULL;
        for (size_t i = 0; i < d->n_devices; i++)
                irq_skew_device_done(&d->devices[i]);
        free(d->devices);
        free(d);
        return NULL;
}

/* Fills dev's irqs (those of t) and n_queues for interface name. */
static int device_fill(
        const char *root, const InterruptTable *t, const KeyIndex *idx, size_t n_idx, const char *name,
        IrqSkewDevice *dev) {
        _cleanup_free_ unsigned *sys = NULL;
        _cleanup_free_ uint64_t *queues = NULL;
        NetDeviceQueues q = {};
        size_t n_sys = 0, n_queues = 0;
        int r;

        r = netdev_queues(root, name, &q);
        if (r < 0)
                return r;
        dev->name = strdup(name);
        dev->irqs = calloc(MAX(t->n_lines, 1U), sizeof(unsigned));
        queues = calloc(MAX(t->n_lines, 1U), sizeof(uint64_t));
        if (!dev->name || !dev->irqs || !queues)
                return -ENOMEM;

        /* No PCI function (veth, bridge, lo: -ENXIO; a fixture without device links) or no
         * msi_irqs entries: by name, which finds nothing for a veth. */
        r = irq_device_irqs(root, name, &sys, &n_sys);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || n_sys == 0)
                /* A PCI function without msi_irqs (or a fixture): by name. */
                for (size_t i = 0; i < t->n_lines; i++) {
                        const InterruptLine *l = &t->lines[i];

                        if (!l->numeric)
                                continue;
                        STRV_FOREACH (s, l->names)
                                if (device_irq_name_of_device(*s, name)) {
                                        dev->irqs[dev->n_irqs++] = l->irq;
                                        break;
                                }
                }
        for (size_t k = 0; k < n_sys; k++)
                if (line_find(t, idx, n_idx, sys[k]))
                        dev->irqs[dev->n_irqs++] = sys[k];
        qsort(dev->irqs, dev->n_irqs, sizeof(unsigned), compare_unsigned);

        for (size_t k = 0; k < dev->n_irqs; k++) {
                const InterruptLine *l = line_find(t, idx, n_idx, dev->irqs[k]);
                uint64_t v;
                bool seen = false;

                if (!device_irq_name_queue_number(l->names ? l->names[0] : NULL, &v))
                        continue;
                for (size_t j = 0; j < n_queues && !seen; j++)
                        seen = queues[j] == v;
                if (!seen)
                        queues[n_queues++] = v;
        }
        dev->n_queues = MAX(q.n_rx, (unsigned)n_queues);
        return 0;
}

int irq_skew_devices_load(const char *root, const InterruptTable *t, IrqSkewDevices **ret) {
        _cleanup_(irq_skew_devices_freep) IrqSkewDevices *out = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ KeyIndex *idx = NULL;
        size_t n_idx = 0;
        int r;

        if (!root || !t || !ret)
                return -EINVAL;
        r = netdev_list(root, &names);
        if (r < 0)
                return r;
        r = line_index(t, &idx, &n_idx);
        if (r < 0)
                return r;
        out = calloc(1, sizeof(IrqSkewDevices));
        if (!out)
                return -ENOMEM;
        out->devices = calloc(MAX(strv_length(names), 1U), sizeof(IrqSkewDevice));
        if (!out->devices)
                return -ENOMEM;
        STRV_FOREACH (n, names) {
                IrqSkewDevice dev = {};

                r = device_fill(root, t, idx, n_idx, *n, &dev);
                if (r == -ENOMEM) {
                        irq_skew_device_done(&dev);
                        return r;
                }
                if (r < 0) { /* vanished meanwhile */
                        irq_skew_device_done(&dev);
                        continue;
                }
                out->devices[out->n_devices++] = dev;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

int irq_skew_devices_single_queue(const IrqSkewDevices *devs, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        if (!devs || !ret)
                return -EINVAL;
        l = calloc(devs->n_devices + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < devs->n_devices; i++) {
                if (devs->devices[i].n_queues > 1 || streq(devs->devices[i].name, "lo"))
                        continue;
                l[n] = strdup(devs->devices[i].name);
                if (!l[n++])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

IrqSkewTransition irq_skew_episode_step(IrqSkewEpisode *e, bool skewed, unsigned cpu, unsigned end_after) {
        if (skewed) {
                e->cpu = cpu;
                e->clean = 0;
                if (e->active)
                        return IRQ_SKEW_STEADY;
                e->active = true;
                e->n_episodes++;
                return IRQ_SKEW_BEGIN;
        }
        if (!e->active)
                return IRQ_SKEW_STEADY;
        if (++e->clean < MAX(end_after, 1U))
                return IRQ_SKEW_STEADY;
        e->active = false;
        e->clean = 0;
        return IRQ_SKEW_END;
}
