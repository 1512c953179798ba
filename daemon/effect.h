/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Effect sampling: every effect-interval (affinityd.yaml; default 10 s; off: no timer), each
 * thread of each tracked process whose policy is in force is sampled (lib/effect.h:
 * schedstat, and stat + sched only for threads that ran) and the deltas since its previous
 * sample are added to its policy's totals, kept by policy NAME: they survive reloads, and a
 * policy that goes away keeps its totals (counters never go down) until the daemon exits.
 * A process is sampled only while /proc/PID/stat's starttime is the one it was tracked with; a
 * thread's first sample (a new thread, a reused TID: another starttime) is a baseline only.
 * Previous samples are kept per TID (tsearch(3)), one entry per sampled thread, ~120 bytes
 * each with the tree node; entries of threads not seen in a pass are dropped.
 * Foreign CPU time is counted against the mask the kernel kept when the daemon placed the
 * thread, else the policy's CPUs. Processes are tracked in --dry-run too, and are sampled there
 * the same way, against the mask the daemon would have written (dry-run records it as applied):
 * the "before" baseline of an operator trying a policy.
 */

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "drift.h"
#include "../lib/effect.h" /* lib/effect.h: this header has the same name */
#include "macro.h"
#include "policy.h"

typedef struct Effect Effect;

/* What the sampler is given; pointed-to values are the owner's, read at each use. */
typedef struct EffectContext {
        sd_event *event;
        Config *const *config;       /* the configuration in force: effect-interval; *NULL: none */
        const uint32_t *n_processes; /* tracked processes: the timer runs while there are some */
        const char *root;            /* /proc root; NULL: "/" */
        /* As DriftContext.list_processes (the same callback serves both). */
        int (*list_processes)(void *userdata, DriftProcess **ret, size_t *ret_n);
        void *userdata;
} EffectContext;

/* One policy's totals, as effect_list_totals() gives them. */
typedef struct EffectPolicyTotals {
        const char *policy; /* borrowed: valid until the sampler is freed */
        EffectTotals totals;
} EffectPolicyTotals;

/* A sampler working with c (copied). No timer yet. Returns 0 or -ENOMEM. */
int effect_new(const EffectContext *c, Effect **ret);

/* Disables its timer, frees it and everything it keeps. Accepts NULL, returns NULL. */
Effect *effect_free(Effect *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(Effect *, effect_free);

/*
 * Arms the timer (CLOCK_MONOTONIC, description "effect-sample") at config_effect_interval_usec()
 * of the configuration in force while some process is tracked; disarms it when that is 0 (off)
 * or nothing is tracked. Call after a configuration is installed and when a process starts being
 * tracked. Returns 0 or -errno from sd-event (logged at debug).
 */
int effect_update(Effect *e);

/* One pass over every tracked thread, as described above (what the timer runs). Returns 0 or
 * -ENOMEM. */
int effect_sample(Effect *e);

/* Threads whose previous sample is kept. */
size_t effect_n_threads(const Effect *e);

/* The totals of every policy sampled so far, ascending by name, newly allocated (free() the
 * array only). NULL e: none. Returns 0 or -ENOMEM. */
int effect_list_totals(const Effect *e, EffectPolicyTotals **ret, size_t *ret_n);
