/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What manager-bus.c takes from manager-bus-explain.c for org.affinityd1.Manager's vtable. */

#include <systemd/sd-bus.h>

#include "manager-bus.h"

/*
 * Explain(u pid) (docs/org.affinityd1.xml): answered in steps within the caller's share of the
 * loop, its threads read on the worker (manager-bus-explain.c). An sd-bus method handler,
 * userdata the Manager: returns 1 (the reply is sent later), or a negative errno / error for
 * sd-bus to return.
 */
int method_explain(sd_bus_message *message, void *userdata, sd_bus_error *error);
