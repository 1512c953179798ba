/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fixed-memory latency histogram (log-linear buckets, HdrHistogram-style: 2^k ranges split
 * into 16 linear sub-buckets, so any value is recorded within 1/16 = 6.25% relative error),
 * for the daemon's placement latency. Values are in nanoseconds; quantiles are reported in
 * the same unit. Recording is O(1) and allocation-free.
 */

#include <stdint.h>

/* Range 0 holds 0..15 ns exactly; range r >= 1 holds [2^(r+3), 2^(r+4)) ns in sub-buckets of
 * 2^(r-1) ns; the last range ends at 2^43 ns (~2.4 h). */
#define LATENCY_SUB_BUCKETS 16
#define LATENCY_RANGES      40

typedef struct LatencyHistogram {
        uint64_t buckets[LATENCY_RANGES][LATENCY_SUB_BUCKETS];
        uint64_t count;
        uint64_t max_ns;
        uint64_t sum_ns;
} LatencyHistogram;

/* Empties the histogram. */
void latency_reset(LatencyHistogram *h);
/* Records one value (ns). Values of 2^43 ns and more are counted in the last bucket; max_ns
 * stays exact. */
void latency_record(LatencyHistogram *h, uint64_t ns);
/*
 * The value at quantile q (0.0 ≤ q ≤ 1.0, e.g. 0.99), in ns: the upper bound of the bucket
 * holding the q-th value, never above max. 0 when the histogram is empty.
 * The q-th value is the nearest rank: the ceil(q × count)-th smallest (at least the first);
 * q outside [0, 1] is clamped. While every recorded value is below 2^43 ns, the result r
 * for a true value v satisfies v ≤ r ≤ v × (1 + 1/16).
 */
uint64_t latency_quantile(const LatencyHistogram *h, double q);
/*
 * How many recorded values are at most ns (ns), counted by whole buckets: the values of every
 * bucket that lies entirely at or below ns. A bucket that straddles ns is left out, so the
 * result c satisfies count(v ≤ ns × 16/17) ≤ c ≤ count(v ≤ ns) (a bucket is at most 1/16 of
 * its lower bound wide); values up to 15 ns are exact. Non-decreasing in ns, so counts at
 * rising bounds make a cumulative histogram (Prometheus' "le" buckets). UINT64_MAX gives
 * h->count; values recorded at 2^43 ns or more are counted only there.
 */
uint64_t latency_count_at_most(const LatencyHistogram *h, uint64_t ns);
