/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement's drift re-check (device-placement-internal.h): every drift-interval, each
 * applied IRQ and queue setting read back; a change reported, put back or let be as on-drift:
 * says. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if.h>

#include <systemd/sd-event.h>

#include "device-placement-internal.h"

#include "event-util.h"
#include "fileio.h"

/* Under on-drift: enforce, a target's corrections are logged at most once this often (the first
 * one at once; later lines say how many were made since). */
#define DRIFT_LOG_INTERVAL_USEC (60 * 1000 * USEC_PER_MSEC)

/* DriftDetected(kind, target, rule, found, action) for t: kind "irq" (target "38") or "queue"
 * (target "eth0/rx-0 rps"). */
static void target_emit_drift(DevicePlacement *d, const Target *t, const char *found) {
        char target[IFNAMSIZ + 32];

        if (t->kind == TARGET_IRQ)
                snprintf(target, sizeof(target), "%u", t->irq);
        else if (t->kind == TARGET_RFS)
                snprintf(target, sizeof(target), "rps_sock_flow_entries");
        else
                snprintf(
                        target, sizeof(target), "%s/%s-%u %s", strempty(t->device),
                        t->kind == TARGET_XPS ? "tx" : "rx", t->queue, target_kind_table[t->kind]);
        if (!d->ctx.drift_detected)
                return;
        d->ctx.drift_detected(
                d->ctx.userdata, t->kind == TARGET_IRQ ? "irq" : "queue", target, strempty(t->rule),
                strempty(found),
                t->on_drift == DRIFT_ENFORCE           ? "enforce"
                        : t->on_drift == DRIFT_RESPECT ? "respect"
                                                       : "report");
}

/* ---- drift ---- */

static uint64_t device_drift_interval(const DevicePlacement *d) {
        if (!*d->ctx.config || d->ctx.dry_run)
                return 0;
        return (*d->ctx.config)->drift_interval_usec;
}

static bool target_is_checked(const Target *t) {
        return t->has_applied && (t->state == TARGET_APPLIED || t->state == TARGET_DRIFTED);
}

void device_drift_tick_done(DriftTick *k) {
        k->table = interrupt_table_free(k->table);
        cpuset_done(&k->online);
}

/* ROOT/proc/interrupts, read once per tick or restore. NULL when it can't be read. */
static const InterruptTable *tick_interrupts(DevicePlacement *d, DriftTick *k) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (k->table_read)
                return k->table;
        k->table_read = true;
        if (asprintf(&path, "%s/proc/interrupts", streq(d->root, "/") ? "" : d->root) < 0)
                return NULL;
        r = interrupts_read(path, &k->table, NULL);
        if (r < 0) {
                log_debug_errno(r, "Failed to read %s: %m", path);
                k->table = NULL;
        }
        return k->table;
}

/*
 * Whether IRQ t is still the IRQ it was, by /proc/interrupts as read once per tick: the line's
 * identity (as DeviceIrq.identity) against t's. Returns TARGET_PRESENT, TARGET_GONE (another
 * IRQ now, or /proc/irq/N gone), or TARGET_UNVERIFIABLE (not listed, or the file unreadable,
 * while /proc/irq/N exists): nothing is written then.
 */
TargetPresence device_irq_presence_now(DevicePlacement *d, const Target *t, DriftTick *k) {
        const InterruptTable *table = tick_interrupts(d, k);
        const InterruptLine *l = table ? interrupt_table_find(table, t->irq) : NULL;
        _cleanup_free_ char *identity = NULL;

        if (!l)
                return irq_dir_exists(d, t->irq) ? TARGET_UNVERIFIABLE : TARGET_GONE;
        if (device_inventory_irq_identity(l, &identity) < 0)
                return TARGET_UNVERIFIABLE;
        return streq(identity, t->identity) ? TARGET_PRESENT : TARGET_GONE;
}

/* Whether mask contains a CPU that is not online now (ROOT/sys/devices/system/cpu/online, read
 * once per tick); false when that can't be read. */
static bool tick_has_offline(DevicePlacement *d, DriftTick *k, const CpuSet *mask) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_cpuset_ CpuSet offline = CPUSET_NULL;

        if (!k->online_read) {
                k->online_read = true;
                if (asprintf(
                            &path, "%s/sys/devices/system/cpu/online", streq(d->root, "/") ? "" : d->root) >=
                            0 &&
                    read_full_file(path, 4096, 0, &text, NULL) >= 0) {
                        text[strcspn(text, "\n")] = '\0';
                        k->online_ok = cpuset_parse_list(text, &k->online, NULL) >= 0;
                }
        }
        if (!k->online_ok || cpuset_copy(&offline, mask) < 0)
                return false;
        cpuset_andnot(&offline, &k->online);
        return !cpuset_is_empty(&offline);
}

/* The PID of a running irqbalance, looked for once per tick. */
static pid_t tick_irqbalance(DevicePlacement *d, DriftTick *k) {
        if (!k->irqbalance_read) {
                k->irqbalance_read = true;
                k->irqbalance = find_irqbalance(d->root);
        }
        return k->irqbalance;
}

/*
 * One re-check of every applied target. A target whose applied mask holds a CPU that is offline
 * now is skipped (the kernel moved an IRQ off it; the hotplug re-plan brings it back). Before
 * anything is reported or written, an IRQ's identity is checked against /proc/interrupts (read
 * once per tick: another device's now, it is forgotten) and a queue's interface against its
 * ifindex. Under on-drift: enforce the first correction of a target is logged, then at most one
 * line per DRIFT_LOG_INTERVAL_USEC saying how many corrections were made since.
 * Returns 1 when an IRQ was put back (its effective affinity is due for a check), 0, or -ENOMEM.
 */
static int device_drift_check(DevicePlacement *d) {
        _cleanup_(device_drift_tick_done) DriftTick tick = {.online = CPUSET_NULL};
        _cleanup_free_ Target **targets = NULL;
        bool effective = false;
        uint64_t now = 0;
        size_t n = 0;
        int r;

        r = targets_collect(d, &targets, &n);
        if (r < 0)
                return r;
        (void)sd_event_now(d->ctx.event, CLOCK_MONOTONIC, &now);
        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];
                _cleanup_(target_value_done) TargetValue cur = {}, back = {};
                _cleanup_free_ char *cur_text = NULL, *applied_text = NULL, *reason = NULL,
                                    *irqbalance = NULL, *since = NULL;
                bool quiet = false;
                char what[128];
                int record_error;
                pid_t pid;

                if (!target_is_checked(t))
                        continue;
                r = target_read(d, t, &cur);
                if (r < 0)
                        continue; /* gone: the next pass drops it */
                if (target_value_equal(t->kind, &cur, &t->applied)) {
                        if (t->state == TARGET_DRIFTED) {
                                t->state = TARGET_APPLIED; /* someone put it back */
                                (void)target_set_reason(t, NULL);
                        }
                        t->has_drift = false;
                        continue;
                }
                if (t->has_drift && target_value_equal(t->kind, &cur, &t->drift))
                        continue; /* reported already */

                target_describe(t, what, sizeof(what));
                if (kind_is_mask(t->kind) && tick_has_offline(d, &tick, &t->applied.cpus)) {
                        applied_text = target_value_to_string(t->kind, &t->applied);
                        log_debug(
                                "%s is not %s as applied, but some of those CPUs are offline now: not "
                                "drift (the CPU change re-plans it)",
                                what, strna(applied_text));
                        continue;
                }
                if (t->kind == TARGET_IRQ) {
                        TargetPresence p = device_irq_presence_now(d, t, &tick);

                        if (p == TARGET_GONE) {
                                log_debug(
                                        "%s is another IRQ now (or gone), dropping what was recorded of it",
                                        what);
                                target_forget(d, t);
                                continue;
                        }
                        if (p == TARGET_UNVERIFIABLE) {
                                log_debug("%s is not listed in /proc/interrupts, not checked now", what);
                                continue;
                        }
                } else if (!queue_same_device(d, t)) {
                        log_debug("%s: the interface changed, left to the next pass", what);
                        continue;
                }

                d->counters.drift_detected++;
                r = target_value_copy(&t->drift, &cur);
                if (r < 0)
                        return r;
                t->has_drift = true;
                cur_text = target_value_to_string(t->kind, &cur);
                applied_text = target_value_to_string(t->kind, &t->applied);
                target_emit_drift(d, t, cur_text);
                if (t->kind == TARGET_IRQ && (pid = tick_irqbalance(d, &tick)) > 0 &&
                    asprintf(
                            &irqbalance,
                            "; irqbalance (PID %d) is running: it moves IRQs; stop it, or add --banirq=%u "
                            "to "
                            "its IRQBALANCE_ARGS",
                            (int)pid, t->irq) < 0)
                        irqbalance = NULL;
                if (t->on_drift == DRIFT_ENFORCE) {
                        if (t->drift_logged_usec > 0 &&
                            now < t->drift_logged_usec + DRIFT_LOG_INTERVAL_USEC) {
                                quiet = true;
                                t->drift_unlogged++;
                        } else {
                                if (t->drift_unlogged > 0 &&
                                    asprintf(
                                            &since, "; %u more corrections since the last report",
                                            t->drift_unlogged) < 0)
                                        since = NULL;
                                t->drift_logged_usec = MAX(now, (uint64_t)1);
                                t->drift_unlogged = 0;
                        }
                }
                if (quiet)
                        log_debug(
                                "%s is %s again, putting it back to %s (%u corrections since the last "
                                "report)",
                                what, strna(cur_text), strna(applied_text), t->drift_unlogged);
                else
                        log_target_id(
                                LOG_WARNING, 0, AFFINITYD_MESSAGE_DRIFT, t, cur_text,
                                "Drift: %s is %s where %s applied %s%s%s%s", what, strna(cur_text),
                                rule_label(t), strna(applied_text),
                                t->on_drift == DRIFT_ENFORCE ? ", putting it back (on-drift: enforce)"
                                        : t->on_drift == DRIFT_RESPECT
                                        ? ", no longer managing it (on-drift: respect)"
                                        : " (on-drift: report)",
                                strempty(since), strempty(irqbalance));

                switch (t->on_drift) {
                case DRIFT_ENFORCE:
                        /* The original must be on record before a write (it is, unless the state
                         * dir failed when the value was found already right). */
                        r = target_record_original(d, t, &cur, &record_error);
                        if (r < 0)
                                return r;
                        if (record_error < 0) {
                                target_not_recorded(d, t, record_error);
                                break;
                        }
                        r = target_write(d, t, &t->wanted);
                        if (r < 0) {
                                log_target(
                                        LOG_WARNING, r, t, applied_text, "Failed to put %s back to %s: %m",
                                        what, strna(applied_text));
                                t->state = TARGET_DRIFTED;
                                break;
                        }
                        d->counters.drift_corrections++;
                        if (target_read(d, t, &back) >= 0)
                                (void)target_value_copy(&t->applied, &back);
                        if (t->kind == TARGET_IRQ) {
                                t->effective_pending = true;
                                t->effective_count = UINT64_MAX;
                                t->effective_checks = 0;
                                effective = true;
                        }
                        t->has_drift = false;
                        t->state = TARGET_APPLIED;
                        (void)target_set_reason(t, NULL);
                        break;
                case DRIFT_RESPECT:
                        t->state = TARGET_RELEASED;
                        if (asprintf(
                                    &reason, "changed to %s by someone else; on-drift: respect",
                                    strna(cur_text)) >= 0)
                                (void)target_set_reason(t, reason);
                        break;
                default:
                        t->state = TARGET_DRIFTED;
                        if (asprintf(
                                    &reason, "changed to %s by someone else%s", strna(cur_text),
                                    strempty(irqbalance)) >= 0)
                                (void)target_set_reason(t, reason);
                        break;
                }
        }
        return effective;
}

static int on_device_drift_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        DevicePlacement *d = userdata;
        int r;

        r = device_drift_check(d);
        if (r > 0)
                irq_effective_schedule(d);
        if (r < 0)
                log_warning_errno(r, "Failed to check IRQs and queues for drift: %m");
        (void)device_drift_update(d);
        return 0;
}

/* Arms the drift timer when drift-interval is set and something is applied; disarms it
 * otherwise. */
int device_drift_update(DevicePlacement *d) {
        _cleanup_free_ Target **targets = NULL;
        uint64_t interval = device_drift_interval(d);
        bool any = false;
        size_t n = 0;
        int r;

        if (interval > 0) {
                r = targets_collect(d, &targets, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n && !any; i++)
                        any = target_is_checked(targets[i]);
        }
        return event_periodic_timer_update(
                d->ctx.event, &d->drift_source, &d->drift_interval_usec, any ? interval : 0,
                on_device_drift_timer, d, "device-drift-check", "device drift timer");
}
