/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Strings from /proc (comm) and file names are bytes, not necessarily UTF-8, and sd-bus refuses
 * a whole message holding one that is not valid UTF-8 by D-Bus's rules. Used by every bus
 * object of the daemon (manager-bus.c, policy-bus.c).
 */

#include <systemd/sd-bus.h>

/*
 * s as D-Bus can carry it (NULL as ""): s itself when it is valid UTF-8 by those rules, else a
 * copy in *buf (freed by the caller) where every byte of an invalid sequence is written as
 * "\xNN" (two lowercase hex digits); NULL on -ENOMEM. A backslash that was there already is
 * left as it is.
 */
const char *bus_string(const char *s, char **buf);

/*
 * sd_bus_message_append(m, "s", s) for bytes that need not be UTF-8 (comm names from /proc, file
 * names): every byte of an invalid sequence is sent as "\xNN"; NULL is sent as "". Returns 0 or
 * the negative errno of sd-bus (-ENOMEM).
 */
int bus_append_string(sd_bus_message *m, const char *s);
