/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The IRQ and softirq skew check (lib/irq-skew.h) on a timer: every effect-interval
 * (affinityd.yaml; off: no timer) /proc/interrupts and /proc/softirqs are read, the devices
 * grouped (irq_skew_devices_load(): sysfs msi_irqs, as irqs: rules find them), and the window
 * since the previous reading — measured on CLOCK_MONOTONIC — checked for a device whose
 * interrupts, or for NET_RX softirq work, landing on one CPU. Each (device, kind) has an
 * episode (irq_skew_episode_step()); at its beginning the owner's skew_detected() is called
 * once (journal, IrqSkew signal). The episodes, with their counts, are kept for the IrqSkewEpisodes
 * property while the daemon runs; at most IRQ_SKEW_WATCH_MAX_ENTRIES of them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "irq-skew.h"
#include "macro.h"
#include "policy.h"

#define IRQ_SKEW_WATCH_MAX_ENTRIES 4096

typedef struct IrqSkewWatch IrqSkewWatch;

typedef struct IrqSkewWatchContext {
        sd_event *event;
        const char *root;      /* "/" live; a fixture tree in tests (ROOT/proc/interrupts, ...) */
        Config *const *config; /* the configuration in force: effect-interval; *NULL: none */
        /* An episode began (f: what the window found). NULL: not reported. */
        void (*skew_detected)(void *userdata, const IrqSkewFinding *f);
        void *userdata;
} IrqSkewWatchContext;

/* One (device, kind) seen skewed since the daemon started. */
typedef struct IrqSkewWatchEntry {
        char *device;
        IrqSkewKind kind;
        IrqSkewEpisode episode; /* active: an episode is on, on episode.cpu */
} IrqSkewWatchEntry;

/* A checker working with c (copied). No timer yet. Returns 0 or -ENOMEM. */
int irq_skew_watch_new(const IrqSkewWatchContext *c, IrqSkewWatch **ret);
/* Disables the timer and frees w. Accepts NULL, returns NULL. */
IrqSkewWatch *irq_skew_watch_free(IrqSkewWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqSkewWatch *, irq_skew_watch_free);

/*
 * Arms the timer (CLOCK_MONOTONIC, description "irq-skew-check") at
 * config_effect_interval_usec() of the configuration in force, or disarms it (0: off, and the
 * previous reading is dropped so that the next window starts afresh). Call after a
 * configuration is installed. Returns 0 or -errno of sd-event (logged at debug).
 */
int irq_skew_watch_update(IrqSkewWatch *w);

/*
 * One reading and check (what the timer runs): the window is from the previous reading to
 * now; the first call only reads. Returns 0, -ENOMEM, or -errno of reading
 * ROOT/proc/interrupts (/proc/softirqs missing is not an error: no NET_RX check).
 */
int irq_skew_watch_check(IrqSkewWatch *w);

/* The entries, in the order first seen. */
const IrqSkewWatchEntry *irq_skew_watch_entries(const IrqSkewWatch *w, size_t *ret_n);
