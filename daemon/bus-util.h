/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every bus object of the daemon (manager-bus.c, policy-bus.c) needs: strings from /proc
 * (comm) and file names are bytes, not necessarily UTF-8, and sd-bus refuses a whole message
 * holding one that is not valid UTF-8 by D-Bus's rules; and replies that are one array.
 */

#include <stddef.h>

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

/* Appends element i of an array reply to reply (bus_reply_array()). Returns 0 or a negative
 * errno. */
typedef int (*bus_append_element_t)(sd_bus_message *reply, size_t i, const void *userdata);

/*
 * Replies to the method call message with one array of n elements of D-Bus type contents
 * ("(ussssss)"), element i appended by append(reply, i, userdata). Returns sd_bus_send()'s
 * result, or the first negative errno (nothing is sent then).
 */
int bus_reply_array(
        sd_bus_message *message, const char *contents, size_t n, bus_append_element_t append,
        const void *userdata);
