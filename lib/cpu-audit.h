/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Isolation audit of a set of CPUs: who else used the CPUs a policy holds with exclusive: true
 * (or, for the housekeeping reserve, which managed threads ran there). Two snapshots taken a
 * window apart are diffed into a report per CPU:
 *
 *  - busy time of the CPU from /proc/stat ("cpuN" lines: user+nice+system+irq+softirq+steal,
 *    USER_HZ ticks turned into ns), with its irq and softirq columns;
 *  - tasks, found by sampling every /proc/PID/task/TID/stat whose field 39 (the CPU it last ran
 *    on) is in the set: their utime+stime (fields 14, 15) delta between the snapshots, counted
 *    against the CPU they were last seen on. A task is the same task in both snapshots only when
 *    PID, TID and starttime (field 22) all match, so a reused TID never carries another task's
 *    time; a task born during the window counts with all its time;
 *  - what could not be named: busy time minus the time of the owners and of every task seen
 *    (short-lived tasks that came and went between snapshots, tasks that moved off the CPU,
 *    tasks /proc hides with hidepid=, tasks beyond the bound below);
 *  - per-IRQ count deltas of /proc/interrupts on each CPU, with the action names, and per-softirq
 *    deltas of /proc/softirqs (NET_RX, TIMER, ...), both through interrupts_parse().
 *
 * Memory is bounded: a snapshot keeps at most CPU_AUDIT_TRACK_FACTOR * max_tasks tasks per CPU
 * (those with the most CPU time so far); the report names at most max_tasks intruders per CPU
 * and aggregates the rest (count and time). Offline CPUs are reported with online false and no
 * time; a CPU that comes online between the snapshots starts from zero. Counter decreases (wrap,
 * CPU hot-unplug) count as zero.
 *
 * Every reader takes a root directory (NULL or "/": the real /proc), for fixture trees.
 * Nothing here logs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "macro.h"

/* Tasks a snapshot keeps per CPU, as a multiple of max_tasks. */
#define CPU_AUDIT_TRACK_FACTOR 8U

/* Whose CPUs these are. */
typedef enum CpuAuditMode {
        /* The listed processes own the CPUs (a policy's exclusive CPUs): every other task that
         * ran there is an intruder; IRQs and softirqs there are intrusions too. */
        CPU_AUDIT_EXCLUSIVE,
        /* The CPUs are the housekeeping reserve: everything belongs there except the listed
         * processes (the threads policies place), which are the intruders. IRQs and softirqs
         * are expected there and reported as information only. */
        CPU_AUDIT_RESERVE,
} CpuAuditMode;

typedef struct CpuAuditSnapshot CpuAuditSnapshot;

/* A named task that ran on the CPU during the window. */
typedef struct CpuAuditTask {
        pid_t pid;          /* thread group (process) */
        pid_t tid;          /* the thread */
        uint64_t starttime; /* /proc/PID/task/TID/stat field 22, clock ticks since boot */
        char comm[16];      /* the thread's comm (field 2) */
        bool kthread;       /* a kernel thread (PF_KTHREAD in field 9) */
        char *unit;         /* the systemd unit or container of its cgroup ("foo.service",
                             * "docker-abc.scope"), or the cgroup path ("/docker/abc", starting
                             * with '/') when no unit is in it; NULL for kernel threads, the
                             * root cgroup, or when unreadable */
        uint64_t cpu_ns;    /* utime+stime gained in the window, ns (USER_HZ resolution) */
} CpuAuditTask;

/* An IRQ that fired on the CPU during the window. */
typedef struct CpuAuditIrq {
        unsigned irq;
        char *actions; /* the action names of /proc/interrupts ("virtio2-input.0"), "" if none */
        uint64_t count;
} CpuAuditIrq;

/* A softirq raised on the CPU during the window. */
typedef struct CpuAuditSoftirq {
        char name[16]; /* the /proc/softirqs row: "NET_RX", "TIMER", "SCHED", ... */
        uint64_t count;
} CpuAuditSoftirq;

typedef struct CpuAuditCpu {
        unsigned cpu;        /* OS CPU number */
        bool online;         /* in /proc/stat in both snapshots */
        uint64_t busy_ns;    /* user+nice+system+irq+softirq+steal gained, ns */
        uint64_t irq_ns;     /* the irq column gained, ns (0 without IRQ time accounting) */
        uint64_t softirq_ns; /* the softirq column gained, ns */
        uint64_t owners_ns;  /* time of the tasks that belong here (EXCLUSIVE: the listed
                              * processes; RESERVE: every task not listed), ns */
        CpuAuditTask *tasks; /* named intruders, most CPU time first, at most max_tasks */
        size_t n_tasks;
        size_t n_other_tasks; /* intruders seen beyond max_tasks, aggregated */
        uint64_t other_ns;    /* ... their time, ns */
        uint64_t unnamed_ns;  /* busy − owners − named − other (floored at 0): time no sampled
                               * task accounts for, ns. In RESERVE mode it is not an intrusion. */
        CpuAuditIrq *irqs;    /* IRQs with a count > 0, most first */
        size_t n_irqs;
        uint64_t irq_count;        /* all numeric IRQs' counts on this CPU together */
        CpuAuditSoftirq *softirqs; /* softirqs with a count > 0, in /proc/softirqs order */
        size_t n_softirqs;
} CpuAuditCpu;

typedef struct CpuAuditReport {
        CpuAuditMode mode;
        uint64_t window_usec; /* CLOCK_MONOTONIC time between the two snapshots, µs */
        size_t n_unreadable;  /* tasks of /proc that could not be read (hidepid=, EACCES),
                               * in the later snapshot; their time is in unnamed_ns */
        CpuAuditCpu *cpus;    /* one per CPU of the set, ascending */
        size_t n_cpus;
} CpuAuditReport;

/*
 * Takes a snapshot of the CPUs cpus (OS numbers; at least one) under root (NULL or "/": the real
 * /proc): ROOT/proc/stat, ROOT/proc/interrupts, ROOT/proc/softirqs (each optional: missing means
 * nothing of that kind is reported) and every ROOT/proc/PID/task/TID/stat. owner_pids are the
 * n_owners thread groups (tgids, ascending) listed for mode: the owners (EXCLUSIVE) or the
 * intruders (RESERVE). max_tasks (>= 1) bounds what is kept and named per CPU, see above.
 * Returns 0 and *ret; -EINVAL (no CPU, max_tasks 0, owner_pids not ascending); -ENOMEM;
 * -errno of reading ROOT/proc itself. Tasks that exit or can't be read while scanning are
 * skipped (the latter counted).
 */
int cpu_audit_snapshot(
        const char *root, const CpuSet *cpus, CpuAuditMode mode, const pid_t *owner_pids, size_t n_owners,
        size_t max_tasks, CpuAuditSnapshot **ret);

/* One set of cpu_audit_snapshot_many(): the arguments of cpu_audit_snapshot(). */
typedef struct CpuAuditRequest {
        const CpuSet *cpus;
        CpuAuditMode mode;
        const pid_t *owner_pids; /* ascending */
        size_t n_owners;
        size_t max_tasks;
} CpuAuditRequest;

/*
 * n snapshots, one per request, from one walk of ROOT/proc (each task's stat read once): what
 * the daemon takes for every exclusive set and the reserve in a pass. ret has room for n;
 * written only on success. Returns 0; -EINVAL (n 0, or a request as cpu_audit_snapshot()
 * refuses it); -ENOMEM; -errno of reading ROOT/proc.
 */
int cpu_audit_snapshot_many(
        const char *root, const CpuAuditRequest *requests, size_t n, CpuAuditSnapshot **ret);

/* Frees a snapshot. Accepts NULL, returns NULL. */
CpuAuditSnapshot *cpu_audit_snapshot_free(CpuAuditSnapshot *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(CpuAuditSnapshot *, cpu_audit_snapshot_free);

/*
 * The report of what happened on the CPUs between before and after (two snapshots of the same
 * root; the CPUs, mode and max_tasks of after are used, CPUs missing from before start from 0).
 * The unit of each named task is read from ROOT/proc/PID/cgroup at this call. Returns 0 and
 * *ret; -EINVAL (NULL snapshots); -ENOMEM.
 */
int cpu_audit_diff(const CpuAuditSnapshot *before, const CpuAuditSnapshot *after, CpuAuditReport **ret);

/* Frees a report. Accepts NULL, returns NULL. */
CpuAuditReport *cpu_audit_report_free(CpuAuditReport *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(CpuAuditReport *, cpu_audit_report_free);

/* True if the report's CPU c shows an intrusion: named or aggregated intruders with time > 0
 * or, in EXCLUSIVE mode, any IRQ count. min_ns: task time below it is ignored (0: any). */
bool cpu_audit_cpu_intruded(const CpuAuditReport *r, const CpuAuditCpu *c, uint64_t min_ns);
