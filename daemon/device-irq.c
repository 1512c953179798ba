/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement of IRQs (device-placement-internal.h): irqs: rules' assignments covered, the
 * effective-affinity follow-up after a write, irqbalance detection, ListIrqs. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "device-placement-internal.h"

#include "irq.h"
#include "procfs.h"

/* The effective affinity of an IRQ is checked this long after a write ... */
#define IRQ_EFFECTIVE_DELAY_USEC (1000 * USEC_PER_MSEC)
/* ... and again while it has not fired since, this many times at most. */
#define IRQ_EFFECTIVE_CHECKS 10

/* ---- effective affinity ---- */

/* The total count of irq in table (every CPU column), UINT64_MAX when it has no line. */
static uint64_t irq_total_count(const InterruptTable *table, unsigned irq) {
        const InterruptLine *l = table ? interrupt_table_find(table, irq) : NULL;
        uint64_t total = 0;

        if (!l)
                return UINT64_MAX;
        for (size_t i = 0; i < l->n_counts; i++)
                total += l->counts[i];
        return total;
}

/*
 * Some time after an IRQ write: where the kernel really delivers it (effective_affinity_list),
 * reported when not within what was asked (on x86 it is one CPU of it). On x86 without interrupt
 * remapping the kernel moves an IRQ when it next fires, so one that has not fired since the
 * write is not judged yet (checked again, IRQ_EFFECTIVE_CHECKS times at most, then let be).
 * Returns true when the check is still due.
 */
static bool irq_check_effective(DevicePlacement *d, Target *t, const InterruptTable *table) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL;
        _cleanup_free_ char *e = NULL, *w = NULL;
        const CpuSet *want = &t->wanted.cpus;
        char what[128];

        if (irq_read_effective(d->root, t->irq, &effective) < 0 || cpuset_is_empty(&effective) ||
            cpuset_is_subset(&effective, want)) {
                t->effective_warned = false;
                return false;
        }
        if (t->effective_count != UINT64_MAX && irq_total_count(table, t->irq) == t->effective_count) {
                /* Not fired since the write: the move may be pending. */
                if (++t->effective_checks < IRQ_EFFECTIVE_CHECKS)
                        return true;
                log_debug(
                        "%s has not fired since it was moved, its effective affinity is not judged",
                        target_describe(t, what, sizeof(what)));
                return false;
        }
        if (t->effective_warned)
                return false;
        t->effective_warned = true;
        e = cpuset_to_string(&effective);
        w = cpuset_to_string(want);
        log_target(
                LOG_WARNING, 0, t, e,
                "%s: the kernel delivers it to CPUs %s, not within the CPUs %s asked for (%s)",
                target_describe(t, what, sizeof(what)), strna(e), strna(w), rule_label(t));
        return false;
}

/* ---- IRQs ---- */

int place_irqs(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp) {
        const Config *c = dp->config;
        int r;

        for (size_t i = 0; i < dp->n_irqs; i++) {
                const IrqAssignment *a = &dp->irqs[i];
                const DeviceIrq *irq = device_inventory_find_irq(inv, a->irq);
                const IrqRulePlan *rp;
                const IrqRule *rule;
                char key[16], what[128];
                Target *t;

                if (!irq || a->rule >= c->n_irq_rules || !dp->irq_rules)
                        continue;
                rule = &c->irq_rules[a->rule];
                rp = &dp->irq_rules[a->rule];
                snprintf(key, sizeof(key), "%u", a->irq);
                r = target_get(d, TARGET_IRQ, key, device_irq_identity(irq), &t);
                if (r < 0)
                        return r;
                r = free_and_strdup(&t->name, strempty(irq->actions));
                if (r < 0)
                        return r;

                if (rp->pending_reason) {
                        /* Won by a pending rule: left as it is (its original, if any, kept). */
                        r = target_cover(d, t, rule->name, rule->on_drift, NULL);
                        if (r < 0)
                                return r;
                        t->state = TARGET_PENDING;
                        r = target_set_reason(t, rp->pending_reason);
                        if (r < 0)
                                return r;
                        continue;
                }

                if (a->managed) {
                        bool again = t->state == TARGET_MANAGED && t->generation == *d->ctx.plan_generation;

                        r = target_cover(d, t, rule->name, rule->on_drift, NULL);
                        if (r < 0)
                                return r;
                        t->state = TARGET_MANAGED;
                        t->generation = *d->ctx.plan_generation;
                        r = target_set_reason(t, irq_refusal_explain(IRQ_REFUSAL_MANAGED));
                        if (r < 0)
                                return r;
                        if (again)
                                continue; /* reported once per plan */
                        d->counters.irq_refusals++;
                        log_target_id(
                                LOG_WARNING, 0, AFFINITYD_MESSAGE_IRQ_REFUSED, t, NULL,
                                "%s matches irqs: rule %s but is %s: left alone",
                                target_describe(t, what, sizeof(what)), rule->name,
                                irq_refusal_explain(IRQ_REFUSAL_MANAGED));
                        continue;
                }

                r = target_cover(d, t, rule->name, rule->on_drift, &(const TargetValue){.cpus = a->cpus});
                if (r < 0)
                        return r;
                r = target_bring(d, t, &(const TargetValue){.cpus = a->cpus});
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- irqbalance ---- */

/* The PID of a running irqbalance (a process whose comm is "irqbalance") under root, or 0. */
pid_t find_irqbalance(const char *root) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;

        if (procfs_list_pids(root, &pids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                char comm[16];

                if (procfs_read_comm(root, pids[i], 0, comm) >= 0 && streq(comm, "irqbalance"))
                        return pids[i];
        }
        return 0;
}

/* When the IRQs the daemon places grew: is irqbalance running, to fight over them? The IRQs are
 * marked checked only when one was found and named: with none running, the next pass looks
 * again (irqbalance may be started later). */
void irqbalance_check(DevicePlacement *d) {
        _cleanup_free_ Target **targets = NULL;
        _cleanup_free_ char *irqs = NULL, *banirq = NULL, *cpus_text = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        size_t n = 0, size_irqs = 0, size_ban = 0;
        FILE *fi = NULL, *fb = NULL;
        bool grew = false;
        pid_t pid;

        if (d->ctx.dry_run || targets_collect(d, &targets, &n) < 0)
                return;
        for (size_t i = 0; i < n && !grew; i++)
                grew = targets[i]->kind == TARGET_IRQ && targets[i]->state == TARGET_APPLIED &&
                        !targets[i]->irqbalance_checked;
        if (!grew)
                return;
        pid = find_irqbalance(d->root);
        if (pid <= 0)
                return;
        for (size_t i = 0; i < n; i++)
                if (targets[i]->kind == TARGET_IRQ && targets[i]->state == TARGET_APPLIED)
                        targets[i]->irqbalance_checked = true;

        fi = open_memstream(&irqs, &size_irqs);
        fb = open_memstream(&banirq, &size_ban);
        if (!fi || !fb) {
                if (fi)
                        fclose(fi);
                if (fb)
                        fclose(fb);
                return;
        }
        for (size_t i = 0, k = 0; i < n; i++) {
                Target *t = targets[i];

                if (t->kind != TARGET_IRQ || t->state != TARGET_APPLIED)
                        continue;
                fprintf(fi, "%s%u", k ? ", " : "", t->irq);
                fprintf(fb, "%s--banirq=%u", k ? " " : "", t->irq);
                (void)cpuset_or(&cpus, &t->wanted.cpus);
                k++;
        }
        if (fclose(fi) < 0 || fclose(fb) < 0)
                return;
        cpus_text = cpuset_to_string(&cpus);
        log_warning(
                "irqbalance (PID %d) is running and will move IRQs %s that irqs: rules place. Stop it "
                "(systemctl disable --now irqbalance), or have it leave them alone: "
                "IRQBALANCE_ARGS=\"%s\" in /etc/default/irqbalance; IRQBALANCE_BANNED_CPULIST=%s only keeps "
                "its other IRQs off those CPUs",
                (int)pid, strempty(irqs), strempty(banirq), strna(cpus_text));
}

static int on_effective_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* Checks the IRQs written since the last check (effective_pending) IRQ_EFFECTIVE_DELAY_USEC from
 * now: records their interrupt counts now, and arms the one-shot timer. */
void irq_effective_schedule(DevicePlacement *d) {
        _cleanup_(interrupt_table_freep) InterruptTable *table = NULL;
        _cleanup_free_ Target **targets = NULL;
        _cleanup_free_ char *path = NULL;
        bool any = false;
        size_t n = 0;
        int r;

        if (targets_collect(d, &targets, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];

                if (t->kind != TARGET_IRQ || !t->effective_pending)
                        continue;
                if (t->effective_count == UINT64_MAX) {
                        if (!table && !path &&
                            asprintf(&path, "%s/proc/interrupts", streq(d->root, "/") ? "" : d->root) >= 0)
                                (void)interrupts_read(path, &table, NULL);
                        t->effective_count = irq_total_count(table, t->irq);
                }
                any = true;
        }
        if (!any)
                return;
        if (d->effective_source)
                r = sd_event_source_set_time_relative(d->effective_source, IRQ_EFFECTIVE_DELAY_USEC)
                        ?: sd_event_source_set_enabled(d->effective_source, SD_EVENT_ONESHOT);
        else {
                r = sd_event_add_time_relative(
                        d->ctx.event, &d->effective_source, CLOCK_MONOTONIC, IRQ_EFFECTIVE_DELAY_USEC,
                        100 * USEC_PER_MSEC, on_effective_timer, d);
                if (r >= 0)
                        (void)sd_event_source_set_description(d->effective_source, "irq-effective-check");
        }
        if (r < 0)
                log_debug_errno(r, "Failed to arm the effective affinity check: %m");
}

static int on_effective_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        DevicePlacement *d = userdata;
        _cleanup_(interrupt_table_freep) InterruptTable *table = NULL;
        _cleanup_free_ Target **targets = NULL;
        _cleanup_free_ char *path = NULL;
        bool again = false;
        size_t n = 0;

        if (targets_collect(d, &targets, &n) < 0)
                return 0;
        if (asprintf(&path, "%s/proc/interrupts", streq(d->root, "/") ? "" : d->root) >= 0)
                (void)interrupts_read(path, &table, NULL);
        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];

                if (t->kind != TARGET_IRQ || !t->effective_pending)
                        continue;
                if (t->state != TARGET_APPLIED || !irq_check_effective(d, t, table))
                        t->effective_pending = false;
                else
                        again = true;
        }
        if (again)
                irq_effective_schedule(d);
        return 0;
}

/* ---- ListIrqs ---- */

int device_placement_list_irqs(DevicePlacement *d, const IrqStatus **ret, size_t *ret_n) {
        const DeviceInventory *inv = d->inv;

        device_status_clear(d);
        if (!inv || inv->n_irqs == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        d->irq_status = calloc(inv->n_irqs, sizeof(IrqStatus));
        if (!d->irq_status)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const DeviceIrq *irq = &inv->irqs[i];
                IrqStatus *s = &d->irq_status[d->n_irq_status++];
                char key[16];
                Target *t;
                int r;

                snprintf(key, sizeof(key), "%u", irq->irq);
                t = target_find(d, TARGET_IRQ, key);
                if (t && !streq(t->identity, device_irq_identity(irq)))
                        t = NULL;
                *s = (IrqStatus){
                        .irq = irq->irq,
                        .name = strempty(irq->actions),
                        .rule = t ? strempty(t->rule) : "",
                        .state = t             ? target_state_table[t->state]
                                : irq->managed ? target_state_table[TARGET_MANAGED]
                                               : target_state_table[TARGET_UNMANAGED],
                        .reason = t            ? strempty(t->reason)
                                : irq->managed ? irq_refusal_explain(IRQ_REFUSAL_MANAGED)
                                               : "",
                };
                if (t && t->has_wanted && t->state != TARGET_PENDING && t->state != TARGET_MANAGED)
                        r = cpuset_copy(&s->requested, &t->wanted.cpus);
                else {
                        r = irq_read_affinity(d->root, irq->irq, &s->requested);
                        if (r == -ENOMEM)
                                return r;
                        r = 0;
                }
                if (r < 0)
                        return r;
                if (irq_read_effective(d->root, irq->irq, &s->effective) == -ENOMEM)
                        return -ENOMEM;
        }
        *ret = d->irq_status;
        *ret_n = d->n_irq_status;
        return 0;
}
