/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Manager's side of device placement (daemon/device-placement.h) and of the thread drift
 * check (daemon/drift.h): each is made with a narrow context filled in here from the Manager, and
 * reports through the callbacks here (DriftDetected on the bus, releases of processes under
 * on-drift: respect). Neither of them knows the Manager.
 */

#include "device-placement.h"
#include "drift.h"
#include "manager.h"

/* The device placement of m (m->event, m->state_dir, --dry-run and --topology, the configuration,
 * plan, topology and uevent monitor in force), for the machine ("/"). m must outlive it.
 * Returns 0 or -ENOMEM. */
int manager_devices_new(Manager *m, DevicePlacement **ret);

/* The thread drift checker of m (its tracked processes, counters and configuration in force).
 * m must outlive it. Returns 0 or -ENOMEM. */
int manager_drift_new(Manager *m, Drift **ret);
