/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A cyclictest-style wake-up latency probe: one timer thread pinned to each CPU of a set, each
 * sleeping with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to the next multiple of an
 * interval (1 ms, cyclictest's default) and recording how late it woke up (actual − intended
 * wake-up time, ns) in a lib/latency.h histogram. SCHED_FIFO at LATENCY_PROBE_PRIORITY where the
 * caller may (root, or RLIMIT_RTPRIO), SCHED_OTHER otherwise. Nothing here logs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "latency.h"
#include "macro.h"

/* The SCHED_FIFO priority of the timer threads, as cyclictest -p 95. */
#define LATENCY_PROBE_PRIORITY 95

typedef struct LatencyProbe LatencyProbe;

typedef struct LatencyProbeCpu {
        unsigned cpu;            /* OS CPU number */
        bool fifo;               /* ran SCHED_FIFO (else SCHED_OTHER: not permitted) */
        int error;               /* 0, or the -errno that stopped the thread (pinning failed) */
        LatencyHistogram wakeup; /* wake-up latency, ns */
} LatencyProbeCpu;

/*
 * Starts one thread per CPU of cpus (OS numbers, at least one), pinned there
 * (pthread_setaffinity_np()), waking every interval_ns (> 0). Returns 0 and *ret; -EINVAL;
 * -ENOMEM; -errno of pthread_create().
 */
int latency_probe_start(const CpuSet *cpus, uint64_t interval_ns, LatencyProbe **ret);

/*
 * Stops and joins the threads; the per-CPU results, ascending by CPU, into *ret (n_cpus
 * entries, owned by p until latency_probe_free()). Returns 0.
 */
int latency_probe_stop(LatencyProbe *p, const LatencyProbeCpu **ret, size_t *ret_n);

/* Stops (if running) and frees. Accepts NULL, returns NULL. */
LatencyProbe *latency_probe_free(LatencyProbe *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(LatencyProbe *, latency_probe_free);
