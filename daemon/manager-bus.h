/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus face of the Manager: the org.affinityd1.Manager interface on /org/affinityd1
 * (sd-bus vtable, property getters and method marshalling only; the work is in the Manager's
 * core, manager-internal.h, and in device placement).
 * Anyone may read properties and call the List methods and Explain; Reload and Rescan require
 * euid 0, checked on the sender's credentials.
 */

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "manager.h"

/*
 * The bus is served after the proc connector, CPU hotplug and every other placement source
 * (their priority is SD_EVENT_PRIORITY_NORMAL): a flood of calls waits while processes are
 * placed (and, while events keep coming, once every 1024 of them: manager-events.c, on_bus_guard()).
 * Explain reads threads on the worker thread and merges them in steps at the priority after that
 * (manager-bus-explain.c, with manager-explain.c's manager_explain_read() and
 * manager_explain_merge()).
 */
#define AFFINITYD_BUS_EVENT_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)

/*
 * Unprivileged callers (euid != 0) share the daemon's time: per uid 50 ms per second (a burst of
 * 100 ms), all of them together 100 ms per second (burst 200 ms), measured on what their
 * Explain and ListProcesses calls took on the loop and, for Explain's reads, the worker's CPU
 * time (lib/caller-budget.h). A call beyond its share fails with
 * org.affinityd1.Error.Busy; an Explain under way waits for the refill between steps.
 */
#define BUS_BUDGET_RATE_USEC      (50 * 1000)
#define BUS_BUDGET_BURST_USEC     (100 * 1000)
#define BUS_BUDGET_ALL_RATE_USEC  (100 * 1000)
#define BUS_BUDGET_ALL_BURST_USEC (200 * 1000)

/* Drops the Explain calls still being answered and the cached credentials of callers (the
 * daemon stops). */
void manager_bus_jobs_free(Manager *m);

/* The vtable to register with sd_bus_add_object_vtable(), userdata the Manager. */
extern const sd_bus_vtable manager_vtable[];

/*
 * The Manager's reports (manager.h, ManagerReport) as D-Bus messages on m->bus
 * (docs/org.affinityd1.xml); each is a no-op returning 0 without a bus, else 0 or sd-bus's
 * negative errno. Strings that are not valid UTF-8 (comm, file names) are escaped as "\xNN"
 * (bus-util.h).
 * - changed: org.freedesktop.DBus.Properties.PropertiesChanged for the named properties, each
 *   an emits-change one;
 * - process_placed: ProcessPlaced(u pid, s comm, s policy, s cpus), a placement pass of the
 *   process completed;
 * - placement_failed: PlacementFailed(u pid, s comm, s policy, s error), threads were refused;
 * - reloaded: Reloaded(b success, s error), error "" on success;
 * - drift_detected: DriftDetected(s kind, s target, s policy, s found, s action): kind "thread"
 *   (target "PID/TID"), "irq" (the IRQ number) or "queue" ("eth0/rx-0 rps"); policy the rule's
 *   name; found the cpu-list (or value) found; action "report", "enforce" or "respect".
 * manager.c sets Manager.report to it when it connects to the bus.
 */
extern const ManagerReport manager_bus_report;
