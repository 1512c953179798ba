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
        const DeviceInventory *inventory; /* this machine's IRQs and interfaces, or empty */
        const char *devices_unknown;      /* why inventory is empty ("not known for an XML
                                           * topology"), NULL when it is this machine's */
        const Diagnostics *diag;          /* --json only */
        const char *error;                /* --json only: why nothing was planned */
} PlanReport;

/*
 * Whether an explanation or warning line of a device rule is shown. With no inventory (an XML
 * topology has none of its machine's devices) the lines that say what the devices are —
 * "device eth0: not present", "matches no IRQ", "matches no device" — would speak of an empty
 * inventory, not of that machine: they are left out, the report says "Devices: not known".
 */
bool plan_report_note_shown(const PlanReport *rep, const char *line, bool warning);

/*
 * The --json document on f. Any of rep's pointers but diag may be NULL (the configuration or
 * the topology could not be loaded: rep->error says why). Returns 0 or -ENOMEM.
 */
int plan_report_print_json(FILE *f, const PlanReport *rep);
