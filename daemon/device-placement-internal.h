/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the files of device placement share (device-placement.h says what it does): the targets,
 * the DevicePlacement object, and the functions one file gives the others. Each file calls only
 * those listed above it (docs/architecture.md, "Who may call whom"):
 *   device-target.c     targets: values, keys, the tree, reading and writing them, presence
 *   device-state.c      originals: recorded in the state dir, given back, recovered at start
 *   device-apply.c      a rule covering a target, and bringing the target to its value
 *   device-irq.c        IRQs: placement, effective affinity, irqbalance, ListIrqs
 *   device-net.c        queues and RFS: placement, interface renames, ListNetQueues
 *   device-drift.c      the drift re-check of applied targets and its timer
 *   device-placement.c  the object, the pass (sweep), rule logging, device events, restore-all
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "debounce.h"
#include "device-placement.h"

#include "interrupts.h"
#include "log.h"
#include "rtnl-monitor.h"
#include "uevent-monitor.h"
#include "util.h"

#define USEC_PER_MSEC UINT64_C(1000)

typedef enum TargetKind {
        TARGET_IRQ,  /* /proc/irq/N/smp_affinity_list */
        TARGET_RPS,  /* rx-N/rps_cpus */
        TARGET_XPS,  /* tx-N/xps_cpus */
        TARGET_FLOW, /* rx-N/rps_flow_cnt */
        TARGET_RFS,  /* net.core.rps_sock_flow_entries */
        _TARGET_KIND_MAX,
        _TARGET_KIND_INVALID = -EINVAL,
} TargetKind;

/* The kinds of lib/state.h's StateTarget (device-target.c). */
extern const char *const target_kind_table[_TARGET_KIND_MAX];

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

/* As ListIrqs / ListNetQueues show them (device-target.c). */
extern const char *const target_state_table[_TARGET_STATE_MAX];

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
        DeviceContext ctx; /* as given; its root and state_dir are the copies below */
        char *root;
        char *state_dir;      /* NULL: nothing is recorded */
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
        Debounce debounce; /* device events: a pass after each burst */
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

/* Whether what a target is about is still there. */
typedef enum TargetPresence {
        TARGET_GONE,         /* vanished, or another one now (IRQ number reused, name re-used) */
        TARGET_PRESENT,      /* the same thing */
        TARGET_UNVERIFIABLE, /* ROOT/proc/irq/N exists but /proc/interrupts doesn't list it (no
                              * handler and no count) or couldn't be read: left untouched, kept */
} TargetPresence;

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

/* ---- device-target.c ---- */

/* Masks (irq, rps, xps) against counts (flow, rfs). */
bool kind_is_mask(TargetKind k);
/* Frees v's mask; v stays usable (empty). */
void target_value_done(TargetValue *v);
/* a and b as values of kind k: masks or counts compared. */
bool target_value_equal(TargetKind k, const TargetValue *a, const TargetValue *b);
/* dst (its old mask freed) = src. Returns 0 or -ENOMEM. */
int target_value_copy(TargetValue *dst, const TargetValue *src);
/* What the kernel keeps when v is written: counts are rounded up to a power of two
 * (netdev_flow_cnt_expected()). Returns 0 or -ENOMEM. */
int target_value_expected(TargetKind k, const TargetValue *v, TargetValue *ret);
/* For logs: a cpu-list ("none" for an empty mask) or the count, newly allocated; NULL on OOM. */
char *target_value_to_string(TargetKind k, const TargetValue *v);

/* tsearch(3) order of DevicePlacement.targets: kind, then key. */
int target_compare(const void *a, const void *b);
/* Frees t (not in the tree any more). Accepts NULL, returns NULL. */
Target *target_free(Target *t);
/* target_free() for tdestroy(3). */
void target_free_void(void *p);
/* "irq", "rps", ... (target_kind_table) → TargetKind, or _TARGET_KIND_INVALID. */
TargetKind target_kind_from_string(const char *s);
/* A decimal unsigned (digits only, no sign, no space). Returns 0 or -EINVAL. */
int device_parse_unsigned(const char *s, unsigned *ret);
/* The target (kind, key) of d's tree, or NULL. */
Target *target_find(DevicePlacement *d, TargetKind kind, const char *key);
/* A new target (not in the tree yet), its key parsed (irq, device, queue). Returns 0, -EINVAL (a
 * key that is no target of kind), -ENOMEM. */
int target_new(TargetKind kind, const char *key, const char *identity, Target **ret);
/* Puts t in d's tree. Returns 0, -EEXIST (one with its kind and key is there), -ENOMEM. */
int target_insert(DevicePlacement *d, Target *t);
/* What tells an IRQ of the inventory from a later one with its number (see device-target.c). */
const char *device_irq_identity(const DeviceIrq *irq);
/* "IRQ 38 (virtio2-input.0)", "vt0 rx-1 rps_cpus", ... into buf (size bytes); returns buf. */
const char *target_describe(const Target *t, char *buf, size_t size);
/* Journal fields of a message about t (POLICY=, IRQ=, INTERFACE=, CPUS= cpus); irq_buf holds the
 * IRQ= text. */
LogFields target_fields(const Target *t, const char *cpus, char irq_buf[static 16]);
/* "rule NAME" for messages ("rfs: setting" for the global RFS table). One per message: the
 * buffer is static. */
const char *rule_label(const Target *t);
/* t->reason = a copy of reason (NULL: none). Returns 0 or -ENOMEM. */
int target_set_reason(Target *t, const char *reason);
/* t's value now, from ROOT/proc/irq/N/smp_affinity_list, ROOT/sys/class/net/DEV/queues/... or
 * ROOT/proc/sys/net/core/rps_sock_flow_entries (lib/irq.h, lib/netdev.h). Returns 0, -ENOENT
 * (gone), other -errno. */
int target_read(DevicePlacement *d, const Target *t, TargetValue *ret);
/* Writes v to t's file (masks DevicePlacement.mask_bits wide). Returns 0 or the -errno of the
 * write (the kernel's refusal). */
int target_write(DevicePlacement *d, const Target *t, const TargetValue *v);
/* v as its original is recorded: a cpu-list for IRQs, the kernel's hex mask for queues, decimal
 * counts (lib/state.h), newly allocated. Returns 0 or -ENOMEM. */
int target_format_original(DevicePlacement *d, const Target *t, const TargetValue *v, char **ret);
/* t->original parsed. Returns 0, -ENODATA (none), -EINVAL (unusable), -ENOMEM. */
int target_parse_original(const Target *t, TargetValue *ret);
/* Every target in (kind, key) order, as a newly allocated array of borrowed pointers. Returns 0
 * or -ENOMEM. */
int targets_collect(DevicePlacement *d, Target ***ret, size_t *ret_n);
/* Whether ROOT/proc/irq/N exists (true as well when that can't be told). */
bool irq_dir_exists(DevicePlacement *d, unsigned irq);
/* Whether what t is about still exists as the same thing in inv (see device-target.c). */
TargetPresence target_presence(DevicePlacement *d, const Target *t, const DeviceInventory *inv);

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

/* ---- device-target.c, continued ---- */
/* Frees the ListIrqs / ListNetQueues arrays of the last call. */
void device_status_clear(DevicePlacement *d);
/* The interface name of inv, or NULL. */
const DeviceNet *inventory_find_net(const DeviceInventory *inv, const char *name);
/* Whether queue target t's interface name still has the ifindex it had
 * (ROOT/sys/class/net/DEV/ifindex); true for the RFS table. */
bool queue_same_device(DevicePlacement *d, const Target *t);

/* ---- device-state.c ---- */
/* The target (kind, key), made when missing; one whose identity changed (the IRQ number reused,
 * the interface made again) is forgotten first, its original not written back. Returns 0,
 * -ENOMEM. */
int target_get(DevicePlacement *d, TargetKind kind, const char *key, const char *identity, Target **ret);

/* Writes t's record (its original) to the state dir unless it is there already. Returns 0 (also
 * with no state dir, in dry run, or with no original) or -errno of state_target_write() (not
 * logged: the caller says what it means). */
int target_persist(DevicePlacement *d, Target *t);
/* Forgets t: its record is removed (nothing is written to the kernel) and t freed. */
void target_forget(DevicePlacement *d, Target *t);
/* Gives t its original back (why: "rule nic removed", "restore-on-exit"). Returns 0; -ENOENT:
 * the target vanished meanwhile; -EBADMSG: the recorded original is unusable (logged); other
 * -errno: the write failed (logged at warning the first time): the caller keeps the record. */
int target_restore(DevicePlacement *d, Target *t, const char *why);
/* t's original could not be recorded in the state dir (error, -errno): t is refused, not
 * written; logged at warning and counted. */
void target_not_recorded(DevicePlacement *d, Target *t, int error);
/* Records t's original (cur, its value before the daemon's first write) in memory and in the
 * state dir. Returns 0 or -ENOMEM; *ret_error is 0, or -errno of the state dir: t must not be
 * written then. */
int target_record_original(DevicePlacement *d, Target *t, const TargetValue *cur, int *ret_error);
/* The records a previous instance left in STATE_DIR/targets, as targets with their originals.
 * Returns 0 (unreadable records are logged and skipped) or -ENOMEM. */
int device_recover(DevicePlacement *d);

/* ---- device-apply.c ---- */

/* The rule (NULL: the rfs: setting) covers t this pass, asking want (NULL: nothing, pending or
 * managed). A new decision (another value asked, another plan) forgets refusals, drift and
 * releases of the previous one. Returns 0 or -ENOMEM. */
int target_cover(
        DevicePlacement *d, Target *t, const char *rule, DriftMode on_drift, const TargetValue *want);
/* Brings a target a rule covers (target_cover() done) to want: recorded, written unless it
 * already is what is asked, read back. Per-target failures are reported, not returned. Returns 0
 * or -ENOMEM. */
int target_bring(DevicePlacement *d, Target *t, const TargetValue *want);

/* ---- device-irq.c ---- */
/* Covers every IRQ that dp assigns (inv: the inventory dp was made from). Returns 0 or -ENOMEM. */
int place_irqs(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp);
/* The PID of a running irqbalance (a process whose comm is "irqbalance") under
 * ROOT/proc, or 0. */
pid_t find_irqbalance(const char *root);
/* When the IRQs placed grew: names a running irqbalance, with the IRQs it would fight over. */
void irqbalance_check(DevicePlacement *d);
/* Arms the effective-affinity check of the IRQs written since the last one (the one-shot
 * "irq-effective-check" timer). */
void irq_effective_schedule(DevicePlacement *d);

/* ---- device-net.c ---- */

/* Covers every queue setting of dp (and the queues of its pending rules). Returns 0 or -ENOMEM. */
int place_queues(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp);
/* Covers net.core.rps_sock_flow_entries when dp sets it. Returns 0 or -ENOMEM. */
int place_rfs(DevicePlacement *d, const DevicePlan *dp);
/* Moves the queue targets of interfaces renamed since the last pass to their new names (records
 * too). Returns 0 or -ENOMEM (the targets not moved yet keep their old names). */
int targets_follow_renames(DevicePlacement *d, const DeviceInventory *inv);

/* ---- device-drift.c ---- */

/* Frees what k read. */
void device_drift_tick_done(DriftTick *k);
/* Whether IRQ t is still the IRQ it was, by ROOT/proc/interrupts as read once per tick k. */
TargetPresence device_irq_presence_now(DevicePlacement *d, const Target *t, DriftTick *k);
/* Arms the device drift timer when drift-interval is set and something is applied; disarms it
 * otherwise. Returns 0 or -errno of sd-event (logged at debug). */
int device_drift_update(DevicePlacement *d);
