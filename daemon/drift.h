/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Drift: nothing tells the daemon that someone ran taskset(1) on a managed thread or that a
 * program re-pinned itself, so managed threads are re-checked on a timer. Every
 * drift-interval (affinityd.yaml; unset: no timer at all), each thread of each tracked process
 * that the daemon placed is read back — sched_getaffinity(2) against the mask the kernel kept
 * when the daemon wrote it, and, for a thread a scheduler: key touched, sched_getattr(2) and
 * ioprio_get(2) (apply_get_thread_sched()) against the state read back after the daemon's
 * write. A difference is drift: counted (DriftContext.n_detected), logged at warning
 * once per thread per change (POLICY=, PID=, COMM=, CPUS= the mask found), then handled as
 * the process's policy says (Policy.on_drift):
 *   report  nothing more; the same value is not reported again, a new one is;
 *   enforce the applied mask / scheduling state is written back (DriftContext.n_corrected);
 *   respect the new value is accepted: the whole process (whichever of its threads drifted) is
 *           released — forgotten without restoring anything, gone from ListProcesses and
 *           ManagedProcesses — and no rescan takes it back until it execs.
 * Processes whose policy is pending or gone (POLICY_NONE) are not checked, nor in --dry-run.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "apply-sched.h"
#include "cpuset.h"
#include "macro.h"
#include "policy.h"

typedef struct Drift Drift;

/* A managed thread as the check sees it (pointers borrowed from the owner's table). */
typedef struct DriftThread {
        pid_t tid;
        bool has_applied;         /* its affinity was written: checked */
        const CpuSet *applied;    /* what the daemon asked for: written back under enforce */
        const CpuSet *expected;   /* what the kernel kept (applied ∩ cpuset ∩ online): compared */
        const ThreadSched *sched; /* the scheduling state read back after the daemon's write;
                                   * NULL: not checked */
} DriftThread;

/* A tracked process whose policy is in force and not pending, with its threads. */
typedef struct DriftProcess {
        pid_t pid;
        uint64_t starttime; /* /proc/PID/stat field 22 */
        const char *comm;   /* borrowed */
        const char *policy; /* its policy's name, borrowed */
        const CpuSet *cpus; /* its policy's resolved CPUs (borrowed); NULL: the policy sets none */
        DriftMode on_drift;
        DriftThread *threads; /* owned: freed by drift_processes_free() */
        size_t n_threads;
} DriftProcess;

/* What a drift checker is given, and all it knows of the daemon. The pointed-to values are the
 * owner's (the Manager's), read at each use. */
typedef struct DriftContext {
        sd_event *event;
        bool dry_run;                /* no timer at all */
        Config *const *config;       /* the configuration in force: drift-interval; *NULL: none */
        const uint32_t *n_processes; /* tracked processes: the timer runs while there are some */
        uint64_t *n_detected;        /* counted here: drift found */
        uint64_t *n_corrected;       /* ... and put back (on-drift: enforce) */
        /* True while the tracked processes are not to be checked: a re-plan after a CPU change is
         * due (the kernel moved threads itself), or a rescan after lost events (entries may name
         * tasks that exited). NULL: never. */
        bool (*paused)(void *userdata);
        /* The tracked processes whose policy is in force and not pending, in ascending PID order,
         * each with its threads, as a newly allocated array (drift_processes_free()). Borrowed
         * pointers stay valid until the loop runs again or release_process() is called for that
         * process. Returns 0 or -ENOMEM. */
        int (*list_processes)(void *userdata, DriftProcess **ret, size_t *ret_n);
        /* Stops managing the process pid (on-drift: respect): forgotten without restoring
         * anything. */
        void (*release_process)(void *userdata, pid_t pid);
        /* Drift found, as DriftDetected(kind, target, rule, found, action) says it: kind "thread",
         * target "PID/TID", rule the policy. NULL: not reported. */
        void (*drift_detected)(
                void *userdata, const char *kind, const char *target, const char *rule, const char *found,
                const char *action);
        void *userdata;
} DriftContext;

/* Frees a list of DriftContext.list_processes(): each process's threads, and the array. Accepts
 * NULL. */
void drift_processes_free(DriftProcess *l, size_t n);

/* A drift checker working with c (copied; what its pointers point to must outlive the checker).
 * No timer yet. Returns 0 or -ENOMEM. */
int drift_new(const DriftContext *c, Drift **ret);

/* Disables its timer and frees it. Accepts NULL, returns NULL. */
Drift *drift_free(Drift *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Drift *, drift_free);

/*
 * Arms the timer (one CLOCK_MONOTONIC sd_event time source, description "drift-check") when
 * the configuration in force sets drift-interval, the daemon is not in --dry-run and some
 * process is tracked; disarms it otherwise. Call after a configuration is installed and when
 * a process starts being tracked. Cheap when nothing changes. Returns 0 or -errno from
 * sd-event (already logged at debug).
 */
int drift_update(Drift *d);

/*
 * One re-check of every managed thread, as described above (what the timer runs). Returns 0 or
 * -ENOMEM.
 */
int drift_check(Drift *d);

/* True if the process pid with this start time (/proc/PID/stat field 22) was released under
 * on-drift: respect and has not exec'd since. NULL d: false. */
bool drift_is_released(const Drift *d, pid_t pid, uint64_t starttime);

/* Forgets the release of pid (it exec'd: a new image is matched again). NULL d: no-op. */
void drift_forget_released(Drift *d, pid_t pid);
