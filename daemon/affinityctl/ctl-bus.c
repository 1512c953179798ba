/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* affinityctl's bus client (ctl-bus.h). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* How dbus-daemon words a refusal by its bus policy: a long text ("Rejected send message, 2
 * matched rules; type=...") meant for the bus's administrator, not for the user. */
#define BUS_POLICY_REJECTED "Rejected send message"
/* The longest refusal text of the daemon shown as is. */
#define ACCESS_DENIED_MESSAGE_MAX 100

/* The daemon's --api-socket=PATH, peer to peer (no bus: sd_bus_set_bus_client() stays off). */
static int socket_connect(sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *address = NULL;
        int r;

        if (asprintf(&address, "unix:path=%s", arg_socket) < 0)
                return -ENOMEM;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static int bus_connect(sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (arg_socket)
                return socket_connect(ret);
        if (!arg_bus_address)
                return sd_bus_open_system(ret);

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, arg_bus_address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int ctl_connect(sd_bus **ret) {
        int r = bus_connect(ret);

        if (r < 0) {
                fprintf(stderr, "Failed to connect to %s: %s\n",
                        arg_socket ?: arg_bus_address ?: "the system bus", strerror(-r));
                fprintf(stderr, "affinityd is not running, or the bus is unreachable.\n");
                return EXIT_NOT_RUNNING;
        }
        return 0;
}

int ctl_call(
        sd_bus *bus, const char *interface, const char *member, uint64_t timeout_usec, sd_bus_error *error,
        sd_bus_message **reply, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(
                bus, &m, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, interface, member);
        if (r < 0)
                return r;
        r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0 && types) {
                va_list ap;

                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                return r;
        return sd_bus_call(bus, m, timeout_usec, error, reply);
}

static bool bus_error_not_running(const sd_bus_error *error) {
        return sd_bus_error_has_name(error, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
                sd_bus_error_has_name(error, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

/*
 * The words of an AccessDenied refusal worth showing: "access denied" for dbus-daemon's policy
 * text (or anything long or multi-line), else the daemon's own short message ("Only root may
 * reload affinityd"), without a final period. Writes into buf.
 */
static const char *access_denied_reason(const sd_bus_error *error, char *buf, size_t size) {
        const char *msg = error->message;
        size_t l;

        if (!msg || strstr(msg, BUS_POLICY_REJECTED) || strchr(msg, '\n') ||
            strlen(msg) > ACCESS_DENIED_MESSAGE_MAX || msg[0] == 0)
                return "access denied";
        l = strlen(msg);
        if (l > 1 && msg[l - 1] == '.')
                l--;
        snprintf(buf, size, "%.*s", (int)l, msg);
        return buf;
}

int ctl_call_failed(const char *what, int r, const sd_bus_error *error) {
        if (bus_error_not_running(error)) {
                fprintf(stderr, "affinityd is not running (nobody owns %s on the bus).\n",
                        AFFINITYD_BUS_NAME);
                return EXIT_NOT_RUNNING;
        }
        if (sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED)) {
                char buf[ACCESS_DENIED_MESSAGE_MAX + 1];

                fprintf(stderr, "Failed to %s: %s\n", what, access_denied_reason(error, buf, sizeof(buf)));
                return EXIT_FAILURE_;
        }
        if (sd_bus_error_is_set(error))
                fprintf(stderr, "Failed to %s: %s (%s)\n", what,
                        error->message ? error->message : error->name, error->name);
        else
                fprintf(stderr, "Failed to %s: %s\n", what, strerror(-r));
        return EXIT_FAILURE_;
}

bool ctl_explain_needs_root(const char *verb, const sd_bus_error *error) {
        char buf[ACCESS_DENIED_MESSAGE_MAX + 1];

        if (!sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED))
                return false;
        fprintf(stderr, "%s: %s needs root (refused: %s)\n", program_invocation_short_name, verb,
                access_denied_reason(error, buf, sizeof(buf)));
        return true;
}

int ctl_daemon_running(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r, has = 0;

        r = sd_bus_call_method(
                bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                NULL, &reply, "s", AFFINITYD_BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has);
        return r < 0 ? r : has;
}

int ctl_read_properties(
        sd_bus_message *reply,
        int (*read)(sd_bus_message *reply, const char *name, const char *contents, void *userdata),
        void *userdata) {
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0) {
                const char *name, *contents;

                r = sd_bus_message_enter_container(reply, 'e', "sv");
                if (r <= 0)
                        break;
                r = sd_bus_message_read_basic(reply, 's', &name);
                if (r >= 0)
                        r = sd_bus_message_peek_type(reply, NULL, &contents);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'v', contents);
                if (r >= 0)
                        r = read(reply, name, contents, userdata);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = 1;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r < 0 ? r : 0;
}

int ctl_run_list(const ListVerb *v, void *userdata) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(table_done) Table t = {.columns = v->columns, .n_columns = v->n_columns};
        _cleanup_free_ char *summary = NULL;
        int r;

        r = ctl_connect(&bus);
        if (r > 0)
                return r;
        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, v->method, 0, &error, &reply, NULL);
        if (r < 0)
                return ctl_call_failed(v->what, r, &error);

        r = sd_bus_message_enter_container(reply, 'a', v->contents);
        while (r >= 0 && (r = sd_bus_message_at_end(reply, false)) == 0)
                r = v->read_row(reply, &t, userdata);
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                output_list(&t, v->json_key, false, NULL); /* --json: still one document */
                fprintf(stderr, "Failed to parse the daemon's %s: %s\n", v->list_name, strerror(-r));
                return EXIT_FAILURE_;
        }
        if (!arg_json && !arg_no_legend && v->summary(&summary, t.n_rows, userdata) < 0) {
                summary = NULL; /* asprintf() left it undefined */
                fprintf(stderr, "Out of memory.\n");
                return EXIT_FAILURE_;
        }
        output_list(&t, v->json_key, true, summary);
        return EXIT_OK;
}
