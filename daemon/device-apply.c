/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement: a rule covering a target, and bringing the target to the rule's value
 * (original recorded first, written, read back, a refusal reported once). Called by the IRQ and
 * queue placement (device-irq.c, device-net.c). See device-placement-internal.h. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device-placement-internal.h"
#include "irq.h"

/* IRQs only: a mask mixing online and offline CPUs (accepted by the kernel, which delivers to the
 * online ones) is worth a warning. */
static void irq_check_online(DevicePlacement *d, Target *t, const CpuSet *want) {
        _cleanup_cpuset_ CpuSet offline = CPUSET_NULL;
        _cleanup_free_ char *list = NULL, *text = NULL;
        const Topology *topo = *d->ctx.topology;
        char what[128];

        if (!topo || cpuset_copy(&offline, want) < 0)
                return;
        cpuset_andnot(&offline, topology_online_cpus(topo));
        if (cpuset_is_empty(&offline) || cpuset_equal(&offline, want))
                return;
        list = cpuset_to_string(&offline);
        text = cpuset_to_string(want);
        log_target(
                LOG_WARNING, 0, t, text,
                "%s: CPUs %s (%s) mix online and offline CPUs (offline: %s): the kernel takes them, "
                "and delivers to the online ones only",
                target_describe(t, what, sizeof(what)), strna(text), rule_label(t), strna(list));
}

/* The rule covers t this pass. A new decision (another value asked, another plan) forgets
 * refusals, drift and releases of the previous one. */
int target_cover(
        DevicePlacement *d, Target *t, const char *rule, DriftMode on_drift, const TargetValue *want) {
        unsigned generation = *d->ctx.plan_generation;
        bool same = want && t->has_wanted && target_value_equal(t->kind, &t->wanted, want);
        int r;

        t->pass = d->pass;
        t->on_drift = on_drift;
        r = free_and_strdup(&t->rule, rule);
        if (r < 0)
                return r;
        if (!same || t->generation != generation) {
                t->generation = generation;
                t->has_drift = false;
                if (t->state == TARGET_REFUSED || t->state == TARGET_MANAGED || t->state == TARGET_DRIFTED ||
                    t->state == TARGET_RELEASED)
                        t->state = TARGET_UNMANAGED;
        }
        return 0;
}

/* The kernel refused to write want to t: reported once, counted, not retried in this plan
 * generation (until a reload or a CPU hotplug re-plans, or the rule asks another value; a device
 * made again, or an IRQ number that passed to another device, is another target). */
static void target_refused(DevicePlacement *d, Target *t, int error, const TargetValue *want) {
        _cleanup_free_ char *text = target_value_to_string(t->kind, want);
        char what[128];

        target_describe(t, what, sizeof(what));
        t->state = TARGET_REFUSED;
        if (t->kind == TARGET_IRQ) {
                IrqRefusal refusal = irq_refusal_classify(d->root, t->irq, error);

                (void)target_set_reason(t, irq_refusal_explain(refusal));
                if (refusal == IRQ_REFUSAL_MANAGED)
                        t->state = TARGET_MANAGED;
                d->counters.irq_refusals++;
                log_target_id(
                        LOG_WARNING, error, AFFINITYD_MESSAGE_IRQ_REFUSED, t, text,
                        "The kernel refused CPUs %s for %s (%s): %s (%m); not retried until a reload or "
                        "a CPU change re-plans",
                        strna(text), what, rule_label(t), strna(irq_refusal_explain(refusal)));
        } else {
                _cleanup_free_ char *reason = NULL;

                if (asprintf(&reason, "the kernel refused %s: %s", strna(text), strerror(-error)) >= 0)
                        (void)target_set_reason(t, reason);
                d->counters.queue_failures++;
                log_target(
                        LOG_WARNING, error, t, text,
                        "Failed to set %s to %s (%s): %m; not retried until a reload or a CPU change "
                        "re-plans",
                        what, strna(text), rule_label(t));
        }
}

/*
 * Brings a target a rule covers (target_cover() done) to want: recorded, written unless it
 * already is what is asked, read back. Per-target failures are reported, not returned.
 * Returns 0 or -ENOMEM.
 */
int target_bring(DevicePlacement *d, Target *t, const TargetValue *want) {
        _cleanup_(target_value_done) TargetValue cur = {}, expected = {}, back = {};
        _cleanup_free_ char *want_text = NULL, *cur_text = NULL, *back_text = NULL;
        bool same = t->has_wanted && target_value_equal(t->kind, &t->wanted, want);
        char what[128];
        int record_error, r;

        /* Refused or drifted (on-drift: report) in this generation with the same ask: left as is
         * (the drift check follows a drifted one); released (on-drift: respect): not ours. */
        if (t->state == TARGET_REFUSED || t->state == TARGET_MANAGED || t->state == TARGET_DRIFTED ||
            t->state == TARGET_RELEASED)
                return 0;

        r = target_value_copy(&t->wanted, want);
        if (r < 0)
                return r;
        t->has_wanted = true;
        r = target_value_expected(t->kind, want, &expected);
        if (r < 0)
                return r;
        target_describe(t, what, sizeof(what));
        want_text = target_value_to_string(t->kind, want);
        if (!want_text)
                return -ENOMEM;

        r = target_read(d, t, &cur);
        if (r == -ENOENT) {
                /* Gone since the inventory was read: the next pass drops it. */
                t->state = TARGET_UNMANAGED;
                return 0;
        }
        if (r < 0) {
                target_refused(d, t, r, want);
                return 0;
        }

        if (target_value_equal(t->kind, &cur, &expected) ||
            (same && t->has_applied && target_value_equal(t->kind, &cur, &t->applied))) {
                /* Already so (or as the kernel kept our last write of the same ask). Nothing is
                 * written: a record that can't be written is tried again before a write. */
                r = target_record_original(d, t, &cur, &record_error);
                if (r < 0)
                        return r;
                if (record_error < 0)
                        log_debug_errno(
                                record_error, "Cannot record the original of %s in %s yet: %m", what,
                                d->state_dir);
                r = target_value_copy(&t->applied, &cur);
                if (r < 0)
                        return r;
                t->has_applied = !d->ctx.dry_run;
                t->state = d->ctx.dry_run ? TARGET_UNMANAGED : TARGET_APPLIED;
                return target_set_reason(t, NULL);
        }

        cur_text = target_value_to_string(t->kind, &cur);
        if (d->ctx.dry_run) {
                _cleanup_free_ char *reason = NULL;

                if (asprintf(&reason, "dry run: would set %s (now %s)", want_text, strna(cur_text)) < 0)
                        return -ENOMEM;
                if (!streq_ptr(reason, t->reason))
                        log_target(
                                LOG_INFO, 0, t, want_text, "Would set %s to %s (now %s; %s)", what,
                                want_text, strna(cur_text), rule_label(t));
                t->state = TARGET_UNMANAGED;
                return target_set_reason(t, reason);
        }

        r = target_record_original(d, t, &cur, &record_error);
        if (r < 0)
                return r;
        if (record_error < 0) {
                target_not_recorded(d, t, record_error);
                return 0;
        }
        if (t->kind == TARGET_IRQ)
                irq_check_online(d, t, &want->cpus);

        r = target_write(d, t, want);
        if (r == -ENOENT || (t->kind == TARGET_IRQ && irq_refusal_from_errno(r) == IRQ_REFUSAL_GONE)) {
                t->state = TARGET_UNMANAGED;
                return 0;
        }
        if (r < 0) {
                target_refused(d, t, r, want);
                return 0;
        }
        if (t->kind == TARGET_IRQ) {
                d->counters.irqs_placed++;
                d->n_irqs_set++;
        } else {
                d->counters.queues_placed++;
                d->n_queues_set++;
        }

        /* What the kernel kept is what drift is checked against. */
        r = target_read(d, t, &back);
        if (r < 0)
                r = target_value_copy(&back, &expected);
        if (r < 0)
                return r;
        r = target_value_copy(&t->applied, &back);
        if (r < 0)
                return r;
        t->has_applied = true;
        t->state = TARGET_APPLIED;
        (void)target_set_reason(t, NULL);

        if (!target_value_equal(t->kind, &back, &expected)) {
                back_text = target_value_to_string(t->kind, &back);
                log_target(
                        LOG_WARNING, 0, t, back_text, "%s: asked for %s (%s), the kernel kept %s", what,
                        want_text, rule_label(t), strna(back_text));
        }
        log_target_id(
                t->kind == TARGET_IRQ || t->kind == TARGET_RFS ? LOG_INFO : LOG_DEBUG, 0,
                t->kind == TARGET_IRQ ? AFFINITYD_MESSAGE_IRQ_PLACED : NULL, t, want_text,
                "Set %s to %s (was %s; %s)", what, want_text, strna(cur_text), rule_label(t));
        if (t->kind == TARGET_IRQ) {
                t->effective_pending = true;
                t->effective_count = UINT64_MAX; /* read after the pass */
                t->effective_checks = 0;
        }
        return 0;
}
