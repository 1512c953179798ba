/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * affinityctl metrics: the daemon's state and counters in the Prometheus text exposition format
 * (version 0.0.4). Three parts: metrics_format() turns a MetricsSnapshot into the text and is
 * pure (ctl-metrics.c); metrics_snapshot_read() fills a snapshot from the daemon's bus API
 * (ctl-metrics-bus.c); verb_metrics() prints one, or serves them over HTTP with --listen=
 * (ctl-metrics-http.c). Names follow Prometheus' conventions: the affinityd_ prefix, _total
 * counters, seconds, labels by policy and rule, never by PID (docs/metrics.md lists them).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <systemd/sd-bus.h>

/* How long each call of metrics_snapshot_read() may take, µs: under Prometheus' default scrape
 * timeout (10 s), so that a daemon busy placing a storm gives a failed scrape, not a hung one. */
#define METRICS_CALL_TIMEOUT_USEC (UINT64_C(5) * 1000000)

/* The Content-Type of what metrics_format() writes. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One numeric property of org.affinityd1.Manager by its D-Bus name ("EventsReceived"). */
typedef struct MetricsValue {
        char *property;
        uint64_t value;
} MetricsValue;

/* One element of PlacementLatencyHistogram: how many placements took at most le_usec µs. */
typedef struct MetricsBucket {
        uint64_t le_usec;
        uint64_t count;
} MetricsBucket;

/* A value per policy: its managed processes (ManagedProcessesByPolicy), or 1 if it is pending
 * (ListPolicies' pending reason), 0 if not. */
typedef struct MetricsPolicy {
        char *name;
        uint64_t value;
} MetricsPolicy;

/* One entry of PolicyEffects: a policy's effect totals, µs and counts. */
typedef struct MetricsEffect {
        char *name;
        uint64_t cpu_usec, foreign_cpu_usec, run_delay_usec, timeslices, migrations, involuntary;
        bool has_migrations; /* false: the kernel has no sched file; migrations are not written */
} MetricsEffect;

/* One IRQ (ListIrqs; kind NULL) or network queue (ListNetQueues; kind "rps" or "xps") and what
 * its rule made of it. Those with an empty rule (no rule places them) are not counted. */
typedef struct MetricsDevice {
        char *rule;
        char *kind;
        char *state;
} MetricsDevice;

/* One entry of the Manager's IrqSkewEpisodes (the IRQ and softirq skew check). */
typedef struct MetricsIrqSkew {
        char *device;
        char *kind; /* "irq", "net-rx" */
        unsigned cpu;
        bool active;
        uint64_t episodes;
} MetricsIrqSkew;

/*
 * What one scrape shows. Strings are owned (metrics_snapshot_done() frees them); NULL where the
 * daemon did not say. Numbers keep the daemon's units (µs); the formatter turns them into
 * seconds.
 */
/* One entry of the Manager's CpuIntrusions (the isolation audit's totals). */
typedef struct MetricsIntrusion {
        unsigned cpu;
        char *policy;
        char *kind;
        uint64_t usec;
        uint64_t count;
} MetricsIntrusion;

typedef struct MetricsSnapshot {
        bool up; /* false: the daemon could not be read; only affinityd_up 0 is written */
        char *version;
        char *state;
        char *discovery;
        char *last_reload_error;
        MetricsValue *values; /* the Manager's numeric properties (y, q, u, t) */
        size_t n_values;
        MetricsBucket *buckets; /* PlacementLatencyHistogram, bounds ascending */
        size_t n_buckets;
        bool has_histogram;
        MetricsPolicy *policy_processes;
        size_t n_policy_processes;
        MetricsPolicy *policy_pending;
        size_t n_policy_pending;
        MetricsEffect *effects; /* PolicyEffects */
        size_t n_effects;
        MetricsDevice *irqs;
        size_t n_irqs;
        MetricsIrqSkew *irq_skew; /* IrqSkewEpisodes, in the daemon's order */
        size_t n_irq_skew;
        MetricsDevice *queues;
        size_t n_queues;
        MetricsIntrusion *intrusions; /* CpuIntrusions, ordered by cpu, policy, kind */
        size_t n_intrusions;
} MetricsSnapshot;

/* Frees what s owns and empties it. */
void metrics_snapshot_done(MetricsSnapshot *s);

/*
 * Writes s in the text exposition format 0.0.4 into *ret (newly allocated, NUL-terminated,
 * every line ending in "\n"): for each metric a "# HELP" and a "# TYPE" line, then its
 * samples. A Manager property s->values lacks is left out (an older daemon); the latency
 * histogram is written when s->has_histogram and PlacementLatencyCount and
 * PlacementLatencySumUSec are in s->values: its buckets in seconds, then le="+Inf" with the
 * count, _sum (seconds) and _count. Label values are escaped as the format says (\\, \", \n).
 * Returns 0, -EBADMSG when the histogram is not cumulative (bounds not ascending, counts
 * decreasing or above the count), or -ENOMEM.
 */
int metrics_format(const MetricsSnapshot *s, char **ret);

/*
 * Parses the ADDR of --listen=ADDR, numeric only: "127.0.0.1:9187", "[::1]:9187", or ":9187"
 * (every address: :: with IPv4 too, the socket being dual-stack). The port is 0..65535 (0: one
 * the kernel picks). Writes the address to *ret and its length to *ret_len. Returns 0, -EINVAL,
 * or -ENOMEM.
 */
int metrics_parse_listen_address(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/*
 * Fills *ret from the daemon on bus: Properties.GetAll of org.affinityd1.Manager (one
 * consistent snapshot of its counters, state and histogram), then ListPolicies, ListIrqs and
 * ListNetQueues, each within METRICS_CALL_TIMEOUT_USEC; ret->up is true. Returns 0, or the
 * negative errno of the failed call with the D-Bus error in *error (the caller says what went
 * wrong, ctl_call_failed()), or -EBADMSG for a reply of the wrong shape.
 */
int metrics_snapshot_read(sd_bus *bus, MetricsSnapshot *ret, sd_bus_error *error);
