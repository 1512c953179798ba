/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * IRQ and softirq skew: a device's interrupts, or the NET_RX softirq work, landing on one CPU
 * while the device's other queues and the other CPUs sit idle — the root cause of a classic
 * scheduling-latency case (a multi-queue NIC whose vectors all point at CPU 0; a single-queue
 * NIC or veth whose receive processing all runs where its one interrupt or sender runs).
 *
 * Pure functions over the counter deltas of two readings of /proc/interrupts (numeric lines,
 * per-CPU counts: kernel/irq/proc.c show_interrupts()) or of /proc/softirqs (line "NET_RX":
 * kernel/softirq.c, fs/proc/softirqs.c), both parsed with interrupts_parse(). Columns are matched
 * by OS CPU number, not by position: a CPU present in only one reading (hotplug between them)
 * contributes nothing. An IRQ whose count went down on any CPU, or whose chip / hwirq column
 * changed (the number was freed and allocated again), has no data for that window.
 * Cost: linear in lines × CPUs of the readings (plus sorting the IRQ numbers once per reading),
 * so 1,000+ CPUs and hundreds of devices are fine.
 *
 * Which IRQs make up a device is an input (IrqSkewDevices), so tests feed it from fixtures;
 * irq_skew_devices_load() builds it from the machine the way irqs: rules' match: { device: }
 * finds a NIC's IRQs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"
#include "macro.h"

typedef enum IrqSkewKind {
        IRQ_SKEW_IRQ,    /* hardware interrupts of one device ("irq") */
        IRQ_SKEW_NET_RX, /* NET_RX softirqs of the machine ("net-rx") */
        _IRQ_SKEW_KIND_MAX,
} IrqSkewKind;

/* "irq", "net-rx"; NULL out of range. */
const char *irq_skew_kind_to_string(IrqSkewKind k);

/* One device: its IRQs and how many queues it has. */
typedef struct IrqSkewDevice {
        char *name;     /* interface name ("eth0") or PCI address */
        unsigned *irqs; /* ascending IRQ numbers (NULL when none: veth, bridge) */
        size_t n_irqs;
        unsigned n_queues; /* rx queues (sysfs queues/rx-N) or distinct queue numbers in the
                            * IRQ names ("eth0-TxRx-7", "virtio2-input.0"), the larger */
} IrqSkewDevice;

typedef struct IrqSkewDevices {
        IrqSkewDevice *devices;
        size_t n_devices;
} IrqSkewDevices;

/*
 * When a window counts as skewed. Defaults (IRQ_SKEW_THRESHOLDS_DEFAULT): share 0.8, rate
 * 1000/s, count 1000 per window, end after 3 clean windows.
 */
typedef struct IrqSkewThresholds {
        double min_share;   /* the top CPU's part of the window's events, 0 < x <= 1 */
        double min_rate;    /* events per second over the window, summed over CPUs */
        uint64_t min_count; /* events in the window, summed over CPUs */
        unsigned end_after; /* clean windows that end an episode (>= 1) */
} IrqSkewThresholds;

#define IRQ_SKEW_THRESHOLDS_DEFAULT \
        ((IrqSkewThresholds){ \
                .min_share = 0.8, \
                .min_rate = 1000.0, \
                .min_count = 1000, \
                .end_after = 3, \
        })

/* A skewed window. */
typedef struct IrqSkewFinding {
        IrqSkewKind kind;
        char *device;   /* IRQ_SKEW_IRQ: IrqSkewDevice.name; IRQ_SKEW_NET_RX: the single-queue
                         * interfaces given, joined by ","; "*" when none was given */
        unsigned cpu;   /* OS CPU number that took the share */
        double share;   /* its part, 0..1 */
        uint64_t count; /* events in the window, all CPUs */
        double rate;    /* count per second */
        unsigned *irqs; /* IRQ_SKEW_IRQ: the device's IRQs that fired in the window, ascending */
        size_t n_irqs;
        char *irqs_text;  /* irqs as a comma list ("38,39,40"); "" for IRQ_SKEW_NET_RX */
        char *suggestion; /* the rule that would fix it, policy.d YAML on one line */
} IrqSkewFinding;

typedef struct IrqSkewFindings {
        IrqSkewFinding *findings;
        size_t n_findings;
} IrqSkewFindings;

/*
 * Hardware interrupt skew of each device of devs between readings prev and cur of
 * /proc/interrupts, window_usec (µs, > 0) apart. A device is looked at when it has >= 2 IRQs,
 * n_queues >= 2, and both readings have >= 2 CPUs in common; it is skewed when the deltas of
 * its IRQs (with data, see above) sum to >= th->min_count and >= th->min_rate per second and
 * one CPU took >= th->min_share of them. The suggestion is an irqs: rule spreading the
 * device's queue vectors ("irqs: [{ name: eth0-spread, match: { device: eth0 }, cpus: { near:
 * eth0 }, spread: true }]").
 * Returns 0 and *ret (newly allocated, possibly empty; findings in the order of devs);
 * -EINVAL (NULL argument, window_usec 0, thresholds out of range); -ENOMEM.
 */
int irq_skew_detect_irqs(
        const InterruptTable *prev, const InterruptTable *cur, uint64_t window_usec,
        const IrqSkewDevices *devs, const IrqSkewThresholds *th, IrqSkewFindings **ret);

/*
 * NET_RX softirq skew between readings prev and cur of /proc/softirqs (the "NET_RX" line),
 * window_usec (µs, > 0) apart: both readings have >= 2 CPUs in common, the deltas sum to >=
 * th->min_count and >= th->min_rate per second, and one CPU took >= th->min_share.
 * single_queue (NULL-terminated, may be NULL) names the interfaces with one rx queue, for the
 * finding's device and suggestion: an RPS rule moving the protocol processing to the other CPUs
 * of cur ("net: [{ device: veth0, rps: \"0,2-3\" }]"; device "*" when none is given).
 * Returns 1 and *ret (a newly allocated finding, free with irq_skew_finding_done()), 0 when not
 * skewed (or either reading has no NET_RX line: *ret untouched); -EINVAL; -ENOMEM.
 */
int irq_skew_detect_net_rx(
        const InterruptTable *prev, const InterruptTable *cur, uint64_t window_usec,
        char *const *single_queue, const IrqSkewThresholds *th, IrqSkewFinding *ret);

/* Frees what f holds (not f), leaves it zeroed. Accepts NULL. */
void irq_skew_finding_done(IrqSkewFinding *f);
IrqSkewFindings *irq_skew_findings_free(IrqSkewFindings *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqSkewFindings *, irq_skew_findings_free);

/*
 * The devices of the machine under root ("/" live, or a fixture tree), as irqs: rules'
 * match: { device: } finds them: every interface of ROOT/sys/class/net (netdev_list(),
 * netdev_queues() for n_rx), its IRQs from its PCI function's msi_irqs/ (irq_device_irqs());
 * an interface whose PCI function has no msi_irqs entries, or that has none (veth, a fixture), gets the IRQs
 * of t whose action name is its own or begins with it and a separator ("eth0-TxRx-3",
 * "eth0"): a veth, bridge or lo is listed with no IRQs. Only
 * IRQs present in t are kept. n_queues is the larger of n_rx and the distinct queue numbers
 * of the IRQs' names.
 * Returns 0 and *ret; -errno of netdev_list(); -ENOMEM. Interfaces that vanish meanwhile are
 * skipped.
 */
int irq_skew_devices_load(const char *root, const InterruptTable *t, IrqSkewDevices **ret);

/* The interfaces of devs with n_queues <= 1, as a newly allocated NULL-terminated vector
 * (never NULL on success). Returns 0, -ENOMEM. */
int irq_skew_devices_single_queue(const IrqSkewDevices *devs, char ***ret);

IrqSkewDevices *irq_skew_devices_free(IrqSkewDevices *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqSkewDevices *, irq_skew_devices_free);

/*
 * Episode of one (device, kind): begins at the first skewed window, ends after th->end_after
 * windows in a row that are not skewed; reported once, at its beginning.
 */
typedef struct IrqSkewEpisode {
        bool active;
        unsigned cpu;        /* the CPU of the latest skewed window */
        unsigned clean;      /* clean windows in a row while active */
        uint64_t n_episodes; /* episodes begun so far */
} IrqSkewEpisode;

typedef enum IrqSkewTransition {
        IRQ_SKEW_STEADY, /* nothing to report */
        IRQ_SKEW_BEGIN,  /* an episode began: report it */
        IRQ_SKEW_END,    /* the episode ended */
} IrqSkewTransition;

/* Steps e by one window: skewed says whether it was, cpu its CPU (ignored when not skewed),
 * end_after as IrqSkewThresholds.end_after (0 taken as 1). */
IrqSkewTransition irq_skew_episode_step(IrqSkewEpisode *e, bool skewed, unsigned cpu, unsigned end_after);
