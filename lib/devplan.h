/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Device placement planning: what the irqs: and net: rules of a configuration ask of this
 * machine's IRQs and network queues. Split like the process side: device_inventory_load()
 * (lib/devinventory.h) reads what exists (procfs/sysfs under a root, so fixture trees stand in
 * for the machine), and device_plan_new() is a pure function of (Config, Plan, Topology, DeviceInventory) —
 * the same inputs give the same plan — which is what lets spread order, near-node choice and masks beyond 64
 * CPUs be tested on the corpus topologies.
 *
 * Selectors of irqs:/net: rules resolve like a policy's (plan_resolve_selector(): online CPUs,
 * nodes/packages/near, reserve, count), and a selector mapping also loses every CPU held by an
 * exclusive policy (the union of PolicyPlan.exclusive_cpus): exclusive cores are kept free of
 * interrupts and softirq work unless a rule names them literally (a literal cpu-list is taken
 * as written, with the policy warnings: offline, reserved, held). A mapping with avoid: then
 * loses the cores (SMT siblings included) of the policies it names — PolicyPlan.cpus and its
 * threads' cpus; pending policies hold nothing — before the count, unless that would leave
 * nothing or too little for the count (then they are kept, with a warning). An irqs: cpus: or
 * net: rps: mapping whose set still shares a core with a policy it doesn't name in avoid: gets
 * a warning ('CPUs 8-9 share cores with policy "web": add avoid: [web] …'), unless it says
 * avoid: [].
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devinventory.h"
#include "interrupts.h"
#include "macro.h"
#include "netdev.h"
#include "plan.h"
#include "policy.h"
#include "topology.h"

/* One irqs: rule resolved. */
typedef struct IrqRulePlan {
        const IrqRule *rule;              /* borrowed from the Config */
        char *pending_reason;             /* non-NULL: its selector can't be resolved here; the
                                           * IRQs it matches are assigned to no later rule either */
        const Location *pending_location; /* the cpus: value; NULL when not pending */
        CpuSet cpus;                      /* the resolved set (empty when pending) */
        unsigned *spread_order;           /* spread: true: plan_spread_order() of cpus, the CPUs
                                           * its queue vectors take (IrqAssignment) */
        size_t n_spread_order;
        size_t n_matched; /* IRQs it won (managed ones included) */
        /* NULL-terminated or NULL: how cpus was chosen (as PolicyPlan.explanation), and what the
         * match found: "device eth9: not present", "device veth0: no PCI function, no IRQs",
         * "device eth0: IRQs 37-39", "matches IRQs 37-39" (offline, also the lookup's note:
         * "device eno1: not in server.xml (devices there: eth0, eth1)"); with spread: true the spread order
         * and the IRQs that are not queue vectors ("spread: IRQ 37: not a queue vector (...)").
         * IRQ numbers are always given as ranges ("128-135,230"), so a line stays short. */
        char **explanation;
        char **warnings; /* NULL-terminated or NULL: literal cpu-list warnings, "matches no IRQ" */
} IrqRulePlan;

/* One IRQ a rule won. */
typedef struct IrqAssignment {
        unsigned irq;
        size_t rule;  /* index into Config.irq_rules / DevicePlan.irq_rules */
        bool managed; /* kernel-managed: reported, never written; cpus is empty */
        /* When the rule is pending (DevicePlan.irq_rules[rule].pending_reason), the IRQ is won
         * but left untouched: cpus is empty. */
        /* What to write: the rule's set; with spread: true, for a queue vector one CPU of the
         * rule's spread order (see device_plan_new()), for any other vector the whole set. */
        CpuSet cpus;
} IrqAssignment;

typedef enum NetQueueKind {
        NET_QUEUE_RPS, /* rx-N: rps_cpus (and rps_flow_cnt) */
        NET_QUEUE_XPS, /* tx-N: xps_cpus */
        _NET_QUEUE_KIND_MAX,
} NetQueueKind;

/* "rps", "xps"; NULL if invalid. */
const char *net_queue_kind_to_string(NetQueueKind k);

/* One net: rule resolved. */
typedef struct NetRulePlan {
        const NetRule *rule;
        char *pending_reason; /* non-NULL: rps: or xps: can't be resolved; the devices it
                               * matches are left alone */
        const Location *pending_location;
        bool has_rps;
        CpuSet rps; /* resolved rps: set */
        bool has_xps;
        CpuSet xps; /* the CPUs xps: divides among tx queues */
        /* NULL-terminated or NULL: selector steps, and the devices matched as one line of a
         * count and the first four names, "6 devices: vt0, vt1, vt2, vt3, …" (names in
         * ascending order), so that the line changes little as devices come and go. */
        char **explanation;
        /* NULL-terminated or NULL, each naming the device: "vt0: one tx queue: XPS has no use on a
         * single-queue device", "lo: no RPS support (rps_cpus missing)", "matches no device" */
        char **warnings;
} NetRulePlan;

/* One queue a net: rule sets. */
typedef struct NetQueueAssignment {
        char *device;
        NetQueueKind kind;
        unsigned queue;    /* N of rx-N / tx-N */
        size_t rule;       /* index into Config.net_rules */
        CpuSet cpus;       /* RPS: the rule's rps set; XPS: this queue's share (below) */
        bool has_flow_cnt; /* RPS with rfs: set: rps_flow_cnt to write */
        uint32_t flow_cnt; /* rfs entries / the device's rx queues, at least NETDEV_FLOW_CNT_MIN */
} NetQueueAssignment;

typedef struct DevicePlan {
        const Config *config;
        IrqRulePlan *irq_rules; /* parallel to config->irq_rules */
        size_t n_irq_rules;     /* = config->n_irq_rules (so freeing needs no Config) */
        IrqAssignment *irqs;    /* ascending IRQ number; only IRQs some rule won */
        size_t n_irqs;
        NetRulePlan *net_rules;     /* parallel to config->net_rules */
        size_t n_net_rules;         /* = config->n_net_rules */
        NetQueueAssignment *queues; /* by device name, then RPS before XPS, then queue number */
        size_t n_queues;
        bool has_rfs; /* config->rfs_entries set: write rps_sock_flow_entries */
        uint32_t rfs_entries;
} DevicePlan;

/*
 * Resolves c's irqs: and net: rules against t, the reserve and exclusive holdings of p (the
 * process plan made from c and t), and what inv found.
 * IRQs: each IRQ of inv goes to the first rule (file order) whose given keys all match it
 * (device: the IRQ is in that device's lookup; action: a glob matches one of its names, or the
 * IRQ is blank and the glob is "*"); a pending rule still wins its IRQs (they stay untouched).
 * Spread (spread: true): a won, unmanaged IRQ is a *queue vector* when its name — the first
 * action name, up to any '@' — ends in a decimal number, the queue number, with a separator
 * (not a letter or digit: '-', '.', '_') somewhere before it ("eth0-TxRx-7", "virtio2-input.0",
 * "mlx5_comp12@pci:0000:3b:00.0", "em4-rx-3"; a bare interface name such as ixgbe's misc
 * vector "eth0" or "p7p1" is not). The rule's queue vectors,
 * ordered by queue number, then IRQ number, take spread_order[k mod n] (k: the position in
 * that order); its other vectors (blank names, "virtio2-config", ixgbe's misc vector "eth0",
 * "mlx5_async@pci:...") get the rule's whole set and take no CPU of the order. Managed IRQs
 * take none either.
 * Net: each interface of inv goes to the first rule whose device glob matches its name. RPS:
 * every rx queue gets the rps set (and flow_cnt when c->rfs_entries is set). XPS: only on a
 * device whose tx queues have xps_cpus (else a warning); the xps CPUs are ordered by core
 * (cores by their lowest OS CPU number, the PUs of a core together, ascending), and with C CPUs
 * and Q tx queues queue q gets positions [q*C/Q, (q+1)*C/Q) when C >= Q, else position q mod C.
 * A selector that can't be resolved makes its rule pending (reason from plan_resolve_selector(),
 * prefixed "rps: " / "xps: " for net rules).
 * Returns 0 and *ret, or -ENOMEM. Pending rules are not errors.
 */
int device_plan_new(
        const Config *c, const Plan *p, const Topology *t, const DeviceInventory *inv, DevicePlan **ret);
DevicePlan *device_plan_free(DevicePlan *dp);
DEFINE_TRIVIAL_CLEANUP_FUNC(DevicePlan *, device_plan_free);

/* The assignment of IRQ irq, or NULL (no rule won it). */
const IrqAssignment *device_plan_find_irq(const DevicePlan *dp, unsigned irq);
/* The assignment of a queue, or NULL. */
const NetQueueAssignment *device_plan_find_queue(
        const DevicePlan *dp, const char *device, NetQueueKind kind, unsigned queue);

/*
 * The queue number an IRQ's action name (the first of a shared IRQ's names) gives it, as spread:
 * reads it: up to any '@', the name ends in a decimal number with a separator (not a letter or
 * digit) somewhere before it ("eth0-TxRx-7" 7, "virtio2-input.0" 0, "mlx5_comp12@pci:0000:3b:00.0"
 * 12). Returns true and *ret (saturated at UINT64_MAX), or false (NULL or blank name,
 * "virtio2-config", "mlx5_async@pci:...", a bare interface name "eth0").
 */
bool device_irq_name_queue_number(const char *name, uint64_t *ret);
