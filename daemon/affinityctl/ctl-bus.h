/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * affinityctl's bus client: connecting to the bus the daemon is on (--bus-address, else the
 * system bus), calling the daemon's methods by the names of lib/bus-names.h, and saying on
 * stderr, in the user's words, why a call failed. Functions that return an exit code (ctl.h)
 * have said what went wrong when it is not EXIT_OK.
 */

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "ctl-output.h"

/* Reload and Rescan reply only when they are done (a full rescan); systemd's ExecReload= has
 * its own timeout on top of this. In µs. */
#define RELOAD_TIMEOUT_USEC (UINT64_C(300) * 1000000)

/* Connects to --bus-address or the system bus. Returns 0 with *ret set, or EXIT_NOT_RUNNING. */
int ctl_connect(sd_bus **ret);

/*
 * Calls member of interface on the daemon's object (org.affinityd1 at /org/affinityd1),
 * without D-Bus activation (status and reload report a stopped daemon, they don't start one),
 * with the arguments of types (sd_bus_message_append(); NULL: none). timeout_usec 0: sd-bus's
 * default. Returns what sd_bus_call() returns, the error in *error.
 */
int ctl_call(
        sd_bus *bus, const char *interface, const char *member, uint64_t timeout_usec, sd_bus_error *error,
        sd_bus_message **reply, const char *types, ...);

/*
 * Says on stderr why a call failed: "affinityd is not running ..." when nobody owns the name
 * (returns EXIT_NOT_RUNNING), else "Failed to WHAT: ..." with the error's message or the
 * errno r (returns EXIT_FAILURE_).
 */
int ctl_call_failed(const char *what, int r, const sd_bus_error *error);

/* If error is an AccessDenied refusal of the root-only verb (reload, rescan), by the bus
 * policy or by the daemon, says so in one line on stderr and returns true. */
bool ctl_explain_needs_root(const char *verb, const sd_bus_error *error);

/* Whether the daemon's name has an owner on bus (org.freedesktop.DBus.NameHasOwner): 1, 0,
 * or a negative errno. */
int ctl_daemon_running(sd_bus *bus);

/*
 * Walks a Properties.GetAll reply, a{sv}: for each property, in the order the daemon sent them,
 * calls read(reply, name, contents, userdata) with reply inside the property's variant, whose
 * signature is contents ("t", "as", "a(tt)"). read consumes the value (reads it, or skips it with
 * sd_bus_message_skip()) and returns 0 or more, or a negative errno, which ends the walk.
 * Returns 0 or a negative errno.
 */
int ctl_read_properties(
        sd_bus_message *reply,
        int (*read)(sd_bus_message *reply, const char *name, const char *contents, void *userdata),
        void *userdata);

/*
 * A verb that shows what one of the daemon's List methods returns (an array of structs), one
 * table row per element.
 */
typedef struct ListVerb {
        const char *method;    /* "ListIrqs", called without arguments */
        const char *what;      /* "list the daemon's IRQs", for "Failed to ..." */
        const char *contents;  /* the array's element signature, "(ussssss)" */
        const char *list_name; /* "IRQ list", for "Failed to parse the daemon's ..." */
        const char *json_key;  /* "irqs": --json prints {"irqs":[...]} */
        const Column *columns;
        size_t n_columns;
        /* Reads the next element of reply into a row of t: returns 0 or a negative errno. */
        int (*read_row)(sd_bus_message *reply, Table *t, void *userdata);
        /* The summary line under the table into *ret, newly allocated: asprintf()'s return. */
        int (*summary)(char **ret, size_t n_rows, const void *userdata);
} ListVerb;

/* Connects, calls v->method, prints the rows (output_list()). Returns the exit code. */
int ctl_run_list(const ListVerb *v, void *userdata);
