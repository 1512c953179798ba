/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus face of the Manager: the org.affinityd1.Manager interface on /org/affinityd1
 * (sd-bus vtable, property getters and method marshalling only; the work is in manager.c).
 * Anyone may read properties and call the List methods; Reload requires euid 0, checked on
 * the sender's credentials.
 */

#include <systemd/sd-bus.h>

#include "manager.h"

#define AFFINITYD_BUS_NAME             "org.affinityd1"
#define AFFINITYD_BUS_PATH             "/org/affinityd1"
#define AFFINITYD_BUS_INTERFACE        "org.affinityd1.Manager"
#define AFFINITYD_ERROR_INVALID_POLICY "org.affinityd1.Error.InvalidPolicy"

/* The vtable to register with sd_bus_add_object_vtable(), userdata the Manager. */
extern const sd_bus_vtable manager_vtable[];

/*
 * Emits org.freedesktop.DBus.Properties.PropertiesChanged for the named properties (a
 * NULL-terminated list; each must be an emits-change property). A no-op without a bus.
 * Returns 0 or the negative errno of sd_bus_emit_properties_changed_strv().
 */
int manager_bus_emit_changed_strv(Manager *m, char **properties);
#define manager_bus_emit_changed(m, ...) manager_bus_emit_changed_strv((m), (char *[]){__VA_ARGS__, NULL})
