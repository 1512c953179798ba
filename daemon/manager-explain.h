/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Explain: why a process has the placement it has. Gathers, for one PID, the policy it is under
 * (or would be), the lines saying what that policy applies and why it matched, why each policy
 * before it did not, and per-thread evidence (the mask asked for, the mask the kernel reports,
 * the CPU it last ran on, migrations, run-queue delay and involuntary switches). The data behind
 * org.affinityd1.Manager.Explain; daemon/manager-bus-explain.c only marshals it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "manager.h"
#include "threadstat.h"

/*
 * One thread of the explained process (in ascending TID order). The counters are counted since
 * the daemon last set the thread's CPUs (the baseline a low-priority pass samples after each
 * placement, TrackedThread.baseline); a thread without a baseline yet (just placed, or not
 * managed) reports totals since it started. THREADSTAT_UNKNOWN (UINT64_MAX): the kernel does not
 * provide the counter.
 */
typedef struct ManagerExplainThread {
        pid_t tid;
        char comm[16];         /* /proc/PID/task/TID/comm: bytes, not necessarily UTF-8 */
        char *rule;            /* the policy's thread rule whose pattern matches comm; NULL: none (or
                                * the process is not managed) */
        char *applied;         /* cpu-list the daemon last asked for; NULL: it never set one */
        char *kernel;          /* cpu-list sched_getaffinity(2) reports now; NULL: it could not be read */
        uint32_t last_cpu;     /* OS index of the CPU it last ran on (stat field 39); 0 when unreadable */
        uint64_t migrations;   /* se.nr_migrations (mod 2^32 since placement) */
        uint64_t run_delay_ns; /* ns waited on a run queue (schedstat field 2) */
        uint64_t nonvoluntary; /* nonvoluntary_ctxt_switches (mod 2^32 since placement) */
} ManagerExplainThread;

/* A thread as read from /proc by manager_explain_read(), before manager_explain_merge(). */
typedef struct ManagerExplainRaw {
        pid_t tid;
        char comm[16];
        char *kernel; /* cpu-list sched_getaffinity(2) reported; NULL: it could not be read */
        ThreadStat stat;
} ManagerExplainRaw;

/* Threads manager_explain_read() reads at most before they are merged. */
#define MANAGER_EXPLAIN_READ_MAX 64

/* What Explain reports about one process. */
typedef struct ManagerExplanation {
        char comm[16];      /* the tracked comm, else /proc/PID/comm: bytes, not necessarily UTF-8 */
        char *policy;       /* the policy it is managed under; NULL: not managed */
        char *cpus;         /* that policy's cpu-list; NULL: not managed, no cpus: key, or pending */
        char **explanation; /* lines, in order: a fork note, the match keys, the policy's lines or
                             * "not managed: ..."; never empty */
        char **unmatched;   /* flat pairs (policy name, why it does not apply) for each policy
                             * before the one in force; NULL when none */
        ManagerExplainThread *threads;
        size_t n_threads;
        /* The reading's state: the process and the threads left to explain. */
        pid_t pid;
        uint64_t starttime;
        bool managed;
        int task_fd;    /* /proc/PID/task, read a few entries per step; -1 when done */
        pid_t tids[64]; /* listed, not explained yet (a 1 KiB getdents64 holds at most 42) */
        size_t n_tids, next_tid;
        size_t n_allocated;                              /* threads[] */
        ManagerExplainRaw raw[MANAGER_EXPLAIN_READ_MAX]; /* read, not merged yet */
        size_t n_raw;
} ManagerExplanation;

/*
 * Explains process pid (> 0) against the plan in force and m's tracked processes, reading
 * /proc/PID/{comm,stat,status,...}, /proc/PID/task/TID/{comm,stat,sched,schedstat,status} and
 * each thread's affinity (sched_getaffinity(2)), in steps, so that a process of thousands of
 * threads (each costs those /proc reads, ~60 µs) is never explained in one go on the event loop.
 *
 * begin does everything but the threads and opens /proc/PID/task. Then, until
 * manager_explain_done():
 * - read lists a few more thread IDs from it (getdents64(2) with a small buffer: listing
 *   thousands at once costs milliseconds) and reads up to max (at most MANAGER_EXPLAIN_READ_MAX)
 *   of those threads into e->raw. It touches nothing but e's reading state, so it may run on
 *   another thread (the worker, worker.h) while the loop goes on, as long as nothing else uses e
 *   meanwhile. A thread that exited is skipped.
 * - merge, on the loop's thread, adds what was read to e->threads with the tracked state (the
 *   thread rule, the mask applied, the counters since the baseline), looked up again each time by
 *   PID and start time: the process may change between steps.
 *
 * begin returns 0 and a newly allocated *ret (free with manager_explanation_free()); -ESRCH when
 * there is no such process (pid <= 0, /proc/PID missing or unreadable, or it exited while its
 * policy was matched); -ENOMEM. read returns 0, -ENOMEM, or another -errno of reading a thread's
 * statistics (what was read before stays in e->raw). merge returns 1 when every thread is done, 0
 * when some are left, or -ENOMEM.
 */
int manager_explain_begin(Manager *m, pid_t pid, ManagerExplanation **ret);
int manager_explain_read(ManagerExplanation *e, size_t max);
int manager_explain_merge(Manager *m, ManagerExplanation *e);
/* True when nothing is left to read or merge. */
bool manager_explain_done(const ManagerExplanation *e);

/* Frees e and everything in it. Accepts NULL, returns NULL. */
ManagerExplanation *manager_explanation_free(ManagerExplanation *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(ManagerExplanation *, manager_explanation_free);
