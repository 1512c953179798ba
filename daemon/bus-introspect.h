/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `affinityd --bus-introspect=FILE`: the introspection XML of org.affinityd1.Manager and
 * org.affinityd1.Policy, as sd-bus itself generates it for the live objects (annotations
 * included), so docs/org.affinityd1.xml can be checked against the code. Nothing is loaded and
 * no bus is contacted: the vtables are served on one end of a socketpair and introspected from
 * the other, and only the two interfaces are kept, inside a fixed DOCTYPE, comment and <node>
 * wrapper. The output depends only on the vtables (deterministic).
 */

/*
 * Writes that XML to path ("-": stdout). Returns 0, or a negative errno (from sd-bus, or of
 * opening or writing path; -EBADMSG if sd-bus's XML lacks an interface).
 */
int bus_introspect_write(const char *path);
