/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement: irqs: and net: rules brought to the kernel, kept, and undone. See
 * device-placement.h; device-placement-internal.h says which file does what. This one: the object,
 * the pass (sweep), rule-level logging, device events, and restore-on-exit. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if.h>

#include <systemd/sd-event.h>

#include "device-placement-internal.h"

#include "rtnl-monitor.h"
#include "uevent-monitor.h"

/* A burst of device events costs one pass, this long after its last event ... */
#define DEVICE_DEBOUNCE_USEC (100 * USEC_PER_MSEC)
/* ... or this long after its first one, whichever comes first. */
#define DEVICE_DEBOUNCE_MAX_USEC (1000 * USEC_PER_MSEC)
/* Rule-level lines logged for one plan generation, at most (then they may repeat). */
#define LOGGED_MAX 1024

/* ---- rule-level logging, once per plan generation ---- */

/* True the first time line is seen in this plan generation. */
static bool logged_first_time(DevicePlacement *d, const char *line) {
        char **l;

        if (d->logged_generation != *d->ctx.plan_generation || d->n_logged >= LOGGED_MAX) {
                for (size_t i = 0; i < d->n_logged; i++)
                        free(d->logged[i]);
                d->n_logged = 0;
                d->logged_generation = *d->ctx.plan_generation;
        }
        for (size_t i = 0; i < d->n_logged; i++)
                if (streq(d->logged[i], line))
                        return false;
        l = reallocarray(d->logged, d->n_logged + 1, sizeof(char *));
        if (!l)
                return true;
        d->logged = l;
        d->logged[d->n_logged] = strdup(line);
        if (d->logged[d->n_logged])
                d->n_logged++;
        return true;
}

_printf_(4, 5) static void log_rule_line(
        DevicePlacement *d, int level, const char *rule, const char *format, ...) {
        _cleanup_free_ char *line = NULL;
        va_list ap;
        int k;

        va_start(ap, format);
        k = vasprintf(&line, format, ap);
        va_end(ap);
        if (k < 0 || !logged_first_time(d, line))
                return;
        log_device(level, 0, rule, NULL, NULL, NULL, "%s", line);
}

static char *strv_join_semicolon(char *const *l) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        STRV_FOREACH (s, l)
                fprintf(f, "%s%s", s == l ? "" : "; ", *s);
        if (fclose(f) < 0)
                return mfree(text);
        return text;
}

/* What the irqs: and net: rules resolved to, each line once per plan generation (device events
 * re-plan often; only what is new is said). */
static void log_device_plan(DevicePlacement *d, const DevicePlan *dp) {
        const Config *c = dp->config;
        char where[PATH_MAX + 32];

        for (size_t i = 0; dp->irq_rules && i < c->n_irq_rules; i++) {
                const IrqRulePlan *rp = &dp->irq_rules[i];
                const IrqRule *rule = &c->irq_rules[i];
                _cleanup_free_ char *cpus = NULL, *explanation = strv_join_semicolon(rp->explanation);

                if (rp->pending_reason)
                        log_rule_line(
                                d, LOG_WARNING, rule->name, "%sirqs: rule %s is pending: %s",
                                location_prefix(
                                        rp->pending_location ?: &rule->location, where, sizeof(where)),
                                rule->name, rp->pending_reason);
                else {
                        cpus = cpuset_to_string(&rp->cpus);
                        log_rule_line(
                                d, LOG_INFO, rule->name, "IRQ rule %s: CPUs %s%s%s%s", rule->name,
                                strna(cpus), rule->spread ? " (spread)" : "",
                                explanation && *explanation ? "; " : "", strempty(explanation));
                }
                STRV_FOREACH (w, rp->warnings)
                        log_rule_line(
                                d, LOG_WARNING, rule->name, "%swarning: irqs: rule %s: %s",
                                location_prefix(&rule->location, where, sizeof(where)), rule->name, *w);
        }

        for (size_t i = 0; dp->net_rules && i < c->n_net_rules; i++) {
                const NetRulePlan *np = &dp->net_rules[i];
                const NetRule *rule = &c->net_rules[i];
                _cleanup_free_ char *rps = NULL, *xps = NULL,
                                    *explanation = strv_join_semicolon(np->explanation);

                if (np->pending_reason)
                        log_rule_line(
                                d, LOG_WARNING, rule->name, "%snet: rule %s is pending: %s",
                                location_prefix(
                                        np->pending_location ?: &rule->location, where, sizeof(where)),
                                rule->name, np->pending_reason);
                else {
                        rps = np->has_rps ? cpuset_to_string(&np->rps) : NULL;
                        xps = np->has_xps ? cpuset_to_string(&np->xps) : NULL;
                        log_rule_line(
                                d, LOG_INFO, rule->name, "Net rule %s: RPS %s, XPS %s%s%s", rule->name,
                                np->has_rps ? strna(rps) : "untouched",
                                np->has_xps ? strna(xps) : "untouched",
                                explanation && *explanation ? "; " : "", strempty(explanation));
                }
                STRV_FOREACH (w, np->warnings)
                        log_rule_line(
                                d, LOG_WARNING, rule->name, "%swarning: net: rule %s: %s",
                                location_prefix(&rule->location, where, sizeof(where)), rule->name, *w);
        }
        if (dp->has_rfs)
                log_rule_line(
                        d, LOG_INFO, NULL, "RFS: %" PRIu32 " flow entries (net.core.rps_sock_flow_entries)",
                        dp->rfs_entries);
}

/* ---- the pass ---- */

/* Targets no rule covered in this pass: their originals back where they still exist, records
 * of vanished ones dropped. A record is never dropped while what it describes exists and its
 * original could not be given back: a failed restore keeps it, tried again at the next pass and
 * by device_placement_restore_all(); an IRQ that /proc/interrupts doesn't list (no handler, no
 * count) but still exists is left alone with its record. */
static int sweep(DevicePlacement *d, const DeviceInventory *inv) {
        _cleanup_free_ Target **targets = NULL;
        size_t n = 0;
        int r;

        r = targets_collect(d, &targets, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];
                _cleanup_free_ char *why = NULL;
                TargetPresence presence;

                if (t->pass == d->pass)
                        continue;
                presence = inv->irq_error < 0 && t->kind == TARGET_IRQ ? TARGET_UNVERIFIABLE
                                                                       : target_presence(d, t, inv);
                if (presence == TARGET_GONE || !t->original || d->ctx.dry_run ||
                    t->state == TARGET_RELEASED) {
                        target_forget(d, t);
                        continue;
                }
                if (t->kind == TARGET_IRQ && presence == TARGET_PRESENT) {
                        const DeviceIrq *irq = device_inventory_find_irq(inv, t->irq);
                        r = free_and_strdup(&t->name, strempty(irq ? irq->actions : NULL));
                        if (r < 0)
                                return r;
                }
                if (presence == TARGET_PRESENT) {
                        if (asprintf(
                                    &why,
                                    t->rule                         ? "rule %s no longer covers it"
                                            : t->kind == TARGET_RFS ? "rfs: no longer set%s"
                                                                    : "no rule covers it any more%s",
                                    strempty(t->rule)) < 0)
                                return -ENOMEM;
                        r = target_restore(d, t, why);
                        if (r >= 0 || r == -ENOENT || r == -EBADMSG) {
                                target_forget(d, t);
                                continue;
                        }
                        free(why);
                        why = NULL;
                        if (asprintf(
                                    &why, "could not restore its original %s: %s", t->original,
                                    strerror(-r)) < 0)
                                return -ENOMEM;
                        r = target_set_reason(t, why);
                        if (r < 0)
                                return r;
                }
                if (presence == TARGET_UNVERIFIABLE)
                        (void)target_set_reason(t, NULL);
                /* Kept, uncovered: not written, not checked for drift. */
                t->rule = mfree(t->rule);
                t->state = TARGET_UNMANAGED;
                t->has_wanted = t->has_applied = t->has_drift = false;
                t->effective_pending = false;
        }
        return 0;
}

/* ---- apply ---- */

int device_placement_apply(DevicePlacement *d) {
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!*d->ctx.config || !*d->ctx.plan || !*d->ctx.topology)
                return 0;
        /* This pass covers every event so far. */
        debounce_cancel(&d->debounce);

        r = device_inventory_load(d->root, *d->ctx.config, &inv, &error);
        if (r == -ENOMEM)
                return log_error_errno(r, "Failed to read the IRQs and network devices: %m");
        if (r < 0) {
                if (!d->inventory_failed)
                        log_warning_errno(
                                r,
                                "Failed to read the IRQs and network devices (%s): %m; IRQs and queues are "
                                "left as they are until they can be read",
                                error ?: "/proc/interrupts, /sys/class/net");
                d->inventory_failed = true;
                return 0;
        }
        d->inventory_failed = false;
        if (inv->irq_warning) {
                if (!streq_ptr(inv->irq_warning, d->irq_warning))
                        log_warning(
                                "%s%s", inv->irq_warning,
                                inv->irq_error < 0 ? "; IRQs are left as they are until it can be read"
                                                   : "");
                (void)free_and_strdup(&d->irq_warning, inv->irq_warning);
        } else
                d->irq_warning = mfree(d->irq_warning);
        r = device_plan_new(*d->ctx.config, *d->ctx.plan, *d->ctx.topology, inv, &dp);
        if (r < 0)
                return log_error_errno(r, "Failed to plan IRQs and queues: %m");
        d->mask_bits = inv->mask_bits;
        log_device_plan(d, dp);

        d->pass++;
        d->n_irqs_set = d->n_queues_set = d->n_restored = 0;
        log_debug(
                "Device pass %u: %zu IRQs, %zu network interfaces (after %" PRIu64 " device events)",
                d->pass, inv->n_irqs, inv->n_nets, d->counters.device_events);
        r = targets_follow_renames(d, inv);
        if (r >= 0)
                r = place_irqs(d, inv, dp);
        if (r >= 0)
                r = place_queues(d, inv, dp);
        if (r >= 0)
                r = place_rfs(d, dp);
        if (r >= 0)
                r = sweep(d, inv);
        if (r < 0)
                return log_error_errno(r, "Failed to place IRQs and queues: %m");

        device_inventory_free(d->inv);
        d->inv = TAKE_PTR(inv);
        if (d->n_irqs_set + d->n_queues_set + d->n_restored > 0)
                log_info(
                        "Devices: set %u IRQ affinities and %u queue settings, restored %u", d->n_irqs_set,
                        d->n_queues_set, d->n_restored);
        irqbalance_check(d);
        irq_effective_schedule(d);
        (void)device_drift_update(d);
        return 0;
}

/* ---- events ---- */

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata) {
        DevicePlacement *d = userdata;

        (void)device_placement_apply(d);
        return 0;
}

/* A pass DEVICE_DEBOUNCE_USEC after the last event of a burst (at most DEVICE_DEBOUNCE_MAX_USEC
 * after its first). */
static void device_schedule(DevicePlacement *d) {
        int r = debounce_arm(
                &d->debounce, d->ctx.event, DEVICE_DEBOUNCE_USEC, DEVICE_DEBOUNCE_MAX_USEC,
                SD_EVENT_PRIORITY_NORMAL, "device-events", on_debounce, d);
        if (r < 0) {
                log_warning_errno(r, "Failed to arm the device event timer, placing devices now: %m");
                (void)device_placement_apply(d);
        }
}

/* What rtnetlink last said of a link. */
typedef struct Link {
        int ifindex; /* first: the tsearch key */
        unsigned flags;
        uint32_t n_rx_queues, n_tx_queues;
        char name[IFNAMSIZ];
} Link;

static int link_compare(const void *a, const void *b) {
        const Link *x = a, *y = b;
        return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex ? 1 : 0;
}

/* The flags whose change matters: a link coming up is when many drivers allocate their IRQs. */
#define LINK_FLAGS_RELEVANT (IFF_UP | IFF_RUNNING | IFF_LOWER_UP)

/*
 * Whether a link event can change what is placed: RTM_DELLINK; a new link (an ifindex not seen
 * yet, or ifi_change all ones, as the kernel sends for a registration); a change of IFF_UP,
 * IFF_RUNNING or IFF_LOWER_UP (in ifi_change, or against the flags last seen: carrier changes
 * come with ifi_change 0); another name for a known ifindex (a rename); other queue counts.
 * The rest (MTU, address, alias, statistics, ...) is not. Remembers what ev says.
 */
static bool link_event_relevant(DevicePlacement *d, const RtnlLinkEvent *ev) {
        Link probe = {.ifindex = ev->ifindex}, *l;
        bool relevant = false;
        void *node;

        node = tfind(&probe, &d->links, link_compare);
        l = node ? *(Link **)node : NULL;
        if (ev->action == RTNL_LINK_DEL) {
                if (l) {
                        tdelete(l, &d->links, link_compare);
                        free(l);
                }
                return true;
        }
        if (!l) {
                l = calloc(1, sizeof(Link));
                if (!l)
                        return true;
                l->ifindex = ev->ifindex;
                if (!tsearch(l, &d->links, link_compare)) {
                        free(l);
                        return true;
                }
                relevant = true;
        } else
                relevant = ev->change == UINT_MAX || (ev->change & LINK_FLAGS_RELEVANT) ||
                        ((ev->flags ^ l->flags) & LINK_FLAGS_RELEVANT) ||
                        (ev->name && !streq(ev->name, l->name)) ||
                        (ev->n_rx_queues > 0 && ev->n_rx_queues != l->n_rx_queues) ||
                        (ev->n_tx_queues > 0 && ev->n_tx_queues != l->n_tx_queues);
        l->flags = ev->flags;
        if (ev->name)
                snprintf(l->name, sizeof(l->name), "%s", ev->name);
        if (ev->n_rx_queues > 0)
                l->n_rx_queues = ev->n_rx_queues;
        if (ev->n_tx_queues > 0)
                l->n_tx_queues = ev->n_tx_queues;
        return relevant;
}

static void on_rtnl_link(RtnlMonitor *monitor, const RtnlLinkEvent *ev, void *userdata) {
        DevicePlacement *d = userdata;
        bool relevant;

        d->counters.device_events++;
        relevant = link_event_relevant(d, ev);
        log_debug(
                "Link %s (ifindex %d): %s, flags 0x%x, change 0x%x, %" PRIu32 " rx / %" PRIu32
                " tx queues%s",
                strna(ev->name), ev->ifindex, ev->action == RTNL_LINK_DEL ? "removed" : "new or changed",
                ev->flags, ev->change, ev->n_rx_queues, ev->n_tx_queues,
                relevant ? "" : ": nothing relevant changed, ignored");
        if (relevant)
                device_schedule(d);
}

static void on_device_lost(DevicePlacement *d, int error, const char *source) {
        if (ratelimit_below(&d->lost_ratelimit, NULL))
                log_warning_errno(
                        error,
                        "%s events may have been lost (%m), reading the IRQs and network devices again",
                        source);
        device_schedule(d);
}

static void on_rtnl_lost(RtnlMonitor *monitor, int error, void *userdata) {
        on_device_lost(userdata, error, "rtnetlink");
}

/* uevents of "net" (add, remove, move: a rename) and "queues" (add, remove: a queue-count
 * change) schedule a pass; other actions ("change", ...) are counted only. */
static int on_net_uevent(UeventMonitor *monitor, const Uevent *ev, void *userdata) {
        DevicePlacement *d = userdata;
        bool relevant = streq(ev->action, "add") || streq(ev->action, "remove") ||
                (streq_ptr(ev->subsystem, "net") && streq(ev->action, "move"));

        d->counters.device_events++;
        log_debug(
                "uevent %s %s (%s)%s", ev->action, ev->devpath, strna(ev->subsystem),
                relevant ? "" : ": ignored");
        if (relevant)
                device_schedule(d);
        return 0;
}

static void on_net_uevent_lost(UeventMonitor *monitor, int error, void *userdata) {
        on_device_lost(userdata, error, "Kernel uevent");
}

/* ---- lifecycle ---- */

int device_placement_new(const DeviceContext *c, DevicePlacement **ret) {
        DevicePlacement *d = calloc(1, sizeof(DevicePlacement));

        if (!d)
                return -ENOMEM;
        d->ctx = *c;
        d->root = strdup(c->root ?: "/");
        if (!d->root || (c->state_dir && !(d->state_dir = strdup(c->state_dir))))
                return device_placement_free(d), -ENOMEM;
        d->ctx.root = d->root;
        d->ctx.state_dir = d->state_dir;
        d->mask_bits = 32;
        d->lost_ratelimit = (RateLimit){.interval_usec = 60 * 1000 * USEC_PER_MSEC, .burst = 3};
        *ret = d;
        return 0;
}

DevicePlacement *device_placement_free(DevicePlacement *d) {
        if (!d)
                return NULL;
        debounce_done(&d->debounce);
        d->drift_source = sd_event_source_disable_unref(d->drift_source);
        d->effective_source = sd_event_source_disable_unref(d->effective_source);
        d->net_subscription = uevent_subscription_free(d->net_subscription);
        d->queues_subscription = uevent_subscription_free(d->queues_subscription);
        d->rtnl = rtnl_monitor_free(d->rtnl);
        tdestroy(d->targets, target_free_void);
        device_inventory_free(d->inv);
        for (size_t i = 0; i < d->n_logged; i++)
                free(d->logged[i]);
        free(d->logged);
        device_status_clear(d);
        tdestroy(d->links, free);
        free(d->irq_warning);
        free(d->root);
        free(d->state_dir);
        return mfree(d);
}

int device_placement_start(DevicePlacement *d) {
        int r;

        if (d->started)
                return 0;
        d->started = true;

        if (d->ctx.listen) {
                r = rtnl_monitor_new(d->ctx.event, on_rtnl_link, on_rtnl_lost, d, &d->rtnl);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning_errno(
                                r,
                                "Cannot receive rtnetlink link events: %m. New network devices, queues and "
                                "IRQs will be placed only on reload.");
                if (d->ctx.uevent_monitor && *d->ctx.uevent_monitor) {
                        r = uevent_monitor_subscribe(
                                *d->ctx.uevent_monitor, "net", on_net_uevent, on_net_uevent_lost, d,
                                &d->net_subscription);
                        if (r >= 0)
                                r = uevent_monitor_subscribe(
                                        *d->ctx.uevent_monitor, "queues", on_net_uevent, NULL, d,
                                        &d->queues_subscription);
                        if (r < 0)
                                return r;
                }
        }
        return device_recover(d);
}

const DevicePlacementCounters *device_placement_counters(const DevicePlacement *d) {
        return &d->counters;
}

int device_placement_restore_all(DevicePlacement *d) {
        _cleanup_(device_drift_tick_done) DriftTick tick = {.online = CPUSET_NULL};
        _cleanup_free_ Target **targets = NULL;
        size_t n = 0, restored = 0, kept = 0;
        int failed = 0, r;

        if (!d || d->ctx.dry_run)
                return 0;
        d->n_restored = 0;
        r = targets_collect(d, &targets, &n);
        if (r < 0) {
                log_error_errno(r, "Failed to restore IRQs and queues: %m");
                return (int)MIN(d->n_targets, (size_t)INT_MAX);
        }
        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];
                TargetPresence p = TARGET_PRESENT;
                char what[128];

                if (!t->original || t->state == TARGET_RELEASED) {
                        target_forget(d, t);
                        continue;
                }
                /* Still the same IRQ (/proc/interrupts read once), the same interface? */
                if (t->kind == TARGET_IRQ)
                        p = device_irq_presence_now(d, t, &tick);
                else if (!queue_same_device(d, t))
                        p = TARGET_UNVERIFIABLE; /* renamed or gone since the last pass */
                if (p == TARGET_GONE) {
                        log_debug(
                                "%s is another one now or gone, nothing to restore",
                                target_describe(t, what, sizeof(what)));
                        target_forget(d, t);
                        continue;
                }
                if (p == TARGET_UNVERIFIABLE) {
                        /* Its record stays: the next instance sorts it out. */
                        log_debug(
                                "%s can't be verified to be what was placed, not restored; its record is "
                                "kept",
                                target_describe(t, what, sizeof(what)));
                        kept++;
                        continue;
                }
                r = target_restore(d, t, "restore-on-exit");
                if (r >= 0)
                        restored++;
                else if (r != -ENOENT && r != -EBADMSG) {
                        failed++; /* its record stays for the next instance */
                        continue;
                }
                target_forget(d, t);
        }
        if (restored > 0 || failed > 0 || kept > 0)
                log_info(
                        "restore-on-exit: restored %zu IRQ and queue settings to their originals%s%s",
                        restored,
                        failed > 0 ? " (some could not be restored, see above; their records are kept)" : "",
                        kept > 0 ? " (some changed since and were left alone, their records kept)" : "");
        return failed;
}
