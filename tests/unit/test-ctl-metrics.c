/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of affinityctl metrics' formatter (daemon/affinityctl/ctl-metrics.c): the exposition
 * format's shape (HELP and TYPE before each family's samples, no family twice), the names
 * (affinityd_ prefix, _total counters, seconds), label escaping, the histogram (cumulative,
 * +Inf = count), what an older daemon lacks, affinityd_up 0; and --listen='s addresses. With the
 * argument "promtool": promtool check metrics on a full snapshot's text.
 */

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-metrics.h"
#include "macro.h"

#define LINE(s) "\n" s "\n"

static MetricsValue *values_of(const char *const *names, const uint64_t *v, size_t n) {
        MetricsValue *a = calloc(n, sizeof(*a));

        ck_assert_ptr_nonnull(a);
        for (size_t i = 0; i < n; i++) {
                a[i].property = strdup(names[i]);
                ck_assert_ptr_nonnull(a[i].property);
                a[i].value = v[i];
        }
        return a;
}

static MetricsPolicy *policies_of(const char *const *names, const uint64_t *v, size_t n) {
        MetricsPolicy *a = calloc(n, sizeof(*a));

        ck_assert_ptr_nonnull(a);
        for (size_t i = 0; i < n; i++) {
                a[i].name = strdup(names[i]);
                ck_assert_ptr_nonnull(a[i].name);
                a[i].value = v[i];
        }
        return a;
}

static MetricsDevice *devices_of(const char *const (*d)[3], size_t n) {
        MetricsDevice *a = calloc(n, sizeof(*a));

        ck_assert_ptr_nonnull(a);
        for (size_t i = 0; i < n; i++) {
                a[i].rule = strdup(d[i][0]);
                a[i].kind = d[i][1] ? strdup(d[i][1]) : NULL;
                a[i].state = strdup(d[i][2]);
        }
        return a;
}

static char *xstrdup(const char *s) {
        char *c = strdup(s);

        ck_assert_ptr_nonnull(c);
        return c;
}

/* A snapshot of a daemon with every property the formatter knows of. */
static void full_snapshot(MetricsSnapshot *s) {
        static const char *const names[] = {
                "ManagedProcesses",
                "LastReloadUSec",
                "PlacementLatencyMaxUSec",
                "EventsReceived",
                "EventsLost",
                "MatchesUndecided",
                "Rescans",
                "ProcessesMatched",
                "ProcessesPlaced",
                "ProcessesVanished",
                "PlacementFailures",
                "DriftDetected",
                "DriftCorrections",
                "Restores",
                "Reloads",
                "IrqsPlaced",
                "IrqRefusals",
                "QueuesPlaced",
                "QueueFailures",
                "DeviceRestores",
                "DeviceDriftDetected",
                "DeviceDriftCorrections",
                "DeviceEvents",
                "PlacementLatencyCount",
                "PlacementLatencySumUSec",
                "PlacementLatencyP50USec",
        };
        static const uint64_t v[] = {
                5,        UINT64_C(1733097600000001),
                1250,     42,
                1,        0,
                2,        9,
                8,        1,
                3,        0,
                0,        4,
                2,        0,
                0,        0,
                0,        0,
                0,        0,
                0,        9,
                12345678, 17,
        };
        static const char *const policy_names[] = {"db", "web"};
        static const uint64_t processes[] = {3, 2}, pending[] = {0, 1};
        static const char *const irqs[][3] = {
                {"nic", NULL, "applied"},
                {"", NULL, "unmanaged"},
                {"nic", NULL, "refused"},
                {"nic", NULL, "applied"},
        };
        static const char *const queues[][3] = {
                {"veth", "rps", "applied"},
                {"veth", "xps", "applied"},
                {"veth", "rps", "applied"},
                {"", "rps", "unmanaged"},
        };
        static const MetricsBucket buckets[] = {{10, 1}, {25, 3}, {50, 3}, {1000000, 7}};

        *s = (MetricsSnapshot){
                .up = true,
                .version = xstrdup("0.9"),
                .state = xstrdup("running"),
                .discovery = xstrdup("netlink"),
                .last_reload_error = xstrdup(""),
                .values = values_of(names, v, ELEMENTSOF(names)),
                .n_values = ELEMENTSOF(names),
                .has_histogram = true,
                .buckets = malloc(sizeof(buckets)),
                .n_buckets = ELEMENTSOF(buckets),
                .policy_processes = policies_of(policy_names, processes, 2),
                .n_policy_processes = 2,
                .policy_pending = policies_of(policy_names, pending, 2),
                .n_policy_pending = 2,
                .irqs = devices_of(irqs, ELEMENTSOF(irqs)),
                .n_irqs = ELEMENTSOF(irqs),
                .queues = devices_of(queues, ELEMENTSOF(queues)),
                .n_queues = ELEMENTSOF(queues),
                .effects = calloc(2, sizeof(MetricsEffect)),
                .n_effects = 2,
        };
        ck_assert_ptr_nonnull(s->effects);
        s->effects[0] = (MetricsEffect){
                .name = xstrdup("db"),
                .cpu_usec = 2500000,
                .foreign_cpu_usec = 0,
                .run_delay_usec = 1500,
                .timeslices = 40,
                .migrations = 7,
                .involuntary = 3,
                .has_migrations = true};
        s->effects[1] = (MetricsEffect){
                .name = xstrdup("web"),
                .cpu_usec = 1000000,
                .foreign_cpu_usec = 250000,
                .run_delay_usec = 0,
                .timeslices = 9,
                .migrations = 0,
                .involuntary = 1,
                .has_migrations = false};
        ck_assert_ptr_nonnull(s->buckets);
        memcpy(s->buckets, buckets, sizeof(buckets));
}

static char *format_ok(const MetricsSnapshot *s) {
        char *text = NULL;
        int r = metrics_format(s, &text);

        ck_assert_msg(r == 0, "metrics_format: %s", strerror(-r));
        ck_assert_ptr_nonnull(text);
        return text;
}

/* The metric name of a sample line: up to '{' or ' '. */
static char *sample_name(const char *line, size_t len) {
        size_t n = strcspn(line, "{ ");

        ck_assert_uint_lt(n, len);
        return strndup(line, n);
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

/*
 * Checks the shape of the text: every line ends in "\n"; each family is "# HELP NAME text",
 * "# TYPE NAME type", then samples of NAME (a histogram's NAME_bucket, _sum, _count), never a
 * family twice; names start with affinityd_ and counters end in _total; no label is a PID.
 */
static void check_exposition(const char *text) {
        char family[128] = "", type[16] = "";
        char **seen = NULL;
        size_t n_seen = 0;

        ck_assert_msg(text[0] && text[strlen(text) - 1] == '\n', "text does not end in a newline");
        ck_assert_msg(!strstr(text, "pid="), "a PID label:\n%s", text);
        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = (size_t)(nl - p);
                _cleanup_free_ char *line = strndup(p, len);

                ck_assert_ptr_nonnull(line);
                if (strncmp(line, "# HELP ", 7) == 0) {
                        size_t n = strcspn(line + 7, " ");

                        ck_assert_uint_lt(n, sizeof(family));
                        memcpy(family, line + 7, n);
                        family[n] = 0;
                        ck_assert_msg(line[7 + n] == ' ' && line[8 + n], "HELP without text: %s", line);
                        ck_assert_msg(
                                strncmp(family, "affinityd_", 10) == 0, "name without prefix: %s", family);
                        for (size_t i = 0; i < n_seen; i++)
                                ck_assert_msg(!streq(seen[i], family), "family %s twice", family);
                        seen = reallocarray(seen, n_seen + 1, sizeof(char *));
                        ck_assert_ptr_nonnull(seen);
                        seen[n_seen++] = strdup(family);
                        type[0] = 0;
                } else if (strncmp(line, "# TYPE ", 7) == 0) {
                        size_t n = strlen(family);

                        ck_assert_msg(
                                strncmp(line + 7, family, n) == 0 && line[7 + n] == ' ',
                                "TYPE %s after HELP %s", line, family);
                        snprintf(type, sizeof(type), "%s", line + 8 + n);
                        ck_assert_msg(
                                streq(type, "counter") || streq(type, "gauge") || streq(type, "histogram"),
                                "type %s", type);
                        ck_assert_msg(
                                streq(type, "counter") == has_suffix(family, "_total"),
                                "%s: counters, and only they, end in _total", family);
                } else {
                        _cleanup_free_ char *name = sample_name(line, len);

                        ck_assert_msg(type[0], "sample before TYPE: %s", line);
                        if (streq(type, "histogram"))
                                ck_assert_msg(
                                        strncmp(name, family, strlen(family)) == 0 &&
                                                (streq(name + strlen(family), "_bucket") ||
                                                 streq(name + strlen(family), "_sum") ||
                                                 streq(name + strlen(family), "_count")),
                                        "%s in histogram %s", name, family);
                        else
                                ck_assert_msg(streq(name, family), "sample %s in family %s", name, family);
                }
                p = nl + 1;
        }
        for (size_t i = 0; i < n_seen; i++)
                free(seen[i]);
        free(seen);
}

START_TEST(test_full) {
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        _cleanup_free_ char *text = NULL;

        full_snapshot(&s);
        text = format_ok(&s);
        check_exposition(text);

        ck_assert_msg(strncmp(text, "# HELP affinityd_up ", 20) == 0, "%s", text);
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_up 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_build_info{version=\"0.9\"} 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_state{state=\"running\"} 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_state{state=\"degraded\"} 0")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_discovery{mode=\"netlink\"} 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_discovery{mode=\"polling\"} 0")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_last_reload_success 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_managed_processes 5")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_last_reload_timestamp_seconds 1733097600.000001")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_placement_latency_max_seconds 0.00125")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_events_received_total 42")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_events_lost_total 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_placement_failures_total 3")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_reloads_total 2")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_device_events_total 0")));
        ck_assert_ptr_nonnull(strstr(text, "\n# TYPE affinityd_events_received_total counter\n"));
        ck_assert_ptr_nonnull(strstr(text, "\n# TYPE affinityd_managed_processes gauge\n"));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_processes{policy=\"db\"} 3")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_processes{policy=\"web\"} 2")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_pending{policy=\"web\"} 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_pending{policy=\"db\"} 0")));
        /* Devices by rule and state; those no rule places are not counted. */
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_irqs{rule=\"nic\",state=\"applied\"} 2")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_irqs{rule=\"nic\",state=\"refused\"} 1")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_net_queues{rule=\"veth\",kind=\"rps\",state=\"applied\"} 2")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_net_queues{rule=\"veth\",kind=\"xps\",state=\"applied\"} 1")));
        ck_assert_ptr_null(strstr(text, "unmanaged"));
        /* The quantiles are the histogram's business: not metrics of their own. */
        ck_assert_ptr_null(strstr(text, "p50"));
        ck_assert_ptr_null(strstr(text, "usec"));
}
END_TEST

START_TEST(test_effects) {
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        _cleanup_free_ char *text = NULL;

        full_snapshot(&s);
        text = format_ok(&s);
        ck_assert_ptr_nonnull(strstr(text, LINE("# TYPE affinityd_policy_cpu_seconds_total counter")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_cpu_seconds_total{policy=\"db\"} 2.5")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_policy_foreign_cpu_seconds_total{policy=\"db\"} 0")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_policy_foreign_cpu_seconds_total{policy=\"web\"} 0.25")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_policy_run_delay_seconds_total{policy=\"db\"} 0.0015")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_policy_migrations_total{policy=\"db\"} 7")));
        /* web's kernel has no sched file: absent, not 0 */
        ck_assert_ptr_null(strstr(text, "affinityd_policy_migrations_total{policy=\"web\"}"));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_policy_involuntary_switches_total{policy=\"web\"} 1")));

        /* none sampled (effect-interval: off): no family at all */
        metrics_snapshot_done(&s);
        full_snapshot(&s);
        for (size_t i = 0; i < s.n_effects; i++)
                free(s.effects[i].name);
        s.effects = mfree(s.effects);
        s.n_effects = 0;
        text = mfree(text);
        text = format_ok(&s);
        ck_assert_ptr_null(strstr(text, "affinityd_policy_cpu_seconds_total"));
        ck_assert_ptr_null(strstr(text, "affinityd_policy_migrations_total"));
}
END_TEST

/* The skew check's episodes: a gauge per (device, kind, cpu), a counter per (device, kind). */
START_TEST(test_irq_skew) {
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        _cleanup_free_ char *text = NULL;

        full_snapshot(&s);
        s.irq_skew = calloc(2, sizeof(MetricsIrqSkew));
        ck_assert_ptr_nonnull(s.irq_skew);
        s.irq_skew[0] = (MetricsIrqSkew){xstrdup("eth0"), xstrdup("irq"), 3, true, 2};
        s.irq_skew[1] = (MetricsIrqSkew){xstrdup("eth0,veth0"), xstrdup("net-rx"), 1, false, 1};
        s.n_irq_skew = 2;
        text = format_ok(&s);
        check_exposition(text);
        ck_assert_ptr_nonnull(strstr(text, "\n# TYPE affinityd_irq_skew gauge\n"));
        ck_assert_ptr_nonnull(strstr(text, "\n# TYPE affinityd_irq_skew_episodes_total counter\n"));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_irq_skew{device=\"eth0\",kind=\"irq\",cpu=\"3\"} 1")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_irq_skew{device=\"eth0,veth0\",kind=\"net-rx\",cpu=\"1\"} 0")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_irq_skew_episodes_total{device=\"eth0\",kind=\"irq\"} 2")));
        ck_assert_ptr_nonnull(strstr(
                text, LINE("affinityd_irq_skew_episodes_total{device=\"eth0,veth0\",kind=\"net-rx\"} 1")));

        /* None found: neither metric is written. */
        metrics_snapshot_done(&s);
        full_snapshot(&s);
        free(text);
        text = format_ok(&s);
        ck_assert_ptr_null(strstr(text, "affinityd_irq_skew"));
}
END_TEST

START_TEST(test_histogram) {
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        _cleanup_free_ char *text = NULL;
        uint64_t prev = 0, n_buckets = 0, inf = UINT64_MAX;
        const char *p;

        full_snapshot(&s);
        text = format_ok(&s);
        ck_assert_ptr_nonnull(strstr(text, "\n# TYPE affinityd_placement_latency_seconds histogram\n"));
        ck_assert_ptr_nonnull(
                strstr(text,
                       "\naffinityd_placement_latency_seconds_bucket{le=\"0.00001\"} 1\n"
                       "affinityd_placement_latency_seconds_bucket{le=\"0.000025\"} 3\n"
                       "affinityd_placement_latency_seconds_bucket{le=\"0.00005\"} 3\n"
                       "affinityd_placement_latency_seconds_bucket{le=\"1\"} 7\n"
                       "affinityd_placement_latency_seconds_bucket{le=\"+Inf\"} 9\n"
                       "affinityd_placement_latency_seconds_sum 12.345678\n"
                       "affinityd_placement_latency_seconds_count 9\n"));

        /* Cumulative and monotone, +Inf last and equal to _count. */
        for (p = text; (p = strstr(p, "_bucket{le=\"")); p++) {
                const char *v = strstr(p, "} ");
                uint64_t c = strtoull(v + 2, NULL, 10);

                ck_assert_uint_ge(c, prev);
                prev = c;
                n_buckets++;
                if (strncmp(p + 12, "+Inf", 4) == 0)
                        inf = c;
        }
        ck_assert_uint_eq(n_buckets, 5);
        ck_assert_uint_eq(inf, 9);

        /* Not cumulative: refused. */
        s.buckets[2].count = 2;
        ck_assert_int_eq(metrics_format(&s, &(char *){NULL}), -EBADMSG);
        s.buckets[2].count = 3;
        s.buckets[2].le_usec = 25;
        ck_assert_int_eq(metrics_format(&s, &(char *){NULL}), -EBADMSG);
        s.buckets[2].le_usec = 50;
        s.buckets[3].count = 10; /* above PlacementLatencyCount */
        ck_assert_int_eq(metrics_format(&s, &(char *){NULL}), -EBADMSG);
}
END_TEST

START_TEST(test_escaping) {
        static const char *const names[] = {"a\"b\\c\nd"};
        static const uint64_t v[] = {3};
        static const char *const irqs[][3] = {{"r\"1", NULL, "applied"}};
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {
                .up = true,
                .version = xstrdup("1.0 \"beta\"\\x"),
                .state = xstrdup("odd\nstate"),
                .policy_processes = policies_of(names, v, 1),
                .n_policy_processes = 1,
                .irqs = devices_of(irqs, 1),
                .n_irqs = 1,
        };
        _cleanup_free_ char *text = format_ok(&s);

        check_exposition(text);
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_policy_processes{policy=\"a\\\"b\\\\c\\nd\"} 3")));
        ck_assert_ptr_nonnull(
                strstr(text, LINE("affinityd_build_info{version=\"1.0 \\\"beta\\\"\\\\x\"} 1")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_irqs{rule=\"r\\\"1\",state=\"applied\"} 1")));
        /* A state this affinityctl doesn't know: every known one 0, that one 1. */
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_state{state=\"running\"} 0")));
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_state{state=\"odd\\nstate\"} 1")));
}
END_TEST

/* An older daemon: what it lacks is left out, including the histogram without its count. */
START_TEST(test_missing) {
        static const char *const names[] = {"EventsReceived"};
        static const uint64_t v[] = {7};
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {
                .up = true,
                .values = values_of(names, v, 1),
                .n_values = 1,
                .has_histogram = true,
        };
        _cleanup_free_ char *text = format_ok(&s);

        check_exposition(text);
        ck_assert_ptr_nonnull(strstr(text, LINE("affinityd_events_received_total 7")));
        ck_assert_ptr_null(strstr(text, "affinityd_placement_latency_seconds"));
        ck_assert_ptr_null(strstr(text, "affinityd_build_info"));
        ck_assert_ptr_null(strstr(text, "affinityd_state"));
        ck_assert_ptr_null(strstr(text, "affinityd_policy_"));
        ck_assert_ptr_null(strstr(text, "affinityd_irqs"));
}
END_TEST

/* The isolation audit's counters: seconds for the timed kinds, interrupts for irq and softirq,
 * labels cpu, policy, kind (escaped), never a PID. */
START_TEST(test_intrusions) {
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {.up = true};
        _cleanup_free_ char *text = NULL;
        static const struct {
                unsigned cpu;
                const char *policy, *kind;
                uint64_t usec, count;
        } in[] = {
                {1, "db", "irq", 0, 1200},
                {1, "db", "softirq", 30000, 77},
                {1, "db", "task", 1200000, 0},
                {3, "we\"b", "unnamed", 2500, 0},
        };

        s.intrusions = calloc(ELEMENTSOF(in), sizeof(MetricsIntrusion));
        ck_assert_ptr_nonnull(s.intrusions);
        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                s.intrusions[i] =
                        (MetricsIntrusion){.cpu = in[i].cpu, .usec = in[i].usec, .count = in[i].count};
                s.intrusions[i].policy = strdup(in[i].policy);
                s.intrusions[i].kind = strdup(in[i].kind);
        }
        s.n_intrusions = ELEMENTSOF(in);
        text = format_ok(&s);
        check_exposition(text);
        ck_assert_ptr_nonnull(strstr(
                text,
                LINE("affinityd_cpu_intrusion_seconds_total{cpu=\"1\",policy=\"db\",kind=\"task\"} 1.2")));
        ck_assert_ptr_nonnull(
                strstr(text,
                       LINE("affinityd_cpu_intrusion_seconds_total{cpu=\"1\",policy=\"db\",kind=\"softirq\"}"
                            " 0.03")));
        ck_assert_ptr_nonnull(
                strstr(text,
                       LINE("affinityd_cpu_intrusion_seconds_total{cpu=\"3\",policy=\"we\\\"b\",kind="
                            "\"unnamed\"} 0.0025")));
        ck_assert_ptr_null(strstr(text, "kind=\"irq\"} 0"));
        ck_assert_ptr_nonnull(
                strstr(text,
                       LINE("affinityd_cpu_intrusion_interrupts_total{cpu=\"1\",policy=\"db\",kind=\"irq\"} "
                            "1200")));
        ck_assert_ptr_nonnull(
                strstr(text,
                       LINE("affinityd_cpu_intrusion_interrupts_total{cpu=\"1\",policy=\"db\",kind="
                            "\"softirq\"} 77")));
        ck_assert_ptr_null(strstr(text, "kind=\"task\"} 0\n"));
}
END_TEST

START_TEST(test_down) {
        MetricsSnapshot s = {.up = false};
        _cleanup_free_ char *text = format_ok(&s);

        check_exposition(text);
        ck_assert_str_eq(
                text,
                "# HELP affinityd_up Whether affinityd could be read over D-Bus (1) or not (0).\n"
                "# TYPE affinityd_up gauge\n"
                "affinityd_up 0\n");
}
END_TEST

START_TEST(test_listen_address) {
        static const char *const bad[] = {
                "",
                "9187",
                "127.0.0.1",
                "127.0.0.1:",
                "127.0.0.1:x",
                "127.0.0.1:65536",
                "127.0.0.1:-1",
                "::1:9187",
                "[::1]",
                "[::1]9187",
                "[]:9187",
                "localhost:9187",
                "1.2.3:9187",
                "[1.2.3.4]:1",
                "127.0.0.1:9187x",
        };
        struct sockaddr_storage ss;
        socklen_t len;
        char buf[INET6_ADDRSTRLEN];

        ck_assert_int_eq(metrics_parse_listen_address("127.0.0.1:9187", &ss, &len), 0);
        ck_assert_int_eq(ss.ss_family, AF_INET);
        ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
        ck_assert_uint_eq(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9187);
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, buf, sizeof(buf));
        ck_assert_str_eq(buf, "127.0.0.1");

        ck_assert_int_eq(metrics_parse_listen_address("[::1]:0", &ss, &len), 0);
        ck_assert_int_eq(ss.ss_family, AF_INET6);
        ck_assert_uint_eq(len, sizeof(struct sockaddr_in6));
        ck_assert_uint_eq(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 0);
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, buf, sizeof(buf));
        ck_assert_str_eq(buf, "::1");

        ck_assert_int_eq(metrics_parse_listen_address(":9187", &ss, &len), 0);
        ck_assert_int_eq(ss.ss_family, AF_INET6);
        ck_assert_uint_eq(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9187);
        ck_assert(IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr));

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(
                        metrics_parse_listen_address(bad[i], &ss, &len) == -EINVAL, "\"%s\" accepted",
                        bad[i]);
}
END_TEST

/* promtool check metrics, when installed: the text of a full snapshot passes its parser and its
 * lint (names, units, _total, HELP), escaped labels included. */
START_TEST(test_promtool) {
        static const char *const names[] = {"a\"b\\c\nd"};
        static const uint64_t v[] = {3};
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        _cleanup_free_ char *text = NULL, *cmd = NULL;
        char path[] = "/tmp/test-ctl-metrics-XXXXXX";
        int fd, r;

        full_snapshot(&s);
        /* A policy name to escape, besides db and web. */
        s.policy_processes = reallocarray(s.policy_processes, 3, sizeof(MetricsPolicy));
        ck_assert_ptr_nonnull(s.policy_processes);
        {
                MetricsPolicy *extra = policies_of(names, v, 1);

                s.policy_processes[2] = extra[0];
                free(extra);
        }
        s.n_policy_processes = 3;
        text = format_ok(&s);

        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ck_assert_int_ge(asprintf(&cmd, "promtool check metrics < %s", path), 0);
        r = system(cmd);
        unlink(path);
        ck_assert_msg(r == 0, "promtool check metrics refused (status %d):\n%s", r, text);
}
END_TEST

static bool promtool_installed(void) {
        return system("command -v promtool >/dev/null 2>&1") == 0;
}

/* Arguments: none (the formatter), or "promtool" (exits 77 without promtool). */
int main(int argc, char *argv[]) {
        bool promtool = argc > 1 && streq(argv[1], "promtool");
        Suite *s = suite_create("ctl-metrics");
        TCase *tc = tcase_create("format");
        SRunner *sr;
        int failed;

        if (promtool && !promtool_installed()) {
                printf("SKIP: promtool is not installed (Debian's package prometheus, tests/install-deps "
                       "--tests)\n");
                return 77;
        }
        if (promtool)
                tcase_add_test(tc, test_promtool);
        else {
                tcase_add_test(tc, test_full);
                tcase_add_test(tc, test_histogram);
                tcase_add_test(tc, test_effects);
                tcase_add_test(tc, test_escaping);
                tcase_add_test(tc, test_missing);
                tcase_add_test(tc, test_intrusions);
                tcase_add_test(tc, test_down);
                tcase_add_test(tc, test_listen_address);
                tcase_add_test(tc, test_irq_skew);
        }
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
