/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl: the command-line client of affinityd. status, policies, processes, explain, irqs,
 * net, top, monitor, reload and rescan talk to the daemon over D-Bus (org.affinityd1 on the
 * system bus, or --bus-address); validate and plan work offline with the same loader and planner
 * the daemon uses, against this machine or an hwloc XML topology (--topology=FILE.xml).
 *
 * top asks the daemon only which processes it manages (ListProcesses) and samples their threads
 * in /proc itself (stat, sched, schedstat, status: readable by anyone), so it costs the daemon
 * one call per interval.
 *
 * Exit codes: 0 ok, 1 failure, 2 usage, 3 the daemon is not running (nobody owns
 * org.affinityd1, or the bus can't be reached), 4 no such process (explain).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "config.h"

#include "cpuset.h"
#include "devplan.h"
#include "macro.h"
#include "plan.h"
#include "policy-yaml.h"
#include "bus-names.h"
#include "procfs.h"
#include "threadstat.h"
#include "topology.h"

/* Reload replies only when the reload is done (a full rescan); systemd's ExecReload= has its
 * own timeout on top of this. */
#define RELOAD_TIMEOUT_USEC (UINT64_C(300) * 1000000)

enum {
        EXIT_OK = 0,
        EXIT_FAILURE_ = 1,
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3,
        EXIT_NO_SUCH_PROCESS = 4,
};

static const char *arg_bus_address = NULL;
static bool arg_json = false;
static const char *arg_config_dir = NULL; /* validate, plan: --config-dir=DIR */
static const char *arg_topology = NULL;   /* validate, plan: --topology=FILE.xml */
static bool arg_no_legend = false;
static uint64_t arg_interval_usec = 1000000; /* top: --interval=SEC */
static bool arg_interval_set = false;
static uint64_t arg_iterations = 0; /* top: --iterations=N; 0: not given */

/* ---- JSON output ---- */

/*
 * Writes s as a JSON string literal: quote and backslash escaped, control characters (and DEL)
 * as \uXXXX or their short forms, every other byte (UTF-8 included) passed through as is.
 * NULL is written as null.
 */
static void json_string(FILE *f, const char *s) {
        if (!s) {
                fputs("null", f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                switch (*p) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\b':
                        fputs("\\b", f);
                        break;
                case '\f':
                        fputs("\\f", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\r':
                        fputs("\\r", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", (unsigned)*p);
                        else
                                fputc(*p, f);
                }
        fputc('"', f);
}

static void json_strv(FILE *f, char *const *l) {
        bool first = true;

        fputc('[', f);
        STRV_FOREACH (s, l) {
                if (!first)
                        fputc(',', f);
                json_string(f, *s);
                first = false;
        }
        fputc(']', f);
}

/* ---- bus ---- */

static int bus_connect(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

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
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

static int connect_or_explain(sd_bus **ret) {
        int r = bus_connect(ret);

        if (r < 0) {
                fprintf(stderr, "Failed to connect to %s: %s\n",
                        arg_bus_address ? arg_bus_address : "the system bus", strerror(-r));
                fprintf(stderr, "affinityd is not running, or the bus is unreachable.\n");
                return -EXIT_NOT_RUNNING;
        }
        return 0;
}

/*
 * Calls member on the daemon's object without D-Bus activation (status and reload report a
 * stopped daemon, they don't start one). interface_arg, if not NULL, is passed as the single
 * "s" argument (for org.freedesktop.DBus.Properties.GetAll).
 */
static int bus_call(
        sd_bus *bus, const char *interface, const char *member, const char *interface_arg,
        uint64_t timeout_usec, sd_bus_error *error, sd_bus_message **reply) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(
                bus, &m, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, interface, member);
        if (r < 0)
                return r;
        r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0 && interface_arg)
                r = sd_bus_message_append(m, "s", interface_arg);
        if (r >= 0)
                r = sd_bus_call(bus, m, timeout_usec, error, reply);
        sd_bus_message_unref(m);
        return r;
}

static bool bus_error_not_running(const sd_bus_error *error) {
        return sd_bus_error_has_name(error, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
                sd_bus_error_has_name(error, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

/* How dbus-daemon words a refusal by its bus policy: a long text ("Rejected send message, 2
 * matched rules; type=...") meant for the bus's administrator, not for the user. */
#define BUS_POLICY_REJECTED "Rejected send message"
/* The longest refusal text of the daemon shown as is. */
#define ACCESS_DENIED_MESSAGE_MAX 100

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

/* Reports a failed call on stderr; returns the exit code for it. */
static int explain_call_error(const char *what, int r, const sd_bus_error *error) {
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

/* ---- status ---- */

typedef enum PropertyKind {
        PROPERTY_STRING,
        PROPERTY_NUMBER, /* text holds the decimal representation */
        PROPERTY_BOOLEAN,
        PROPERTY_STRV,
} PropertyKind;

typedef struct Property {
        char *name;
        PropertyKind kind;
        char *text; /* STRING, NUMBER */
        bool boolean;
        char **strv;
} Property;

typedef struct Properties {
        Property *items;
        size_t n;
} Properties;

static void properties_done(Properties *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->items[i].name);
                free(p->items[i].text);
                strv_free(p->items[i].strv);
        }
        p->items = mfree(p->items);
        p->n = 0;
}

static const Property *properties_find(const Properties *p, const char *name) {
        for (size_t i = 0; i < p->n; i++)
                if (streq(p->items[i].name, name))
                        return &p->items[i];
        return NULL;
}

/* Reads the value of one variant whose signature is contents into *prop. Returns 1 if read, 0
 * if skipped (a type status doesn't show), negative errno. */
static int read_variant(sd_bus_message *reply, const char *contents, Property *prop) {
        char buf[64];
        int r;

        if (strlen(contents) == 1)
                switch (contents[0]) {
                case 's':
                case 'o':
                case 'g': {
                        const char *s;

                        r = sd_bus_message_read_basic(reply, contents[0], &s);
                        if (r < 0)
                                return r;
                        prop->kind = PROPERTY_STRING;
                        prop->text = strdup(s);
                        return prop->text ? 1 : -ENOMEM;
                }
                case 'b': {
                        int b;

                        r = sd_bus_message_read_basic(reply, 'b', &b);
                        if (r < 0)
                                return r;
                        prop->kind = PROPERTY_BOOLEAN;
                        prop->boolean = b;
                        return 1;
                }
                case 'y':
                case 'q':
                case 'u':
                case 't': {
                        union {
                                uint8_t y;
                                uint16_t q;
                                uint32_t u;
                                uint64_t t;
                        } v;

                        r = sd_bus_message_read_basic(reply, contents[0], &v);
                        if (r < 0)
                                return r;
                        snprintf(
                                buf, sizeof(buf), "%" PRIu64,
                                contents[0] == 'y'           ? (uint64_t)v.y
                                        : contents[0] == 'q' ? (uint64_t)v.q
                                        : contents[0] == 'u' ? (uint64_t)v.u
                                                             : v.t);
                        break;
                }
                case 'n':
                case 'i':
                case 'x': {
                        union {
                                int16_t n;
                                int32_t i;
                                int64_t x;
                        } v;

                        r = sd_bus_message_read_basic(reply, contents[0], &v);
                        if (r < 0)
                                return r;
                        snprintf(
                                buf, sizeof(buf), "%" PRIi64,
                                contents[0] == 'n'           ? (int64_t)v.n
                                        : contents[0] == 'i' ? (int64_t)v.i
                                                             : v.x);
                        break;
                }
                case 'd': {
                        double d;

                        r = sd_bus_message_read_basic(reply, 'd', &d);
                        if (r < 0)
                                return r;
                        if (!isfinite(d))
                                return 0; /* not representable in JSON */
                        snprintf(buf, sizeof(buf), "%.17g", d);
                        break;
                }
                default:
                        return sd_bus_message_skip(reply, contents) < 0 ? -EBADMSG : 0;
                }
        else if (streq(contents, "as")) {
                r = sd_bus_message_read_strv(reply, &prop->strv);
                if (r < 0)
                        return r;
                prop->kind = PROPERTY_STRV;
                return 1;
        } else {
                r = sd_bus_message_skip(reply, contents);
                return r < 0 ? r : 0;
        }

        prop->kind = PROPERTY_NUMBER;
        prop->text = strdup(buf);
        return prop->text ? 1 : -ENOMEM;
}

/* Reads an a{sv} (Properties.GetAll reply) into *ret, in the order the daemon sent it. */
static int read_properties(sd_bus_message *reply, Properties *ret) {
        Properties p = {};
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        for (;;) {
                Property prop = {};
                const char *name, *contents;
                Property *n;

                r = sd_bus_message_enter_container(reply, 'e', "sv");
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                r = sd_bus_message_read_basic(reply, 's', &name);
                if (r < 0)
                        goto fail;
                r = sd_bus_message_peek_type(reply, NULL, &contents);
                if (r < 0)
                        goto fail;
                r = sd_bus_message_enter_container(reply, 'v', contents);
                if (r < 0)
                        goto fail;
                r = read_variant(reply, contents, &prop);
                if (r < 0)
                        goto fail;
                if (r > 0) {
                        prop.name = strdup(name);
                        n = realloc(p.items, (p.n + 1) * sizeof(Property));
                        if (!prop.name || !n) {
                                free(prop.name);
                                free(prop.text);
                                strv_free(prop.strv);
                                if (n)
                                        p.items = n;
                                r = -ENOMEM;
                                goto fail;
                        }
                        p.items = n;
                        p.items[p.n++] = prop;
                }
                r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        goto fail;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                goto fail;

        *ret = p;
        return 0;

fail:
        properties_done(&p);
        return r;
}

/* A policy the daemon could not resolve on this machine (ListPolicies with a pending_reason). */
typedef struct PendingPolicy {
        char *name;
        char *file;
        uint32_t line;
        char *reason;
} PendingPolicy;

typedef struct PendingPolicies {
        PendingPolicy *items;
        size_t n;
} PendingPolicies;

static void pending_policies_done(PendingPolicies *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->items[i].name);
                free(p->items[i].file);
                free(p->items[i].reason);
        }
        p->items = mfree(p->items);
        p->n = 0;
}

/* Reads a ListPolicies() reply, a(ssuss) (name, file, line, cpus, pending_reason), keeping the
 * pending policies in the daemon's order. Returns 0 or a negative errno. */
static int read_pending_policies(sd_bus_message *reply, PendingPolicies *ret) {
        PendingPolicies p = {};
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssuss)");
        if (r < 0)
                return r;
        for (;;) {
                const char *name, *file, *cpus, *reason;
                PendingPolicy *a = NULL;
                uint32_t line;

                r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &reason);
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                if (reason[0] == 0)
                        continue;
                a = reallocarray(p.items, p.n + 1, sizeof(PendingPolicy));
                if (!a) {
                        r = -ENOMEM;
                        goto fail;
                }
                p.items = a;
                p.items[p.n] = (PendingPolicy){
                        .name = strdup(name), .file = strdup(file), .line = line, .reason = strdup(reason)};
                p.n++;
                if (!p.items[p.n - 1].name || !p.items[p.n - 1].file || !p.items[p.n - 1].reason) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                goto fail;

        *ret = p;
        return 0;

fail:
        pending_policies_done(&p);
        return r;
}

/* µs as "850us", "1.2ms", "3.40s". */
static void format_usec(const char *text, char *buf, size_t size) {
        uint64_t us = strtoull(text, NULL, 10);

        if (us < 1000)
                snprintf(buf, size, "%" PRIu64 "us", us);
        else if (us < 1000000)
                snprintf(buf, size, "%.1fms", (double)us / 1e3);
        else
                snprintf(buf, size, "%.2fs", (double)us / 1e6);
}

/* A CLOCK_REALTIME µs value as local time, "Tue 2024-05-07 10:00:00 CEST"; "never" for 0. */
static void format_realtime(const char *text, char *buf, size_t size) {
        uint64_t us = strtoull(text, NULL, 10);
        time_t t = (time_t)(us / 1000000);
        struct tm tm;

        if (us == 0 || !localtime_r(&t, &tm) || strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                snprintf(buf, size, "%s", us == 0 ? "never" : text);
}

/* The properties status shows, in this order, with their labels; the rest follow by name. */
static const struct {
        const char *name;
        const char *label;
} status_fields[] = {
        {"Version", "Version"},
        {"State", "State"},
        {"DegradedReasons", "Degraded"},
        {"Discovery", "Discovery"},
        {"Topology", "Topology"},
        {"OnlineCPUs", "Online CPUs"},
        {"ReservedCPUs", "Reserved CPUs"},
        {"PolicyFiles", "Policy files"},
        {"Reloads", "Reloads"},
        {"LastReloadUSec", "Last reload"},
        {"LastReloadError", "Last reload error"},
        {"ManagedProcesses", "Managed processes"},
        {"ProcessesMatched", "Processes matched"},
        {"ProcessesPlaced", "Processes placed"},
        {"ProcessesVanished", "Processes vanished"},
        {"PlacementFailures", "Placement failures"},
        {"DriftDetected", "Drift detected"},
        {"DriftCorrections", "Drift corrected"},
        {"Restores", "Restores"},
        {"EventsReceived", "Events received"},
        {"EventsLost", "Events lost"},
        {"MatchesUndecided", "Matches undecided"},
        {"Rescans", "Rescans"},
        {"IrqsPlaced", "IRQs placed"},
        {"IrqRefusals", "IRQ refusals"},
        {"QueuesPlaced", "Queue settings placed"},
        {"QueueFailures", "Queue failures"},
        {"DeviceRestores", "Device restores"},
        {"DeviceDriftDetected", "Device drift detected"},
        {"DeviceDriftCorrections", "Device drift corrected"},
        {"DeviceEvents", "Device events"},
};

static const char *const latency_fields[] = {
        "PlacementLatencyP50USec",
        "PlacementLatencyP99USec",
        "PlacementLatencyMaxUSec",
};
#define LATENCY_LABEL "Placement latency"

static bool is_latency_field(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(latency_fields); i++)
                if (streq(name, latency_fields[i]))
                        return true;
        return false;
}

/* Prints text after a label of width (NULL: a continuation of the previous field),
 * continuation lines aligned under the first. */
static void print_field(int width, const char *label, const char *text) {
        const char *nl;

        if (label)
                printf("%*s: ", width, label);
        else
                printf("%*s  ", width, "");
        while ((nl = strchr(text, '\n')) && nl[1]) {
                printf("%.*s\n%*s  ", (int)(nl - text), text, width, "");
                text = nl + 1;
        }
        printf("%s%s", text, nl ? "" : "\n");
}

static void print_property(int width, const char *label, const Property *p) {
        switch (p->kind) {
        case PROPERTY_STRING:
        case PROPERTY_NUMBER:
                print_field(width, label, p->text);
                break;
        case PROPERTY_BOOLEAN:
                print_field(width, label, p->boolean ? "yes" : "no");
                break;
        case PROPERTY_STRV:
                if (strv_length(p->strv) == 0)
                        print_field(width, label, "none");
                else
                        for (size_t i = 0; p->strv[i]; i++)
                                print_field(width, i == 0 ? label : NULL, p->strv[i]);
                break;
        }
}

static bool status_known(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(status_fields); i++)
                if (streq(name, status_fields[i].name))
                        return true;
        return is_latency_field(name);
}

#define PENDING_LABEL "Pending"

/* "name (file:line): reason", one line per pending policy, under the label "Pending". */
static void print_pending(int width, const PendingPolicies *pending) {
        for (size_t i = 0; i < pending->n; i++) {
                const PendingPolicy *p = &pending->items[i];
                _cleanup_free_ char *text = NULL;
                int r;

                if (p->file[0] && p->line > 0)
                        r = asprintf(&text, "%s (%s:%" PRIu32 "): %s", p->name, p->file, p->line, p->reason);
                else
                        r = asprintf(&text, "%s: %s", p->name, p->reason);
                if (r < 0)
                        text = NULL;
                print_field(width, i == 0 ? PENDING_LABEL : NULL, text ?: p->name);
        }
}

static void print_status(const Properties *props, const PendingPolicies *pending) {
        int width = (int)MAX(strlen(LATENCY_LABEL), strlen(PENDING_LABEL));
        char latency[128] = "";
        size_t n_latency = 0;

        for (size_t i = 0; i < ELEMENTSOF(status_fields); i++)
                width = MAX(width, (int)strlen(status_fields[i].label));
        for (size_t i = 0; i < props->n; i++)
                if (!status_known(props->items[i].name))
                        width = MAX(width, (int)strlen(props->items[i].name));

        for (size_t i = 0; i < ELEMENTSOF(status_fields); i++) {
                const Property *p = properties_find(props, status_fields[i].name);

                if (!p)
                        continue;
                /* An empty LastReloadError means the last reload succeeded. */
                if (streq(p->name, "LastReloadError") && p->kind == PROPERTY_STRING && p->text[0] == 0)
                        continue;
                /* Nothing to say when the daemon is not degraded. */
                if (streq(p->name, "DegradedReasons") && p->kind == PROPERTY_STRV &&
                    strv_length(p->strv) == 0)
                        continue;
                if (streq(p->name, "ReservedCPUs") && p->kind == PROPERTY_STRING && p->text[0] == 0) {
                        print_field(width, status_fields[i].label, "none");
                        continue;
                }
                if (streq(p->name, "LastReloadUSec") && p->kind == PROPERTY_NUMBER) {
                        char when[64];

                        format_realtime(p->text, when, sizeof(when));
                        print_field(width, status_fields[i].label, when);
                        continue;
                }
                print_property(width, status_fields[i].label, p);
        }

        /* Policies that don't apply on this machine, and why (a name no user has, a node
         * that doesn't exist): they are not errors, so this is where they show. */
        print_pending(width, pending);

        for (size_t i = 0; i < ELEMENTSOF(latency_fields); i++) {
                static const char *const names[] = {"p50", "p99", "max"};
                const Property *p = properties_find(props, latency_fields[i]);
                char value[32];
                size_t l = strlen(latency);

                if (!p || p->kind != PROPERTY_NUMBER)
                        continue;
                format_usec(p->text, value, sizeof(value));
                snprintf(
                        latency + l, sizeof(latency) - l, "%s%s %s", n_latency > 0 ? ", " : "", names[i],
                        value);
                n_latency++;
        }
        if (n_latency > 0)
                print_field(width, LATENCY_LABEL, latency);

        /* Whatever else the daemon offers (newer daemons have more). */
        for (size_t i = 0; i < props->n; i++)
                if (!status_known(props->items[i].name))
                        print_property(width, props->items[i].name, &props->items[i]);
}

static void print_status_json(const Properties *props, const PendingPolicies *pending) {
        fputc('{', stdout);
        for (size_t i = 0; i < props->n; i++) {
                const Property *p = &props->items[i];

                if (i > 0)
                        fputc(',', stdout);
                json_string(stdout, p->name);
                fputc(':', stdout);
                switch (p->kind) {
                case PROPERTY_STRING:
                        json_string(stdout, p->text);
                        break;
                case PROPERTY_NUMBER:
                        fputs(p->text, stdout);
                        break;
                case PROPERTY_BOOLEAN:
                        fputs(p->boolean ? "true" : "false", stdout);
                        break;
                case PROPERTY_STRV:
                        json_strv(stdout, p->strv);
                        break;
                }
        }
        fputs(props->n > 0 ? ",\"PendingPolicies\":[" : "\"PendingPolicies\":[", stdout);
        for (size_t i = 0; i < pending->n; i++) {
                const PendingPolicy *p = &pending->items[i];

                fputs(i > 0 ? ",{\"name\":" : "{\"name\":", stdout);
                json_string(stdout, p->name);
                fputs(",\"file\":", stdout);
                json_string(stdout, p->file);
                printf(",\"line\":%" PRIu32 ",\"reason\":", p->line);
                json_string(stdout, p->reason);
                fputc('}', stdout);
        }
        fputs("]}\n", stdout);
}

static int verb_status(void) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL, *policies = NULL;
        sd_bus *bus = NULL;
        Properties props = {};
        PendingPolicies pending = {};
        int r, ret;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        r = bus_call(
                bus, "org.freedesktop.DBus.Properties", "GetAll", AFFINITYD_BUS_INTERFACE, 0, &error,
                &reply);
        if (r < 0) {
                ret = explain_call_error("read the daemon's properties", r, &error);
                goto finish;
        }
        r = read_properties(reply, &props);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's properties: %s\n", strerror(-r));
                ret = EXIT_FAILURE_;
                goto finish;
        }

        r = bus_call(bus, AFFINITYD_BUS_INTERFACE, "ListPolicies", NULL, 0, &error, &policies);
        if (r < 0) {
                ret = explain_call_error("list the daemon's policies", r, &error);
                goto finish;
        }
        r = read_pending_policies(policies, &pending);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's policies: %s\n", strerror(-r));
                ret = EXIT_FAILURE_;
                goto finish;
        }

        if (arg_json)
                print_status_json(&props, &pending);
        else
                print_status(&props, &pending);
        ret = EXIT_OK;

finish:
        pending_policies_done(&pending);
        properties_done(&props);
        sd_bus_message_unref(policies);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- reload ---- */

/*
 * If error is an AccessDenied refusal of the root-only verb (reload, rescan), by the bus policy
 * or by the daemon, says so in one line on stderr and returns true.
 */
static bool explain_needs_root(const char *verb, const sd_bus_error *error) {
        char buf[ACCESS_DENIED_MESSAGE_MAX + 1];

        if (!sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED))
                return false;
        fprintf(stderr, "%s: %s needs root (refused: %s)\n", program_invocation_short_name, verb,
                access_denied_reason(error, buf, sizeof(buf)));
        return true;
}

static int verb_reload(void) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r, ret;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        r = bus_call(bus, AFFINITYD_BUS_INTERFACE, "Reload", NULL, RELOAD_TIMEOUT_USEC, &error, NULL);
        if (r >= 0) {
                if (arg_json)
                        puts("{\"reloaded\":true}");
                ret = EXIT_OK;
        } else if (sd_bus_error_has_name(&error, AFFINITYD_ERROR_INVALID_POLICY)) {
                const char *msg = error.message ?: "";
                size_t l = strlen(msg);

                /* The message is the diagnostics, one "file:line:column: error: ..." per line. */
                fprintf(stderr, "%s%s", msg, l > 0 && msg[l - 1] != '\n' ? "\n" : "");
                fprintf(stderr,
                        "Reload failed: the configuration is invalid; affinityd keeps the previous one.\n");
                ret = EXIT_FAILURE_;
        } else if (explain_needs_root("reload", &error))
                ret = EXIT_FAILURE_;
        else
                ret = explain_call_error("reload affinityd", r, &error);

        if (r < 0 && arg_json) {
                fputs("{\"reloaded\":false,\"error\":", stdout);
                json_string(stdout, sd_bus_error_is_set(&error) ? error.name : NULL);
                fputs(",\"message\":", stdout);
                json_string(stdout, sd_bus_error_is_set(&error) ? error.message : strerror(-r));
                fputs("}\n", stdout);
        }

        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- irqs and net: tables ---- */

/*
 * A table of text cells, printed like systemctl list-units: an upper-case header line, columns
 * left-aligned and padded to their widest cell, two spaces apart, the last column unpadded.
 */
typedef struct Table {
        size_t n_columns;
        char **cells; /* row-major, n_rows * n_columns, the header row first */
        size_t n_rows;
} Table;

static void table_done(Table *t) {
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        t->cells = mfree(t->cells);
        t->n_rows = 0;
}

/* Appends a row of t->n_columns strings (NULL is shown as ""). Returns 0 or -ENOMEM. */
static int table_add_row(Table *t, const char *const *row) {
        char **c;

        c = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(char *));
        if (!c)
                return -ENOMEM;
        t->cells = c;
        c += t->n_rows * t->n_columns;
        for (size_t i = 0; i < t->n_columns; i++) {
                c[i] = strdup(row[i] ?: "");
                if (!c[i]) {
                        while (i > 0)
                                free(c[--i]);
                        return -ENOMEM;
                }
        }
        t->n_rows++;
        return 0;
}

/* Prints the columns whose show[i] is true (show NULL: all). A row ends at its last non-empty
 * cell: no trailing blanks. --no-legend leaves the header row out. */
static void table_print(const Table *t, const bool *show) {
        _cleanup_free_ size_t *width = calloc(t->n_columns, sizeof(size_t));
        size_t first_row = arg_no_legend ? 1 : 0;

        if (!width)
                return;
        for (size_t r = first_row; r < t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++)
                        width[c] = MAX(width[c], strlen(t->cells[r * t->n_columns + c]));
        for (size_t r = first_row; r < t->n_rows; r++) {
                char *const *row = t->cells + r * t->n_columns;
                size_t last = 0;
                bool first = true;

                for (size_t c = 0; c < t->n_columns; c++)
                        if ((!show || show[c]) && row[c][0])
                                last = c;
                for (size_t c = 0; c <= last; c++) {
                        if (show && !show[c])
                                continue;
                        printf("%s%-*s", first ? "" : "  ", c == last ? 0 : (int)width[c], row[c]);
                        first = false;
                }
                fputc('\n', stdout);
        }
}

/* "-" for an empty cell, so that every column of a row has a word. */
static const char *dash(const char *s) {
        return s && s[0] ? s : "-";
}

/*
 * Calls a List method (no arguments) of the daemon. Returns 0 with the reply in *ret; or an
 * exit code (> 0) after saying what went wrong.
 */
static int call_list(const char *method, const char *what, sd_bus **ret_bus, sd_bus_message **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;
        r = bus_call(bus, AFFINITYD_BUS_INTERFACE, method, NULL, 0, &error, ret);
        if (r < 0) {
                r = explain_call_error(what, r, &error);
                sd_bus_error_free(&error);
                sd_bus_flush_close_unref(bus);
                return r;
        }
        *ret_bus = bus;
        return 0;
}

static int verb_irqs(void) {
        enum { COL_IRQ, COL_NAME, COL_RULE, COL_REQUESTED, COL_EFFECTIVE, COL_STATE, COL_REASON, N_COLS };
        static const char *const header[N_COLS] = {"IRQ",       "NAME",  "RULE",  "REQUESTED",
                                                   "EFFECTIVE", "STATE", "REASON"};
        bool show[N_COLS] = {true, true, true, true, true, true, false};
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        Table table = {.n_columns = N_COLS};
        size_t n = 0, n_ruled = 0;
        int r, ret = EXIT_FAILURE_;

        r = call_list("ListIrqs", "list the daemon's IRQs", &bus, &reply);
        if (r > 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(ussssss)");
        if (r >= 0 && arg_json)
                fputs("{\"irqs\":[", stdout);
        else if (r >= 0)
                r = table_add_row(&table, header);
        while (r >= 0) {
                const char *name, *rule, *requested, *effective, *state, *reason;
                uint32_t irq;

                r = sd_bus_message_read(
                        reply, "(ussssss)", &irq, &name, &rule, &requested, &effective, &state, &reason);
                if (r <= 0)
                        break;
                n++;
                if (rule[0])
                        n_ruled++;
                if (arg_json) {
                        printf("%s{\"irq\":%" PRIu32 ",\"name\":", n > 1 ? "," : "", irq);
                        json_string(stdout, name);
                        fputs(",\"rule\":", stdout);
                        json_string(stdout, rule);
                        fputs(",\"requested\":", stdout);
                        json_string(stdout, requested);
                        fputs(",\"effective\":", stdout);
                        json_string(stdout, effective);
                        fputs(",\"state\":", stdout);
                        json_string(stdout, state);
                        fputs(",\"reason\":", stdout);
                        json_string(stdout, reason);
                        fputc('}', stdout);
                } else {
                        char number[16];

                        snprintf(number, sizeof(number), "%" PRIu32, irq);
                        if (reason[0])
                                show[COL_REASON] = true;
                        r = table_add_row(
                                &table,
                                (const char *const[N_COLS]){
                                        number, dash(name), dash(rule), dash(requested), dash(effective),
                                        state, reason});
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                if (arg_json)
                        fputs("]}\n", stdout); /* still one document */
                fprintf(stderr, "Failed to parse the daemon's IRQ list: %s\n", strerror(-r));
                goto finish;
        }

        if (arg_json)
                fputs("]}\n", stdout);
        else {
                table_print(&table, show);
                if (!arg_no_legend)
                        printf("\n%zu IRQ%s listed, %zu covered by a rule.\n", n, n == 1 ? "" : "s",
                               n_ruled);
        }
        ret = EXIT_OK;

finish:
        table_done(&table);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return ret;
}

static int verb_net(void) {
        enum { COL_DEVICE, COL_QUEUE, COL_KIND, COL_CPUS, COL_FLOWS, COL_RULE, COL_STATE, N_COLS };
        static const char *const header[N_COLS] = {"DEVICE", "QUEUE", "KIND", "CPUS",
                                                   "FLOWS",  "RULE",  "STATE"};
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        Table table = {.n_columns = N_COLS};
        size_t n = 0, n_ruled = 0;
        int r, ret = EXIT_FAILURE_;

        r = call_list("ListNetQueues", "list the daemon's network queues", &bus, &reply);
        if (r > 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssssuss)");
        if (r >= 0 && arg_json)
                fputs("{\"queues\":[", stdout);
        else if (r >= 0)
                r = table_add_row(&table, header);
        while (r >= 0) {
                const char *device, *queue, *kind, *cpus, *rule, *state;
                uint32_t flow_cnt;

                r = sd_bus_message_read(
                        reply, "(ssssuss)", &device, &queue, &kind, &cpus, &flow_cnt, &rule, &state);
                if (r <= 0)
                        break;
                n++;
                if (rule[0])
                        n_ruled++;
                if (arg_json) {
                        fputs(n > 1 ? ",{\"device\":" : "{\"device\":", stdout);
                        json_string(stdout, device);
                        fputs(",\"queue\":", stdout);
                        json_string(stdout, queue);
                        fputs(",\"kind\":", stdout);
                        json_string(stdout, kind);
                        fputs(",\"cpus\":", stdout);
                        json_string(stdout, cpus);
                        printf(",\"flow_cnt\":%" PRIu32 ",\"rule\":", flow_cnt);
                        json_string(stdout, rule);
                        fputs(",\"state\":", stdout);
                        json_string(stdout, state);
                        fputc('}', stdout);
                } else {
                        char flows[16];

                        /* Flow counts belong to rx queues (RFS); "-" on tx. */
                        if (streq(kind, "rps"))
                                snprintf(flows, sizeof(flows), "%" PRIu32, flow_cnt);
                        else
                                snprintf(flows, sizeof(flows), "-");
                        r = table_add_row(
                                &table,
                                (const char *const[N_COLS]){
                                        device, queue, kind, dash(cpus), flows, dash(rule), state});
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                if (arg_json)
                        fputs("]}\n", stdout); /* still one document */
                fprintf(stderr, "Failed to parse the daemon's queue list: %s\n", strerror(-r));
                goto finish;
        }

        if (arg_json)
                fputs("]}\n", stdout);
        else {
                table_print(&table, NULL);
                if (!arg_no_legend)
                        printf("\n%zu queue setting%s listed, %zu covered by a rule.\n", n,
                               n == 1 ? "" : "s", n_ruled);
        }
        ret = EXIT_OK;

finish:
        table_done(&table);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- policies and processes ---- */

static int verb_policies(void) {
        enum { COL_NAME, COL_FILE, COL_LINE, COL_CPUS, COL_STATE, COL_PENDING, N_COLS };
        static const char *const header[N_COLS] = {"NAME", "FILE", "LINE", "CPUS", "STATE", "PENDING"};
        bool show[N_COLS] = {true, true, true, true, true, false};
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        Table table = {.n_columns = N_COLS};
        size_t n = 0, n_pending = 0;
        int r, ret = EXIT_FAILURE_;

        r = call_list("ListPolicies", "list the daemon's policies", &bus, &reply);
        if (r > 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssuss)");
        if (r >= 0 && arg_json)
                fputs("{\"policies\":[", stdout);
        else if (r >= 0)
                r = table_add_row(&table, header);
        while (r >= 0) {
                const char *name, *file, *cpus, *reason;
                uint32_t line;

                r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &reason);
                if (r <= 0)
                        break;
                n++;
                if (reason[0])
                        n_pending++;
                if (arg_json) {
                        fputs(n > 1 ? ",{\"name\":" : "{\"name\":", stdout);
                        json_string(stdout, name);
                        fputs(",\"file\":", stdout);
                        json_string(stdout, file);
                        printf(",\"line\":%" PRIu32 ",\"cpus\":", line);
                        json_string(stdout, cpus);
                        printf(",\"state\":\"%s\",\"pending_reason\":", reason[0] ? "pending" : "active");
                        json_string(stdout, reason);
                        fputc('}', stdout);
                } else {
                        char number[16];

                        snprintf(number, sizeof(number), "%" PRIu32, line);
                        if (reason[0])
                                show[COL_PENDING] = true;
                        r = table_add_row(
                                &table,
                                (const char *const[N_COLS]){
                                        name, dash(file), line > 0 ? number : "-",
                                        reason[0] ? "-" : dash(cpus), reason[0] ? "pending" : "active",
                                        reason});
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                if (arg_json)
                        fputs("]}\n", stdout); /* still one document */
                fprintf(stderr, "Failed to parse the daemon's policy list: %s\n", strerror(-r));
                goto finish;
        }

        if (arg_json)
                fputs("]}\n", stdout);
        else {
                table_print(&table, show);
                if (!arg_no_legend)
                        printf("\n%zu polic%s listed, %zu active, %zu pending.\n", n, n == 1 ? "y" : "ies",
                               n - n_pending, n_pending);
        }
        ret = EXIT_OK;

finish:
        table_done(&table);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return ret;
}

static int verb_processes(void) {
        enum { COL_PID, COL_COMM, COL_POLICY, COL_CPUS, N_COLS };
        static const char *const header[N_COLS] = {"PID", "COMM", "POLICY", "CPUS"};
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        Table table = {.n_columns = N_COLS};
        size_t n = 0;
        int r, ret = EXIT_FAILURE_;

        r = call_list("ListProcesses", "list the daemon's processes", &bus, &reply);
        if (r > 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(usss)");
        if (r >= 0 && arg_json)
                fputs("{\"processes\":[", stdout);
        else if (r >= 0)
                r = table_add_row(&table, header);
        while (r >= 0) {
                const char *comm, *policy, *cpus;
                uint32_t pid;

                r = sd_bus_message_read(reply, "(usss)", &pid, &comm, &policy, &cpus);
                if (r <= 0)
                        break;
                n++;
                if (arg_json) {
                        printf("%s{\"pid\":%" PRIu32 ",\"comm\":", n > 1 ? "," : "", pid);
                        json_string(stdout, comm);
                        fputs(",\"policy\":", stdout);
                        json_string(stdout, policy);
                        fputs(",\"cpus\":", stdout);
                        json_string(stdout, cpus);
                        fputc('}', stdout);
                } else {
                        char number[16];

                        snprintf(number, sizeof(number), "%" PRIu32, pid);
                        r = table_add_row(
                                &table,
                                (const char *const[N_COLS]){number, dash(comm), dash(policy), dash(cpus)});
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                if (arg_json)
                        fputs("]}\n", stdout); /* still one document */
                fprintf(stderr, "Failed to parse the daemon's process list: %s\n", strerror(-r));
                goto finish;
        }

        if (arg_json)
                fputs("]}\n", stdout);
        else {
                table_print(&table, NULL);
                if (!arg_no_legend)
                        printf("\n%zu process%s listed.\n", n, n == 1 ? "" : "es");
        }
        ret = EXIT_OK;

finish:
        table_done(&table);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- explain ---- */

/* One thread of an Explain() reply. */
typedef struct ExplainThread {
        uint32_t tid;
        char *comm, *rule, *applied, *now;
        uint32_t cpu;
        uint64_t migrations; /* UINT64_MAX: the kernel doesn't say */
        uint64_t run_delay_nsec;
        uint64_t involuntary;
} ExplainThread;

typedef struct Explanation {
        char *comm, *policy, *cpus;
        char **lines;
        char **unmatched; /* policy name, reason, policy name, reason, ... */
        ExplainThread *threads;
        size_t n_threads;
} Explanation;

static void explanation_done(Explanation *e) {
        free(e->comm);
        free(e->policy);
        free(e->cpus);
        strv_free(e->lines);
        strv_free(e->unmatched);
        for (size_t i = 0; i < e->n_threads; i++) {
                free(e->threads[i].comm);
                free(e->threads[i].rule);
                free(e->threads[i].applied);
                free(e->threads[i].now);
        }
        free(e->threads);
        *e = (Explanation){};
}

/* Reads an Explain() reply, (sssasa(ss)a(ussssuttt)). Returns 0 or a negative errno. */
static int read_explanation(sd_bus_message *reply, Explanation *ret) {
        Explanation e = {};
        const char *comm, *policy, *cpus;
        int r;

        r = sd_bus_message_read(reply, "sss", &comm, &policy, &cpus);
        if (r < 0)
                return r;
        e.comm = strdup(comm);
        e.policy = strdup(policy);
        e.cpus = strdup(cpus);
        if (!e.comm || !e.policy || !e.cpus) {
                r = -ENOMEM;
                goto fail;
        }
        r = sd_bus_message_read_strv(reply, &e.lines);
        if (r < 0)
                goto fail;

        r = sd_bus_message_enter_container(reply, 'a', "(ss)");
        if (r < 0)
                goto fail;
        for (;;) {
                const char *name, *why;

                r = sd_bus_message_read(reply, "(ss)", &name, &why);
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                r = strv_extendf(&e.unmatched, "%s", name);
                if (r >= 0)
                        r = strv_extendf(&e.unmatched, "%s", why);
                if (r < 0)
                        goto fail;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                goto fail;

        r = sd_bus_message_enter_container(reply, 'a', "(ussssuttt)");
        if (r < 0)
                goto fail;
        for (;;) {
                const char *tcomm, *rule, *applied, *now;
                ExplainThread t = {}, *a;

                r = sd_bus_message_read(
                        reply, "(ussssuttt)", &t.tid, &tcomm, &rule, &applied, &now, &t.cpu, &t.migrations,
                        &t.run_delay_nsec, &t.involuntary);
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                a = reallocarray(e.threads, e.n_threads + 1, sizeof(ExplainThread));
                if (!a) {
                        r = -ENOMEM;
                        goto fail;
                }
                e.threads = a;
                t.comm = strdup(tcomm);
                t.rule = strdup(rule);
                t.applied = strdup(applied);
                t.now = strdup(now);
                e.threads[e.n_threads++] = t;
                if (!t.comm || !t.rule || !t.applied || !t.now) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                goto fail;

        *ret = e;
        return 0;

fail:
        explanation_done(&e);
        return r;
}

/* ns as "0", "850ns", "12us", "1.2ms", "3.40s". */
static void format_nsec(uint64_t ns, char *buf, size_t size) {
        if (ns == 0)
                snprintf(buf, size, "0");
        else if (ns < 1000)
                snprintf(buf, size, "%" PRIu64 "ns", ns);
        else if (ns < 1000000)
                snprintf(buf, size, "%" PRIu64 "us", ns / 1000);
        else if (ns < 1000000000)
                snprintf(buf, size, "%.1fms", (double)ns / 1e6);
        else
                snprintf(buf, size, "%.2fs", (double)ns / 1e9);
}

#define EXPLAIN_LABEL_WIDTH 9

static int print_explanation(uint32_t pid, const Explanation *e) {
        enum {
                COL_TID,
                COL_COMM,
                COL_RULE,
                COL_APPLIED,
                COL_NOW,
                COL_CPU,
                COL_MIGR,
                COL_DELAY,
                COL_INVOL,
                N_COLS
        };
        static const char *const header[N_COLS] = {"TID", "COMM", "RULE",     "APPLIED", "NOW",
                                                   "CPU", "MIGR", "RUNDELAY", "INVOL"};
        Table table = {.n_columns = N_COLS};
        char number[32];
        int r;

        snprintf(number, sizeof(number), "%" PRIu32, pid);
        print_field(EXPLAIN_LABEL_WIDTH, "PID", number);
        print_field(EXPLAIN_LABEL_WIDTH, "Comm", e->comm);
        /* "-", like the tables: a policy may be named "none". */
        print_field(EXPLAIN_LABEL_WIDTH, "Policy", dash(e->policy));
        if (e->policy[0])
                print_field(EXPLAIN_LABEL_WIDTH, "CPUs", e->cpus[0] ? e->cpus : "not set");
        for (size_t i = 0; e->lines && e->lines[i]; i++)
                print_field(EXPLAIN_LABEL_WIDTH, i == 0 ? "Why" : NULL, e->lines[i]);
        for (size_t i = 0; e->unmatched && e->unmatched[i] && e->unmatched[i + 1]; i += 2) {
                _cleanup_free_ char *text = NULL;

                if (asprintf(&text, "%s: %s", e->unmatched[i], e->unmatched[i + 1]) < 0)
                        return -ENOMEM;
                print_field(EXPLAIN_LABEL_WIDTH, i == 0 ? "Unmatched" : NULL, text);
        }
        if (e->n_threads == 0)
                return 0;

        putchar('\n');
        r = table_add_row(&table, header);
        for (size_t i = 0; r >= 0 && i < e->n_threads; i++) {
                const ExplainThread *t = &e->threads[i];
                char tid[16], cpu[16], migr[32], delay[32], invol[32];

                snprintf(tid, sizeof(tid), "%" PRIu32, t->tid);
                snprintf(cpu, sizeof(cpu), "%" PRIu32, t->cpu);
                if (t->migrations == UINT64_MAX)
                        snprintf(migr, sizeof(migr), "-");
                else
                        snprintf(migr, sizeof(migr), "%" PRIu64, t->migrations);
                format_nsec(t->run_delay_nsec, delay, sizeof(delay));
                snprintf(invol, sizeof(invol), "%" PRIu64, t->involuntary);
                r = table_add_row(
                        &table,
                        (const char *const[N_COLS]){
                                tid, dash(t->comm), dash(t->rule), dash(t->applied), dash(t->now), cpu, migr,
                                delay, invol});
        }
        if (r >= 0)
                table_print(&table, NULL);
        table_done(&table);
        return r;
}

static void print_explanation_json(uint32_t pid, const Explanation *e) {
        printf("{\"pid\":%" PRIu32 ",\"comm\":", pid);
        json_string(stdout, e->comm);
        fputs(",\"policy\":", stdout);
        json_string(stdout, e->policy);
        fputs(",\"cpus\":", stdout);
        json_string(stdout, e->cpus);
        fputs(",\"explanation\":", stdout);
        json_strv(stdout, e->lines);
        fputs(",\"unmatched\":[", stdout);
        for (size_t i = 0; e->unmatched && e->unmatched[i] && e->unmatched[i + 1]; i += 2) {
                fputs(i > 0 ? ",{\"policy\":" : "{\"policy\":", stdout);
                json_string(stdout, e->unmatched[i]);
                fputs(",\"reason\":", stdout);
                json_string(stdout, e->unmatched[i + 1]);
                fputc('}', stdout);
        }
        fputs("],\"threads\":[", stdout);
        for (size_t i = 0; i < e->n_threads; i++) {
                const ExplainThread *t = &e->threads[i];

                printf("%s{\"tid\":%" PRIu32 ",\"comm\":", i > 0 ? "," : "", t->tid);
                json_string(stdout, t->comm);
                fputs(",\"rule\":", stdout);
                json_string(stdout, t->rule);
                fputs(",\"applied\":", stdout);
                json_string(stdout, t->applied);
                fputs(",\"cpus\":", stdout);
                json_string(stdout, t->now);
                printf(",\"cpu\":%" PRIu32 ",\"migrations\":", t->cpu);
                if (t->migrations == UINT64_MAX)
                        fputs("null", stdout);
                else
                        printf("%" PRIu64, t->migrations);
                printf(",\"run_delay_usec\":%" PRIu64 ",\"involuntary\":%" PRIu64 "}",
                       t->run_delay_nsec / 1000, t->involuntary);
        }
        fputs("]}\n", stdout);
}

static int verb_explain(uint32_t pid) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus *bus = NULL;
        Explanation e = {};
        int r, ret = EXIT_FAILURE_;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        r = sd_bus_message_new_method_call(
                bus, &m, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Explain");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_message_append(m, "u", pid);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                if (sd_bus_error_has_name(&error, AFFINITYD_ERROR_NO_SUCH_PROCESS)) {
                        fprintf(stderr, "%s\n", error.message ?: "No such process.");
                        ret = EXIT_NO_SUCH_PROCESS;
                } else
                        ret = explain_call_error("explain the process", r, &error);
                goto finish;
        }
        r = read_explanation(reply, &e);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's explanation: %s\n", strerror(-r));
                goto finish;
        }
        if (arg_json)
                print_explanation_json(pid, &e);
        else if (print_explanation(pid, &e) < 0) {
                fprintf(stderr, "Out of memory.\n");
                goto finish;
        }
        ret = EXIT_OK;

finish:
        explanation_done(&e);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- rescan ---- */

static int verb_rescan(void) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r, ret;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        r = bus_call(bus, AFFINITYD_BUS_INTERFACE, "Rescan", NULL, RELOAD_TIMEOUT_USEC, &error, NULL);
        if (r >= 0)
                ret = EXIT_OK;
        else if (sd_bus_error_has_name(&error, AFFINITYD_ERROR_NOT_SUPPORTED)) {
                fprintf(stderr, "Rescan is not supported by this daemon: %s\n", error.message ?: error.name);
                ret = EXIT_FAILURE_;
        } else if (explain_needs_root("rescan", &error))
                ret = EXIT_FAILURE_;
        else
                ret = explain_call_error("rescan", r, &error);

        if (arg_json) {
                printf("{\"rescanned\":%s", r >= 0 ? "true" : "false");
                if (r < 0) {
                        fputs(",\"error\":", stdout);
                        json_string(stdout, sd_bus_error_is_set(&error) ? error.name : NULL);
                        fputs(",\"message\":", stdout);
                        json_string(stdout, sd_bus_error_is_set(&error) ? error.message : strerror(-r));
                }
                fputs("}\n", stdout);
        }

        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- top ---- */

/* What top reads of one thread of a managed process, at one moment. */
typedef struct TaskSample {
        pid_t pid, tid;
        char comm[16];
        char *policy;
        unsigned cpu;            /* /proc/PID/task/TID/stat field 39 */
        bool has_migrations;     /* the kernel has se.nr_migrations (CONFIG_SCHED_DEBUG) */
        uint64_t migrations;     /* se.nr_migrations of /proc/PID/task/TID/sched */
        uint64_t run_delay_nsec; /* field 2 of /proc/PID/task/TID/schedstat */
        uint64_t involuntary;    /* nonvoluntary_ctxt_switches of /proc/PID/task/TID/status */
} TaskSample;

typedef struct Sample {
        TaskSample *tasks; /* sorted by tid */
        size_t n_tasks;
        size_t n_processes;
        uint64_t time_usec; /* CLOCK_MONOTONIC */
} Sample;

static void sample_done(Sample *s) {
        for (size_t i = 0; i < s->n_tasks; i++)
                free(s->tasks[i].policy);
        s->tasks = mfree(s->tasks);
        s->n_tasks = s->n_processes = 0;
}

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Samples one thread: its comm and threadstat_read() (/proc/PID/task/TID/stat, sched, schedstat,
 * status: readable by anyone). Returns 0, -ESRCH (gone), -EBADMSG, -errno.
 */
static int sample_task(pid_t pid, pid_t tid, TaskSample *ret) {
        TaskSample t = {.pid = pid, .tid = tid};
        ThreadStat st;
        int r;

        r = procfs_read_comm("/", pid, tid, t.comm);
        if (r < 0)
                return r;
        r = threadstat_read("/", pid, tid, &st);
        if (r < 0)
                return r;
        t.cpu = st.last_cpu;
        t.has_migrations = st.nr_migrations != THREADSTAT_UNKNOWN;
        t.migrations = t.has_migrations ? st.nr_migrations : 0;
        t.run_delay_nsec = st.run_delay_ns != THREADSTAT_UNKNOWN ? st.run_delay_ns : 0;
        t.involuntary = st.nonvoluntary;
        *ret = t;
        return 0;
}

static int task_sample_compare(const void *a, const void *b) {
        const TaskSample *x = a, *y = b;

        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * Reads ListProcesses() from the daemon and samples every thread of every process listed.
 * Threads and processes that vanish meanwhile are left out. Returns 0, or an exit code (> 0)
 * after saying what went wrong.
 */
static int sample_take(sd_bus *bus, Sample *ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        Sample s = {};
        int r, ret_code = EXIT_FAILURE_;

        r = bus_call(bus, AFFINITYD_BUS_INTERFACE, "ListProcesses", NULL, 0, &error, &reply);
        if (r < 0) {
                ret_code = explain_call_error("list the daemon's processes", r, &error);
                goto finish;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(usss)");
        while (r >= 0) {
                _cleanup_free_ pid_t *tids = NULL;
                const char *comm, *policy, *cpus;
                size_t n_tids = 0;
                uint32_t pid;

                r = sd_bus_message_read(reply, "(usss)", &pid, &comm, &policy, &cpus);
                if (r <= 0)
                        break;
                if (procfs_list_tids("/", (pid_t)pid, &tids, &n_tids) < 0)
                        continue; /* gone */
                s.n_processes++;
                for (size_t i = 0; i < n_tids; i++) {
                        TaskSample t, *a;

                        if (sample_task((pid_t)pid, tids[i], &t) < 0)
                                continue;
                        t.policy = strdup(policy);
                        a = reallocarray(s.tasks, s.n_tasks + 1, sizeof(TaskSample));
                        if (!t.policy || !a) {
                                free(t.policy);
                                if (a)
                                        s.tasks = a;
                                r = -ENOMEM;
                                break;
                        }
                        s.tasks = a;
                        s.tasks[s.n_tasks++] = t;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                fprintf(stderr, "Failed to sample the daemon's processes: %s\n", strerror(-r));
                goto finish;
        }
        s.time_usec = now_usec(CLOCK_MONOTONIC);
        if (s.n_tasks > 0)
                qsort(s.tasks, s.n_tasks, sizeof(TaskSample), task_sample_compare);
        *ret = s;
        s = (Sample){};
        ret_code = 0;

finish:
        sample_done(&s);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return ret_code;
}

/* One thread's change over an interval. */
typedef struct TaskDelta {
        const TaskSample *now;
        bool has_migrations;
        uint64_t migrations;
        uint64_t run_delay_usec;
        uint64_t involuntary;
} TaskDelta;

static int task_delta_compare_policy(const void *a, const void *b) {
        const TaskDelta *x = a, *y = b;
        int c = strcmp(x->now->policy, y->now->policy);

        if (c != 0)
                return c;
        return x->now->tid < y->now->tid ? -1 : x->now->tid > y->now->tid;
}

static int uint64_compare(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        return *x < *y ? -1 : *x > *y;
}

/* The quantile of per_mille/1000 (1..1000, nearest rank) of n > 0 sorted values. */
static uint64_t quantile(const uint64_t *sorted, size_t n, unsigned per_mille) {
        size_t rank = (per_mille * n + 999) / 1000;

        return sorted[rank > 0 ? rank - 1 : 0];
}

/*
 * The deltas between prev and now of every thread present in both (same TID and PID, counters
 * not gone backwards: the TID was not reused), sorted by policy, then TID. Returns the count,
 * or -ENOMEM.
 */
static ssize_t sample_diff(const Sample *prev, const Sample *now, TaskDelta **ret) {
        TaskDelta *d = NULL;
        size_t n = 0;

        if (now->n_tasks > 0) {
                d = calloc(now->n_tasks, sizeof(TaskDelta));
                if (!d)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < now->n_tasks; i++) {
                const TaskSample *t = &now->tasks[i], *p;

                p = prev->n_tasks > 0
                        ? bsearch(t, prev->tasks, prev->n_tasks, sizeof(TaskSample), task_sample_compare)
                        : NULL;
                if (!p || p->pid != t->pid || p->run_delay_nsec > t->run_delay_nsec ||
                    p->involuntary > t->involuntary)
                        continue;
                d[n] = (TaskDelta){
                        .now = t,
                        .has_migrations =
                                t->has_migrations && p->has_migrations && p->migrations <= t->migrations,
                        .run_delay_usec = (t->run_delay_nsec - p->run_delay_nsec) / 1000,
                        .involuntary = t->involuntary - p->involuntary,
                };
                if (d[n].has_migrations)
                        d[n].migrations = t->migrations - p->migrations;
                n++;
        }
        if (n > 0)
                qsort(d, n, sizeof(TaskDelta), task_delta_compare_policy);
        *ret = d;
        return (ssize_t)n;
}

/* A policy's summary over an interval: deltas [first, first + n) share its name. */
typedef struct PolicySummary {
        const char *policy;
        size_t first, n;
        bool has_migrations;
        double migrations_per_sec;
        uint64_t run_delay_p50_usec, run_delay_p99_usec;
        double involuntary_per_sec;
} PolicySummary;

static int summarize(
        const TaskDelta *d, size_t n, uint64_t interval_usec, PolicySummary **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *delays = NULL;
        PolicySummary *s = NULL;
        size_t n_s = 0;
        double seconds = (double)interval_usec / 1e6;

        if (n > 0) {
                delays = calloc(n, sizeof(uint64_t));
                s = calloc(n, sizeof(PolicySummary));
                if (!delays || !s) {
                        free(s);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < n;) {
                PolicySummary *p = &s[n_s++];
                uint64_t migrations = 0, involuntary = 0;
                size_t k = 0;

                p->policy = d[i].now->policy;
                p->first = i;
                for (; i < n && streq(d[i].now->policy, p->policy); i++, k++) {
                        delays[k] = d[i].run_delay_usec;
                        involuntary += d[i].involuntary;
                        if (d[i].has_migrations) {
                                p->has_migrations = true;
                                migrations += d[i].migrations;
                        }
                }
                p->n = k;
                qsort(delays, k, sizeof(uint64_t), uint64_compare);
                p->run_delay_p50_usec = quantile(delays, k, 500);
                p->run_delay_p99_usec = quantile(delays, k, 990);
                p->migrations_per_sec = seconds > 0 ? (double)migrations / seconds : 0;
                p->involuntary_per_sec = seconds > 0 ? (double)involuntary / seconds : 0;
        }
        *ret = s;
        *ret_n = n_s;
        return 0;
}

static void print_top_json(
        uint64_t interval_usec, const PolicySummary *s, size_t n_s, const TaskDelta *d, size_t n) {
        printf("{\"interval_usec\":%" PRIu64 ",\"policies\":[", interval_usec);
        for (size_t i = 0; i < n_s; i++) {
                fputs(i > 0 ? ",{\"policy\":" : "{\"policy\":", stdout);
                json_string(stdout, s[i].policy);
                printf(",\"threads\":%zu,\"migrations_per_sec\":", s[i].n);
                if (s[i].has_migrations)
                        printf("%.3f", s[i].migrations_per_sec);
                else
                        fputs("null", stdout);
                printf(",\"run_delay_p50_usec\":%" PRIu64 ",\"run_delay_p99_usec\":%" PRIu64
                       ",\"involuntary_per_sec\":%.3f}",
                       s[i].run_delay_p50_usec, s[i].run_delay_p99_usec, s[i].involuntary_per_sec);
        }
        fputs("],\"threads\":[", stdout);
        for (size_t i = 0; i < n; i++) {
                const TaskSample *t = d[i].now;

                printf("%s{\"pid\":%d,\"tid\":%d,\"comm\":", i > 0 ? "," : "", (int)t->pid, (int)t->tid);
                json_string(stdout, t->comm);
                fputs(",\"policy\":", stdout);
                json_string(stdout, t->policy);
                printf(",\"cpu\":%u,\"migrations\":", t->cpu);
                if (d[i].has_migrations)
                        printf("%" PRIu64, d[i].migrations);
                else
                        fputs("null", stdout);
                printf(",\"run_delay_usec\":%" PRIu64 ",\"involuntary\":%" PRIu64 "}", d[i].run_delay_usec,
                       d[i].involuntary);
        }
        fputs("]}\n", stdout);
}

static int print_top(
        uint64_t interval_usec, size_t n_processes, const PolicySummary *s, size_t n_s, const TaskDelta *d,
        size_t n) {
        enum { P_POLICY, P_THREADS, P_MIGR, P_P50, P_P99, P_INVOL, P_N };
        static const char *const pheader[P_N] = {"POLICY",    "THREADS",   "MIGR/S",
                                                 "DELAY-P50", "DELAY-P99", "INVOL/S"};
        enum { T_PID, T_TID, T_COMM, T_POLICY, T_CPU, T_MIGR, T_DELAY, T_INVOL, T_N };
        static const char *const theader[T_N] = {"PID", "TID",  "COMM",     "POLICY",
                                                 "CPU", "MIGR", "RUNDELAY", "INVOL"};
        Table policies = {.n_columns = P_N}, threads = {.n_columns = T_N};
        int r;

        r = table_add_row(&policies, pheader);
        for (size_t i = 0; r >= 0 && i < n_s; i++) {
                char count[16], migr[32], p50[32], p99[32], invol[32];

                snprintf(count, sizeof(count), "%zu", s[i].n);
                if (s[i].has_migrations)
                        snprintf(migr, sizeof(migr), "%.1f", s[i].migrations_per_sec);
                else
                        snprintf(migr, sizeof(migr), "-");
                format_nsec(s[i].run_delay_p50_usec * 1000, p50, sizeof(p50));
                format_nsec(s[i].run_delay_p99_usec * 1000, p99, sizeof(p99));
                snprintf(invol, sizeof(invol), "%.1f", s[i].involuntary_per_sec);
                r = table_add_row(
                        &policies,
                        (const char *const[P_N]){dash(s[i].policy), count, migr, p50, p99, invol});
        }
        r = r < 0 ? r : table_add_row(&threads, theader);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const TaskSample *t = d[i].now;
                char pid[16], tid[16], cpu[16], migr[32], delay[32], invol[32];

                snprintf(pid, sizeof(pid), "%d", (int)t->pid);
                snprintf(tid, sizeof(tid), "%d", (int)t->tid);
                snprintf(cpu, sizeof(cpu), "%u", t->cpu);
                if (d[i].has_migrations)
                        snprintf(migr, sizeof(migr), "%" PRIu64, d[i].migrations);
                else
                        snprintf(migr, sizeof(migr), "-");
                format_nsec(d[i].run_delay_usec * 1000, delay, sizeof(delay));
                snprintf(invol, sizeof(invol), "%" PRIu64, d[i].involuntary);
                r = table_add_row(
                        &threads,
                        (const char *const[T_N]){
                                pid, tid, dash(t->comm), dash(t->policy), cpu, migr, delay, invol});
        }
        if (r >= 0) {
                table_print(&policies, NULL);
                putchar('\n');
                table_print(&threads, NULL);
                if (!arg_no_legend)
                        printf("\n%zu thread%s of %zu process%s over %.2fs.\n", n, n == 1 ? "" : "s",
                               n_processes, n_processes == 1 ? "" : "es", (double)interval_usec / 1e6);
        }
        table_done(&policies);
        table_done(&threads);
        return r;
}

static volatile sig_atomic_t top_interrupted = 0;

static void top_on_signal(int sig) {
        top_interrupted = 1;
}

static int verb_top(void) {
        struct sigaction sa = {.sa_handler = top_on_signal};
        sd_bus *bus = NULL;
        Sample prev = {}, now = {};
        uint64_t iterations = arg_iterations > 0 ? arg_iterations : arg_json ? 1 : UINT64_MAX;
        int r, ret = EXIT_FAILURE_;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        /* Ctrl-C ends the loop between samples: exit 0 with whole reports printed. */
        sigemptyset(&sa.sa_mask);
        (void)sigaction(SIGINT, &sa, NULL);
        (void)sigaction(SIGTERM, &sa, NULL);

        r = sample_take(bus, &prev);
        if (r > 0) {
                ret = r;
                goto finish;
        }
        for (uint64_t i = 0; i < iterations && !top_interrupted; i++) {
                _cleanup_free_ TaskDelta *d = NULL;
                _cleanup_free_ PolicySummary *s = NULL;
                struct timespec ts = {
                        .tv_sec = (time_t)(arg_interval_usec / 1000000),
                        .tv_nsec = (long)(arg_interval_usec % 1000000) * 1000,
                };
                uint64_t interval;
                size_t n_s = 0;
                ssize_t n;

                /* Sleeps the rest of the interval; a signal ends it (and the loop). */
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        if (top_interrupted)
                                break;
                if (top_interrupted)
                        break;

                r = sample_take(bus, &now);
                if (r > 0) {
                        ret = r;
                        goto finish;
                }
                interval = now.time_usec - prev.time_usec;
                n = sample_diff(&prev, &now, &d);
                r = n < 0 ? (int)n : summarize(d, (size_t)n, interval, &s, &n_s);
                if (r >= 0 && arg_json)
                        print_top_json(interval, s, n_s, d, (size_t)n);
                else if (r >= 0) {
                        if (i > 0)
                                putchar('\n');
                        r = print_top(interval, now.n_processes, s, n_s, d, (size_t)n);
                }
                if (r < 0) {
                        fprintf(stderr, "Out of memory.\n");
                        goto finish;
                }
                fflush(stdout);
                sample_done(&prev);
                prev = now;
                now = (Sample){};
        }
        ret = EXIT_OK;

finish:
        sample_done(&prev);
        sample_done(&now);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- monitor ---- */

/* A signal's text on one line: newlines of a multi-line error become "; ". */
static void print_one_line(const char *s) {
        for (; *s; s++)
                if (*s == '\n') {
                        if (s[1])
                                fputs("; ", stdout);
                } else
                        fputc(*s, stdout);
}

static int on_bus_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *member = sd_bus_message_get_member(m);
        int r = -EBADMSG;

        if (streq(member, "ProcessPlaced") || streq(member, "PlacementFailed")) {
                const char *comm, *policy, *text;
                uint32_t pid;
                bool placed = streq(member, "ProcessPlaced");

                r = sd_bus_message_read(m, "usss", &pid, &comm, &policy, &text);
                if (r < 0)
                        goto bad;
                if (arg_json) {
                        printf("{\"signal\":\"%s\",\"pid\":%" PRIu32 ",\"comm\":", member, pid);
                        json_string(stdout, comm);
                        fputs(",\"policy\":", stdout);
                        json_string(stdout, policy);
                        fputs(placed ? ",\"cpus\":" : ",\"error\":", stdout);
                        json_string(stdout, text);
                        fputs("}\n", stdout);
                } else {
                        printf("%s %" PRIu32 " %s %s ", placed ? "placed" : "failed", pid, comm,
                               dash(policy));
                        print_one_line(placed ? dash(text) : text);
                        putchar('\n');
                }
        } else if (streq(member, "Reloaded")) {
                const char *error;
                int success;

                r = sd_bus_message_read(m, "bs", &success, &error);
                if (r < 0)
                        goto bad;
                if (arg_json) {
                        printf("{\"signal\":\"Reloaded\",\"success\":%s,\"error\":",
                               success ? "true" : "false");
                        json_string(stdout, error);
                        fputs("}\n", stdout);
                } else if (success)
                        puts("reloaded");
                else {
                        fputs("reload-failed ", stdout);
                        print_one_line(error);
                        putchar('\n');
                }
        } else if (streq(member, "DriftDetected")) {
                const char *kind, *target, *policy, *found, *action;

                r = sd_bus_message_read(m, "sssss", &kind, &target, &policy, &found, &action);
                if (r < 0)
                        goto bad;
                if (arg_json) {
                        fputs("{\"signal\":\"DriftDetected\",\"kind\":", stdout);
                        json_string(stdout, kind);
                        fputs(",\"target\":", stdout);
                        json_string(stdout, target);
                        fputs(",\"policy\":", stdout);
                        json_string(stdout, policy);
                        fputs(",\"found\":", stdout);
                        json_string(stdout, found);
                        fputs(",\"action\":", stdout);
                        json_string(stdout, action);
                        fputs("}\n", stdout);
                } else
                        printf("drift %s %s %s found %s action %s\n", kind, target, dash(policy),
                               dash(found), action);
        }
        fflush(stdout);
        return 0;

bad:
        fprintf(stderr, "Ignoring a malformed %s signal: %s\n", member, strerror(-r));
        return 0;
}

/*
 * NameOwnerChanged(s name, s old_owner, s new_owner) of the bus driver for org.affinityd1: the
 * daemon went away (no new owner) or came back (a new owner where there was none). monitor
 * keeps running across restarts (the signal matches name the well-known name), so it says
 * both: on stderr, and with --json as {"event":...} lines on stdout too.
 */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old_owner, *new_owner;
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
                if (arg_json)
                        puts("{\"event\":\"daemon-gone\"}");
        } else if (old_owner[0] == 0) {
                fprintf(stderr, "affinityd is back\n");
                if (arg_json)
                        puts("{\"event\":\"daemon-back\"}");
        }
        fflush(stdout);
        return 0;
}

/* Whether the daemon's name has an owner on bus (org.freedesktop.DBus.NameHasOwner). */
static int daemon_running(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        int r, has = 0;

        r = sd_bus_call_method(
                bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                NULL, &reply, "s", AFFINITYD_BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has);
        sd_bus_message_unref(reply);
        return r < 0 ? r : has;
}

static int verb_monitor(void) {
        static const char *const signals[] = {
                "ProcessPlaced", "PlacementFailed", "Reloaded", "DriftDetected"};
        sd_event *event = NULL;
        sd_bus *bus = NULL;
        sigset_t mask;
        int r, ret = EXIT_FAILURE_;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        /* The matches name the well-known name: the bus routes the daemon's signals by its
         * current owner, so they keep coming across restarts of the daemon. */
        for (size_t i = 0; i < ELEMENTSOF(signals); i++) {
                r = sd_bus_match_signal(
                        bus, NULL, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                        signals[i], on_bus_signal, NULL);
                if (r < 0) {
                        fprintf(stderr, "Failed to subscribe to %s: %s\n", signals[i], strerror(-r));
                        goto finish;
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
                goto finish;
        }

        r = daemon_running(bus);
        if (r == 0) {
                fprintf(stderr, "affinityd is not running (nobody owns %s on the bus).\n",
                        AFFINITYD_BUS_NAME);
                ret = EXIT_NOT_RUNNING;
                goto finish;
        }
        if (r < 0) {
                fprintf(stderr, "Failed to ask the bus whether affinityd runs: %s\n", strerror(-r));
                goto finish;
        }

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
        if (r < 0) {
                fprintf(stderr, "Failed to set up the event loop: %s\n", strerror(-r));
                goto finish;
        }

        if (!arg_no_legend)
                fprintf(stderr, "Monitoring the signals of %s; press Ctrl-C to stop.\n", AFFINITYD_BUS_NAME);
        r = sd_event_loop(event);
        if (r < 0) {
                fprintf(stderr, "Failed to run the event loop: %s\n", strerror(-r));
                goto finish;
        }
        /* 0 after SIGINT/SIGTERM; the bus going away exits the loop with a failure code. */
        if (r != 0)
                fprintf(stderr, "The bus connection was closed.\n");
        ret = r == 0 ? EXIT_OK : EXIT_FAILURE_;

finish:
        sd_bus_flush_close_unref(bus);
        sd_event_unref(event);
        return ret;
}

/* ---- offline: validate and plan ---- */

/*
 * The configuration validate and plan are asked about: --config-dir=DIR, the PATHs given, or
 * the standard search path. Same return convention as config_load().
 */
static int load_config(char **paths, Config **ret, Diagnostics *diag) {
        if (arg_config_dir)
                return config_load(arg_config_dir, ret, diag);
        if (strv_length(paths) > 0)
                return config_load_paths(paths, ret, diag);
        return config_load(NULL, ret, diag);
}

/* --topology=FILE.xml, or this machine's topology; a failure is reported on stderr. */
static int load_topology(Topology **ret) {
        int r;

        if (!arg_topology) {
                r = topology_load_live(ret);
                if (r < 0 && r != -ENOMEM)
                        fprintf(stderr, "Failed to load this machine's topology: %s\n", strerror(-r));
                return r;
        }
        r = topology_load_xml(arg_topology, ret);
        if (r == -EINVAL)
                fprintf(stderr, "Failed to load the topology %s: not an hwloc XML topology\n", arg_topology);
        else if (r < 0 && r != -ENOMEM)
                fprintf(stderr, "Failed to load the topology %s: %s\n", arg_topology, strerror(-r));
        return r;
}

static int print_diagnostics(const Diagnostics *diag) {
        for (size_t i = 0; i < diag->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                if (diagnostic_format(&diag->items[i], &line) < 0)
                        return -ENOMEM;
                fprintf(stderr, "%s\n", line);
        }
        return 0;
}

static void json_diagnostics(FILE *f, const Diagnostics *diag) {
        fputc('[', f);
        for (size_t i = 0; diag && i < diag->n_items; i++) {
                const Diagnostic *d = &diag->items[i];

                if (i > 0)
                        fputc(',', f);
                fprintf(f,
                        "{\"level\":\"%s\",\"file\":", d->level == DIAGNOSTIC_ERROR ? "error" : "warning");
                json_string(f, d->file);
                fprintf(f, ",\"line\":%u,\"column\":%u,\"message\":", d->line, d->column);
                json_string(f, d->message);
                fputc('}', f);
        }
        fputc(']', f);
}

/*
 * Whether a pending policy is pending because of its CPUs (its cpus: or a thread rule's could
 * not be resolved on the topology), as opposed to user: names this machine's user database
 * doesn't know. The plan says which by where it points (PolicyPlan.pending_location).
 */
static bool pending_on_topology(const PolicyPlan *pp) {
        const Policy *p = pp->policy;

        if (pp->pending_location == &p->cpus.location)
                return true;
        for (size_t k = 0; k < p->n_threads; k++)
                if (pp->pending_location == &p->threads[k].cpus.location)
                        return true;
        return false;
}

/*
 * Adds what planning says as diagnostics: the reserve's warnings, each policy's, and pending
 * policies — warnings when planning against this machine (pending is a normal state there);
 * with --topology (validate --topology asks whether everything resolves there) errors when
 * the CPUs can't be resolved on that topology, warnings for users unknown here (they are looked
 * up in this machine's user database, which says nothing about the target machine).
 */
static int add_plan_diagnostics(const Plan *plan, DiagnosticLevel pending_level, Diagnostics *diag) {
        const Location *rl = &plan->config->reserve_location;
        int r;

        STRV_FOREACH (w, plan->warnings) {
                r = diagnostics_add(diag, DIAGNOSTIC_WARNING, rl->file, rl->line, rl->column, "%s", *w);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                const Policy *p = pp->policy;

                /* Each at the most precise place the plan knows, else at the policy. */
                if (pp->pending_reason) {
                        const Location *l = pp->pending_location ?: &p->location;

                        if (arg_topology && pending_on_topology(pp))
                                r = diagnostics_add(
                                        diag, pending_level, l->file, l->line, l->column,
                                        "policy \"%s\" can't be resolved on %s: %s", p->name, arg_topology,
                                        pp->pending_reason);
                        else if (arg_topology)
                                r = diagnostics_add(
                                        diag, DIAGNOSTIC_WARNING, l->file, l->line, l->column,
                                        "policy \"%s\" is pending on this machine (users are looked up "
                                        "here, not in %s): %s",
                                        p->name, arg_topology, pp->pending_reason);
                        else
                                r = diagnostics_add(
                                        diag, pending_level, l->file, l->line, l->column,
                                        "policy \"%s\" is pending on this machine: %s", p->name,
                                        pp->pending_reason);
                        if (r < 0)
                                return r;
                }
                for (size_t k = 0; pp->warnings && pp->warnings[k]; k++) {
                        const Location *l = pp->warning_locations ? pp->warning_locations[k] : &p->location;

                        r = diagnostics_add(
                                diag, DIAGNOSTIC_WARNING, l->file, l->line, l->column, "policy \"%s\": %s",
                                p->name, pp->warnings[k]);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static void print_validate_json(bool valid, const Config *c, const Plan *plan, const Diagnostics *diag) {
        printf("{\"valid\":%s,\"topology\":", valid ? "true" : "false");
        json_string(stdout, arg_topology);
        fputs(",\"files\":", stdout);
        json_strv(stdout, c ? c->files : NULL);

        fputs(",\"policies\":[", stdout);
        for (size_t i = 0; c && i < c->n_policies; i++) {
                const Policy *p = &c->policies[i];
                const PolicyPlan *pp = plan ? &plan->policies[i] : NULL;
                _cleanup_free_ char *cpus = NULL;

                if (pp && !pp->pending_reason && pp->has_cpus)
                        cpus = cpuset_to_string(&pp->cpus);

                if (i > 0)
                        fputc(',', stdout);
                fputs("{\"name\":", stdout);
                json_string(stdout, p->name);
                fputs(",\"file\":", stdout);
                json_string(stdout, p->location.file);
                printf(",\"line\":%u,\"column\":%u,\"cpus\":", p->location.line, p->location.column);
                json_string(stdout, cpus);
                fputs(",\"pending_reason\":", stdout);
                json_string(stdout, pp ? pp->pending_reason : NULL);
                fputc('}', stdout);
        }

        fputs("],\"irqs\":[", stdout);
        for (size_t i = 0; c && i < c->n_irq_rules; i++) {
                const IrqRule *rule = &c->irq_rules[i];

                fputs(i > 0 ? ",{\"name\":" : "{\"name\":", stdout);
                json_string(stdout, rule->name);
                fputs(",\"file\":", stdout);
                json_string(stdout, rule->location.file);
                printf(",\"line\":%u,\"column\":%u}", rule->location.line, rule->location.column);
        }
        fputs("],\"net\":[", stdout);
        for (size_t i = 0; c && i < c->n_net_rules; i++) {
                const NetRule *rule = &c->net_rules[i];

                fputs(i > 0 ? ",{\"name\":" : "{\"name\":", stdout);
                json_string(stdout, rule->name);
                fputs(",\"device\":", stdout);
                json_string(stdout, rule->device);
                fputs(",\"file\":", stdout);
                json_string(stdout, rule->location.file);
                printf(",\"line\":%u,\"column\":%u}", rule->location.line, rule->location.column);
        }
        fputs("],\"diagnostics\":", stdout);
        json_diagnostics(stdout, diag);
        fputs("}\n", stdout);
}

static int verb_validate(char **paths) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        Diagnostics diag = {};
        bool valid, resolved = true;
        int r, ret = EXIT_FAILURE_;

        r = load_config(paths, &c, &diag);
        if (r == -ENOMEM)
                goto oom;
        valid = r >= 0;

        if (valid) {
                /* Validation does not depend on the machine; resolution does. On this machine a
                 * policy that can't be resolved is pending: a warning. On the topology named by
                 * --topology it is an error: that is what the option asks. */
                unsigned errors = diag.n_errors;

                if (arg_topology) {
                        r = load_topology(&t);
                        if (r == -ENOMEM)
                                goto oom;
                        if (r < 0) {
                                if (print_diagnostics(&diag) < 0)
                                        goto oom;
                                if (arg_json)
                                        print_validate_json(false, c, NULL, &diag);
                                goto finish;
                        }
                } else {
                        r = topology_load_live(&t);
                        if (r == -ENOMEM)
                                goto oom;
                        if (r < 0) {
                                r = diagnostics_add(
                                        &diag, DIAGNOSTIC_WARNING, NULL, 0, 0,
                                        "failed to load this machine's topology (%s), policies not resolved",
                                        strerror(-r));
                                t = NULL;
                        }
                }
                if (r >= 0 && t) {
                        r = plan_new(c, t, &plan);
                        if (r >= 0)
                                r = add_plan_diagnostics(
                                        plan, arg_topology ? DIAGNOSTIC_ERROR : DIAGNOSTIC_WARNING, &diag);
                }
                if (r == -ENOMEM)
                        goto oom;
                if (r < 0) {
                        fprintf(stderr, "Failed to plan against %s: %s\n", arg_topology ?: "this machine",
                                strerror(-r));
                        goto finish;
                }
                resolved = diag.n_errors == errors;
        }

        if (print_diagnostics(&diag) < 0)
                goto oom;

        if (arg_json)
                print_validate_json(valid && resolved, c, plan, &diag);
        else if (valid && resolved) {
                size_t n_files = strv_length(c->files);

                /* Policies always; irqs: and net: rules when there are any. */
                printf("%zu file%s, %zu polic%s", n_files, n_files == 1 ? "" : "s", c->n_policies,
                       c->n_policies == 1 ? "y" : "ies");
                if (c->n_irq_rules > 0)
                        printf(", %zu irqs rule%s", c->n_irq_rules, c->n_irq_rules == 1 ? "" : "s");
                if (c->n_net_rules > 0)
                        printf(", %zu net rule%s", c->n_net_rules, c->n_net_rules == 1 ? "" : "s");
                fputs(": valid", stdout);
                if (arg_topology)
                        printf(", every policy resolved on %s", arg_topology);
                if (diag.n_warnings > 0)
                        printf(" (%u warning%s)", diag.n_warnings, diag.n_warnings == 1 ? "" : "s");
                putchar('\n');
        }

        if (!valid) {
                if (diag.n_errors == 0)
                        /* e.g. a directory that can't be read, if the loader didn't say */
                        fprintf(stderr, "Failed to load the configuration: %s\n", strerror(-r));
                fprintf(stderr, "Invalid configuration: %u error%s.\n", diag.n_errors,
                        diag.n_errors == 1 ? "" : "s");
                goto finish;
        }
        if (!resolved) {
                fprintf(stderr, "The configuration is valid, but %u polic%s can't be resolved on %s.\n",
                        diag.n_errors, diag.n_errors == 1 ? "y" : "ies", arg_topology);
                goto finish;
        }
        ret = EXIT_OK;
        goto finish;

oom:
        fprintf(stderr, "Out of memory.\n");
finish:
        diagnostics_done(&diag);
        return ret;
}

/* ---- plan ---- */

#define PLAN_LABEL_WIDTH 9

/* "  LABEL: text" with the label right-aligned (NULL: a continuation line), like systemctl status. */
_printf_(3, 4) static void plan_field(FILE *f, const char *label, const char *format, ...) {
        va_list ap;

        fprintf(f, "%*s%s ", PLAN_LABEL_WIDTH, label ?: "", label ? ":" : " ");
        va_start(ap, format);
        vfprintf(f, format, ap);
        va_end(ap);
        fputc('\n', f);
}

/* "8,24,9,25": a spread order, as given (not sorted into ranges: the order is the point). */
static void print_cpu_order(FILE *f, const unsigned *cpus, size_t n) {
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%u", i > 0 ? "," : "", cpus[i]);
}

/* How many distinct cores the CPUs of s are on (CPUs hwloc knows no core of count as one each). */
static unsigned count_cores(const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet cores = CPUSET_NULL;
        unsigned unknown = 0;

        CPUSET_FOREACH (cpu, s) {
                int core = topology_core_of_cpu(t, (unsigned)cpu);

                if (core < 0 || cpuset_add(&cores, (unsigned)core) < 0)
                        unknown++;
        }
        return cpuset_count(&cores) + unknown;
}

/* "  LABEL: 8-15 (8 CPUs on 8 cores)SUFFIX". Returns 0 or -ENOMEM. */
static int plan_field_cpus(
        FILE *f, const Topology *t, const char *label, const CpuSet *s, const char *suffix) {
        _cleanup_free_ char *cpus = cpuset_to_string(s);
        unsigned n = cpuset_count(s), cores = count_cores(t, s);

        if (!cpus)
                return -ENOMEM;
        plan_field(
                f, label, "%s (%u CPU%s on %u core%s)%s", cpus, n, n == 1 ? "" : "s", cores,
                cores == 1 ? "" : "s", suffix ?: "");
        return 0;
}

/* "  Nodes: 1" for the NUMA nodes of s, nothing when they are unknown. Returns 0 or -ENOMEM. */
static int plan_field_nodes(FILE *f, const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet nodes = CPUSET_NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = topology_nodes_of_cpus(t, s, &nodes);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&nodes))
                return 0;
        text = cpuset_to_string(&nodes);
        if (!text)
                return -ENOMEM;
        plan_field(f, "Nodes", "%s", text);
        return 0;
}

/* "  Pending: reason" and "       At: file:line:column". */
static void plan_field_pending(FILE *f, const char *reason, const Location *l) {
        plan_field(f, "Pending", "%s", reason);
        if (l && l->file)
                plan_field(f, "At", "%s:%u:%u", l->file, l->line, l->column);
}

/* The human report of one policy's plan. Returns 0 or -ENOMEM. */
static int print_policy_plan(FILE *f, const Topology *t, const PolicyPlan *pp) {
        const Policy *p = pp->policy;
        int r;

        fprintf(f, "\n%s (%s:%u)%s\n", p->name, strna(p->location.file), p->location.line,
                pp->pending_reason ? " [pending]" : "");

        if (pp->pending_reason)
                plan_field_pending(f, pp->pending_reason, pp->pending_location);
        else if (pp->has_cpus) {
                _cleanup_free_ char *nodes = NULL;

                r = plan_field_cpus(f, t, "CPUs", &pp->cpus, NULL);
                if (r < 0)
                        return r;
                if (!cpuset_is_empty(&pp->nodes)) {
                        nodes = cpuset_to_string(&pp->nodes);
                        if (!nodes)
                                return -ENOMEM;
                        plan_field(f, "Nodes", "%s", nodes);
                }
        } else
                plan_field(f, "CPUs", "not managed (the policy has no cpus:)");

        for (size_t k = 0; pp->explanation && pp->explanation[k]; k++)
                plan_field(f, k == 0 ? "Why" : NULL, "%s", pp->explanation[k]);

        for (size_t k = 0; k < p->n_threads && pp->threads && !pp->pending_reason; k++) {
                const ThreadRule *tr = &p->threads[k];
                const ThreadPlan *tp = &pp->threads[k];
                const char *label = k == 0 ? "Threads" : NULL;

                if (tp->spread) {
                        fprintf(f, "%*s%s %s: spread, one CPU each, in this order: ", PLAN_LABEL_WIDTH,
                                label ?: "", label ? ":" : " ", tr->name);
                        print_cpu_order(f, tp->spread_order, tp->n_spread_order);
                        fputc('\n', f);
                } else if (tp->has_cpus) {
                        _cleanup_free_ char *cpus = cpuset_to_string(&tp->cpus);

                        if (!cpus)
                                return -ENOMEM;
                        plan_field(f, label, "%s: %s", tr->name, cpus);
                } else
                        plan_field(f, label, "%s: the policy's CPUs", tr->name);
        }
        if (p->n_threads > 0 && !pp->pending_reason) {
                bool spread = false;

                for (size_t k = 0; k < p->n_threads; k++)
                        spread = spread || p->threads[k].cpus.kind == CPU_SELECTOR_SPREAD;
                plan_field(
                        f, NULL, "(other threads): %s",
                        spread ? "the policy's CPUs not taken by spread threads" : "the policy's CPUs");
        }

        for (size_t k = 0; pp->warnings && pp->warnings[k]; k++)
                plan_field(f, "Warning", "%s", pp->warnings[k]);
        return 0;
}

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
static bool device_note_shown(const PlanReport *rep, const char *line, bool warning) {
        if (!rep->devices_unknown)
                return true;
        if (warning)
                return !streq(line, "matches no IRQ") && !streq(line, "matches no device");
        return strncmp(line, "device ", strlen("device ")) != 0;
}

static void print_device_notes(
        FILE *f, const PlanReport *rep, const char *label, char *const *l, bool warning) {
        bool first = true;

        STRV_FOREACH (s, l) {
                if (!device_note_shown(rep, *s, warning))
                        continue;
                plan_field(f, first || warning ? label : NULL, "%s", *s);
                first = false;
        }
}

/* "device eth0, 0000:3b:00.0; action virtio*-input*" */
static void print_irq_match(FILE *f, const IrqRule *rule) {
        fprintf(f, "%*s: ", PLAN_LABEL_WIDTH, "Match");
        if (rule->device) {
                fputs("device ", f);
                STRV_FOREACH (d, rule->device)
                        fprintf(f, "%s%s", d == rule->device ? "" : ", ", *d);
        }
        if (rule->action) {
                fputs(rule->device ? "; action " : "action ", f);
                STRV_FOREACH (a, rule->action)
                        fprintf(f, "%s%s", a == rule->action ? "" : ", ", *a);
        }
        fputc('\n', f);
}

/* The human report of one irqs: rule. Returns 0 or -ENOMEM. */
static int print_irq_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const IrqRulePlan *rp = &rep->devices->irq_rules[i];
        const IrqRule *rule = rp->rule;
        bool first = true;
        int r;

        fprintf(f, "\nirqs: %s (%s:%u)%s\n", rule->name, strna(rule->location.file), rule->location.line,
                rp->pending_reason ? " [pending]" : "");
        print_irq_match(f, rule);
        if (rp->pending_reason)
                plan_field_pending(f, rp->pending_reason, rp->pending_location);
        else {
                r = plan_field_cpus(f, rep->topology, "CPUs", &rp->cpus, rule->spread ? ", spread" : NULL);
                if (r < 0)
                        return r;
                r = plan_field_nodes(f, rep->topology, &rp->cpus);
                if (r < 0)
                        return r;
        }
        print_device_notes(f, rep, "Why", rp->explanation, false);

        /* The IRQs it takes, in ascending number, with what each would get. */
        for (size_t k = 0; k < rep->devices->n_irqs; k++) {
                const IrqAssignment *a = &rep->devices->irqs[k];
                const DeviceIrq *irq = device_inventory_find_irq(rep->inventory, a->irq);
                const char *name = irq && irq->actions && irq->actions[0] ? irq->actions : "(no name)";
                _cleanup_free_ char *cpus = NULL;

                if (a->rule != i)
                        continue;
                if (a->managed)
                        plan_field(
                                f, first ? "IRQs" : NULL, "%u %s: managed by the kernel, left alone", a->irq,
                                name);
                else if (rp->pending_reason)
                        plan_field(f, first ? "IRQs" : NULL, "%u %s: left alone (pending)", a->irq, name);
                else {
                        cpus = cpuset_to_string(&a->cpus);
                        if (!cpus)
                                return -ENOMEM;
                        plan_field(f, first ? "IRQs" : NULL, "%u %s: %s", a->irq, name, cpus);
                }
                first = false;
        }

        print_device_notes(f, rep, "Warning", rp->warnings, true);
        return 0;
}

/* The human report of one net: rule. Returns 0 or -ENOMEM. */
static int print_net_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const NetRulePlan *np = &rep->devices->net_rules[i];
        const NetRule *rule = np->rule;
        bool first = true;
        int r = 0;

        fprintf(f, "\nnet: %s (%s:%u)%s\n", rule->name, strna(rule->location.file), rule->location.line,
                np->pending_reason ? " [pending]" : "");
        plan_field(f, "Match", "device %s", rule->device);
        if (np->pending_reason)
                plan_field_pending(f, np->pending_reason, np->pending_location);
        else {
                _cleanup_cpuset_ CpuSet both = CPUSET_NULL;

                if (np->has_rps)
                        r = plan_field_cpus(f, rep->topology, "RPS", &np->rps, ", every rx queue");
                else
                        plan_field(f, "RPS", "not managed (the rule has no rps:)");
                if (r < 0)
                        return r;
                if (np->has_xps)
                        r = plan_field_cpus(
                                f, rep->topology, "XPS", &np->xps, ", divided among the tx queues");
                else
                        plan_field(f, "XPS", "not managed (the rule has no xps:)");
                if (r < 0)
                        return r;
                r = cpuset_copy(&both, &np->rps);
                if (r >= 0)
                        r = cpuset_or(&both, &np->xps);
                if (r >= 0)
                        r = plan_field_nodes(f, rep->topology, &both);
                if (r < 0)
                        return r;
        }
        print_device_notes(f, rep, "Why", np->explanation, false);

        /* The queues it sets: by device, rx before tx, in queue order. */
        for (size_t k = 0; k < rep->devices->n_queues; k++) {
                const NetQueueAssignment *a = &rep->devices->queues[k];
                _cleanup_free_ char *cpus = NULL;

                if (a->rule != i)
                        continue;
                cpus = cpuset_to_string(&a->cpus);
                if (!cpus)
                        return -ENOMEM;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt)
                        plan_field(
                                f, first ? "Queues" : NULL, "%s rx-%u: rps_cpus %s, rps_flow_cnt %" PRIu32,
                                a->device, a->queue, cpus, a->flow_cnt);
                else
                        plan_field(
                                f, first ? "Queues" : NULL, "%s %s-%u: %s_cpus %s", a->device,
                                a->kind == NET_QUEUE_RPS ? "rx" : "tx", a->queue,
                                net_queue_kind_to_string(a->kind), cpus);
                first = false;
        }

        print_device_notes(f, rep, "Warning", np->warnings, true);
        return 0;
}

/* "1 irqs rule: 1 resolved, 0 pending" and the like, for the summary line. */
static void print_rule_count(FILE *f, size_t n, const char *singular, const char *plural, size_t n_pending) {
        fprintf(f, "%zu %s: %zu resolved, %zu pending", n, n == 1 ? singular : plural, n - n_pending,
                n_pending);
}

/* The human report. Returns 0 or -ENOMEM. */
static int print_plan(FILE *f, const PlanReport *rep) {
        const Config *c = rep->config;
        const Topology *t = rep->topology;
        const Plan *plan = rep->plan;
        const DevicePlan *dp = rep->devices;
        _cleanup_free_ char *summary = NULL, *online = NULL, *reserve = NULL;
        size_t n_pending = 0, n_irq_pending = 0, n_net_pending = 0;
        int r;

        r = topology_summary(t, &summary);
        if (r < 0)
                return r;
        online = cpuset_to_string(topology_online_cpus(t));
        if (!online)
                return -ENOMEM;

        plan_field(f, "Topology", "%s", arg_topology ?: "this machine");
        plan_field(f, NULL, "%s", summary);
        plan_field(f, "Online", "%s", online);
        if (c->has_reserve) {
                reserve = cpuset_to_string(&plan->reserve);
                if (!reserve)
                        return -ENOMEM;
                plan_field(
                        f, "Reserve", "%s (%s:%u)",
                        cpuset_is_empty(&plan->reserve) ? "none online" : reserve,
                        strna(c->reserve_location.file), c->reserve_location.line);
        } else
                plan_field(f, "Reserve", "none");
        if (c->n_irq_rules + c->n_net_rules > 0) {
                if (rep->devices_unknown)
                        plan_field(f, "Devices", "%s", rep->devices_unknown);
                else
                        plan_field(
                                f, "Devices", "%zu IRQ%s, %zu network interface%s", rep->inventory->n_irqs,
                                rep->inventory->n_irqs == 1 ? "" : "s", rep->inventory->n_nets,
                                rep->inventory->n_nets == 1 ? "" : "s");
        }
        if (c->rfs_entries > 0)
                plan_field(
                        f, "RFS", "%" PRIu32 " flow entries (%s:%u)", c->rfs_entries,
                        strna(c->rfs_location.file), c->rfs_location.line);
        else if (c->n_net_rules > 0)
                plan_field(f, "RFS", "none (rfs: not set)");
        STRV_FOREACH (w, plan->warnings)
                plan_field(f, "Warning", "%s", *w);

        for (size_t i = 0; i < plan->n_policies; i++) {
                r = print_policy_plan(f, t, &plan->policies[i]);
                if (r < 0)
                        return r;
                if (plan->policies[i].pending_reason)
                        n_pending++;
        }
        for (size_t i = 0; i < dp->n_irq_rules; i++) {
                r = print_irq_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
                if (dp->irq_rules[i].pending_reason)
                        n_irq_pending++;
        }
        for (size_t i = 0; i < dp->n_net_rules; i++) {
                r = print_net_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
                if (dp->net_rules[i].pending_reason)
                        n_net_pending++;
        }

        /* Policies always; irqs: and net: rules when there are any. */
        fputc('\n', f);
        print_rule_count(f, plan->n_policies, "policy", "policies", n_pending);
        if (dp->n_irq_rules > 0) {
                fputs("; ", f);
                print_rule_count(f, dp->n_irq_rules, "irqs rule", "irqs rules", n_irq_pending);
        }
        if (dp->n_net_rules > 0) {
                fputs("; ", f);
                print_rule_count(f, dp->n_net_rules, "net rule", "net rules", n_net_pending);
        }
        fputs(".\n", f);
        return 0;
}

/* A set as a JSON cpu-list string. Returns 0 or -ENOMEM. */
static int json_cpuset(FILE *f, const CpuSet *s) {
        _cleanup_free_ char *text = cpuset_to_string(s);

        if (!text)
                return -ENOMEM;
        json_string(f, text);
        return 0;
}

/* The NUMA nodes of s as a JSON cpu-list string. Returns 0 or -ENOMEM. */
static int json_nodes_of(FILE *f, const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet nodes = CPUSET_NULL;
        int r;

        r = topology_nodes_of_cpus(t, s, &nodes);
        if (r < 0)
                return r;
        return json_cpuset(f, &nodes);
}

/* ",\"error\":REASON,\"error_location\":{file,line,column}|null" */
static void json_error(FILE *f, const char *reason, const Location *l) {
        fputs(",\"error\":", f);
        json_string(f, reason);
        fputs(",\"error_location\":", f);
        if (reason && l && l->file) {
                fputs("{\"file\":", f);
                json_string(f, l->file);
                fprintf(f, ",\"line\":%u,\"column\":%u}", l->line, l->column);
        } else
                fputs("null", f);
}

/* A device rule's explanation or warnings, as device_note_shown() lets through. */
static void json_device_notes(FILE *f, const PlanReport *rep, char *const *l, bool warning) {
        bool first = true;

        fputc('[', f);
        STRV_FOREACH (s, l) {
                if (!device_note_shown(rep, *s, warning))
                        continue;
                if (!first)
                        fputc(',', f);
                json_string(f, *s);
                first = false;
        }
        fputc(']', f);
}

static int json_policy_plan(FILE *f, const PolicyPlan *pp) {
        const Policy *p = pp->policy;
        bool active = !pp->pending_reason;
        int r;

        fputs("{\"name\":", f);
        json_string(f, p->name);
        fputs(",\"file\":", f);
        json_string(f, p->location.file);
        fprintf(f, ",\"line\":%u,\"column\":%u,\"cpus\":", p->location.line, p->location.column);
        if (active && pp->has_cpus) {
                r = json_cpuset(f, &pp->cpus);
                if (r < 0)
                        return r;
                fputs(",\"nodes\":", f);
                r = json_cpuset(f, &pp->nodes);
                if (r < 0)
                        return r;
        } else
                fputs("null,\"nodes\":null", f);

        fputs(",\"explanation\":", f);
        json_strv(f, pp->explanation);

        fputs(",\"threads\":[", f);
        for (size_t k = 0; k < p->n_threads; k++) {
                const ThreadPlan *tp = active && pp->threads ? &pp->threads[k] : NULL;

                fputs(k > 0 ? ",{\"name\":" : "{\"name\":", f);
                json_string(f, p->threads[k].name);
                fputs(",\"cpus\":", f);
                if (tp && tp->has_cpus) {
                        r = json_cpuset(f, &tp->cpus);
                        if (r < 0)
                                return r;
                } else
                        fputs("null", f);
                fputs(",\"spread\":", f);
                if (tp && tp->spread) {
                        fputc('[', f);
                        for (size_t j = 0; j < tp->n_spread_order; j++)
                                fprintf(f, "%s%u", j > 0 ? "," : "", tp->spread_order[j]);
                        fputc(']', f);
                } else
                        fputs("null", f);
                fputc('}', f);
        }
        fputc(']', f);
        json_error(f, pp->pending_reason, pp->pending_location);
        fputs(",\"warnings\":", f);
        json_strv(f, pp->warnings);
        fputc('}', f);
        return 0;
}

/* One irqs: rule: its CPUs, the IRQs it takes and what each would get. Returns 0 or -ENOMEM. */
static int json_irq_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const IrqRulePlan *rp = &rep->devices->irq_rules[i];
        const IrqRule *rule = rp->rule;
        bool first = true;
        int r;

        fputs("{\"name\":", f);
        json_string(f, rule->name);
        fputs(",\"file\":", f);
        json_string(f, rule->location.file);
        fprintf(f, ",\"line\":%u,\"column\":%u,\"device\":", rule->location.line, rule->location.column);
        if (rule->device)
                json_strv(f, rule->device);
        else
                fputs("null", f);
        fputs(",\"action\":", f);
        if (rule->action)
                json_strv(f, rule->action);
        else
                fputs("null", f);
        fputs(",\"cpus\":", f);
        if (!rp->pending_reason) {
                r = json_cpuset(f, &rp->cpus);
                if (r < 0)
                        return r;
                fputs(",\"nodes\":", f);
                r = json_nodes_of(f, rep->topology, &rp->cpus);
                if (r < 0)
                        return r;
        } else
                fputs("null,\"nodes\":null", f);
        fputs(",\"spread\":", f);
        if (!rp->pending_reason && rule->spread) {
                fputc('[', f);
                for (size_t j = 0; j < rp->n_spread_order; j++)
                        fprintf(f, "%s%u", j > 0 ? "," : "", rp->spread_order[j]);
                fputc(']', f);
        } else
                fputs("null", f);
        fputs(",\"explanation\":", f);
        json_device_notes(f, rep, rp->explanation, false);

        /* cpus null: left alone (managed by the kernel, or the rule is pending). */
        fputs(",\"irqs\":[", f);
        for (size_t k = 0; k < rep->devices->n_irqs; k++) {
                const IrqAssignment *a = &rep->devices->irqs[k];
                const DeviceIrq *irq = device_inventory_find_irq(rep->inventory, a->irq);

                if (a->rule != i)
                        continue;
                fprintf(f, "%s{\"irq\":%u,\"name\":", first ? "" : ",", a->irq);
                json_string(f, irq ? irq->actions : "");
                fputs(",\"cpus\":", f);
                if (!a->managed && !rp->pending_reason) {
                        r = json_cpuset(f, &a->cpus);
                        if (r < 0)
                                return r;
                } else
                        fputs("null", f);
                fprintf(f, ",\"managed\":%s}", a->managed ? "true" : "false");
                first = false;
        }
        fputc(']', f);
        json_error(f, rp->pending_reason, rp->pending_location);
        fputs(",\"warnings\":", f);
        json_device_notes(f, rep, rp->warnings, true);
        fputc('}', f);
        return 0;
}

/* One net: rule: its RPS and XPS sets, the queues it sets. Returns 0 or -ENOMEM. */
static int json_net_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const NetRulePlan *np = &rep->devices->net_rules[i];
        const NetRule *rule = np->rule;
        bool first = true;
        int r;

        fputs("{\"name\":", f);
        json_string(f, rule->name);
        fputs(",\"device\":", f);
        json_string(f, rule->device);
        fputs(",\"file\":", f);
        json_string(f, rule->location.file);
        fprintf(f, ",\"line\":%u,\"column\":%u,\"rps\":", rule->location.line, rule->location.column);
        if (np->has_rps) {
                r = json_cpuset(f, &np->rps);
                if (r < 0)
                        return r;
        } else
                fputs("null", f);
        fputs(",\"xps\":", f);
        if (np->has_xps) {
                r = json_cpuset(f, &np->xps);
                if (r < 0)
                        return r;
        } else
                fputs("null", f);
        fputs(",\"nodes\":", f);
        if (!np->pending_reason) {
                _cleanup_cpuset_ CpuSet both = CPUSET_NULL;

                r = cpuset_copy(&both, &np->rps);
                if (r >= 0)
                        r = cpuset_or(&both, &np->xps);
                if (r >= 0)
                        r = json_nodes_of(f, rep->topology, &both);
                if (r < 0)
                        return r;
        } else
                fputs("null", f);
        fputs(",\"explanation\":", f);
        json_device_notes(f, rep, np->explanation, false);

        /* As affinityctl net --json names them. */
        fputs(",\"queues\":[", f);
        for (size_t k = 0; k < rep->devices->n_queues; k++) {
                const NetQueueAssignment *a = &rep->devices->queues[k];

                if (a->rule != i)
                        continue;
                fputs(first ? "{\"device\":" : ",{\"device\":", f);
                json_string(f, a->device);
                fprintf(f, ",\"queue\":\"%s-%u\",\"kind\":\"%s\",\"cpus\":",
                        a->kind == NET_QUEUE_RPS ? "rx" : "tx", a->queue, net_queue_kind_to_string(a->kind));
                r = json_cpuset(f, &a->cpus);
                if (r < 0)
                        return r;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt)
                        fprintf(f, ",\"flow_cnt\":%" PRIu32 "}", a->flow_cnt);
                else
                        fputs(",\"flow_cnt\":null}", f);
                first = false;
        }
        fputc(']', f);
        json_error(f, np->pending_reason, np->pending_location);
        fputs(",\"warnings\":", f);
        json_device_notes(f, rep, np->warnings, true);
        fputc('}', f);
        return 0;
}

/* "devices": what plan knows of the machine's IRQs and interfaces. */
static void json_devices(FILE *f, const PlanReport *rep) {
        const DeviceInventory *inv = rep->inventory;

        if (!inv) {
                fputs("null", f);
                return;
        }
        fprintf(f, "{\"known\":%s,\"irqs\":", rep->devices_unknown ? "false" : "true");
        if (rep->devices_unknown)
                fputs("null,\"interfaces\":null", f);
        else {
                fprintf(f, "%zu,\"interfaces\":[", inv->n_irqs);
                for (size_t i = 0; i < inv->n_nets; i++) {
                        if (i > 0)
                                fputc(',', f);
                        json_string(f, inv->nets[i].name);
                }
                fputc(']', f);
        }
        fputs(",\"reason\":", f);
        json_string(f, rep->devices_unknown);
        fputc('}', f);
}

/*
 * The --json document. Any of rep's pointers but diag may be NULL (the configuration or the
 * topology could not be loaded: rep->error says why). Returns 0 or -ENOMEM.
 */
static int print_plan_json(FILE *f, const PlanReport *rep) {
        const Config *c = rep->config;
        const Topology *t = rep->topology;
        const Plan *plan = rep->plan;
        const DevicePlan *dp = rep->devices;
        int r;

        fputs("{\"topology\":", f);
        if (t) {
                _cleanup_free_ char *summary = NULL;

                r = topology_summary(t, &summary);
                if (r < 0)
                        return r;
                fputs("{\"file\":", f);
                json_string(f, arg_topology);
                fputs(",\"summary\":", f);
                json_string(f, summary);
                fprintf(f, ",\"packages\":%u,\"nodes\":%u,\"cores\":%u,\"cpus\":%u,\"online\":",
                        topology_n_packages(t), topology_n_nodes(t), topology_n_cores(t),
                        topology_n_cpus(t));
                r = json_cpuset(f, topology_online_cpus(t));
                if (r < 0)
                        return r;
                fputc('}', f);
        } else
                fputs("null", f);

        fputs(",\"reserve\":", f);
        if (plan && c && c->has_reserve) {
                r = json_cpuset(f, &plan->reserve);
                if (r < 0)
                        return r;
        } else
                fputs("null", f);
        if (c && c->rfs_entries > 0)
                fprintf(f, ",\"rfs\":%" PRIu32, c->rfs_entries);
        else
                fputs(",\"rfs\":null", f);
        fputs(",\"devices\":", f);
        json_devices(f, rep);
        fputs(",\"files\":", f);
        json_strv(f, c ? c->files : NULL);

        fputs(",\"policies\":[", f);
        for (size_t i = 0; plan && i < plan->n_policies; i++) {
                if (i > 0)
                        fputc(',', f);
                r = json_policy_plan(f, &plan->policies[i]);
                if (r < 0)
                        return r;
        }
        fputs("],\"irqs\":[", f);
        for (size_t i = 0; dp && i < dp->n_irq_rules; i++) {
                if (i > 0)
                        fputc(',', f);
                r = json_irq_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
        }
        fputs("],\"net\":[", f);
        for (size_t i = 0; dp && i < dp->n_net_rules; i++) {
                if (i > 0)
                        fputc(',', f);
                r = json_net_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
        }
        fputs("],\"warnings\":", f);
        json_strv(f, plan ? plan->warnings : NULL);
        fputs(",\"diagnostics\":", f);
        json_diagnostics(f, rep->diag);
        fputs(",\"error\":", f);
        json_string(f, rep->error);
        fputs("}\n", f);
        return 0;
}

/* Runs print_plan() or print_plan_json() into memory, so stdout gets a whole report or nothing. */
static int emit_plan(const PlanReport *rep) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = NULL;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        if (arg_json)
                r = print_plan_json(f, rep);
        else
                r = print_plan(f, rep);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        fputs(buf, stdout);
        return 0;
}

/*
 * The IRQs and network interfaces the irqs: and net: rules of c are planned against: this
 * machine's (/proc/interrupts, /sys/class/net), or with --topology an empty inventory, since
 * an XML topology holds none of its machine's IRQs and queues: the rules' CPUs are resolved,
 * which IRQs and queues they would take is not known. *ret_unknown says why the inventory is
 * empty (newly allocated), NULL when it is this machine's. Returns 0 or -ENOMEM.
 */
static int load_inventory(const Config *c, DeviceInventory **ret, char **ret_unknown) {
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_free_ char *error = NULL, *unknown = NULL;
        int r;

        if (arg_topology) {
                unknown = strdup("not known for an XML topology");
                if (!unknown)
                        return -ENOMEM;
        } else if (c->n_irq_rules + c->n_net_rules > 0) {
                r = device_inventory_load("/", c, &inv, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && asprintf(&unknown, "can't be read here: %s", error ?: strerror(-r)) < 0)
                        return -ENOMEM;
        }
        if (!inv) {
                inv = calloc(1, sizeof(DeviceInventory));
                if (!inv)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(inv);
        *ret_unknown = TAKE_PTR(unknown);
        return 0;
}

static int verb_plan(char **paths) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_free_ char *unknown = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        PlanReport rep = {.diag = &diag};
        int r;

        r = load_config(paths, &c, &diag);
        if (r == -ENOMEM || print_diagnostics(&diag) < 0)
                goto oom;
        if (r < 0) {
                if (diag.n_errors == 0)
                        fprintf(stderr, "Failed to load the configuration: %s\n", strerror(-r));
                fprintf(stderr, "Invalid configuration: %u error%s.\n", diag.n_errors,
                        diag.n_errors == 1 ? "" : "s");
                rep.error = "invalid configuration";
                if (arg_json && emit_plan(&rep) < 0)
                        goto oom;
                return EXIT_FAILURE_;
        }
        rep.config = c;

        r = load_topology(&t);
        if (r == -ENOMEM)
                goto oom;
        if (r < 0) {
                rep.error = "failed to load the topology";
                if (arg_json && emit_plan(&rep) < 0)
                        goto oom;
                return EXIT_FAILURE_;
        }
        rep.topology = t;

        /* Pending policies and rules are a normal state (the daemon retries them when the machine
         * changes): they are shown, with their reasons, and are not a failure of plan. */
        r = plan_new(c, t, &plan);
        if (r >= 0)
                r = load_inventory(c, &inv, &unknown);
        if (r >= 0)
                r = device_plan_new(c, plan, t, inv, &dp);
        if (r == -ENOMEM)
                goto oom;
        if (r < 0) {
                fprintf(stderr, "Failed to plan: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        rep.plan = plan;
        rep.inventory = inv;
        rep.devices_unknown = unknown;
        rep.devices = dp;
        if (emit_plan(&rep) < 0)
                goto oom;
        return EXIT_OK;

oom:
        fprintf(stderr, "Out of memory.\n");
        return EXIT_FAILURE_;
}

/* ---- command line ---- */

static void help(void) {
        printf("%s [OPTIONS] COMMAND\n"
               "\n"
               "Query and control affinityd, the CPU placement daemon.\n"
               "\n"
               "Commands:\n"
               "  status               Show the daemon's state, counters and pending policies\n"
               "  policies             List the policies: file and line, CPUs, active or\n"
               "                       pending and why\n"
               "  processes            List the managed processes: policy and CPUs applied\n"
               "  explain PID          Show which policy matched PID and why, which didn't\n"
               "                       and why not, and per thread the CPUs applied and now,\n"
               "                       the last CPU, migrations, run-queue delay and\n"
               "                       involuntary switches since placement\n"
               "  top                  Show live, per policy and per thread, migrations/s,\n"
               "                       run-queue delay p50/p99 and involuntary switches/s\n"
               "  monitor              Follow the daemon's signals (placements, failures,\n"
               "                       reloads, drift), one line each, until Ctrl-C; says\n"
               "                       when the daemon goes away and comes back\n"
               "  reload               Reload the configuration and wait until it is done\n"
               "  rescan               Rescan /proc and the devices and wait until done\n"
               "  irqs                 List every IRQ: the rule that places it, the CPUs\n"
               "                       asked for and in effect, its state and why\n"
               "  net                  List the RPS/XPS settings of every network queue:\n"
               "                       CPUs, RFS flow count, rule and state\n"
               "  validate [PATH...]   Check policy files offline (default: the standard\n"
               "                       search path); a directory is read as a config dir\n"
               "                       (affinityd.yaml, policy.d/) or else as a policy.d;\n"
               "                       with --topology, a policy that can't be resolved\n"
               "                       on that topology is an error too\n"
               "  plan [PATH...]       Show offline, for each policy, the CPUs and NUMA\n"
               "                       nodes it resolves to and why, its thread rules, or\n"
               "                       why it is pending; for each irqs: rule the IRQs it\n"
               "                       takes and their CPUs, for each net: rule the RPS/XPS\n"
               "                       masks and RFS flow counts of the queues it sets (with\n"
               "                       --topology: their CPUs only, devices are not known)\n"
               "\n"
               "Options:\n"
               "  -h --help                  Show this help\n"
               "     --version               Show the version\n"
               "     --bus-address=ADDRESS   Talk to the daemon on this D-Bus address\n"
               "                             (default: the system bus)\n"
               "     --json                  Print one JSON document on stdout (monitor, and\n"
               "                             top with --iterations above 1: one JSON document\n"
               "                             per line)\n"
               "     --no-legend             Leave out table headers and summary lines\n"
               "     --interval=SEC          top: the sampling interval (default 1)\n"
               "     --iterations=N          top: stop after N reports (default: until\n"
               "                             Ctrl-C; with --json 1)\n"
               "     --config-dir=DIR        validate, plan: read DIR/affinityd.yaml and\n"
               "                             DIR/policy.d/*.yaml instead of the standard path\n"
               "     --topology=FILE.xml     validate, plan: resolve against this hwloc XML\n"
               "                             topology (lstopo FILE.xml) instead of this machine\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage error, 3 affinityd not running,\n"
               "4 no such process (explain).\n",
               program_invocation_short_name);
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_BUS_ADDRESS,
                ARG_JSON,
                ARG_CONFIG_DIR,
                ARG_TOPOLOGY,
                ARG_NO_LEGEND,
                ARG_INTERVAL,
                ARG_ITERATIONS,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"bus-address", required_argument, NULL, ARG_BUS_ADDRESS},
                {"json", no_argument, NULL, ARG_JSON},
                {"config-dir", required_argument, NULL, ARG_CONFIG_DIR},
                {"topology", required_argument, NULL, ARG_TOPOLOGY},
                {"no-legend", no_argument, NULL, ARG_NO_LEGEND},
                {"interval", required_argument, NULL, ARG_INTERVAL},
                {"iterations", required_argument, NULL, ARG_ITERATIONS},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("affinityctl %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BUS_ADDRESS:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--bus-address= needs an address.\n");
                                return -EINVAL;
                        }
                        arg_bus_address = optarg;
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_CONFIG_DIR:
                        /* An empty DIR is left to the loader, which explains it. */
                        arg_config_dir = optarg;
                        break;
                case ARG_TOPOLOGY:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--topology= needs an hwloc XML file.\n");
                                return -EINVAL;
                        }
                        arg_topology = optarg;
                        break;
                case ARG_NO_LEGEND:
                        arg_no_legend = true;
                        break;
                case ARG_INTERVAL: {
                        char *end;
                        double sec;

                        errno = 0;
                        sec = strtod(optarg, &end);
                        /* 1 ms .. 1 day */
                        if (errno != 0 || end == optarg || *end || !isfinite(sec) || sec < 0.001 ||
                            sec > 86400) {
                                fprintf(stderr,
                                        "--interval= needs a number of seconds from 0.001 to 86400, not "
                                        "\"%s\".\n",
                                        optarg);
                                return -EINVAL;
                        }
                        arg_interval_usec = (uint64_t)(sec * 1e6 + 0.5);
                        arg_interval_set = true;
                        break;
                }
                case ARG_ITERATIONS: {
                        char *end;

                        errno = 0;
                        arg_iterations = strtoull(optarg, &end, 10);
                        if (errno != 0 || end == optarg || *end || optarg[0] == '-' || arg_iterations == 0) {
                                fprintf(stderr, "--iterations= needs a positive number, not \"%s\".\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                }
                default: /* getopt_long() said what is wrong */
                        return -EINVAL;
                }
        return 1;
}

int main(int argc, char *argv[]) {
        const char *verb;
        char **args;
        size_t n_args;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;

        if (optind >= argc) {
                fprintf(stderr, "Missing command; see %s --help.\n", program_invocation_short_name);
                return EXIT_USAGE;
        }
        verb = argv[optind];
        args = argv + optind + 1;
        n_args = (size_t)(argc - optind - 1);

        if (streq(verb, "validate") || streq(verb, "plan")) {
                if (arg_config_dir && n_args > 0) {
                        fprintf(stderr, "%s: give either --config-dir=DIR or PATHs, not both.\n", verb);
                        return EXIT_USAGE;
                }
                return streq(verb, "validate") ? verb_validate(args) : verb_plan(args);
        }

        if ((arg_interval_set || arg_iterations > 0) && !streq(verb, "top")) {
                fprintf(stderr, "%s is only for top.\n", arg_interval_set ? "--interval=" : "--iterations=");
                return EXIT_USAGE;
        }

        if (streq(verb, "explain")) {
                unsigned long pid;
                char *end;

                if (arg_config_dir || arg_topology) {
                        fprintf(stderr, "%s is only for validate and plan.\n",
                                arg_config_dir ? "--config-dir=" : "--topology=");
                        return EXIT_USAGE;
                }
                if (n_args != 1) {
                        fprintf(stderr, "explain takes one PID.\n");
                        return EXIT_USAGE;
                }
                errno = 0;
                pid = strtoul(args[0], &end, 10);
                if (errno != 0 || end == args[0] || *end || args[0][0] == '-' || pid == 0 ||
                    pid > INT32_MAX) {
                        fprintf(stderr, "explain: \"%s\" is not a PID.\n", args[0]);
                        return EXIT_USAGE;
                }
                return verb_explain((uint32_t)pid);
        }

        static const struct {
                const char *name;
                int (*run)(void);
        } verbs[] = {
                {"status", verb_status},   {"policies", verb_policies}, {"processes", verb_processes},
                {"irqs", verb_irqs},       {"net", verb_net},           {"top", verb_top},
                {"monitor", verb_monitor}, {"reload", verb_reload},     {"rescan", verb_rescan},
        };
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verb, verbs[i].name))
                        continue;
                if (arg_config_dir || arg_topology) {
                        fprintf(stderr, "%s is only for validate and plan.\n",
                                arg_config_dir ? "--config-dir=" : "--topology=");
                        return EXIT_USAGE;
                }
                if (n_args > 0) {
                        fprintf(stderr, "%s takes no arguments.\n", verb);
                        return EXIT_USAGE;
                }
                return verbs[i].run();
        }

        fprintf(stderr, "Unknown command \"%s\"; see %s --help.\n", verb, program_invocation_short_name);
        return EXIT_USAGE;
}
