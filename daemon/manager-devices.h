/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Manager's side of device placement (daemon/device-placement.h) and of the thread drift
 * check (daemon/drift.h): each is made with a narrow context filled in here from the Manager, and
 * reports through the callbacks here (DriftDetected on the bus, releases of processes under
 * on-drift: respect). Neither of them knows the Manager.
 */

#include "device-placement.h"
#include "cpu-audit.h"
#include "drift.h"
#include "effect.h"
#include "manager.h"

/* The device placement of m (m->event, m->state_dir, --dry-run and --topology, the configuration,
 * plan, topology and uevent monitor in force), for the machine ("/"). m must outlive it.
 * Returns 0 or -ENOMEM. */
int manager_devices_new(Manager *m, DevicePlacement **ret);

/* The thread drift checker of m (its tracked processes, counters and configuration in force).
 * m must outlive it. Returns 0 or -ENOMEM. */
int manager_drift_new(Manager *m, Drift **ret);

/* The isolation audit of m (daemon/cpu-audit.h, daemon/manager-cpu-audit.c): the exclusive CPUs
 * of its active policies and the reserve of the plan in force, with their managed processes.
 * m must outlive it. Returns 0 or -ENOMEM. */
int manager_cpu_audit_new(Manager *m, CpuAudit **ret);
/* DriftContext.list_processes of m (userdata: the Manager): the tracked processes whose policy is
 * in force and not pending, with their threads; also what the effect sampler walks. */
int manager_drift_list_processes(void *userdata, DriftProcess **ret, size_t *ret_n);

/* The effect sampler of m (its tracked processes and configuration in force). m must outlive it.
 * Returns 0 or -ENOMEM. */
int manager_effect_new(Manager *m, Effect **ret);
/* The IRQ and softirq skew check of m (daemon/irq-skew-watch.h, daemon/manager-irq-skew.c): the
 * live machine, the configuration in force; episodes logged and reported (IrqSkew signal). m must
 * outlive it. Returns 0 or -ENOMEM. */
int manager_irq_skew_new(Manager *m, struct IrqSkewWatch **ret);
