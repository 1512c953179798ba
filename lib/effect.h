/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Effect metrics of placed threads: what the kernel counts per thread, sampled cheaply and
 * summed per policy. A sample reads ROOT/proc/PID/task/TID/schedstat first (one small file);
 * stat and sched are read only when the thread ran since the previous sample (its timeslice
 * count changed), so sleeping threads cost one read each. Nothing here logs.
 *
 * What the figures are:
 *   cpu_ns        CPU time the thread ran, ns (schedstat field 1, sum_exec_runtime).
 *   run_delay_ns  time it spent runnable but waiting on a run queue, ns (schedstat field 2): a
 *                 per-thread sum over the interval, NOT a per-wakeup distribution (runqlat's
 *                 histogram); divide by timeslices for a mean wait per timeslice.
 *   timeslices    times it was run on a CPU (schedstat field 3).
 *   migrations    se.nr_migrations of sched: moves between CPUs; THREADSTAT_UNKNOWN when the
 *                 kernel has no /proc/PID/task/TID/sched (no CONFIG_SCHED_DEBUG) — absent, not 0.
 *   involuntary   involuntary context switches (nr_involuntary_switches of sched, or
 *                 nonvoluntary_ctxt_switches of status without sched): preemptions.
 *   foreign CPU time (EffectTotals.foreign_cpu_ns) is CPU time attributed to CPUs outside the
 *                 thread's placement by the CPU it was last seen on (stat field 39) at either
 *                 end of the interval: exact (0) for a thread whose mask holds only its
 *                 placement's CPUs; an estimate for a thread that moved off them (the whole
 *                 interval's CPU time counts as foreign when either end was outside).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "threadstat.h"

typedef struct EffectSample {
        uint64_t starttime;    /* stat field 22, clock ticks since boot: with the TID, the identity */
        unsigned last_cpu;     /* stat field 39: OS number of the CPU it last ran on */
        uint64_t cpu_ns;       /* schedstat field 1 */
        uint64_t run_delay_ns; /* schedstat field 2 */
        uint64_t timeslices;   /* schedstat field 3 */
        uint64_t migrations;   /* se.nr_migrations of sched; THREADSTAT_UNKNOWN without sched */
        uint64_t involuntary;  /* nr_involuntary_switches of sched (status without sched) */
} EffectSample;

/*
 * Samples thread tid of process pid (tid 0: /proc/PID itself) under root (NULL or "/": the real
 * /proc). Reads schedstat; when prev is given, has the same identity and the timeslice count is
 * unchanged (and the CPU time too: a thread running one long timeslice adds CPU time
 * without a new timeslice), the thread has not run since: the rest is copied from prev without reading stat
 * or sched. Otherwise reads stat (starttime, last CPU) and sched (status when sched is missing). prev may be
 * NULL or equal to ret. Returns 0 and *ret; -ESRCH when the thread is gone; -EOPNOTSUPP when the kernel has
 * no schedstat (no CONFIG_SCHED_INFO); -EBADMSG when a file can't be parsed; -EINVAL; -ENOMEM; other -errno
 * of reading.
 */
int effect_sample_thread(
        const char *root, pid_t pid, pid_t tid, const EffectSample *prev, EffectSample *ret);

/* Sums of sample deltas, ns and counts. */
typedef struct EffectTotals {
        uint64_t cpu_ns;
        uint64_t foreign_cpu_ns; /* of cpu_ns, run while last seen on a CPU outside the placement */
        uint64_t run_delay_ns;
        uint64_t timeslices;
        uint64_t migrations; /* meaningful only when has_migrations */
        uint64_t involuntary;
        bool has_migrations; /* some delta had migrations (the kernel has sched) */
} EffectTotals;

/*
 * Adds now - prev to t, with threadstat_delta() semantics (a counter smaller than before
 * restarted: its whole value counts). Nothing is added when prev is NULL or its starttime differs
 * from now's (a new thread or a reused TID: now is a baseline only). The CPU-time delta is also
 * added to foreign_cpu_ns when prev's or now's last_cpu is not in cpus (NULL or empty cpus:
 * nothing is foreign).
 */
void effect_totals_add(
        EffectTotals *t, const EffectSample *prev, const EffectSample *now, const CpuSet *cpus);
