/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Manager's persisted originals (lib/state.h): each tracked process's original affinity and
 * scheduling state is written to STATE_DIR/processes/PID-STARTTIME before the daemon first writes
 * to one of its threads, removed when the process is forgotten, and read back by the next
 * instance at startup. Nothing is written in dry-run mode.
 */

#include "manager.h"
#include "state-journal.h"
#include "state.h"

/*
 * Writes p's recorded originals to the state dir if they changed since the last write
 * (p->state_dirty). Failures are logged (warning) and otherwise ignored: placement goes on.
 */
void manager_originals_save(Manager *m, TrackedProcess *p);

/* Removes p's state file, if one was written. */
void manager_originals_drop(Manager *m, TrackedProcess *p);

/*
 * At startup, before the first scan: every state file a previous instance left is examined.
 * Files of processes that no longer exist (PID gone or reused: another starttime) are removed;
 * a live process gets the originals recorded there back (every thread: its own recorded state,
 * or the process default) and its file is removed. The scan that follows places the processes
 * that still match and records their true originals again. Corrupt files are reported with
 * their path and line and removed. The unit properties a previous instance set (via: systemd) are
 * read too (unit_placement_recover()). Returns 0 or -ENOMEM.
 */
int manager_originals_recover(Manager *m);

/* The originals a previous instance recorded for p (same PID and starttime), read by
 * manager_originals_recover() and kept until manager_originals_finish_recovery(); NULL if none. Placement
 * takes them as p's originals instead of what the threads have now (which is what the previous
 * instance set). */
const StateProcess *manager_originals_recovered(const Manager *m, const TrackedProcess *p);

/*
 * After the first scan: a recovered process that is tracked again keeps the recorded originals
 * (its file rewritten with what this instance knows; what the new placement did not take over is
 * given back); one that no longer matches any policy gets every original back, and its file is
 * removed. Frees the recovered list. Then the units the previous instance set and the first pass
 * did not place get their recorded properties back (unit_placement_flush()).
 */
void manager_originals_finish_recovery(Manager *m);
