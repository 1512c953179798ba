/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus text of a MetricsSnapshot (ctl-metrics.h): pure, no bus, no I/O but a memory
 * stream. Every metric's name, type and help text is in the tables below; docs/metrics.md
 * describes the same list.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-metrics.h"
#include "macro.h"

typedef enum MetricUnit {
        UNIT_COUNT, /* as the daemon has it */
        UNIT_USEC,  /* µs, written as seconds */
} MetricUnit;

/* The Manager's numeric properties, each one metric without labels. */
static const struct {
        const char *property;
        const char *name;
        const char *type;
        MetricUnit unit;
        const char *help;
} property_metrics[] = {
        {"ManagedProcesses", "affinityd_managed_processes", "gauge", UNIT_COUNT, "Processes managed now."},
        {"LastReloadUSec", "affinityd_last_reload_timestamp_seconds", "gauge", UNIT_USEC,
         "When the last reload was attempted, in seconds since the epoch; 0 when there was none since "
         "the start."},
        {"PlacementLatencyMaxUSec", "affinityd_placement_latency_max_seconds", "gauge", UNIT_USEC,
         "The longest time from a process event to its placement since the start."},
        {"EventsReceived", "affinityd_events_received_total", "counter", UNIT_COUNT,
         "Proc connector events received."},
        {"EventsLost", "affinityd_events_lost_total", "counter", UNIT_COUNT,
         "Times the kernel dropped proc connector events (ENOBUFS); each causes a rescan."},
        {"MatchesUndecided", "affinityd_matches_undecided_total", "counter", UNIT_COUNT,
         "Processes left unmatched because the worker thread had no room for their long command line."},
        {"Rescans", "affinityd_rescans_total", "counter", UNIT_COUNT, "Full /proc rescans."},
        {"ProcessesMatched", "affinityd_processes_matched_total", "counter", UNIT_COUNT,
         "Distinct processes that matched a policy in force."},
        {"ProcessesPlaced", "affinityd_processes_placed_total", "counter", UNIT_COUNT,
         "Matched processes whose every thread was placed at least once."},
        {"ProcessesVanished", "affinityd_processes_vanished_total", "counter", UNIT_COUNT,
         "Matched processes that exited before their placement completed."},
        {"PlacementFailures", "affinityd_placement_failures_total", "counter", UNIT_COUNT,
         "Per-thread placement failures other than the task vanishing."},
        {"DriftDetected", "affinityd_drift_detected_total", "counter", UNIT_COUNT,
         "Managed threads found changed by someone else."},
        {"DriftCorrections", "affinityd_drift_corrections_total", "counter", UNIT_COUNT,
         "Drifted threads put back (on-drift: enforce)."},
        {"Restores", "affinityd_restores_total", "counter", UNIT_COUNT,
         "Processes and threads given their original settings back."},
        {"Reloads", "affinityd_reloads_total", "counter", UNIT_COUNT,
         "Reload requests handled, successful or not."},
        {"IrqsPlaced", "affinityd_irqs_placed_total", "counter", UNIT_COUNT,
         "IRQ affinities written by irqs: rules."},
        {"IrqRefusals", "affinityd_irq_refusals_total", "counter", UNIT_COUNT,
         "IRQ affinity writes the kernel refused."},
        {"QueuesPlaced", "affinityd_queues_placed_total", "counter", UNIT_COUNT,
         "Network queue settings (rps_cpus, xps_cpus, rps_flow_cnt) written by net: rules."},
        {"QueueFailures", "affinityd_queue_failures_total", "counter", UNIT_COUNT,
         "Network queue writes that failed."},
        {"DeviceRestores", "affinityd_device_restores_total", "counter", UNIT_COUNT,
         "IRQs and queues given their original settings back."},
        {"DeviceDriftDetected", "affinityd_device_drift_detected_total", "counter", UNIT_COUNT,
         "IRQs and queues found changed by someone else."},
        {"DeviceDriftCorrections", "affinityd_device_drift_corrections_total", "counter", UNIT_COUNT,
         "Drifted IRQs and queues put back."},
        {"DeviceEvents", "affinityd_device_events_total", "counter", UNIT_COUNT,
         "Device events handled (links, queues, CPUs appearing and going)."},
};

/* The values of State and Discovery: one sample each, 1 for the current one. */
static const char *const states[] = {"starting", "running", "degraded", "stopping"};
static const char *const discoveries[] = {"netlink", "polling"};

#define LATENCY_HISTOGRAM "affinityd_placement_latency_seconds"

void metrics_snapshot_done(MetricsSnapshot *s) {
        free(s->version);
        free(s->state);
        free(s->discovery);
        free(s->last_reload_error);
        for (size_t i = 0; i < s->n_values; i++)
                free(s->values[i].property);
        free(s->values);
        free(s->buckets);
        for (size_t i = 0; i < s->n_policy_processes; i++)
                free(s->policy_processes[i].name);
        free(s->policy_processes);
        for (size_t i = 0; i < s->n_effects; i++)
                free(s->effects[i].name);
        free(s->effects);
        for (size_t i = 0; i < s->n_policy_pending; i++)
                free(s->policy_pending[i].name);
        free(s->policy_pending);
        for (size_t i = 0; i < s->n_irq_skew; i++) {
                free(s->irq_skew[i].device);
                free(s->irq_skew[i].kind);
        }
        free(s->irq_skew);
        for (size_t i = 0; i < s->n_irqs; i++) {
                free(s->irqs[i].rule);
                free(s->irqs[i].kind);
                free(s->irqs[i].state);
        }
        free(s->irqs);
        for (size_t i = 0; i < s->n_intrusions; i++) {
                free(s->intrusions[i].policy);
                free(s->intrusions[i].kind);
        }
        free(s->intrusions);
        for (size_t i = 0; i < s->n_queues; i++) {
                free(s->queues[i].rule);
                free(s->queues[i].kind);
                free(s->queues[i].state);
        }
        free(s->queues);
        *s = (MetricsSnapshot){};
}

static const MetricsValue *snapshot_value(const MetricsSnapshot *s, const char *property) {
        for (size_t i = 0; i < s->n_values; i++)
                if (streq(s->values[i].property, property))
                        return &s->values[i];
        return NULL;
}

/* A label value, escaped: backslash, double quote and newline as \\, \" and \n. */
static void write_label_value(FILE *f, const char *v) {
        for (const char *p = v ? v : ""; *p; p++)
                switch (*p) {
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                default:
                        fputc(*p, f);
                }
}

/* µs as seconds, exactly: "0.00001", "0.25", "3", "1733097600.000001". */
static void write_seconds(FILE *f, uint64_t usec) {
        uint64_t frac = usec % 1000000;
        int digits = 6;

        if (frac == 0) {
                fprintf(f, "%" PRIu64, usec / 1000000);
                return;
        }
        while (frac % 10 == 0) {
                frac /= 10;
                digits--;
        }
        fprintf(f, "%" PRIu64 ".%0*" PRIu64, usec / 1000000, digits, frac);
}

static void write_header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{label="value"} 0 or 1, for each of values, 1 for current; current itself (1) if it is
 * none of them. */
static void write_enum(
        FILE *f, const char *name, const char *label, const char *const *values, size_t n,
        const char *current) {
        bool known = false;

        for (size_t i = 0; i < n; i++) {
                bool is = streq(values[i], current);

                fprintf(f, "%s{%s=\"%s\"} %d\n", name, label, values[i], is);
                known = known || is;
        }
        if (!known) {
                fprintf(f, "%s{%s=\"", name, label);
                write_label_value(f, current);
                fputs("\"} 1\n", f);
        }
}

static void write_per_policy(
        FILE *f, const char *name, const char *help, const MetricsPolicy *list, size_t n) {
        write_header(f, name, "gauge", help);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s{policy=\"", name);
                write_label_value(f, list[i].name);
                fprintf(f, "\"} %" PRIu64 "\n", list[i].value);
        }
}

/* The PolicyEffects counters, one metric per field, a sample per policy (µs fields as seconds);
 * migrations only for policies whose kernel counts them. Nothing when there are none. */
static void write_effects(FILE *f, const MetricsSnapshot *s) {
        static const struct {
                const char *name;
                size_t offset;
                bool usec;
                const char *help;
        } metrics[] = {
                {"affinityd_policy_cpu_seconds_total", offsetof(MetricsEffect, cpu_usec), true,
                 "CPU time the policy's managed threads ran, summed from effect-interval samples of "
                 "/proc/PID/task/TID/schedstat field 1."},
                {"affinityd_policy_foreign_cpu_seconds_total", offsetof(MetricsEffect, foreign_cpu_usec),
                 true,
                 "Of that CPU time, time of threads last seen (stat field 39, at either end of a sample "
                 "interval) on a CPU outside the mask they were placed on (else the policy's CPUs): 0 for "
                 "placed threads, an estimate for moved ones."},
                {"affinityd_policy_run_delay_seconds_total", offsetof(MetricsEffect, run_delay_usec), true,
                 "Run-queue delay of the policy's managed threads: time runnable but waiting for a CPU, a "
                 "per-thread sum (schedstat field 2), not a per-wakeup distribution."},
                {"affinityd_policy_migrations_total", offsetof(MetricsEffect, migrations), false,
                 "Moves of the policy's managed threads between CPUs (se.nr_migrations of "
                 "/proc/PID/task/TID/sched); absent when the kernel has no sched file."},
                {"affinityd_policy_involuntary_switches_total", offsetof(MetricsEffect, involuntary), false,
                 "Involuntary context switches (preemptions) of the policy's managed threads "
                 "(nr_involuntary_switches of sched, or nonvoluntary_ctxt_switches of status)."},
        };

        for (size_t k = 0; k < ELEMENTSOF(metrics); k++) {
                bool header = false;

                for (size_t i = 0; i < s->n_effects; i++) {
                        const MetricsEffect *e = s->effects + i;
                        uint64_t v = *(const uint64_t *)((const char *)e + metrics[k].offset);

                        if (metrics[k].offset == offsetof(MetricsEffect, migrations) && !e->has_migrations)
                                continue;
                        if (!header) {
                                write_header(f, metrics[k].name, "counter", metrics[k].help);
                                header = true;
                        }
                        fprintf(f, "%s{policy=\"", metrics[k].name);
                        write_label_value(f, e->name);
                        fputs("\"} ", f);
                        if (metrics[k].usec)
                                write_seconds(f, v);
                        else
                                fprintf(f, "%" PRIu64, v);
                        fputc('\n', f);
                }
        }
}

static int device_key_cmp(const MetricsDevice *a, const MetricsDevice *b) {
        int c = strcmp(a->rule ?: "", b->rule ?: "");

        if (c == 0)
                c = strcmp(a->kind ?: "", b->kind ?: "");
        if (c == 0)
                c = strcmp(a->state ?: "", b->state ?: "");
        return c;
}

static int device_ptr_cmp(const void *a, const void *b) {
        return device_key_cmp(*(const MetricsDevice *const *)a, *(const MetricsDevice *const *)b);
}

/* One sample per (rule, kind, state) of the devices that have a rule: how many there are, in
 * the order of the labels; nothing, not even the header, when no device has a rule. */
static int write_devices(FILE *f, const char *name, const char *help, const MetricsDevice *list, size_t n) {
        _cleanup_free_ const MetricsDevice **sorted = NULL;
        size_t k = 0;

        sorted = calloc(MAX(n, (size_t)1), sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (list[i].rule && list[i].rule[0])
                        sorted[k++] = &list[i];
        if (k == 0)
                return 0;
        qsort(sorted, k, sizeof(*sorted), device_ptr_cmp);

        write_header(f, name, "gauge", help);

        for (size_t i = 0, run; i < k; i += run) {
                for (run = 1; i + run < k && device_key_cmp(sorted[i], sorted[i + run]) == 0; run++)
                        ;
                fprintf(f, "%s{rule=\"", name);
                write_label_value(f, sorted[i]->rule);
                if (sorted[i]->kind) {
                        fputs("\",kind=\"", f);
                        write_label_value(f, sorted[i]->kind);
                }
                fputs("\",state=\"", f);
                write_label_value(f, sorted[i]->state);
                fprintf(f, "\"} %zu\n", run);
        }
        return 0;
}

/* The isolation audit's totals: CPU time per (cpu, policy, kind), and interrupts per (cpu,
 * policy, kind) for the kinds that count them; nothing when the audit found nothing. */
static void write_intrusions(FILE *f, const MetricsSnapshot *s) {
        bool any = false;

        if (s->n_intrusions == 0)
                return;
        write_header(
                f, "affinityd_cpu_intrusion_seconds_total", "counter",
                "CPU time on a CPU held exclusive (or the reserve) used by what does not belong there, "
                "by kind: task, kthread, other, unnamed, softirq, reserve.");
        for (size_t i = 0; i < s->n_intrusions; i++) {
                const MetricsIntrusion *x = &s->intrusions[i];

                if (streq(x->kind, "irq"))
                        continue; /* counted, not timed */
                fprintf(f, "affinityd_cpu_intrusion_seconds_total{cpu=\"%u\",policy=\"", x->cpu);
                write_label_value(f, x->policy);
                fputs("\",kind=\"", f);
                write_label_value(f, x->kind);
                fputs("\"} ", f);
                write_seconds(f, x->usec);
                fputc('\n', f);
        }
        for (size_t i = 0; i < s->n_intrusions; i++) {
                const MetricsIntrusion *x = &s->intrusions[i];

                if (!streq(x->kind, "irq") && !streq(x->kind, "softirq"))
                        continue;
                if (!any)
                        write_header(
                                f, "affinityd_cpu_intrusion_interrupts_total", "counter",
                                "Interrupts on a CPU held exclusive, by kind: irq (device IRQs) or "
                                "softirq.");
                any = true;
                fprintf(f, "affinityd_cpu_intrusion_interrupts_total{cpu=\"%u\",policy=\"", x->cpu);
                write_label_value(f, x->policy);
                fputs("\",kind=\"", f);
                write_label_value(f, x->kind);
                fprintf(f, "\"} %" PRIu64 "\n", x->count);
        }
}

/* The skew check's episodes: affinityd_irq_skew{device,kind,cpu} 1 while an episode is on (0
 * after it ended, on the CPU it was on), affinityd_irq_skew_episodes_total{device,kind}. Nothing
 * when no skew was found. */
static void write_irq_skew(FILE *f, const MetricsSnapshot *s) {
        if (s->n_irq_skew == 0)
                return;
        write_header(
                f, "affinityd_irq_skew", "gauge",
                "Whether a device's interrupts (kind irq) or the NET_RX softirqs (kind net-rx) are "
                "skewed onto the CPU now (1) or were (0).");
        for (size_t i = 0; i < s->n_irq_skew; i++) {
                fputs("affinityd_irq_skew{device=\"", f);
                write_label_value(f, s->irq_skew[i].device);
                fputs("\",kind=\"", f);
                write_label_value(f, s->irq_skew[i].kind);
                fprintf(f, "\",cpu=\"%u\"} %d\n", s->irq_skew[i].cpu, s->irq_skew[i].active);
        }
        write_header(
                f, "affinityd_irq_skew_episodes_total", "counter",
                "IRQ or NET_RX softirq skew episodes begun, by device and kind.");
        for (size_t i = 0; i < s->n_irq_skew; i++) {
                fputs("affinityd_irq_skew_episodes_total{device=\"", f);
                write_label_value(f, s->irq_skew[i].device);
                fputs("\",kind=\"", f);
                write_label_value(f, s->irq_skew[i].kind);
                fprintf(f, "\"} %" PRIu64 "\n", s->irq_skew[i].episodes);
        }
}

/* The histogram, if s has one; -EBADMSG if it is not cumulative. */
static int write_histogram(FILE *f, const MetricsSnapshot *s) {
        const MetricsValue *count = snapshot_value(s, "PlacementLatencyCount"),
                           *sum = snapshot_value(s, "PlacementLatencySumUSec");

        if (!s->has_histogram || !count || !sum)
                return 0;
        for (size_t i = 0; i < s->n_buckets; i++)
                if (s->buckets[i].count > count->value ||
                    (i > 0 &&
                     (s->buckets[i].le_usec <= s->buckets[i - 1].le_usec ||
                      s->buckets[i].count < s->buckets[i - 1].count)))
                        return -EBADMSG;

        write_header(
                f, LATENCY_HISTOGRAM, "histogram",
                "Time from a process event (exec, fork, comm or uid change) to the placement of the "
                "process.");
        for (size_t i = 0; i < s->n_buckets; i++) {
                fputs(LATENCY_HISTOGRAM "_bucket{le=\"", f);
                write_seconds(f, s->buckets[i].le_usec);
                fprintf(f, "\"} %" PRIu64 "\n", s->buckets[i].count);
        }
        fprintf(f, LATENCY_HISTOGRAM "_bucket{le=\"+Inf\"} %" PRIu64 "\n", count->value);
        fputs(LATENCY_HISTOGRAM "_sum ", f);
        write_seconds(f, sum->value);
        fprintf(f, "\n" LATENCY_HISTOGRAM "_count %" PRIu64 "\n", count->value);
        return 0;
}

static int write_snapshot(FILE *f, const MetricsSnapshot *s) {
        int r;

        write_header(
                f, "affinityd_up", "gauge", "Whether affinityd could be read over D-Bus (1) or not (0).");
        fprintf(f, "affinityd_up %d\n", s->up);
        if (!s->up)
                return 0;

        if (s->version) {
                write_header(
                        f, "affinityd_build_info", "gauge", "The daemon's version, as a label; always 1.");
                fputs("affinityd_build_info{version=\"", f);
                write_label_value(f, s->version);
                fputs("\"} 1\n", f);
        }
        if (s->state) {
                write_header(
                        f, "affinityd_state", "gauge",
                        "The daemon's state: 1 for the one it is in, 0 for the others.");
                write_enum(f, "affinityd_state", "state", states, ELEMENTSOF(states), s->state);
        }
        if (s->discovery) {
                write_header(
                        f, "affinityd_discovery", "gauge",
                        "How processes are found: the proc connector (netlink) or polling /proc; 1 for "
                        "the one in use.");
                write_enum(
                        f, "affinityd_discovery", "mode", discoveries, ELEMENTSOF(discoveries),
                        s->discovery);
        }
        if (s->last_reload_error) {
                write_header(
                        f, "affinityd_last_reload_success", "gauge",
                        "Whether the last reload succeeded (1, also when there was none) or failed (0).");
                fprintf(f, "affinityd_last_reload_success %d\n", s->last_reload_error[0] == 0);
        }

        for (size_t i = 0; i < ELEMENTSOF(property_metrics); i++) {
                const MetricsValue *v = snapshot_value(s, property_metrics[i].property);

                if (!v)
                        continue;
                write_header(
                        f, property_metrics[i].name, property_metrics[i].type, property_metrics[i].help);
                fprintf(f, "%s ", property_metrics[i].name);
                if (property_metrics[i].unit == UNIT_USEC)
                        write_seconds(f, v->value);
                else
                        fprintf(f, "%" PRIu64, v->value);
                fputc('\n', f);
        }

        if (s->n_policy_processes > 0)
                write_per_policy(
                        f, "affinityd_policy_processes", "Processes managed now by the policy.",
                        s->policy_processes, s->n_policy_processes);
        if (s->n_policy_pending > 0)
                write_per_policy(
                        f, "affinityd_policy_pending",
                        "Whether the policy is pending (1: it can't be resolved on this machine) or active "
                        "(0).",
                        s->policy_pending, s->n_policy_pending);
        write_effects(f, s);
        write_irq_skew(f, s);
        r = write_devices(
                f, "affinityd_irqs", "IRQs placed by the rule, by their state.", s->irqs, s->n_irqs);
        if (r >= 0)
                r = write_devices(
                        f, "affinityd_net_queues",
                        "Network queue settings placed by the rule, by kind and state.", s->queues,
                        s->n_queues);
        if (r >= 0)
                write_intrusions(f, s);
        if (r >= 0)
                r = write_histogram(f, s);
        return r;
}

int metrics_format(const MetricsSnapshot *s, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = write_snapshot(f, s);
        if (fflush(f) != 0 || ferror(f))
                r = r < 0 ? r : -ENOMEM;
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(text);
        return 0;
}

int metrics_parse_listen_address(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len) {
        struct sockaddr_storage ss = {};
        _cleanup_free_ char *host = NULL;
        const char *colon, *port_text;
        unsigned long port;
        char *end;

        if (!s)
                return -EINVAL;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || close[1] != ':')
                        return -EINVAL;
                host = strndup(s + 1, (size_t)(close - s - 1));
                port_text = close + 2;
        } else {
                colon = strrchr(s, ':');
                if (!colon || memchr(s, ':', (size_t)(colon - s)))
                        return -EINVAL; /* no port, or an IPv6 address without [] */
                host = strndup(s, (size_t)(colon - s));
                port_text = colon + 1;
        }
        if (!host)
                return -ENOMEM;
        if (port_text[0] < '0' || port_text[0] > '9')
                return -EINVAL;
        errno = 0;
        port = strtoul(port_text, &end, 10);
        if (errno != 0 || *end || port > 65535)
                return -EINVAL;

        if (s[0] == '[' || host[0] == 0) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

                a->sin6_family = AF_INET6;
                a->sin6_port = htons((uint16_t)port);
                if (host[0] == 0 && s[0] != '[')
                        a->sin6_addr = in6addr_any;
                else if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
                        return -EINVAL;
                *ret_len = sizeof(*a);
        } else {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;

                a->sin_family = AF_INET;
                a->sin_port = htons((uint16_t)port);
                if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
                        return -EINVAL;
                *ret_len = sizeof(*a);
        }
        *ret = ss;
        return 0;
}
