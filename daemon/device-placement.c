/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement: irqs: and net: rules brought to the kernel, kept, and undone. See
 * device-placement.h. */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if.h>

#include <systemd/sd-event.h>

#include "device-placement.h"

#include "fileio.h"
#include "interrupts.h"
#include "irq.h"
#include "log.h"
#include "manager-bus.h"
#include "manager.h"
#include "netdev.h"
#include "rtnl-monitor.h"
#include "state.h"
#include "uevent-monitor.h"
#include "procfs.h"
#include "util.h"

#define USEC_PER_MSEC UINT64_C(1000)
/* A burst of device events costs one pass, this long after its last event ... */
#define DEVICE_DEBOUNCE_USEC (100 * USEC_PER_MSEC)
/* ... or this long after its first one, whichever comes first. */
#define DEVICE_DEBOUNCE_MAX_USEC (1000 * USEC_PER_MSEC)
/* Rule-level lines logged for one plan generation, at most (then they may repeat). */
#define LOGGED_MAX 1024
/* The effective affinity of an IRQ is checked this long after a write ... */
#define IRQ_EFFECTIVE_DELAY_USEC (1000 * USEC_PER_MSEC)
/* ... and again while it has not fired since, this many times at most. */
#define IRQ_EFFECTIVE_CHECKS 10
/* Under on-drift: enforce, a target's corrections are logged at most once this often (the first
 * one at once; later lines say how many were made since). */
#define DRIFT_LOG_INTERVAL_USEC (60 * 1000 * USEC_PER_MSEC)

typedef enum TargetKind {
        TARGET_IRQ,  /* /proc/irq/N/smp_affinity_list */
        TARGET_RPS,  /* rx-N/rps_cpus */
        TARGET_XPS,  /* tx-N/xps_cpus */
        TARGET_FLOW, /* rx-N/rps_flow_cnt */
        TARGET_RFS,  /* net.core.rps_sock_flow_entries */
        _TARGET_KIND_MAX,
        _TARGET_KIND_INVALID = -EINVAL,
} TargetKind;

/* The kinds of lib/state.h's StateTarget. */
static const char *const target_kind_table[_TARGET_KIND_MAX] = {
        [TARGET_IRQ] = "irq",   [TARGET_RPS] = "rps", [TARGET_XPS] = "xps",
        [TARGET_FLOW] = "flow", [TARGET_RFS] = "rfs",
};

typedef enum TargetState {
        TARGET_UNMANAGED,
        TARGET_APPLIED,
        TARGET_MANAGED,
        TARGET_REFUSED,
        TARGET_DRIFTED,
        TARGET_RELEASED,
        TARGET_PENDING,
        _TARGET_STATE_MAX,
} TargetState;

/* As ListIrqs / ListNetQueues show them. */
static const char *const target_state_table[_TARGET_STATE_MAX] = {
        [TARGET_UNMANAGED] = "unmanaged", [TARGET_APPLIED] = "applied", [TARGET_MANAGED] = "managed",
        [TARGET_REFUSED] = "refused",     [TARGET_DRIFTED] = "drifted", [TARGET_RELEASED] = "released",
        [TARGET_PENDING] = "pending",
};

#define RFS_KEY "rps_sock_flow_entries"

/* The value of a target: a mask (irq, rps, xps) or a count (flow, rfs). */
typedef struct TargetValue {
        CpuSet cpus;
        uint32_t count;
} TargetValue;

/*
 * One thing the daemon covers with a rule or has an original of: an IRQ's affinity, a queue's
 * mask or flow count, the global RFS table. Keyed by (kind, key) in DevicePlacement.targets.
 */
typedef struct Target {
        TargetKind kind; /* first two: the tsearch key */
        char *key;       /* "38", "eth0/rx-0", "eth0/tx-1", RFS_KEY (lib/state.h) */
        /* What tells it from a later one with the same key: the IRQ's DeviceIrq.identity ("CHIP
         * HWIRQ", which stays when the driver frees and requests the vector again at ifdown/ifup and
         * its name goes blank), the interface's ifindex (decimal), "" for the RFS table. */
        char *identity;
        char *name;   /* TARGET_IRQ: its action names as last seen, for messages; NULL: unknown */
        unsigned irq; /* TARGET_IRQ */
        char *device; /* rps, xps, flow */
        unsigned queue;

        char *original; /* as read before the first write (StateTarget.original); NULL: never
                         * written, nothing to give back */
        bool persisted; /* its record is in the state dir */

        char *rule; /* the rule that covered it in the last pass; NULL: none */
        DriftMode on_drift;
        TargetState state;
        char *reason;  /* for ListIrqs; NULL: "" */
        unsigned pass; /* the apply pass that last covered it */

        bool has_wanted;
        TargetValue wanted; /* what the rule asks */
        bool has_applied;
        TargetValue applied; /* what the kernel kept: read back after the write, or found */
        /* Plan generation in which the refusal, drift or release below happened: the target is
         * not written again in it unless what is asked changes. */
        unsigned generation;
        bool has_drift;
        TargetValue drift; /* the changed value last reported (reported once per value) */
        bool effective_warned;
        /* IRQs: written, effective affinity not checked yet. The kernel may move an IRQ only at
         * its next interrupt: effective_count is its total count when written, so a check that
         * finds it not moved knows whether it had the chance. */
        bool effective_pending;
        uint64_t effective_count;
        unsigned effective_checks;
        bool irqbalance_checked; /* a running irqbalance was named for it */
        bool restore_failed;     /* giving the original back failed (logged once; retried) */
        /* on-drift: enforce: corrections since the last line logged, and when that was. */
        unsigned drift_unlogged;
        uint64_t drift_logged_usec;
} Target;

struct DevicePlacement {
        Manager *manager;
        char *root;
        DeviceInventory *inv; /* of the last pass */
        unsigned mask_bits;
        void *targets; /* tsearch(3) root of Target */
        size_t n_targets;
        unsigned pass;
        DevicePlacementCounters counters;

        bool started;
        RtnlMonitor *rtnl;
        UeventSubscription *net_subscription;
        UeventSubscription *queues_subscription;
        sd_event_source *debounce_source;
        uint64_t burst_start_usec;
        sd_event_source *drift_source;
        uint64_t drift_interval_usec;
        sd_event_source *effective_source; /* armed while an IRQ's effective affinity is due */
        RateLimit lost_ratelimit;
        bool inventory_failed; /* the last inventory failed (logged once) */
        char *irq_warning;     /* DeviceInventory.irq_warning last logged (logged when it changes) */
        void *links;           /* tsearch(3) root of Link: what rtnetlink said of each ifindex */

        unsigned logged_generation; /* rule lines in logged are of this plan generation */
        char **logged;
        size_t n_logged;

        /* Pass summary for the info line. */
        unsigned n_irqs_set;
        unsigned n_queues_set;
        unsigned n_restored;

        IrqStatus *irq_status;
        size_t n_irq_status;
        NetQueueStatus *queue_status;
        size_t n_queue_status;
        char (*queue_names)[32];
};

/* ---- values ---- */

static bool kind_is_mask(TargetKind k) {
        return k == TARGET_IRQ || k == TARGET_RPS || k == TARGET_XPS;
}

static void target_value_done(TargetValue *v) {
        cpuset_done(&v->cpus);
        v->count = 0;
}

static bool target_value_equal(TargetKind k, const TargetValue *a, const TargetValue *b) {
        return kind_is_mask(k) ? cpuset_equal(&a->cpus, &b->cpus) : a->count == b->count;
}

static int target_value_copy(TargetValue *dst, const TargetValue *src) {
        int r = cpuset_copy(&dst->cpus, &src->cpus);
        if (r < 0)
                return r;
        dst->count = src->count;
        return 0;
}

/* What the kernel keeps when v is written: counts are rounded up to a power of two. */
static int target_value_expected(TargetKind k, const TargetValue *v, TargetValue *ret) {
        int r = target_value_copy(ret, v);
        if (r < 0)
                return r;
        if (!kind_is_mask(k))
                ret->count = netdev_flow_cnt_expected(v->count);
        return 0;
}

/* For logs: a cpu-list ("none" for an empty mask) or the count. NULL on OOM. */
static char *target_value_to_string(TargetKind k, const TargetValue *v) {
        char *s = NULL;

        if (kind_is_mask(k)) {
                if (cpuset_is_empty(&v->cpus))
                        return strdup("none");
                return cpuset_to_string(&v->cpus);
        }
        if (asprintf(&s, "%" PRIu32, v->count) < 0)
                return NULL;
        return s;
}

/* ---- targets ---- */

static int target_compare(const void *a, const void *b) {
        const Target *x = a, *y = b;

        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return strcmp(x->key, y->key);
}

static Target *target_free(Target *t) {
        if (!t)
                return NULL;
        free(t->key);
        free(t->identity);
        free(t->name);
        free(t->device);
        free(t->original);
        free(t->rule);
        free(t->reason);
        target_value_done(&t->wanted);
        target_value_done(&t->applied);
        target_value_done(&t->drift);
        return mfree(t);
}

static void target_free_void(void *p) {
        target_free(p);
}

static TargetKind target_kind_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(target_kind_table); i++)
                if (streq(s, target_kind_table[i]))
                        return (TargetKind)i;
        return _TARGET_KIND_INVALID;
}

static int parse_unsigned(const char *s, unsigned *ret) {
        unsigned long v;
        char *end;

        if (!s || !isdigit((unsigned char)s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > UINT_MAX)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

/* Splits key into what the target is about (lib/state.h's keys). Returns 0 or -EINVAL. */
static int target_parse_key(Target *t) {
        const char *slash, *prefix;

        switch (t->kind) {
        case TARGET_IRQ:
                return parse_unsigned(t->key, &t->irq);
        case TARGET_RFS:
                return streq(t->key, RFS_KEY) ? 0 : -EINVAL;
        case TARGET_RPS:
        case TARGET_FLOW:
        case TARGET_XPS:
                prefix = t->kind == TARGET_XPS ? "tx-" : "rx-";
                slash = strrchr(t->key, '/');
                if (!slash || slash == t->key || strncmp(slash + 1, prefix, 3) != 0 ||
                    parse_unsigned(slash + 4, &t->queue) < 0)
                        return -EINVAL;
                t->device = strndup(t->key, (size_t)(slash - t->key));
                return t->device ? 0 : -ENOMEM;
        default:
                return -EINVAL;
        }
}

static Target *target_find(DevicePlacement *d, TargetKind kind, const char *key) {
        Target probe = {.kind = kind, .key = (char *)key};
        void *node = tfind(&probe, &d->targets, target_compare);
        return node ? *(Target **)node : NULL;
}

/* A new target (not in the tree yet). */
static int target_new(TargetKind kind, const char *key, const char *identity, Target **ret) {
        Target *t = calloc(1, sizeof(Target));
        int r;

        if (!t)
                return -ENOMEM;
        t->kind = kind;
        t->key = strdup(key);
        t->identity = strdup(strempty(identity));
        if (!t->key || !t->identity) {
                target_free(t);
                return -ENOMEM;
        }
        r = target_parse_key(t);
        if (r < 0) {
                target_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

static int target_insert(DevicePlacement *d, Target *t) {
        void *node = tsearch(t, &d->targets, target_compare);
        if (!node)
                return -ENOMEM;
        if (*(Target **)node != t)
                return -EEXIST;
        d->n_targets++;
        return 0;
}

/*
 * The identity of an IRQ of the inventory: DeviceIrq.identity ("CHIP HWIRQ": the same IRQ while
 * its name goes blank or changes at ifdown/ifup), or its action names where an inventory has no
 * identity (hand-built ones). Records of a previous version, whose IRQ identity was the action
 * names, don't match the new identity: they are dropped like those of an IRQ number that passed
 * to another device, without writing anything back.
 */
static const char *device_irq_identity(const DeviceIrq *irq) {
        return irq->identity ?: strempty(irq->actions);
}

/* "IRQ 38 (virtio2-input.0)", "vt0 rx-1 rps_cpus", ... into buf. */
static const char *target_describe(const Target *t, char *buf, size_t size) {
        switch (t->kind) {
        case TARGET_IRQ:
                if (t->name && t->name[0])
                        snprintf(buf, size, "IRQ %u (%s)", t->irq, t->name);
                else
                        snprintf(buf, size, "IRQ %u", t->irq);
                break;
        case TARGET_RPS:
                snprintf(buf, size, "%s rx-%u rps_cpus", t->device, t->queue);
                break;
        case TARGET_XPS:
                snprintf(buf, size, "%s tx-%u xps_cpus", t->device, t->queue);
                break;
        case TARGET_FLOW:
                snprintf(buf, size, "%s rx-%u rps_flow_cnt", t->device, t->queue);
                break;
        default:
                snprintf(buf, size, "net.core.rps_sock_flow_entries");
                break;
        }
        return buf;
}

/* Journal fields of a message about t; irq_buf holds the IRQ= text. */
static LogFields target_fields(const Target *t, const char *cpus, char irq_buf[static 16]) {
        irq_buf[0] = '\0';
        if (t->kind == TARGET_IRQ)
                snprintf(irq_buf, 16, "%u", t->irq);
        return (LogFields){
                .policy = t->rule,
                .irq = t->kind == TARGET_IRQ ? irq_buf : NULL,
                .interface = t->device,
                .cpus = cpus,
        };
}

#define log_target(level, error, t, cpus, ...) \
        ({ \
                char _irq_buf_[16]; \
                LogFields _f_ = target_fields((t), (cpus), _irq_buf_); \
                log_full_errno_fields(level, error, &_f_, __VA_ARGS__); \
        })

/* log_target() with a MESSAGE_ID= (one of AFFINITYD_MESSAGE_*, or NULL for none). */
#define log_target_id(level, error, id, t, cpus, ...) \
        ({ \
                char _irq_buf_[16]; \
                LogFields _f_ = target_fields((t), (cpus), _irq_buf_); \
                _f_.message_id = (id); \
                log_full_errno_fields(level, error, &_f_, __VA_ARGS__); \
        })

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
        (void)manager_bus_emit_drift_detected(
                d->manager, t->kind == TARGET_IRQ ? "irq" : "queue", target, strempty(t->rule),
                strempty(found),
                t->on_drift == DRIFT_ENFORCE           ? "enforce"
                        : t->on_drift == DRIFT_RESPECT ? "respect"
                                                       : "report");
}

/* "rule NAME" for messages ("rfs: setting" for the global RFS table). One per message: the
 * buffer is static. */
static const char *rule_label(const Target *t) {
        static char buf[256];

        if (!t->rule)
                return "rfs: setting";
        snprintf(buf, sizeof(buf), "rule %s", t->rule);
        return buf;
}

static int target_set_reason(Target *t, const char *reason) {
        return free_and_strdup(&t->reason, reason);
}

static int target_read(DevicePlacement *d, const Target *t, TargetValue *ret) {
        switch (t->kind) {
        case TARGET_IRQ:
                return irq_read_affinity(d->root, t->irq, &ret->cpus);
        case TARGET_RPS:
                return netdev_read_rps(d->root, t->device, t->queue, &ret->cpus);
        case TARGET_XPS:
                return netdev_read_xps(d->root, t->device, t->queue, &ret->cpus);
        case TARGET_FLOW:
                return netdev_read_flow_cnt(d->root, t->device, t->queue, &ret->count);
        case TARGET_RFS:
                return netdev_read_rfs_entries(d->root, &ret->count);
        default:
                return -EINVAL;
        }
}

static int target_write(DevicePlacement *d, const Target *t, const TargetValue *v) {
        switch (t->kind) {
        case TARGET_IRQ:
                return irq_write_affinity(d->root, t->irq, &v->cpus);
        case TARGET_RPS:
                return netdev_write_rps(d->root, t->device, t->queue, &v->cpus, d->mask_bits);
        case TARGET_XPS:
                return netdev_write_xps(d->root, t->device, t->queue, &v->cpus, d->mask_bits);
        case TARGET_FLOW:
                return netdev_write_flow_cnt(d->root, t->device, t->queue, v->count);
        case TARGET_RFS:
                return netdev_write_rfs_entries(d->root, v->count);
        default:
                return -EINVAL;
        }
}

/* The original as recorded: a cpu-list for IRQs, the kernel's hex mask for queues, decimal
 * counts (lib/state.h). */
static int target_format_original(DevicePlacement *d, const Target *t, const TargetValue *v, char **ret) {
        switch (t->kind) {
        case TARGET_IRQ:
                return cpuset_format_list(&v->cpus, ret);
        case TARGET_RPS:
        case TARGET_XPS:
                return cpuset_format_mask(&v->cpus, d->mask_bits, ret);
        default:
                return asprintf(ret, "%" PRIu32, v->count) < 0 ? -ENOMEM : 0;
        }
}

static int target_parse_original(const Target *t, TargetValue *ret) {
        unsigned v;
        int r;

        if (!t->original)
                return -ENODATA;
        switch (t->kind) {
        case TARGET_IRQ:
                r = cpuset_parse_list(t->original, &ret->cpus, NULL);
                if (r >= 0 && cpuset_is_empty(&ret->cpus))
                        r = -EINVAL; /* never written: the kernel refuses an empty IRQ mask */
                return r;
        case TARGET_RPS:
        case TARGET_XPS:
                return cpuset_parse_mask(t->original, &ret->cpus, NULL);
        default:
                r = parse_unsigned(t->original, &v);
                if (r < 0)
                        return r;
                ret->count = v;
                return 0;
        }
}

/* Writes t's record (its original) to the state dir unless it is there already. Returns 0 (also
 * with no state dir, in dry run, or with no original) or -errno of state_target_write() (not
 * logged: the caller says what it means). */
static int target_persist(DevicePlacement *d, Target *t) {
        Manager *m = d->manager;
        int r;

        if (!m->state_dir || m->dry_run || !t->original || t->persisted)
                return 0;
        r = state_target_write(
                m->state_dir,
                &(const StateTarget){
                        .kind = (char *)target_kind_table[t->kind],
                        .key = t->key,
                        .identity = t->identity,
                        .original = t->original,
                });
        if (r < 0)
                return r;
        t->persisted = true;
        return 0;
}

/* Removes t's record from the state dir (t stays). */
static void target_unpersist(DevicePlacement *d, Target *t) {
        Manager *m = d->manager;
        char what[128];
        int r;

        if (!t->persisted || !m->state_dir || m->dry_run)
                return;
        r = state_target_remove(m->state_dir, target_kind_table[t->kind], t->key);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to remove the record of %s from %s: %m",
                        target_describe(t, what, sizeof(what)), m->state_dir);
        t->persisted = false;
}

/* Forgets t: its record is removed (nothing is written to the kernel) and t freed. */
static void target_forget(DevicePlacement *d, Target *t) {
        target_unpersist(d, t);
        if (tdelete(t, &d->targets, target_compare))
                d->n_targets--;
        target_free(t);
}

/*
 * Gives t its original back (why: "rule nic removed", "restore-on-exit"). Returns 0; -ENOENT:
 * the target vanished meanwhile (at debug); -EBADMSG: the recorded original is unusable (logged;
 * nothing to retry); other -errno: the write failed (logged at warning the first time, then at
 * debug: the caller keeps the record and retries).
 */
static int target_restore(DevicePlacement *d, Target *t, const char *why) {
        _cleanup_(target_value_done) TargetValue v = {};
        _cleanup_free_ char *text = NULL;
        char what[128];
        int r;

        target_describe(t, what, sizeof(what));
        r = target_parse_original(t, &v);
        if (r < 0) {
                log_target(
                        LOG_WARNING, r, t, NULL,
                        "Cannot restore %s: its recorded original \"%s\" is unusable", what,
                        strempty(t->original));
                return -EBADMSG;
        }
        text = target_value_to_string(t->kind, &v);
        r = target_write(d, t, &v);
        if (r == -ENOENT)
                return log_debug_errno(r, "%s is gone, nothing to restore", what);
        if (r == -EBADMSG)
                r = -EIO; /* -EBADMSG means something else to callers */
        if (r < 0) {
                log_target(
                        t->restore_failed ? LOG_DEBUG : LOG_WARNING, r, t, text,
                        "Failed to restore %s to %s (%s): %m; its record is kept and restoring is tried "
                        "again at the next pass and at exit",
                        what, strna(text), why);
                t->restore_failed = true;
                return r;
        }
        t->restore_failed = false;
        d->counters.restores++;
        d->n_restored++;
        log_target_id(
                t->kind == TARGET_IRQ ? LOG_INFO : LOG_DEBUG, 0, AFFINITYD_MESSAGE_RESTORED, t, text,
                "Restored %s to %s (%s)", what, strna(text), why);
        return 0;
}

/* ---- the pass ---- */

typedef struct CollectContext {
        Target **items;
        size_t n;
} CollectContext;

static void collect_action(const void *nodep, VISIT which, void *userdata) {
        CollectContext *c = userdata;

        if (which == postorder || which == leaf)
                c->items[c->n++] = *(Target *const *)nodep;
}

/* Every target in (kind, key) order, as a newly allocated array of borrowed pointers. */
static int targets_collect(DevicePlacement *d, Target ***ret, size_t *ret_n) {
        CollectContext c = {.items = calloc(MAX(d->n_targets, (size_t)1), sizeof(Target *))};

        if (!c.items)
                return -ENOMEM;
        twalk_r(d->targets, collect_action, &c);
        *ret = c.items;
        *ret_n = c.n;
        return 0;
}

/* The target (kind, key), made when missing; one whose identity changed (the IRQ number reused,
 * the interface made again) is forgotten first, its original not written back. */
static int target_get(
        DevicePlacement *d, TargetKind kind, const char *key, const char *identity, Target **ret) {
        Target *t = target_find(d, kind, key);
        char what[128];
        int r;

        if (t && !streq(t->identity, strempty(identity))) {
                log_debug(
                        "%s is another one now (was \"%s\", is \"%s\"), dropping what was recorded of it",
                        target_describe(t, what, sizeof(what)), t->identity, strempty(identity));
                target_forget(d, t);
                t = NULL;
        }
        if (!t) {
                r = target_new(kind, key, identity, &t);
                if (r < 0)
                        return r;
                r = target_insert(d, t);
                if (r < 0) {
                        target_free(t);
                        return r;
                }
        }
        *ret = t;
        return 0;
}

/* The rule covers t this pass. A new decision (another value asked, another plan) forgets
 * refusals, drift and releases of the previous one. */
static int target_cover(
        DevicePlacement *d, Target *t, const char *rule, DriftMode on_drift, const TargetValue *want) {
        unsigned generation = d->manager->plan_generation;
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

/* t's original could not be recorded in the state dir (error): t is not written (a restarted
 * daemon could not give it back), refused like a kernel refusal. */
static void target_not_recorded(DevicePlacement *d, Target *t, int error) {
        _cleanup_free_ char *reason = NULL;
        char what[128];

        t->state = TARGET_REFUSED;
        if (asprintf(
                    &reason, "cannot record its original in %s: %s", d->manager->state_dir,
                    strerror(-error)) >= 0)
                (void)target_set_reason(t, reason);
        if (t->kind == TARGET_IRQ)
                d->counters.irq_refusals++;
        else
                d->counters.queue_failures++;
        log_target(
                LOG_WARNING, error, t, NULL,
                "Cannot record the original of %s in %s: %m; not setting it (%s), as it could not be "
                "given back after a restart; tried again when a reload or a CPU change re-plans",
                target_describe(t, what, sizeof(what)), d->manager->state_dir, rule_label(t));
}

/* IRQs only: a mask mixing online and offline CPUs (accepted by the kernel, which delivers to the
 * online ones) is worth a warning. */
static void irq_check_online(DevicePlacement *d, Target *t, const CpuSet *want) {
        _cleanup_cpuset_ CpuSet offline = CPUSET_NULL;
        _cleanup_free_ char *list = NULL, *text = NULL;
        const Topology *topo = d->manager->topology;
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

/*
 * Records t's original (the value cur it has before the daemon's first write), in memory and in
 * the state dir, which must hold it before t is written. Returns 0 or -ENOMEM; *ret_error is 0,
 * or -errno of the state dir when the record could not be written: t must not be written then
 * (its original is forgotten again: read anew at the next try, as nothing was written).
 * A target that has its original already (written before, or recovered) is only re-persisted
 * if it has no record yet (a record that failed when a renamed interface's targets moved).
 */
static int target_record_original(DevicePlacement *d, Target *t, const TargetValue *cur, int *ret_error) {
        int r;

        *ret_error = 0;
        if (d->manager->dry_run)
                return 0;
        if (t->original) {
                (void)target_persist(d, t);
                return 0;
        }
        r = target_format_original(d, t, cur, &t->original);
        if (r < 0)
                return r;
        r = target_persist(d, t);
        if (r < 0) {
                t->original = mfree(t->original);
                *ret_error = r;
        }
        return 0;
}

/*
 * Brings a target a rule covers (target_cover() done) to want: recorded, written unless it
 * already is what is asked, read back. Per-target failures are reported, not returned.
 * Returns 0 or -ENOMEM.
 */
static int target_bring(DevicePlacement *d, Target *t, const TargetValue *want) {
        Manager *m = d->manager;
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
                                m->state_dir);
                r = target_value_copy(&t->applied, &cur);
                if (r < 0)
                        return r;
                t->has_applied = !m->dry_run;
                t->state = m->dry_run ? TARGET_UNMANAGED : TARGET_APPLIED;
                return target_set_reason(t, NULL);
        }

        cur_text = target_value_to_string(t->kind, &cur);
        if (m->dry_run) {
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

/* ---- rule-level logging, once per plan generation ---- */

/* True the first time line is seen in this plan generation. */
static bool logged_first_time(DevicePlacement *d, const char *line) {
        char **l;

        if (d->logged_generation != d->manager->plan_generation || d->n_logged >= LOGGED_MAX) {
                for (size_t i = 0; i < d->n_logged; i++)
                        free(d->logged[i]);
                d->n_logged = 0;
                d->logged_generation = d->manager->plan_generation;
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

/* ---- IRQs ---- */

static int place_irqs(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp) {
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
                        bool again =
                                t->state == TARGET_MANAGED && t->generation == d->manager->plan_generation;

                        r = target_cover(d, t, rule->name, rule->on_drift, NULL);
                        if (r < 0)
                                return r;
                        t->state = TARGET_MANAGED;
                        t->generation = d->manager->plan_generation;
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

/* ---- queues ---- */

static const DeviceNet *inventory_find_net(const DeviceInventory *inv, const char *name) {
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                if (streq(inv->nets[i].name, name))
                        return &inv->nets[i];
        return NULL;
}

static void queue_key(char *buf, size_t size, const char *device, bool tx, unsigned queue) {
        snprintf(buf, size, "%s/%s-%u", device, tx ? "tx" : "rx", queue);
}

/* Covers one queue setting with rule: brought to want, or with want NULL left as it is, pending
 * (pending_reason: why). */
static int place_queue(
        DevicePlacement *d, TargetKind kind, const char *device, const char *identity, unsigned queue,
        const NetRule *rule, const TargetValue *want, const char *pending_reason) {
        char key[PATH_MAX];
        Target *t;
        int r;

        queue_key(key, sizeof(key), device, kind == TARGET_XPS, queue);
        r = target_get(d, kind, key, identity, &t);
        if (r < 0)
                return r;
        if (!want) {
                r = target_cover(d, t, rule->name, rule->on_drift, NULL);
                if (r < 0)
                        return r;
                t->state = TARGET_PENDING;
                return target_set_reason(t, pending_reason);
        }
        r = target_cover(d, t, rule->name, rule->on_drift, want);
        if (r < 0)
                return r;
        return target_bring(d, t, want);
}

/* The first net: rule whose device glob matches name (file order), or SIZE_MAX. */
static size_t net_rule_for(const Config *c, const char *name) {
        for (size_t i = 0; i < c->n_net_rules; i++)
                if (fnmatch(c->net_rules[i].device, name, 0) == 0)
                        return i;
        return SIZE_MAX;
}

static int place_queues(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp) {
        const Config *c = dp->config;
        int r;

        for (size_t i = 0; i < dp->n_queues; i++) {
                const NetQueueAssignment *a = &dp->queues[i];
                const DeviceNet *net = inventory_find_net(inv, a->device);
                char identity[16];

                if (!net || a->rule >= c->n_net_rules)
                        continue;
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                r = place_queue(
                        d, a->kind == NET_QUEUE_XPS ? TARGET_XPS : TARGET_RPS, a->device, identity, a->queue,
                        &c->net_rules[a->rule], &(const TargetValue){.cpus = a->cpus}, NULL);
                if (r < 0)
                        return r;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt) {
                        r = place_queue(
                                d, TARGET_FLOW, a->device, identity, a->queue, &c->net_rules[a->rule],
                                &(const TargetValue){.count = a->flow_cnt}, NULL);
                        if (r < 0)
                                return r;
                }
        }

        /* Devices of a pending rule: left alone, shown as pending. */
        for (size_t i = 0; dp->net_rules && i < inv->n_nets; i++) {
                const DeviceNet *net = &inv->nets[i];
                size_t k = net_rule_for(c, net->name);
                const NetRule *rule;
                char identity[16];

                if (k == SIZE_MAX || !dp->net_rules[k].pending_reason)
                        continue;
                rule = &c->net_rules[k];
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                for (unsigned q = 0;
                     rule->rps.kind != CPU_SELECTOR_NONE && net->queues.has_rps && q < net->queues.n_rx;
                     q++) {
                        r = place_queue(
                                d, TARGET_RPS, net->name, identity, q, rule, NULL,
                                dp->net_rules[k].pending_reason);
                        if (r < 0)
                                return r;
                }
                for (unsigned q = 0; rule->xps != XPS_NONE && net->queues.has_xps && q < net->queues.n_tx;
                     q++) {
                        r = place_queue(
                                d, TARGET_XPS, net->name, identity, q, rule, NULL,
                                dp->net_rules[k].pending_reason);
                        if (r < 0)
                                return r;
                }
                /* Flow counts: kept as they are, with their originals. */
                for (unsigned q = 0; q < net->queues.n_rx; q++) {
                        char key[PATH_MAX];
                        Target *t;

                        queue_key(key, sizeof(key), net->name, false, q);
                        t = target_find(d, TARGET_FLOW, key);
                        if (t && streq(t->identity, identity)) {
                                t->pass = d->pass;
                                t->state = TARGET_PENDING;
                                r = target_set_reason(t, dp->net_rules[k].pending_reason);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

static int place_rfs(DevicePlacement *d, const DevicePlan *dp) {
        Target *t;
        int r;

        if (!dp->has_rfs)
                return 0;
        r = target_get(d, TARGET_RFS, RFS_KEY, "", &t);
        if (r < 0)
                return r;
        r = target_cover(d, t, NULL, DRIFT_REPORT, &(const TargetValue){.count = dp->rfs_entries});
        if (r < 0)
                return r;
        return target_bring(d, t, &(const TargetValue){.count = dp->rfs_entries});
}

/* Whether what a target is about is still there. */
typedef enum TargetPresence {
        TARGET_GONE,         /* vanished, or another one now (IRQ number reused, name re-used) */
        TARGET_PRESENT,      /* the same thing */
        TARGET_UNVERIFIABLE, /* ROOT/proc/irq/N exists but /proc/interrupts doesn't list it (no
                              * handler and no count) or couldn't be read: left untouched, kept */
} TargetPresence;

/* Whether ROOT/proc/irq/N exists. */
static bool irq_dir_exists(DevicePlacement *d, unsigned irq) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/proc/irq/%u", streq(d->root, "/") ? "" : d->root, irq);
        return access(path, F_OK) >= 0 || errno != ENOENT;
}

/* The interface of inv with ifindex identity (decimal), or NULL. */
static const DeviceNet *inventory_find_ifindex(const DeviceInventory *inv, const char *identity) {
        unsigned ifindex;

        if (parse_unsigned(identity, &ifindex) < 0)
                return NULL;
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                if (inv->nets[i].queues.ifindex >= 0 && (unsigned)inv->nets[i].queues.ifindex == ifindex)
                        return &inv->nets[i];
        return NULL;
}

/* Whether what t is about still exists as the same thing in inv. An IRQ is the same while its
 * identity is (its name may have gone blank); one /proc/interrupts does not list is
 * unverifiable while ROOT/proc/irq/N exists. */
static TargetPresence target_presence(DevicePlacement *d, const Target *t, const DeviceInventory *inv) {
        const DeviceIrq *irq;
        const DeviceNet *net;
        char identity[16];

        switch (t->kind) {
        case TARGET_IRQ:
                irq = device_inventory_find_irq(inv, t->irq);
                if (irq)
                        return streq(device_irq_identity(irq), t->identity) ? TARGET_PRESENT : TARGET_GONE;
                return irq_dir_exists(d, t->irq) ? TARGET_UNVERIFIABLE : TARGET_GONE;
        case TARGET_RFS:
                return TARGET_PRESENT;
        default:
                net = inventory_find_net(inv, t->device);
                if (!net)
                        return TARGET_GONE;
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                if (!streq(identity, t->identity))
                        return TARGET_GONE;
                if (t->kind == TARGET_XPS)
                        return net->queues.has_xps && t->queue < net->queues.n_tx ? TARGET_PRESENT
                                                                                  : TARGET_GONE;
                return t->queue < net->queues.n_rx && (t->kind == TARGET_FLOW || net->queues.has_rps)
                        ? TARGET_PRESENT
                        : TARGET_GONE;
        }
}

/* Gives queue target t (not in the tree) the interface name device: key and device. Returns 0 or
 * -ENOMEM. */
static int target_set_device(Target *t, const char *device) {
        char key[PATH_MAX];
        char *k, *dev;

        queue_key(key, sizeof(key), device, t->kind == TARGET_XPS, t->queue);
        k = strdup(key);
        dev = strdup(device);
        if (!k || !dev) {
                free(k);
                free(dev);
                return -ENOMEM;
        }
        free(t->key);
        t->key = k;
        free(t->device);
        t->device = dev;
        return 0;
}

/*
 * Interfaces renamed since the last pass (ip link set X name Y): the queue targets of an
 * interface whose name is gone, or is another interface's now, while its ifindex exists under
 * another name, are carried over to that name before the pass covers anything: new key, the
 * record written under it and the old one removed. The pass then treats them as the renamed
 * device's: covered by a rule, they keep their true original; not covered, they get it back.
 * Names swapped between interfaces work too (every target moves out of the tree first, then
 * in). Returns 0 or -ENOMEM (the targets not moved yet keep their old names).
 */
static int targets_follow_renames(DevicePlacement *d, const DeviceInventory *inv) {
        Manager *m = d->manager;
        _cleanup_free_ Target **targets = NULL, **movers = NULL;
        _cleanup_free_ const char **new_names = NULL;
        _cleanup_strv_free_ char **old_keys = NULL;
        _cleanup_free_ bool *keep_old = NULL;
        size_t n = 0, n_movers = 0;
        int r, ret = 0;

        r = targets_collect(d, &targets, &n);
        if (r < 0)
                return r;
        movers = calloc(MAX(n, (size_t)1), sizeof(Target *));
        new_names = calloc(MAX(n, (size_t)1), sizeof(char *));
        old_keys = calloc(n + 1, sizeof(char *));
        keep_old = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!movers || !new_names || !old_keys || !keep_old)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];
                const DeviceNet *net, *renamed;
                char identity[16];

                if (t->kind != TARGET_RPS && t->kind != TARGET_XPS && t->kind != TARGET_FLOW)
                        continue;
                net = inventory_find_net(inv, t->device);
                if (net) {
                        snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                        if (streq(identity, t->identity))
                                continue; /* still there under its name */
                }
                renamed = inventory_find_ifindex(inv, t->identity);
                if (!renamed || streq(renamed->name, t->device))
                        continue; /* gone: the sweep drops it */
                old_keys[n_movers] = strdup(t->key);
                if (!old_keys[n_movers])
                        break; /* the ones found so far move */
                new_names[n_movers] = renamed->name;
                movers[n_movers++] = t;
        }
        if (n_movers == 0)
                return 0;

        /* Out of the tree first, so that swapped names don't collide. */
        for (size_t i = 0; i < n_movers; i++)
                if (tdelete(movers[i], &d->targets, target_compare))
                        d->n_targets--;

        for (size_t i = 0; i < n_movers; i++) {
                Target *t = movers[i], *other;
                const char *slash = strrchr(old_keys[i], '/');
                size_t prefix = slash ? (size_t)(slash - old_keys[i]) + 1 : 0;
                bool had_record = t->persisted, first = true;
                char what[128];

                if (ret < 0 || target_set_device(t, new_names[i]) < 0) {
                        /* Out of memory: back under its old name (the sweep may drop it). */
                        ret = -ENOMEM;
                        keep_old[i] = true;
                        if (target_insert(d, t) < 0) {
                                t->persisted = false; /* its record stays for a restart */
                                target_free(t);
                                movers[i] = NULL;
                        }
                        continue;
                }
                other = target_find(d, t->kind, t->key);
                if (other) {
                        /* What was recorded under the new name is of an interface gone since (its
                         * ifindex is nowhere now, or it would have moved as well). */
                        log_debug(
                                "%s: dropping what was recorded of an interface gone since, ifindex %s "
                                "has the name now",
                                target_describe(other, what, sizeof(what)), t->identity);
                        target_forget(d, other);
                }
                r = target_insert(d, t);
                if (r < 0) {
                        ret = -ENOMEM;
                        keep_old[i] = true;
                        t->persisted = false; /* its record, under the old key, stays for a restart */
                        target_free(t);
                        movers[i] = NULL;
                        continue;
                }
                t->persisted = false;
                if (had_record) {
                        r = target_persist(d, t);
                        if (r < 0) {
                                log_target(
                                        LOG_WARNING, r, t, NULL,
                                        "Failed to record the original of %s under its new name in %s: "
                                        "%m; it stays recorded under the old name",
                                        target_describe(t, what, sizeof(what)), m->state_dir);
                                /* The old record stays: a restarted daemon follows the rename too. */
                                keep_old[i] = true;
                        }
                }
                /* Once per interface: the earlier movers of the same old name were told. */
                for (size_t k = 0; k < i && first; k++)
                        first = strncmp(old_keys[k], old_keys[i], prefix) != 0;
                if (first)
                        log_info(
                                "Interface %.*s is %s now (ifindex %s): what was recorded of its queues "
                                "follows it",
                                (int)(prefix > 0 ? prefix - 1 : 0), old_keys[i], t->device, t->identity);
        }

        /* The old records, unless a record just written has that key (names swapped). */
        for (size_t i = 0; m->state_dir && !m->dry_run && i < n_movers; i++) {
                bool taken = false;

                if (!movers[i] || keep_old[i])
                        continue;
                for (size_t k = 0; k < n_movers && !taken; k++)
                        taken = movers[k] && movers[k]->persisted && movers[k]->kind == movers[i]->kind &&
                                streq(movers[k]->key, old_keys[i]);
                if (taken)
                        continue;
                r = state_target_remove(m->state_dir, target_kind_table[movers[i]->kind], old_keys[i]);
                if (r < 0)
                        log_warning_errno(
                                r, "Failed to remove the record of %s from %s: %m", old_keys[i],
                                m->state_dir);
        }
        return ret;
}

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
                if (presence == TARGET_GONE || !t->original || d->manager->dry_run ||
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

/* ---- irqbalance ---- */

/* The PID of a running irqbalance (a process whose comm is "irqbalance") under root, or 0. */
static pid_t find_irqbalance(const char *root) {
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
static void irqbalance_check(DevicePlacement *d) {
        _cleanup_free_ Target **targets = NULL;
        _cleanup_free_ char *irqs = NULL, *banirq = NULL, *cpus_text = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        size_t n = 0, size_irqs = 0, size_ban = 0;
        FILE *fi = NULL, *fb = NULL;
        bool grew = false;
        pid_t pid;

        if (d->manager->dry_run || targets_collect(d, &targets, &n) < 0)
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

/* ---- effective affinity ---- */

static int on_effective_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* Checks the IRQs written since the last check (effective_pending) IRQ_EFFECTIVE_DELAY_USEC from
 * now: records their interrupt counts now, and arms the one-shot timer. */
static void irq_effective_schedule(DevicePlacement *d) {
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
                        d->manager->event, &d->effective_source, CLOCK_MONOTONIC, IRQ_EFFECTIVE_DELAY_USEC,
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

/* ---- drift ---- */

static uint64_t device_drift_interval(const DevicePlacement *d) {
        const Manager *m = d->manager;

        if (!m->config || m->dry_run)
                return 0;
        return m->config->drift_interval_usec;
}

static bool target_is_checked(const Target *t) {
        return t->has_applied && (t->state == TARGET_APPLIED || t->state == TARGET_DRIFTED);
}

static int device_drift_update(DevicePlacement *d);

/* What one drift tick reads at most once, when it needs it. */
typedef struct DriftTick {
        bool table_read;
        InterruptTable *table; /* ROOT/proc/interrupts; NULL when unreadable */
        bool online_read;
        CpuSet online; /* ROOT/sys/devices/system/cpu/online */
        bool online_ok;
        bool irqbalance_read;
        pid_t irqbalance; /* 0: none */
} DriftTick;

static void drift_tick_done(DriftTick *k) {
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
static TargetPresence irq_presence_now(DevicePlacement *d, const Target *t, DriftTick *k) {
        const InterruptTable *table = tick_interrupts(d, k);
        const InterruptLine *l = table ? interrupt_table_find(table, t->irq) : NULL;
        _cleanup_free_ char *identity = NULL;

        if (!l)
                return irq_dir_exists(d, t->irq) ? TARGET_UNVERIFIABLE : TARGET_GONE;
        if (device_inventory_irq_identity(l, &identity) < 0)
                return TARGET_UNVERIFIABLE;
        return streq(identity, t->identity) ? TARGET_PRESENT : TARGET_GONE;
}

/* Whether queue target t's interface name still has the ifindex it had
 * (ROOT/sys/class/net/DEV/ifindex): 1 yes, 0 no (renamed, made again, gone: the pass that the
 * link event causes sorts it out). */
static bool queue_same_device(DevicePlacement *d, const Target *t) {
        NetDeviceQueues q = {};
        char identity[16];

        if (t->kind == TARGET_RFS)
                return true;
        if (netdev_queues(d->root, t->device, &q) < 0)
                return false;
        snprintf(identity, sizeof(identity), "%d", q.ifindex);
        return streq(identity, t->identity);
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
        _cleanup_(drift_tick_done) DriftTick tick = {.online = CPUSET_NULL};
        _cleanup_free_ Target **targets = NULL;
        bool effective = false;
        uint64_t now = 0;
        size_t n = 0;
        int r;

        r = targets_collect(d, &targets, &n);
        if (r < 0)
                return r;
        (void)sd_event_now(d->manager->event, CLOCK_MONOTONIC, &now);
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
                        TargetPresence p = irq_presence_now(d, t, &tick);

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
static int device_drift_update(DevicePlacement *d) {
        _cleanup_free_ Target **targets = NULL;
        uint64_t interval = device_drift_interval(d);
        int enabled = SD_EVENT_OFF, r;
        bool any = false;
        size_t n = 0;

        if (interval > 0) {
                r = targets_collect(d, &targets, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n && !any; i++)
                        any = target_is_checked(targets[i]);
        }
        if (!any) {
                if (d->drift_source)
                        (void)sd_event_source_set_enabled(d->drift_source, SD_EVENT_OFF);
                return 0;
        }
        if (d->drift_source) {
                r = sd_event_source_get_enabled(d->drift_source, &enabled);
                if (r < 0)
                        return log_debug_errno(r, "Failed to query the device drift timer: %m");
                if (enabled != SD_EVENT_OFF && d->drift_interval_usec == interval)
                        return 0;
                r = sd_event_source_set_time_relative(d->drift_source, interval);
                if (r >= 0)
                        r = sd_event_source_set_time_accuracy(
                                d->drift_source, MAX(interval / 4, (uint64_t)1000));
                if (r >= 0)
                        r = sd_event_source_set_enabled(d->drift_source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return log_debug_errno(r, "Failed to arm the device drift timer: %m");
        } else {
                r = sd_event_add_time_relative(
                        d->manager->event, &d->drift_source, CLOCK_MONOTONIC, interval,
                        MAX(interval / 4, (uint64_t)1000), on_device_drift_timer, d);
                if (r < 0)
                        return log_debug_errno(r, "Failed to add the device drift timer: %m");
                (void)sd_event_source_set_description(d->drift_source, "device-drift-check");
        }
        d->drift_interval_usec = interval;
        return 0;
}

/* ---- apply ---- */

int device_placement_apply(DevicePlacement *d) {
        Manager *m = d->manager;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!m->config || !m->plan || !m->topology)
                return 0;
        /* This pass covers every event so far. */
        if (d->debounce_source)
                (void)sd_event_source_set_enabled(d->debounce_source, SD_EVENT_OFF);

        r = device_inventory_load(d->root, m->config, &inv, &error);
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
        r = device_plan_new(m->config, m->plan, m->topology, inv, &dp);
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
        sd_event *e = d->manager->event;
        int enabled = SD_EVENT_OFF, r;
        uint64_t now = 0, when;

        if (sd_event_now(e, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (!d->debounce_source || sd_event_source_get_enabled(d->debounce_source, &enabled) < 0 ||
            enabled == SD_EVENT_OFF)
                d->burst_start_usec = now;
        when = MIN(now + DEVICE_DEBOUNCE_USEC, d->burst_start_usec + DEVICE_DEBOUNCE_MAX_USEC);
        if (!d->debounce_source) {
                r = sd_event_add_time(
                        e, &d->debounce_source, CLOCK_MONOTONIC, when, 10 * USEC_PER_MSEC, on_debounce, d);
                if (r >= 0)
                        (void)sd_event_source_set_description(d->debounce_source, "device-events");
        } else {
                r = sd_event_source_set_time(d->debounce_source, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(d->debounce_source, SD_EVENT_ONESHOT);
        }
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

int device_placement_new(Manager *m, const char *root, DevicePlacement **ret) {
        DevicePlacement *d = calloc(1, sizeof(DevicePlacement));

        if (!d)
                return -ENOMEM;
        d->manager = m;
        d->root = strdup(root ?: "/");
        if (!d->root)
                return device_placement_free(d), -ENOMEM;
        d->mask_bits = 32;
        d->lost_ratelimit = (RateLimit){.interval_usec = 60 * 1000 * USEC_PER_MSEC, .burst = 3};
        *ret = d;
        return 0;
}

static void device_status_clear(DevicePlacement *d) {
        for (size_t i = 0; i < d->n_irq_status; i++) {
                cpuset_done(&d->irq_status[i].requested);
                cpuset_done(&d->irq_status[i].effective);
        }
        d->irq_status = mfree(d->irq_status);
        d->n_irq_status = 0;
        for (size_t i = 0; i < d->n_queue_status; i++)
                cpuset_done(&d->queue_status[i].cpus);
        d->queue_status = mfree(d->queue_status);
        d->queue_names = mfree(d->queue_names);
        d->n_queue_status = 0;
}

DevicePlacement *device_placement_free(DevicePlacement *d) {
        if (!d)
                return NULL;
        d->debounce_source = sd_event_source_disable_unref(d->debounce_source);
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
        return mfree(d);
}

/* The records a previous instance left: each becomes a target with its original, reconciled by
 * the first pass (still covered: kept; not covered: restored; vanished or another device now:
 * dropped). */
static int device_recover(DevicePlacement *d) {
        Manager *m = d->manager;
        StateTarget *records = NULL;
        size_t n = 0, taken = 0;
        int r;

        if (!m->state_dir || m->dry_run)
                return 0;
        r = state_target_list(m->state_dir, &records, &n);
        if (r < 0) {
                log_warning_errno(
                        r, "Failed to read the device originals recorded in %s/targets: %m", m->state_dir);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                TargetKind kind = target_kind_from_string(records[i].kind);
                Target *t = NULL;

                r = kind < 0 ? -EINVAL : target_new(kind, records[i].key, records[i].identity, &t);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0) {
                        log_warning(
                                "%s/targets: ignoring the record of %s \"%s\": not a target this daemon "
                                "knows",
                                m->state_dir, records[i].kind, records[i].key);
                        (void)state_target_remove(m->state_dir, records[i].kind, records[i].key);
                        continue;
                }
                t->original = TAKE_PTR(records[i].original);
                t->persisted = true;
                r = target_insert(d, t);
                if (r < 0) {
                        target_free(t);
                        if (r == -ENOMEM)
                                goto finish;
                        continue;
                }
                taken++;
        }
        if (taken > 0)
                log_info(
                        "Read the originals of %zu IRQ and queue settings recorded by a previous instance",
                        taken);
        r = 0;
finish:
        for (size_t i = 0; i < n; i++)
                state_target_done(&records[i]);
        free(records);
        return r;
}

int device_placement_start(DevicePlacement *d) {
        Manager *m = d->manager;
        int r;

        if (d->started)
                return 0;
        d->started = true;

        if (!m->topology_path) {
                r = rtnl_monitor_new(m->event, on_rtnl_link, on_rtnl_lost, d, &d->rtnl);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning_errno(
                                r,
                                "Cannot receive rtnetlink link events: %m. New network devices, queues and "
                                "IRQs will be placed only on reload.");
                if (m->uevent_monitor) {
                        r = uevent_monitor_subscribe(
                                m->uevent_monitor, "net", on_net_uevent, on_net_uevent_lost, d,
                                &d->net_subscription);
                        if (r >= 0)
                                r = uevent_monitor_subscribe(
                                        m->uevent_monitor, "queues", on_net_uevent, NULL, d,
                                        &d->queues_subscription);
                        if (r < 0)
                                return r;
                }
        }
        return device_recover(d);
}

int device_placement_restore_all(DevicePlacement *d) {
        _cleanup_(drift_tick_done) DriftTick tick = {.online = CPUSET_NULL};
        _cleanup_free_ Target **targets = NULL;
        size_t n = 0, restored = 0, kept = 0;
        int failed = 0, r;

        if (!d || d->manager->dry_run)
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
                        p = irq_presence_now(d, t, &tick);
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

/* ---- D-Bus lists ---- */

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

/* How much a state says something is wrong with a queue setting, for merging an rx queue's
 * rps_cpus and rps_flow_cnt into one row. */
static int state_severity(TargetState s) {
        switch (s) {
        case TARGET_REFUSED:
        case TARGET_MANAGED:
                return 3;
        case TARGET_DRIFTED:
                return 2;
        case TARGET_PENDING:
                return 1;
        default:
                return 0;
        }
}

/* Appends the status of one queue setting. An rx row is its rps_cpus target's, made worse by its
 * rps_flow_cnt target's (refused, drifted, pending: with that one's reason). */
static int queue_status_add(DevicePlacement *d, const DeviceNet *net, bool tx, unsigned q) {
        NetQueueStatus *s = &d->queue_status[d->n_queue_status];
        char *name = d->queue_names[d->n_queue_status];
        char key[PATH_MAX], identity[16];
        Target *t, *flow = NULL, *shown;
        int r;

        snprintf(name, sizeof(d->queue_names[0]), "%s-%u", tx ? "tx" : "rx", q);
        queue_key(key, sizeof(key), net->name, tx, q);
        snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
        t = target_find(d, tx ? TARGET_XPS : TARGET_RPS, key);
        if (t && !streq(t->identity, identity))
                t = NULL;
        if (!tx) {
                flow = target_find(d, TARGET_FLOW, key);
                if (flow && !streq(flow->identity, identity))
                        flow = NULL;
        }
        shown = t;
        if (flow && (!t || state_severity(flow->state) > state_severity(t->state)))
                shown = flow;
        *s = (NetQueueStatus){
                .device = net->name,
                .queue = name,
                .kind = tx ? "xps" : "rps",
                .rule = t      ? strempty(t->rule)
                        : flow ? strempty(flow->rule)
                               : "",
                .state = target_state_table[shown ? shown->state : TARGET_UNMANAGED],
                .reason = shown ? strempty(shown->reason) : "",
        };
        d->n_queue_status++;
        r = tx ? netdev_read_xps(d->root, net->name, q, &s->cpus)
               : netdev_read_rps(d->root, net->name, q, &s->cpus);
        if (r == -ENOMEM)
                return r;
        if (!tx && netdev_read_flow_cnt(d->root, net->name, q, &s->flow_cnt) < 0)
                s->flow_cnt = 0;
        return 0;
}

int device_placement_list_queues(DevicePlacement *d, const NetQueueStatus **ret, size_t *ret_n) {
        const DeviceInventory *inv = d->inv;
        size_t n = 0;
        int r;

        device_status_clear(d);
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                n += (inv->nets[i].queues.has_rps ? inv->nets[i].queues.n_rx : 0) +
                        (inv->nets[i].queues.has_xps ? inv->nets[i].queues.n_tx : 0);
        if (n == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        d->queue_status = calloc(n, sizeof(NetQueueStatus));
        d->queue_names = calloc(n, sizeof(d->queue_names[0]));
        if (!d->queue_status || !d->queue_names)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_nets; i++) {
                const DeviceNet *net = &inv->nets[i];

                for (unsigned q = 0; net->queues.has_rps && q < net->queues.n_rx; q++) {
                        r = queue_status_add(d, net, false, q);
                        if (r < 0)
                                return r;
                }
                for (unsigned q = 0; net->queues.has_xps && q < net->queues.n_tx; q++) {
                        r = queue_status_add(d, net, true, q);
                        if (r < 0)
                                return r;
                }
        }
        *ret = d->queue_status;
        *ret_n = d->n_queue_status;
        return 0;
}

const DevicePlacementCounters *device_placement_counters(const DevicePlacement *d) {
        return &d->counters;
}
