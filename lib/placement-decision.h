/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * The decisions of a placement pass, apart from its effects: whether a thread's affinity is
 * written, asked of the kernel first or left alone; what a refused write means; how loudly a
 * narrowed mask or a placed process is logged; and what a pass over a process's threads leaves
 * to do (persist, watch its cgroup, settle, report). Pure functions of the facts the daemon
 * (daemon/placement.c) gathers: nothing here reads /proc, logs or makes a system call. The rules
 * are those of docs/architecture.md ("A placement pass") and docs/cgroups.md (kernel resets
 * and refusals by a cpuset).
 */

#include <stdbool.h>

/* What one thread's affinity needs, from what the daemon knows before asking the kernel. */
typedef enum ThreadAffinityStep {
        THREAD_AFFINITY_KEEP,    /* nothing to write or read */
        THREAD_AFFINITY_RECHECK, /* the target is what was applied last: read the kernel's mask
                                  * (sched_getaffinity(2)) and thread_affinity_recheck() */
        THREAD_AFFINITY_WRITE,   /* write the target (after recording the original on first
                                  * touch) */
} ThreadAffinityStep;

typedef struct ThreadAffinityFacts {
        bool has_target;        /* the plan sets the thread's CPUs */
        bool left_to_unit;      /* via: systemd is in effect for its unit and the target is the
                                 * policy's set: AllowedCPUs= does it */
        bool applied_is_target; /* the daemon applied exactly this target last */
        bool force;             /* compare with the kernel even where the target was applied
                                 * (an exec, CPU hotplug, a reload) and write if they differ */
        bool verify;            /* where the target was applied, ask the kernel whether a
                                 * cpuset change reset it (not while polling /proc) */
        bool dry_run;           /* --dry-run: nothing is written, every target counts as applied */
} ThreadAffinityFacts;

/*
 * The step for a thread (f not NULL): KEEP with no target or one left to the unit; for a target
 * applied last, KEEP unless forced or verifying (a dry run only when forced, where it is
 * "written" again: counted as set), else RECHECK; WRITE otherwise.
 */
ThreadAffinityStep thread_affinity_step(const ThreadAffinityFacts *f);

/* After THREAD_AFFINITY_RECHECK: what the kernel's mask says. */
typedef enum ThreadAffinityRecheck {
        THREAD_RECHECK_KEEP,  /* the mask is what the kernel made of the target: nothing to do */
        THREAD_RECHECK_DRIFT, /* moved by someone else (or unreadable): the drift check's to judge
                               * (on-drift:), not this pass's */
        THREAD_RECHECK_RESET, /* the kernel's own reset after a cpuset change: write again, and
                               * count it */
        THREAD_RECHECK_WRITE, /* forced: write the target again */
} ThreadAffinityRecheck;

/*
 * current_known: sched_getaffinity(2) succeeded; current_is_effective: its mask equals what the
 * kernel made of the target when it was applied; cpuset_reset: the mask equals the task's
 * cpuset's CPUs (or the online CPUs outside any cpuset); force as in ThreadAffinityFacts.
 */
ThreadAffinityRecheck thread_affinity_recheck(
        bool current_known, bool current_is_effective, bool cpuset_reset, bool force);

/* What a refused sched_setaffinity(2) means. */
typedef enum ThreadWriteRefusal {
        THREAD_REFUSAL_GONE,            /* -ESRCH: the thread exited; forget it */
        THREAD_REFUSAL_CPUSET_CONFLICT, /* -EINVAL and the target is disjoint from the task's
                                         * cpuset: its cgroup refuses it, reported once per
                                         * process (PlacementFailed) and not retried until the
                                         * cpuset changes */
        THREAD_REFUSAL_FAILURE,         /* anything else: a placement failure, rate-limited */
} ThreadWriteRefusal;

/*
 * error: the negative errno of the write (< 0); cpuset_known: the task's cpuset CPUs could be
 * read; target_in_cpuset: the target intersects them (meaningless when !cpuset_known).
 */
ThreadWriteRefusal thread_write_refusal(int error, bool cpuset_known, bool target_in_cpuset);

/* How a mask the kernel narrowed (what it kept differs from the target) is logged. */
typedef enum NarrowingReport {
        NARROWING_QUIET,   /* nothing */
        NARROWING_DEBUG,   /* at debug: narrowed within the target, reported for the policy before */
        NARROWING_ONCE,    /* at info, once per policy: narrowed within the target (a cpuset or
                            * offline CPUs); the caller marks the policy reported */
        NARROWING_OUTSIDE, /* at warning, under the failure rate limit: CPUs outside the target */
} NarrowingReport;

/*
 * within_target: what the kernel kept is a subset of the target; reported: the policy's
 * narrowing was reported already (true also for a process without a policy in force, which has
 * no flag); debug: debug logging is on.
 */
NarrowingReport thread_narrowing_report(bool within_target, bool reported, bool debug);

/* The facts of a completed pass over a process's threads. */
typedef struct ProcessPassFacts {
        unsigned n_set;       /* threads written (or that would be, dry run) */
        unsigned n_failed;    /* threads the kernel refused */
        bool cpuset_conflict; /* a refusal was its cpuset's (THREAD_REFUSAL_CPUSET_CONFLICT) */
        bool refusal_new;     /* that refusal was not reported for the process before */
        bool had_refusal;     /* a cpuset refusal was recorded for the process before the pass */
        bool placed;          /* its first placement had completed before the pass */
        bool settled;         /* its settle pass ran (its cgroup is watched) */
        bool verify;          /* the pass read masks back (ThreadAffinityFacts.verify) */
        bool forked;          /* a child forked without exec: in its parent's cgroup */
        bool dry_run;
} ProcessPassFacts;

/* What the daemon does after the pass. */
typedef struct ProcessPassActions {
        bool refused;       /* refused by its cgroup, nothing written: not placed */
        bool drop_refusal;  /* a recorded refusal no longer holds: forget it */
        bool save_state;    /* persist the process's entry (refused, or refusal dropped) */
        bool watch_cgroup;  /* watch the cgroup it has moved to since its settle pass */
        bool first;         /* its first placement completed now: count it placed */
        bool queue_settle;  /* queue a settle pass (manager_queue_settle()) */
        bool report_failed; /* PlacementFailed: refusals, a cgroup's only when new */
        bool report_placed; /* ProcessPlaced: something was written, or the first pass ended */
        bool count_summary; /* count it in the periodic summary */
} ProcessPassActions;

/* The actions after a pass with facts f (not NULL). */
ProcessPassActions process_pass_actions(const ProcessPassFacts *f);

/* The level a ProcessPlaced journal entry is logged at. */
typedef enum PlacedLogLevel {
        PLACED_LOG_NONE,
        PLACED_LOG_DEBUG, /* beyond the rate limit (a burst: the summary counts them) */
        PLACED_LOG_INFO,  /* at a human pace */
} PlacedLogLevel;

/*
 * wrote: the pass wrote something; info, debug: those levels are enabled; within_rate: the
 * placed-message rate limit allows one more (the caller takes the token only when wrote and
 * info, and a dry run always counts as within).
 */
PlacedLogLevel process_placed_log_level(bool wrote, bool info, bool debug, bool within_rate);
