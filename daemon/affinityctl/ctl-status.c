/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl status: the daemon's properties (Properties.GetAll of org.affinityd1.Manager) and
 * its pending policies (ListPolicies), as labelled lines, or with --json as one object of every
 * property, by the daemon's names, and "PendingPolicies".
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* The daemon's properties, in the order it sent them: key the property's name, value the
 * property's (CELL_STRING, CELL_NUMBER, CELL_BOOL or CELL_STRV; strings owned). */
typedef struct Properties {
        Field *items;
        size_t n;
} Properties;

static void property_free_value(Field *f) {
        free((char *)f->key);
        free((char *)f->value.s);
        strv_free((char **)f->value.strv);
}

static void properties_done(Properties *p) {
        for (size_t i = 0; i < p->n; i++)
                property_free_value(&p->items[i]);
        p->items = mfree(p->items);
        p->n = 0;
}

static const Cell *properties_find(const Properties *p, const char *name) {
        for (size_t i = 0; i < p->n; i++)
                if (streq(p->items[i].key, name))
                        return &p->items[i].value;
        return NULL;
}

/* Reads an integer of D-Bus type (y, q, u, t, n, i or x) as decimal text into buf. Returns 0
 * or a negative errno. */
static int read_integer(sd_bus_message *reply, char type, char *buf, size_t size) {
        union {
                uint8_t y;
                uint16_t q;
                uint32_t u;
                uint64_t t;
                int16_t n;
                int32_t i;
                int64_t x;
        } v;
        int r;

        r = sd_bus_message_read_basic(reply, type, &v);
        if (r < 0)
                return r;
        if (strchr("yqut", type))
                snprintf(
                        buf, size, "%" PRIu64,
                        type == 'y'           ? (uint64_t)v.y
                                : type == 'q' ? (uint64_t)v.q
                                : type == 'u' ? (uint64_t)v.u
                                              : v.t);
        else
                snprintf(
                        buf, size, "%" PRIi64,
                        type == 'n'           ? (int64_t)v.n
                                : type == 'i' ? (int64_t)v.i
                                              : v.x);
        return 0;
}

/* Reads the value of one variant whose signature is contents into *ret. Returns 1 if read, 0
 * if skipped (a type status doesn't show), negative errno. */
static int read_variant(sd_bus_message *reply, const char *contents, Cell *ret) {
        char buf[64];
        int r;

        if (strlen(contents) == 1)
                switch (contents[0]) {
                case 's':
                case 'o':
                case 'g': {
                        const char *s;
                        char *copy;

                        r = sd_bus_message_read_basic(reply, contents[0], &s);
                        if (r < 0)
                                return r;
                        copy = strdup(s);
                        if (!copy)
                                return -ENOMEM;
                        *ret = CELL_STR(copy);
                        return 1;
                }
                case 'b': {
                        int b;

                        r = sd_bus_message_read_basic(reply, 'b', &b);
                        if (r < 0)
                                return r;
                        *ret = CELL_BOOL(b);
                        return 1;
                }
                case 'y':
                case 'q':
                case 'u':
                case 't':
                case 'n':
                case 'i':
                case 'x':
                        r = read_integer(reply, contents[0], buf, sizeof(buf));
                        if (r < 0)
                                return r;
                        break;
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
                char **l = NULL;

                r = sd_bus_message_read_strv(reply, &l);
                if (r < 0)
                        return r;
                *ret = CELL_STRV(l);
                return 1;
        } else {
                r = sd_bus_message_skip(reply, contents);
                return r < 0 ? r : 0;
        }

        char *number = strdup(buf);
        if (!number)
                return -ENOMEM;
        *ret = CELL_NUMBER(number);
        return 1;
}

/* One property of the GetAll reply (ctl_read_properties()): appended to the Properties
 * userdata, unless it is of a type status doesn't show. */
static int read_property(sd_bus_message *reply, const char *name, const char *contents, void *userdata) {
        _cleanup_(property_free_value) Field prop = {};
        Properties *p = userdata;
        Field *n;
        int r;

        r = read_variant(reply, contents, &prop.value);
        if (r <= 0)
                return r;
        prop.key = strdup(name);
        n = reallocarray(p->items, p->n + 1, sizeof(Field));
        if (n)
                p->items = n;
        if (!prop.key || !n)
                return -ENOMEM;
        p->items[p->n++] = prop;
        prop = (Field){};
        return 0;
}

/* Reads an a{sv} (Properties.GetAll reply) into *ret, in the order the daemon sent it. */
static int read_properties(sd_bus_message *reply, Properties *ret) {
        _cleanup_(properties_done) Properties p = {};
        int r;

        r = ctl_read_properties(reply, read_property, &p);
        if (r < 0)
                return r;
        *ret = p;
        p = (Properties){};
        return 0;
}

/* A policy the daemon could not resolve on this machine (ListPolicies with a pending_reason). */
static const Column pending_columns[] = {
        {"NAME", "name"},
        {"FILE", "file"},
        {"LINE", "line"},
        {"REASON", "reason"},
};

/* Reads a ListPolicies() reply, a(ssuss) (name, file, line, cpus, pending_reason), into t: the
 * pending policies in the daemon's order. Returns 0 or a negative errno. */
static int read_pending_policies(sd_bus_message *reply, Table *t) {
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssuss)");
        while (r >= 0) {
                const char *name, *file, *cpus, *reason;
                uint32_t line;

                r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &reason);
                if (r <= 0)
                        break;
                if (reason[0])
                        r = table_add_row(
                                t,
                                (Cell[]){CELL_STR(name), CELL_STR(file), CELL_UINT(line), CELL_STR(reason)});
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r < 0 ? r : 0;
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
        {"KubeletExclusiveCPUs", "Kubelet's CPUs"},
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

/* Shown on the latency line too ("over N placements"), or only in --json (the sum). */
#define LATENCY_COUNT_FIELD "PlacementLatencyCount"
#define LATENCY_SUM_FIELD   "PlacementLatencySumUSec"

static bool is_latency_field(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(latency_fields); i++)
                if (streq(name, latency_fields[i]))
                        return true;
        return streq(name, LATENCY_COUNT_FIELD) || streq(name, LATENCY_SUM_FIELD);
}

static void print_property(int width, const char *label, const Cell *p) {
        switch (p->type) {
        case CELL_BOOL:
                output_field(width, label, p->b ? "yes" : "no");
                break;
        case CELL_STRV:
                if (strv_length(p->strv) == 0)
                        output_field(width, label, "none");
                else
                        for (size_t i = 0; p->strv[i]; i++)
                                output_field(width, i == 0 ? label : NULL, p->strv[i]);
                break;
        default:
                output_field(width, label, p->s);
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
static void print_pending(int width, const Table *pending) {
        for (size_t i = 0; i < pending->n_rows; i++) {
                const char *name = table_cell(pending, i, 0)->s, *file = table_cell(pending, i, 1)->s,
                           *reason = table_cell(pending, i, 3)->s;
                uint64_t line = table_cell(pending, i, 2)->u;
                _cleanup_free_ char *text = NULL;
                int r;

                if (file[0] && line > 0)
                        r = asprintf(&text, "%s (%s:%" PRIu64 "): %s", name, file, line, reason);
                else
                        r = asprintf(&text, "%s: %s", name, reason);
                if (r < 0)
                        text = NULL;
                output_field(width, i == 0 ? PENDING_LABEL : NULL, text ?: name);
        }
}

static void print_status(const Properties *props, const Table *pending) {
        int width = (int)MAX(strlen(LATENCY_LABEL), strlen(PENDING_LABEL));
        char latency[128] = "";
        size_t n_latency = 0;

        for (size_t i = 0; i < ELEMENTSOF(status_fields); i++)
                width = MAX(width, (int)strlen(status_fields[i].label));
        for (size_t i = 0; i < props->n; i++)
                if (!status_known(props->items[i].key))
                        width = MAX(width, (int)strlen(props->items[i].key));

        for (size_t i = 0; i < ELEMENTSOF(status_fields); i++) {
                const char *name = status_fields[i].name, *label = status_fields[i].label;
                const Cell *p = properties_find(props, name);

                if (!p)
                        continue;
                /* An empty LastReloadError means the last reload succeeded. */
                if (streq(name, "LastReloadError") && p->type == CELL_STRING && p->s[0] == 0)
                        continue;
                /* Nothing to say when the daemon is not degraded. */
                if (streq(name, "DegradedReasons") && p->type == CELL_STRV && strv_length(p->strv) == 0)
                        continue;
                if ((streq(name, "ReservedCPUs") || streq(name, "KubeletExclusiveCPUs")) &&
                    p->type == CELL_STRING && p->s[0] == 0) {
                        output_field(width, label, "none");
                        continue;
                }
                if (streq(name, "LastReloadUSec") && p->type == CELL_NUMBER) {
                        char when[64];

                        format_realtime(p->s, when, sizeof(when));
                        output_field(width, label, when);
                        continue;
                }
                print_property(width, label, p);
        }

        /* Policies that don't apply on this machine, and why (a name no user has, a node
         * that doesn't exist): they are not errors, so this is where they show. */
        print_pending(width, pending);

        for (size_t i = 0; i < ELEMENTSOF(latency_fields); i++) {
                static const char *const names[] = {"p50", "p99", "max"};
                const Cell *p = properties_find(props, latency_fields[i]);
                char value[32];
                size_t l = strlen(latency);

                if (!p || p->type != CELL_NUMBER)
                        continue;
                format_usec(p->s, value, sizeof(value));
                snprintf(
                        latency + l, sizeof(latency) - l, "%s%s %s", n_latency > 0 ? ", " : "", names[i],
                        value);
                n_latency++;
        }
        if (n_latency > 0) {
                const Cell *count = properties_find(props, LATENCY_COUNT_FIELD);
                size_t l = strlen(latency);

                if (count && count->type == CELL_NUMBER)
                        snprintf(latency + l, sizeof(latency) - l, " over %s placements", count->s);
                output_field(width, LATENCY_LABEL, latency);
        }

        /* Whatever else the daemon offers (newer daemons have more). */
        for (size_t i = 0; i < props->n; i++)
                if (!status_known(props->items[i].key))
                        print_property(width, props->items[i].key, &props->items[i].value);
}

int verb_status(char **args) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL, *policies = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(properties_done) Properties props = {};
        _cleanup_(table_done) Table pending = TABLE_INIT(pending_columns);
        _cleanup_free_ Field *fields = NULL;
        int r;

        r = ctl_connect(&bus);
        if (r > 0)
                return r;

        r = ctl_call(
                bus, "org.freedesktop.DBus.Properties", "GetAll", 0, &error, &reply, "s",
                AFFINITYD_BUS_INTERFACE);
        if (r < 0)
                return ctl_call_failed("read the daemon's properties", r, &error);
        r = read_properties(reply, &props);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's properties: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }

        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, "ListPolicies", 0, &error, &policies, NULL);
        if (r < 0)
                return ctl_call_failed("list the daemon's policies", r, &error);
        r = read_pending_policies(policies, &pending);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's policies: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }

        if (!arg_json) {
                print_status(&props, &pending);
                return EXIT_OK;
        }
        /* Every property as the daemon sent it, then the pending policies. */
        fields = calloc(props.n + 1, sizeof(Field));
        if (!fields) {
                fprintf(stderr, "Out of memory.\n");
                return EXIT_FAILURE_;
        }
        memcpy(fields, props.items, props.n * sizeof(Field));
        fields[props.n] = (Field){"PendingPolicies", NULL, CELL_TABLE(&pending)};
        output_record(fields, props.n + 1, 0);
        return EXIT_OK;
}
