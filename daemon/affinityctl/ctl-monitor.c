/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl monitor: follows the daemon's signals (ProcessPlaced, PlacementFailed, Reloaded,
 * DriftDetected, IrqSkew, CpuIntrusion), one line each, until SIGINT or SIGTERM, across restarts of the
 * daemon.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* A signal's text on one line: newlines of a multi-line error become "; ". NULL on OOM. */
static char *one_line(const char *s) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (; *s; s++)
                if (*s == '\n') {
                        if (s[1])
                                fputs("; ", f);
                } else
                        fputc(*s, f);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}

/* The fields of one signal of the daemon, read from m. Returns 0, -EBADMSG or -ENOMEM. */
static int print_signal(sd_bus_message *m, const char *member) {
        _cleanup_free_ char *line = NULL;
        int r;

        if (streq(member, "ProcessPlaced") || streq(member, "PlacementFailed")) {
                const char *comm, *policy, *text;
                uint32_t pid;
                bool placed = streq(member, "ProcessPlaced");

                r = sd_bus_message_read(m, "usss", &pid, &comm, &policy, &text);
                if (r < 0)
                        return r;
                line = one_line(placed ? dash(text) : text);
                if (!line)
                        return -ENOMEM;
                output_event(
                        (const Field[]){
                                {"signal", NULL,
                                 cell_with_text(CELL_STR(member), placed ? "placed" : "failed")},
                                {"pid", NULL, CELL_UINT(pid)},
                                {"comm", NULL, CELL_STR(comm)},
                                {"policy", NULL, CELL_STR_DASH(policy)},
                                {placed ? "cpus" : "error", NULL, cell_with_text(CELL_STR(text), line)},
                        },
                        5);
        } else if (streq(member, "Reloaded")) {
                const char *error;
                int success;

                r = sd_bus_message_read(m, "bs", &success, &error);
                if (r < 0)
                        return r;
                line = one_line(error);
                if (!line)
                        return -ENOMEM;
                Cell e = cell_with_text(CELL_STR(error), line);
                Cell b = CELL_BOOL(success);
                e.hidden = success;
                b.hidden = true;
                output_event(
                        (const Field[]){
                                {"signal", NULL,
                                 cell_with_text(CELL_STR(member), success ? "reloaded" : "reload-failed")},
                                {"success", NULL, b},
                                {"error", NULL, e},
                        },
                        3);
        } else if (streq(member, "DriftDetected")) {
                const char *kind, *target, *policy, *found, *action;

                r = sd_bus_message_read(m, "sssss", &kind, &target, &policy, &found, &action);
                if (r < 0)
                        return r;
                /* text: "drift KIND TARGET POLICY found FOUND action ACTION" */
                output_event(
                        (const Field[]){
                                {"signal", NULL, cell_with_text(CELL_STR(member), "drift")},
                                {"kind", NULL, CELL_STR(kind)},
                                {"target", NULL, CELL_STR(target)},
                                {"policy", NULL, CELL_STR_DASH(policy)},
                                {NULL, NULL, CELL_STR("found")},
                                {"found", NULL, CELL_STR_DASH(found)},
                                {NULL, NULL, CELL_STR("action")},
                                {"action", NULL, CELL_STR(action)},
                        },
                        8);
        } else if (streq(member, "IrqSkew")) {
                const char *device, *kind, *irqs, *suggestion;
                char share_text[32];
                uint32_t cpu;
                double share;

                r = sd_bus_message_read(m, "ssudss", &device, &kind, &cpu, &share, &irqs, &suggestion);
                if (r < 0)
                        return r;
                snprintf(share_text, sizeof(share_text), "%.3f", share);
                /* text: "irq-skew KIND DEVICE cpu CPU share SHARE irqs IRQS fix SUGGESTION" */
                output_event(
                        (const Field[]){
                                {"signal", NULL, cell_with_text(CELL_STR(member), "irq-skew")},
                                {"kind", NULL, CELL_STR(kind)},
                                {"device", NULL, CELL_STR(device)},
                                {NULL, NULL, CELL_STR("cpu")},
                                {"cpu", NULL, CELL_UINT(cpu)},
                                {NULL, NULL, CELL_STR("share")},
                                {"share", NULL, CELL_NUMBER(share_text)},
                                {NULL, NULL, CELL_STR("irqs")},
                                {"irqs", NULL, CELL_STR_DASH(irqs)},
                                {NULL, NULL, CELL_STR("fix")},
                                {"suggestion", NULL, CELL_STR(suggestion)},
                        },
                        11);
        } else if (streq(member, "CpuIntrusion")) {
                const char *policy, *kind, *who;
                uint64_t usec, count;
                uint32_t cpu;

                r = sd_bus_message_read(m, "usstts", &cpu, &policy, &kind, &usec, &count, &who);
                if (r < 0)
                        return r;
                /* text: "intrusion KIND cpu CPU policy POLICY usec USEC count COUNT who WHO" */
                output_event(
                        (const Field[]){
                                {"signal", NULL, cell_with_text(CELL_STR(member), "intrusion")},
                                {"kind", NULL, CELL_STR(kind)},
                                {NULL, NULL, CELL_STR("cpu")},
                                {"cpu", NULL, CELL_UINT(cpu)},
                                {NULL, NULL, CELL_STR("policy")},
                                {"policy", NULL, CELL_STR(policy)},
                                {NULL, NULL, CELL_STR("usec")},
                                {"usec", NULL, CELL_UINT(usec)},
                                {NULL, NULL, CELL_STR("count")},
                                {"count", NULL, CELL_UINT(count)},
                                {NULL, NULL, CELL_STR("who")},
                                {"who", NULL, CELL_STR_DASH(who)},
                        },
                        12);
        }
        return 0;
}

static int on_bus_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *member = sd_bus_message_get_member(m);
        int r;

        r = print_signal(m, member);
        if (r < 0)
                fprintf(stderr, "Ignoring a malformed %s signal: %s\n", member, strerror(-r));
        else
                fflush(stdout);
        return 0;
}

/*
 * Asks the daemon for its per-event signals: it sends ProcessPlaced, PlacementFailed,
 * DriftDetected, IrqSkew and CpuIntrusion only while a connection is subscribed (Subscribe(),
 * docs/org.affinityd1.xml), and this connection stays subscribed until it closes. wait: for the reply, so
 * that what follows is seen (at start, before the "Monitoring" line); else sent without waiting, as from a
 * signal handler. A daemon without the method sends them anyway: its refusal is of no matter.
 */
static void ask_for_events(sd_bus *bus, bool wait) {
        if (wait)
                (void)sd_bus_call_method(
                        bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Subscribe",
                        NULL, NULL, "");
        else
                (void)sd_bus_call_method_async(
                        bus, NULL, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                        "Subscribe", NULL, NULL, "");
}

/*
 * NameOwnerChanged(s name, s old_owner, s new_owner) of the bus driver for org.affinityd1: the
 * daemon went away (no new owner) or came back (a new owner where there was none). monitor
 * keeps running across restarts (the signal matches name the well-known name), so it says
 * both: on stderr, and with --json as {"event":...} lines on stdout too.
 */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old_owner, *new_owner, *event = NULL;
        int r;

        r = sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner);
        if (r < 0) {
                fprintf(stderr, "Ignoring a malformed NameOwnerChanged signal: %s\n", strerror(-r));
                return 0;
        }
        if (!streq(name, AFFINITYD_BUS_NAME))
                return 0;
        if (new_owner[0] == 0) {
                fprintf(stderr, "affinityd went away (%s has no owner); waiting for it\n",
                        AFFINITYD_BUS_NAME);
                event = "daemon-gone";
        } else if (old_owner[0] == 0) {
                /* A new daemon has no subscribers: asked first, before saying it is back. */
                ask_for_events(sd_bus_message_get_bus(m), false);
                fprintf(stderr, "affinityd is back\n");
                event = "daemon-back";
        }
        if (event && arg_json)
                output_event((const Field[]){{"event", NULL, CELL_STR(event)}}, 1);
        fflush(stdout);
        return 0;
}

/* Subscribes to the daemon's signals and to its name's owner changes. Returns 0, or
 * EXIT_FAILURE_ after saying why. */
static int subscribe(sd_bus *bus) {
        static const char *const signals[] = {"ProcessPlaced", "PlacementFailed", "Reloaded",
                                              "DriftDetected", "IrqSkew",         "CpuIntrusion"};
        int r;

        /* The matches name the well-known name: the bus routes the daemon's signals by its
         * current owner, so they keep coming across restarts of the daemon. */
        for (size_t i = 0; i < ELEMENTSOF(signals); i++) {
                r = sd_bus_match_signal(
                        bus, NULL, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                        signals[i], on_bus_signal, NULL);
                if (r < 0) {
                        fprintf(stderr, "Failed to subscribe to %s: %s\n", signals[i], strerror(-r));
                        return EXIT_FAILURE_;
                }
        }
        /* The bus driver says when the daemon goes away and comes back; subscribed to before
         * asking whether it runs, so that no change between the two is missed. */
        r = sd_bus_add_match(
                bus, NULL,
                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" AFFINITYD_BUS_NAME "'",
                on_name_owner_changed, NULL);
        if (r < 0) {
                fprintf(stderr, "Failed to subscribe to NameOwnerChanged: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        return 0;
}

/* An event loop for bus that SIGINT and SIGTERM end. Returns 0 or a negative errno. */
static int setup_event_loop(sd_bus *bus, sd_event **ret) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        r = -sigprocmask(SIG_BLOCK, &mask, NULL);
        if (r >= 0)
                r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_set_exit_on_disconnect(bus, true);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(event);
        return 0;
}

int verb_monitor(char **args) {
        /* Declared first, so freed last: the bus detaches from it when it goes. */
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (arg_socket) {
                fprintf(stderr,
                        "monitor needs the bus: the daemon sends its signals there, not on a peer-to-peer "
                        "connection (--socket).\n");
                return EXIT_FAILURE;
        }
        r = ctl_connect(&bus);
        if (r > 0)
                return r;
        r = subscribe(bus);
        if (r > 0)
                return r;

        r = ctl_daemon_running(bus);
        if (r == 0) {
                fprintf(stderr, "affinityd is not running (nobody owns %s on the bus).\n",
                        AFFINITYD_BUS_NAME);
                return EXIT_NOT_RUNNING;
        }
        if (r < 0) {
                fprintf(stderr, "Failed to ask the bus whether affinityd runs: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }

        r = setup_event_loop(bus, &event);
        if (r < 0) {
                fprintf(stderr, "Failed to set up the event loop: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        ask_for_events(bus, true);

        if (!arg_no_legend)
                fprintf(stderr, "Monitoring the signals of %s; press Ctrl-C to stop.\n", AFFINITYD_BUS_NAME);
        r = sd_event_loop(event);
        if (r < 0) {
                fprintf(stderr, "Failed to run the event loop: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        /* 0 after SIGINT/SIGTERM; the bus going away exits the loop with a failure code. */
        if (r != 0)
                fprintf(stderr, "The bus connection was closed.\n");
        return r == 0 ? EXIT_OK : EXIT_FAILURE_;
}
