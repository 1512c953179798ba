/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Device placement planning: what the irqs: and net: rules of a configuration ask of this
 * machine's IRQs and network queues. Split like the process side: device_inventory_load()
 * reads what exists (procfs/sysfs under a root, so fixture trees stand in for the machine), and
 * device_plan_new() is a pure function of (Config, Plan, Topology, DeviceInventory) — the same
 * inputs give the same plan — which is what lets spread order, near-node choice and masks
 * beyond 64 CPUs be tested on the corpus topologies.
 *
 * Selectors of irqs:/net: rules resolve like a policy's (plan_resolve_selector(): online CPUs,
 * nodes/packages/near, reserve, count), and a selector mapping also loses every CPU held by an
 * exclusive policy (the union of PolicyPlan.exclusive_cpus): exclusive cores are kept free of
 * interrupts and softirq work unless a rule names them literally (a literal cpu-list is taken
 * as written, with the policy warnings: offline, reserved, held).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"
#include "macro.h"
#include "netdev.h"
#include "plan.h"
#include "policy.h"
#include "topology.h"

/* One IRQ of /proc/interrupts (numeric lines only). */
typedef struct DeviceIrq {
        unsigned irq;
        char *actions; /* as /proc/interrupts prints them ("rtc0, i8042"), "" when blank */
        char **names;  /* actions split at ", " (NULL-terminated, possibly empty) */
        bool managed;  /* irq_is_managed(): its affinity belongs to the kernel */
        /*
         * What the IRQ is, independent of its handler's name: "CHIP HWIRQ" from /proc/interrupts
         * ("PCI-MSIX-0000:00:03.0 1-edge"), stable while a driver frees and requests the vector
         * again at ifdown/ifup (the name goes blank or changes, the vector stays). When the
         * kernel prints no hwirq column, "CHIP ACTIONS" (older kernels: "IR-PCI-MSI-edge eth0-TxRx-0";
         * a blank-named IRQ there is just "CHIP"). A missing part is left out with its blank: ""
         * for a line with nothing after its counts. An IRQ number that passes to another device
         * gets another identity. NULL only in hand-built inventories.
         */
        char *identity;
} DeviceIrq;

/* A device: value of an irqs: rule, looked up once (irq_device_irqs()). */
typedef struct DeviceIrqLookup {
        char *device;   /* as written in the rule */
        int error;      /* 0, or -ENODEV (not present), -ENXIO (no PCI function), other -errno */
        unsigned *irqs; /* ascending; NULL when none */
        size_t n_irqs;
} DeviceIrqLookup;

/* A network interface and its queues. */
typedef struct DeviceNet {
        char *name;
        NetDeviceQueues queues;
} DeviceNet;

typedef struct DeviceInventory {
        DeviceIrq *irqs; /* ascending IRQ number */
        size_t n_irqs;
        DeviceIrqLookup *lookups; /* one per distinct device: value of the config's irqs: rules */
        size_t n_lookups;
        DeviceNet *nets; /* ascending name */
        size_t n_nets;
        /* netdev_mask_bits(); 0 when unreadable: passed on as nbits, netdev_write_rps() and
         * netdev_write_xps() then write each mask as wide as its set needs
         * (netdev_mask_bits_for(): highest CPU + 1 rounded up to 32-bit words) */
        unsigned mask_bits;
        /* 0, or -errno when ROOT/proc/interrupts could not be read at all: irqs is then empty
         * (irqs: rules match nothing), while lookups and nets are loaded as usual. */
        int irq_error;
        /* NULL, or one line for the log naming the file: why it could not be read
         * ("/proc/interrupts: No such file or directory"), or which lines were skipped
         * ("/proc/interrupts: 2 unparsable lines skipped, the first: line 7: ..."); irqs then holds
         * the lines that parsed. */
        char *irq_warning;
} DeviceInventory;

/*
 * Reads what c's rules need from the machine under root ("/" live, or a fixture tree):
 * ROOT/proc/interrupts (interrupts_read_full() with INTERRUPTS_SKIP_BAD_LINES; every numeric
 * line, with irq_is_managed()), the IRQs of every distinct device: of c's irqs: rules (their
 * lookup errors kept, not returned), every interface of ROOT/sys/class/net with its queues
 * (netdev_queues(); an interface that vanishes while being read, or whose queues can't be read,
 * is skipped), and netdev_mask_bits().
 * An IRQ whose ROOT/proc/irq/N can't be stat(2)ed counts as not managed. Lines of
 * /proc/interrupts that can't be parsed are skipped and said in inv->irq_warning; when the file
 * can't be read at all the rest is loaded all the same, with inv->irq_error and
 * inv->irq_warning saying why (the caller logs it).
 * Returns 0 and *ret; -errno of listing the interfaces; -ENOMEM. ret_error (may be NULL) is
 * never written: it is kept for callers written when an unparsable /proc/interrupts failed the
 * whole load.
 */
int device_inventory_load(const char *root, const Config *c, DeviceInventory **ret, char **ret_error);
DeviceInventory *device_inventory_free(DeviceInventory *inv);
DEFINE_TRIVIAL_CLEANUP_FUNC(DeviceInventory *, device_inventory_free);

/*
 * DeviceIrq.identity of line l of /proc/interrupts (a numeric line of an InterruptTable):
 * "CHIP HWIRQ" ("PCI-MSIX-0000:00:03.0 1-edge"), or "CHIP ACTIONS" when the kernel prints no
 * hwirq column ("IR-PCI-MSI-edge eth0-TxRx-0"); a missing or blank part is left out with its
 * blank ("IR-PCI-MSI-edge" for a blank name there, "" for a line with nothing after its counts).
 * For callers that read /proc/interrupts themselves and compare with an inventory.
 * Returns 0 and a newly allocated *ret; -EINVAL (NULL l or ret); -ENOMEM.
 */
int device_inventory_irq_identity(const InterruptLine *l, char **ret);

/* The lookup of device (as written in a rule), or NULL. */
const DeviceIrqLookup *device_inventory_find_lookup(const DeviceInventory *inv, const char *device);
/* The IRQ irq, or NULL. */
const DeviceIrq *device_inventory_find_irq(const DeviceInventory *inv, unsigned irq);

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
         * "device eth0: IRQs 37-39", "matches IRQs 37-39"; with spread: true the spread order
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
