/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * affinityctl plan's report, shared by its text (ctl-plan.c) and JSON (ctl-plan-json.c) forms:
 * what the configuration resolves to on a topology, policy by policy and rule by rule.
 */

#include <stdbool.h>
#include <stdio.h>

#include "devinventory.h"
#include "devplan.h"
#include "plan.h"
#include "policy-yaml.h"
#include "topology.h"

/* Everything plan reports on; the pointers are NULL where loading stopped short. */
typedef struct PlanReport {
        const Config *config;
        const Topology *topology;
        const Plan *plan;
        const DevicePlan *devices;        /* the irqs: and net: rules against inventory */
        const DeviceInventory *inventory; /* this machine's IRQs and interfaces, with --topology
                                           * the offline one (device_inventory_load_offline()) */
        const char *devices_unknown;      /* why inventory is empty ("can't be read here: ..."),
                                           * NULL when it is this machine's or offline */
        const Diagnostics *diag;          /* --json only */
        const char *error;                /* --json only: why nothing was planned */
} PlanReport;

/* What plan says, offline, of the IRQs without --interrupts, and of the queues. */
#define PLAN_IRQS_UNKNOWN "not known without --interrupts=FILE (a saved /proc/interrupts of that machine)"
#define PLAN_QUEUES_UNKNOWN \
        "not known without --sysfs=DIR (a copy of that machine's /sys/class/net/*/queues under DIR)"

/*
 * Whether an explanation or warning line of a device rule is shown. With no inventory (this
 * machine's devices can't be read: rep->devices_unknown) the lines that say what the devices
 * are — "device eth0: not present", "matches no IRQ", "matches no device" — would speak of an
 * empty inventory, not of the machine: they are left out, the report says why in "Devices:".
 * Offline, "matches no IRQ" is left out when the IRQs are not known, "matches no device" when
 * the queues are not.
 */
bool plan_report_note_shown(const PlanReport *rep, const char *line, bool warning);

/*
 * The --json document on f. Any of rep's pointers but diag may be NULL (the configuration or
 * the topology could not be loaded: rep->error says why). Returns 0 or -ENOMEM.
 */
int plan_report_print_json(FILE *f, const PlanReport *rep);
