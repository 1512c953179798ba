/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * via: systemd — a policy's CPUs (and memory nodes) given to the systemd units of its processes
 * as the runtime properties AllowedCPUs= and AllowedMemoryNodes=, through
 * org.freedesktop.systemd1.Manager.SetUnitProperties on the system bus (a connection of its
 * own, opened on first use; the daemon's bus may be a private one). After setting them the
 * unit's EffectiveCPUs is read back: on a cgroup v1 or hybrid hierarchy systemd accepts the
 * property but the cpuset controller is not its to use, so EffectiveCPUs stays empty — the
 * placement is then "ineffective" (warned once per unit) and the caller places the unit's
 * processes one by one as for via: process. Each unit is decided once per plan; what was set
 * is reset (both properties back to what the unit had before the first set, recorded in the
 * state dir: see unit_placement_set_state_dir(); empty when unknown) when a reload no longer
 * places the unit or on restore-on-exit; a reset to empty is read back and made effective where
 * systemd does not apply it (EffectiveCPUs compared with the unit's slice's). Calls are
 * synchronous (the daemon waits for systemd, 5 s at most).
 */

#include <stdbool.h>

#include "cpuset.h"

typedef struct UnitPlacement UnitPlacement;

/*
 * A UnitPlacement talking to systemd at bus_address (sd-bus address syntax, copied), or on the
 * system bus (sd_bus_open_system()) when NULL. Connects lazily. dry_run: nothing is set, every
 * unit falls back. Returns 0 and *ret, or -ENOMEM.
 */
int unit_placement_new(const char *bus_address, bool dry_run, UnitPlacement **ret);
/* Frees u without resetting anything (see unit_placement_reset_all()). NULL accepted, returns NULL. */
UnitPlacement *unit_placement_free(UnitPlacement *u);

/*
 * Places unit (a full unit name, "web.service") for policy (its name, for messages) on cpus
 * (OS CPU numbers, not empty) and, when mems is not NULL, the NUMA nodes mems: once per plan
 * (unit_placement_new_plan()), later calls return the first call's answer. Sets AllowedCPUs=
 * and AllowedMemoryNodes= (runtime), then compares the unit's EffectiveCPUs with cpus.
 * Returns 1 when systemd enforces cpus (the caller writes no affinity), 0 when the caller must
 * place the processes itself (ineffective, no system bus, unknown unit, refused — reported at
 * warning once per unit and plan), or -ENOMEM.
 */
int unit_placement_place(
        UnitPlacement *u, const char *unit, const char *policy, const CpuSet *cpus, const CpuSet *mems);

/* A new plan was installed: every unit is decided again by its next unit_placement_place(). */
void unit_placement_new_plan(UnitPlacement *u);

/*
 * After the placement pass that follows a new plan: resets (AllowedCPUs= and
 * AllowedMemoryNodes= back to their recorded originals, runtime; the state file removed) every
 * unit whose properties were set under an earlier plan and that this plan did not place again.
 * Failures are logged and the unit forgotten.
 */
void unit_placement_flush(UnitPlacement *u);

/*
 * True if systemd accepted a SetUnitProperties (a placement or a reset) since the last call;
 * clears that. The kernel may have reset the affinity of the tasks of those units' cgroups
 * (docs/cgroups.md): the caller checks them. NULL: false.
 */
bool unit_placement_take_changed(UnitPlacement *u);

/* Resets every unit whose properties were set (restore-on-exit) and forgets them all. */
void unit_placement_reset_all(UnitPlacement *u);

/*
 * Persist originals under state_dir (copied; NULL: not persisted): before the first
 * SetUnitProperties on a unit its AllowedCPUs and AllowedMemoryNodes are read from systemd and
 * written to STATE_DIR/units/ (lib/state.h); the reset gives them back and removes the file.
 * Returns 0 or -ENOMEM.
 */
int unit_placement_set_state_dir(UnitPlacement *u, const char *state_dir);

/*
 * At startup, before the first placement pass: reads the unit files a previous instance left
 * under the state dir. Each unit is taken as set, with the recorded originals: placed again by
 * the first pass it keeps them for its later reset; not placed, the unit_placement_flush() after
 * that pass sets them back and removes the file. Unreadable files are reported and removed.
 * Nothing in dry-run mode. Returns 0 or -ENOMEM.
 */
int unit_placement_recover(UnitPlacement *u);
