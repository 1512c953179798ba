/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl: the command-line client of affinityd. status, reload, irqs and net talk to the
 * daemon over D-Bus (org.affinityd1 on the system bus, or --bus-address); validate and plan work
 * offline with the same loader and planner the daemon uses, against this machine or an hwloc
 * XML topology (--topology=FILE.xml).
 *
 * Exit codes: 0 ok, 1 failure, 2 usage, 3 the daemon is not running (nobody owns
 * org.affinityd1, or the bus can't be reached).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "config.h"

#include "cpuset.h"
#include "devplan.h"
#include "macro.h"
#include "plan.h"
#include "policy-yaml.h"
#include "topology.h"

#define BUS_NAME      "org.affinityd1"
#define BUS_PATH      "/org/affinityd1"
#define BUS_INTERFACE "org.affinityd1.Manager"

/* Reload replies only when the reload is done (a full rescan); systemd's ExecReload= has its
 * own timeout on top of this. */
#define RELOAD_TIMEOUT_USEC (UINT64_C(300) * 1000000)

enum {
        EXIT_OK = 0,
        EXIT_FAILURE_ = 1,
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3,
};

static const char *arg_bus_address = NULL;
static bool arg_json = false;
static const char *arg_config_dir = NULL; /* validate, plan: --config-dir=DIR */
static const char *arg_topology = NULL;   /* validate, plan: --topology=FILE.xml */

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

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, interface, member);
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

/* Reports a failed call on stderr; returns the exit code for it. */
static int explain_call_error(const char *what, int r, const sd_bus_error *error) {
        if (bus_error_not_running(error)) {
                fprintf(stderr, "affinityd is not running (nobody owns %s on the bus).\n", BUS_NAME);
                return EXIT_NOT_RUNNING;
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

/* The properties status shows, in this order, with their labels; the rest follow by name. */
static const struct {
        const char *name;
        const char *label;
} status_fields[] = {
        {"Version", "Version"},
        {"State", "State"},
        {"Discovery", "Discovery"},
        {"PolicyFiles", "Policy files"},
        {"Reloads", "Reloads"},
        {"LastReloadError", "Last reload error"},
        {"ManagedProcesses", "Managed processes"},
        {"ProcessesMatched", "Processes matched"},
        {"ProcessesPlaced", "Processes placed"},
        {"ProcessesVanished", "Processes vanished"},
        {"PlacementFailures", "Placement failures"},
        {"EventsReceived", "Events received"},
        {"EventsLost", "Events lost"},
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

        r = bus_call(bus, "org.freedesktop.DBus.Properties", "GetAll", BUS_INTERFACE, 0, &error, &reply);
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

        r = bus_call(bus, BUS_INTERFACE, "ListPolicies", NULL, 0, &error, &policies);
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

static int verb_reload(void) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r, ret;

        r = connect_or_explain(&bus);
        if (r < 0)
                return -r;

        r = bus_call(bus, BUS_INTERFACE, "Reload", NULL, RELOAD_TIMEOUT_USEC, &error, NULL);
        if (r >= 0) {
                if (arg_json)
                        puts("{\"reloaded\":true}");
                ret = EXIT_OK;
        } else if (sd_bus_error_has_name(&error, "org.affinityd1.Error.InvalidPolicy")) {
                const char *msg = error.message ?: "";
                size_t l = strlen(msg);

                /* The message is the diagnostics, one "file:line:column: error: ..." per line. */
                fprintf(stderr, "%s%s", msg, l > 0 && msg[l - 1] != '\n' ? "\n" : "");
                fprintf(stderr,
                        "Reload failed: the configuration is invalid; affinityd keeps the previous one.\n");
                ret = EXIT_FAILURE_;
        } else
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
 * cell: no trailing blanks. */
static void table_print(const Table *t, const bool *show) {
        _cleanup_free_ size_t *width = calloc(t->n_columns, sizeof(size_t));

        if (!width)
                return;
        for (size_t r = 0; r < t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++)
                        width[c] = MAX(width[c], strlen(t->cells[r * t->n_columns + c]));
        for (size_t r = 0; r < t->n_rows; r++) {
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
        r = bus_call(bus, BUS_INTERFACE, method, NULL, 0, &error, ret);
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
                printf("\n%zu IRQ%s listed, %zu covered by a rule.\n", n, n == 1 ? "" : "s", n_ruled);
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
                printf("\n%zu queue setting%s listed, %zu covered by a rule.\n", n, n == 1 ? "" : "s",
                       n_ruled);
        }
        ret = EXIT_OK;

finish:
        table_done(&table);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
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
               "  reload               Reload the configuration and wait until it is done\n"
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
               "     --json                  Print one JSON document on stdout\n"
               "     --config-dir=DIR        validate, plan: read DIR/affinityd.yaml and\n"
               "                             DIR/policy.d/*.yaml instead of the standard path\n"
               "     --topology=FILE.xml     validate, plan: resolve against this hwloc XML\n"
               "                             topology (lstopo FILE.xml) instead of this machine\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage error, 3 affinityd not running.\n",
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
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"bus-address", required_argument, NULL, ARG_BUS_ADDRESS},
                {"json", no_argument, NULL, ARG_JSON},
                {"config-dir", required_argument, NULL, ARG_CONFIG_DIR},
                {"topology", required_argument, NULL, ARG_TOPOLOGY},
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

        if (streq(verb, "status") || streq(verb, "reload") || streq(verb, "irqs") || streq(verb, "net")) {
                if (arg_config_dir || arg_topology) {
                        fprintf(stderr, "%s is only for validate and plan.\n",
                                arg_config_dir ? "--config-dir=" : "--topology=");
                        return EXIT_USAGE;
                }
                if (n_args > 0) {
                        fprintf(stderr, "%s takes no arguments.\n", verb);
                        return EXIT_USAGE;
                }
                if (streq(verb, "irqs"))
                        return verb_irqs();
                if (streq(verb, "net"))
                        return verb_net();
                return streq(verb, "status") ? verb_status() : verb_reload();
        }

        fprintf(stderr, "Unknown command \"%s\"; see %s --help.\n", verb, program_invocation_short_name);
        return EXIT_USAGE;
}
