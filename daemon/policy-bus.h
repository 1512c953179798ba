/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One D-Bus object per policy: /org/affinityd1/policy/NAME (NAME escaped with
 * sd_bus_path_encode()), interface org.affinityd1.Policy, served by a fallback vtable on the
 * prefix /org/affinityd1/policy and listed by a node enumerator, so introspection and
 * `busctl tree org.affinityd1` show one node per policy of the plan in force. The objects are
 * looked up in the Manager's plan on every call, so the set changes with each reload and no
 * per-policy state is kept. Properties only (vtable and marshalling; the data is the Manager's):
 * Name, File, Line, Selector, CPUs, Nodes, PendingReason, MatchedPIDs. None emits
 * PropertiesChanged: read them when needed.
 */

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "manager.h"

/* The org.affinityd1.Policy vtable. Its userdata is the Manager; each getter looks the policy
 * up by the object path it is called on. */
extern const sd_bus_vtable policy_vtable[];

/*
 * Registers policy_vtable as a fallback vtable on AFFINITYD_POLICY_PATH_PREFIX, with a find
 * callback that accepts only paths of policies in m->plan, and the node enumerator, both with
 * userdata m. The slots are floating (they live as long as bus). Returns 0 or the negative
 * errno of sd_bus_add_fallback_vtable() / sd_bus_add_node_enumerator().
 */
int policy_bus_register(sd_bus *bus, Manager *m);

/*
 * The object path of the policy named name: AFFINITYD_POLICY_PATH_PREFIX "/" +
 * sd_bus_path_encode() of name ("db" → "/org/affinityd1/policy/db", "web-1" →
 * "/org/affinityd1/policy/web_2d1"), newly allocated in *ret. Returns 0 or -ENOMEM.
 */
int policy_bus_path(const char *name, char **ret);
