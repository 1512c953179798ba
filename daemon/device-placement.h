/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Device placement: the daemon side of irqs: and net: rules (lib/devplan.h plans them).
 *
 * When the Manager installs a plan (startup, reload, CPU hotplug re-plan), and ~100 ms after
 * the last of a burst of device events, the inventory is read again (device_inventory_load()
 * under the root), a DevicePlan made, and each target brought to it. Events that cause a pass:
 * rtnetlink (daemon/rtnl-monitor.h) RTM_DELLINK, a new link, a change of IFF_UP, IFF_RUNNING or
 * IFF_LOWER_UP, a rename, other queue counts (other link changes are only counted); kernel
 * uevents "add", "remove" (subsystems "net" and "queues") and "move" (a rename, "net").
 *  - an IRQ a rule won: its original smp_affinity_list recorded (memory and
 *    STATE_DIR/targets, lib/state.h) before the first write — when the record can't be written,
 *    the IRQ is not written and shows refused ("cannot record its original in STATE_DIR: ...");
 *    written unless it already is what the plan says; effective_affinity_list read back,
 *    reported only when not a subset of what was asked; a mask mixing online and offline CPUs
 *    is a warning. Kernel refusals (lib/irq.h IrqRefusal) are logged once with their meaning
 *    (IRQ=, POLICY= the rule), counted, shown in ListIrqs, and not retried until the plan
 *    changes (a reload, a CPU hotplug re-plan) or the rule asks for another value; an IRQ
 *    number that passed to another device, or an interface made again, is a new target.
 *    Kernel-managed IRQs are never written. An IRQ is identified by DeviceIrq.identity ("CHIP
 *    HWIRQ"), not by its name, which goes blank while a driver has freed it (ifdown).
 *  - a queue: rps_cpus / xps_cpus / rps_flow_cnt likewise (originals recorded, written, read
 *    back: flow counts compared with netdev_flow_cnt_expected()); rps_sock_flow_entries once.
 *    Queue targets are keyed by interface name and identified by ifindex: when an interface is
 *    renamed, its targets (and records) follow it to the new name before the pass.
 *  - a target no rule covers any more (rule removed, or changed to not cover it) gets its
 *    original back and its record removed; when that write fails, the record is kept and the
 *    restore tried again at the next pass and at exit. A target that vanished, or is another
 *    one now, just has its records dropped; an IRQ that still exists but that /proc/interrupts
 *    does not list keeps its record, untouched.
 * Drift: with drift-interval set, every applied IRQ and queue mask is read back on that timer;
 * a change is logged and counted once per value, and put back under on-drift: enforce (logged
 * at the first correction, then at most once a minute per target with the count since);
 * on-drift: respect stops managing that target (until the plan changes). A mask holding a CPU
 * that is offline now is not checked (the kernel moved the IRQ off it; the hotplug re-plan
 * follows). Before anything is reported or written, the IRQ's identity is checked against
 * /proc/interrupts (read once per check; another device's now: forgotten) and a queue's
 * interface against its ifindex; device_placement_restore_all() checks the same way.
 * irqbalance: when the set of placed IRQs grows, a running irqbalance (a process whose comm is
 * "irqbalance") is named with the IRQs it will fight over and how to stop it
 * (IRQBALANCE_BANNED_CPULIST, --banirq=N); with none running, the next pass looks again. An IRQ
 * drift names a running irqbalance too.
 * In --dry-run (and with --topology) nothing is written: the plan is logged.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "cpuset.h"
#include "devplan.h"
#include "macro.h"
#include "uevent-monitor.h"

typedef struct DevicePlacement DevicePlacement;

/*
 * What a device placement is given, and all it knows of the daemon. The pointed-to values are the
 * owner's (the Manager's), read at each use: a reload or a CPU hotplug re-plan changes them.
 */
typedef struct DeviceContext {
        sd_event *event;       /* the loop: debounce, effective-affinity and drift timers, rtnetlink */
        const char *root;      /* "/" for the machine (tests: a fixture tree); NULL: "/"; copied */
        const char *state_dir; /* where originals are recorded (lib/state.h); NULL: nowhere; copied */
        bool dry_run;          /* nothing written, nothing recorded: the plan is logged */
        bool listen;           /* device_placement_start() subscribes to device events (not with
                                * --topology, where nothing of this machine is managed) */
        Config *const *config; /* the configuration in force (irqs:, net:, rfs:, drift-interval) */
        Plan *const *plan;     /* its plan (exclusive holdings); *config, *plan or *topology NULL:
                                * nothing is placed yet */
        Topology *const *topology;
        const unsigned *plan_generation;      /* bumped by every plan installed: refusals, drift and
                                               * releases last until it changes */
        UeventMonitor *const *uevent_monitor; /* read by device_placement_start(); NULL or *NULL:
                                               * no uevents */
        /* A target found changed by someone else, as DriftDetected(kind, target, rule, found,
         * action) says it: kind "irq" (target "38") or "queue" (target "eth0/rx-0 rps"), rule ""
         * for the rfs: setting, action "report", "enforce" or "respect". NULL: not reported. */
        void (*drift_detected)(
                void *userdata, const char *kind, const char *target, const char *rule, const char *found,
                const char *action);
        void *userdata; /* for drift_detected */
} DeviceContext;

/* Counters shown on D-Bus. */
typedef struct DevicePlacementCounters {
        uint64_t irqs_placed;    /* IRQ affinity writes the kernel accepted */
        uint64_t irq_refusals;   /* writes refused (managed IRQs included, once per plan) */
        uint64_t queues_placed;  /* rps/xps/flow writes accepted */
        uint64_t queue_failures; /* rps/xps/flow writes refused */
        uint64_t restores;       /* targets given their original back */
        uint64_t drift_detected; /* device targets found changed by someone else */
        uint64_t drift_corrections;
        uint64_t device_events; /* rtnetlink and uevent events received */
} DevicePlacementCounters;

/* The state of one IRQ, for ListIrqs. */
typedef struct IrqStatus {
        unsigned irq;
        const char *name; /* action names, "" when blank */
        const char *rule; /* the irqs: rule that won it, "" when none */
        CpuSet requested; /* what the rule asked for; with no rule (or managed): the current
                           * smp_affinity_list */
        CpuSet effective; /* effective_affinity_list as last read, empty if unknown */
        /* "unmanaged" (no rule), "applied", "managed" (by the kernel), "refused" (with reason),
         * "drifted" (someone changed it, on-drift: report), "released" (on-drift: respect),
         * "pending" (the rule's selector can't be resolved) */
        const char *state;
        const char *reason; /* human detail for refused/managed/drifted/pending, "" otherwise */
} IrqStatus;

/* The state of one queue setting, for ListNetQueues. */
typedef struct NetQueueStatus {
        const char *device;
        const char *queue; /* "rx-0", "tx-3" */
        const char *kind;  /* "rps", "xps" */
        CpuSet cpus;       /* the mask now (as last read or written) */
        uint32_t flow_cnt; /* rx queues: rps_flow_cnt as last read, 0 otherwise */
        const char *rule;  /* the net: rule, "" when none */
        /* "unmanaged", "applied", "refused", "drifted", "released", "pending"; an rx queue's is
         * the worse of its rps_cpus and its rps_flow_cnt (refused, then drifted, then pending) */
        const char *state;
        const char *reason; /* why, for refused/drifted/pending/released ("" otherwise); not on
                             * D-Bus (ListNetQueues has no reason column) */
} NetQueueStatus;

/* A device placement working with c (copied; what its pointers point to must outlive the
 * placement). Opens nothing yet. Returns 0 or -ENOMEM. */
int device_placement_new(const DeviceContext *c, DevicePlacement **ret);
DevicePlacement *device_placement_free(DevicePlacement *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(DevicePlacement *, device_placement_free);

/* Starts listening for link and queue events (rtnetlink; the context's uevent monitor if there is
 * one, for "net" and "queues"; neither unless DeviceContext.listen) and reads the originals
 * persisted in the state directory. Not fatal:
 * without events, devices are re-read only on reload (logged once). Returns 0 or -ENOMEM. */
int device_placement_start(DevicePlacement *d);

/* Brings IRQs and queues to the context's current config/plan/topology (called after every plan
 * installed). Per-target failures are reported, not returned. Returns 0 or -ENOMEM. */
int device_placement_apply(DevicePlacement *d);

/* Gives every target the daemon changed its original back (restore-on-exit at SIGTERM) and
 * removes their records; an IRQ that is another device's now (/proc/interrupts, read once) and
 * an interface that is gone has its record dropped unwritten; one that could not be restored,
 * or not verified (renamed since the last pass, an IRQ not listed), keeps its record for the
 * next instance. Returns the number of targets that could not be restored (0: all). */
int device_placement_restore_all(DevicePlacement *d);

/* For D-Bus: every IRQ of the last inventory (ascending), every queue of every interface
 * (by device, rx before tx, queue number). Arrays and strings borrowed until the next event
 * loop iteration. Returns 0 or -ENOMEM. */
int device_placement_list_irqs(DevicePlacement *d, const IrqStatus **ret, size_t *ret_n);
int device_placement_list_queues(DevicePlacement *d, const NetQueueStatus **ret, size_t *ret_n);

const DevicePlacementCounters *device_placement_counters(const DevicePlacement *d);
