/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-thread scheduler evidence, the way operators check placement by hand: the CPU a thread
 * last ran on (`ps -o psr`), its migrations (`perf stat -e cpu-migrations`), its run-queue
 * delay (runqlat) and its involuntary context switches. Read from /proc under a root
 * directory, so tests can point it at a fixture tree. Nothing here logs.
 */

#include <stdint.h>
#include <sys/types.h>

/* A value the kernel does not provide (no such line or file): UINT64_MAX. */
#define THREADSTAT_UNKNOWN UINT64_MAX

typedef struct ThreadStat {
        unsigned last_cpu;      /* OS number of the CPU it last ran on: stat field 39 */
        uint64_t nr_migrations; /* se.nr_migrations of sched; THREADSTAT_UNKNOWN when absent
                                 * (kernels without CONFIG_SCHED_DEBUG) */
        uint64_t run_delay_ns;  /* schedstat field 2: ns spent waiting on a run queue;
                                 * THREADSTAT_UNKNOWN without schedstat (no CONFIG_SCHED_INFO) */
        uint64_t timeslices;    /* schedstat field 3: times run on a CPU; THREADSTAT_UNKNOWN likewise */
        uint64_t nonvoluntary;  /* nonvoluntary_ctxt_switches of status */
} ThreadStat;

/*
 * Reads thread tid of process pid (tid 0: the process itself, /proc/PID/...) under root (NULL or
 * "/" = the real /proc): ROOT/proc/PID/task/TID/{stat,sched,schedstat,status}. stat and status are
 * required; sched and schedstat are optional (their values are THREADSTAT_UNKNOWN when the file
 * or line is missing). Returns 0 and *ret; -ESRCH when the thread is gone (stat or status
 * missing); -EBADMSG when stat or status can't be parsed (or a present sched/schedstat line is
 * malformed); -EINVAL for pid <= 0 or tid < 0; -ENOMEM; other -errno of reading.
 */
int threadstat_read(const char *root, pid_t pid, pid_t tid, ThreadStat *ret);

/*
 * The counters only (nr_migrations, nonvoluntary, run_delay_ns, timeslices; last_cpu is 0), at
 * half the cost of threadstat_read(): ROOT/proc/PID/task/TID/sched (se.nr_migrations and
 * nr_involuntary_switches, the counter status shows as nonvoluntary_ctxt_switches) and schedstat;
 * status only on kernels without sched. For sampling many threads (Explain's baselines after
 * placements). Returns 0 and *ret; -ESRCH when the thread is gone; -EBADMSG; -EINVAL; -ENOMEM;
 * other -errno of reading.
 */
int threadstat_read_counters(const char *root, pid_t pid, pid_t tid, ThreadStat *ret);

/*
 * now - base for a monotonic kernel counter: THREADSTAT_UNKNOWN when either is unknown; now when
 * base is larger than now (the counter started again: a reused TID), i.e. the total.
 */
uint64_t threadstat_delta(uint64_t now, uint64_t base);

/*
 * The three fields of ROOT/proc/PID/task/TID/schedstat (tid 0: /proc/PID/schedstat), ns, ns and a
 * count: CPU time run (sum_exec_runtime), time waited on a run queue, timeslices run. One small
 * read: the cheapest per-thread sample there is. Returns 0; -ESRCH when the thread is gone;
 * -EOPNOTSUPP when the thread exists but the kernel has no schedstat; -EBADMSG; -EINVAL; -errno.
 */
int threadstat_read_schedstat(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_cpu_ns, uint64_t *ret_run_delay_ns,
        uint64_t *ret_timeslices);

/*
 * Fields 22 (starttime, clock ticks since boot) and 39 (the CPU last run on, OS number) of
 * ROOT/proc/PID/task/TID/stat, from one read (procfs_parse_stat() for the start time). Returns 0,
 * -ESRCH, -EBADMSG, -EINVAL, -errno.
 */
int threadstat_read_stat(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_starttime, unsigned *ret_last_cpu);

/*
 * se.nr_migrations and nr_involuntary_switches of ROOT/proc/PID/task/TID/sched; without sched,
 * migrations are THREADSTAT_UNKNOWN and involuntary switches come from status
 * (nonvoluntary_ctxt_switches). Returns 0, -ESRCH, -EBADMSG, -EINVAL, -errno.
 */
int threadstat_read_switches(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_migrations, uint64_t *ret_involuntary);
