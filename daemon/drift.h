/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Drift: nothing tells the daemon that someone ran taskset(1) on a managed thread or that a
 * program re-pinned itself, so managed threads are re-checked on a timer. Every
 * drift-interval (affinityd.yaml; unset: no timer at all), each thread of each tracked process
 * that the daemon placed is read back — sched_getaffinity(2) against the mask the kernel kept
 * when the daemon wrote it, and, for a thread a scheduler: key touched, sched_getattr(2) and
 * ioprio_get(2) (apply_get_thread_sched()) against the state read back after the daemon's
 * write. A difference is drift: counted (Manager.counters.drift_detected), logged at warning
 * once per thread per change (POLICY=, PID=, COMM=, CPUS= the mask found), then handled as
 * the process's policy says (Policy.on_drift):
 *   report  nothing more; the same value is not reported again, a new one is;
 *   enforce the applied mask / scheduling state is written back (counters.drift_corrections);
 *   respect the new value is accepted: the whole process (whichever of its threads drifted) is
 *           released — forgotten without restoring anything, gone from ListProcesses and
 *           ManagedProcesses — and no rescan takes it back until it execs.
 * Processes whose policy is pending or gone (POLICY_NONE) are not checked, nor in --dry-run.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

typedef struct Manager Manager;
typedef struct Drift Drift;

/* A drift checker for m (borrowed; must outlive it). No timer yet. Returns 0 or -ENOMEM. */
int drift_new(Manager *m, Drift **ret);

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
