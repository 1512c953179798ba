/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Log-linear latency histogram (latency.h). Range 0 holds 0..15 exactly; range r >= 1 holds
 * [16 * 2^(r-1), 16 * 2^r) in 16 sub-buckets of width 2^(r-1), so a bucket's width is at most
 * 1/16 of its lower bound. Values beyond the last range are counted in the last bucket
 * (max_ns stays exact).
 */

#include <string.h>

#include "latency.h"

void latency_reset(LatencyHistogram *h) {
        memset(h, 0, sizeof(*h));
}

static void bucket_of(uint64_t ns, unsigned *ret_range, unsigned *ret_sub) {
        unsigned msb, range;

        if (ns < LATENCY_SUB_BUCKETS) {
                *ret_range = 0;
                *ret_sub = (unsigned)ns;
                return;
        }
        msb = 63U - (unsigned)__builtin_clzll(ns); /* >= 4 */
        range = msb - 3;
        if (range >= LATENCY_RANGES) {
                *ret_range = LATENCY_RANGES - 1;
                *ret_sub = LATENCY_SUB_BUCKETS - 1;
                return;
        }
        *ret_range = range;
        *ret_sub = (unsigned)((ns >> (msb - 4)) & (LATENCY_SUB_BUCKETS - 1));
}

/* Largest value (inclusive) that falls in bucket (range, sub); unbounded for the last one. */
static uint64_t bucket_upper(unsigned range, unsigned sub) {
        uint64_t width, lower;

        if (range == 0)
                return sub;
        if (range == LATENCY_RANGES - 1 && sub == LATENCY_SUB_BUCKETS - 1)
                return UINT64_MAX; /* the last bucket also holds everything beyond the ranges */
        width = UINT64_C(1) << (range - 1);
        lower = (UINT64_C(16) << (range - 1)) + (uint64_t)sub * width;
        return lower + width - 1;
}

void latency_record(LatencyHistogram *h, uint64_t ns) {
        unsigned range, sub;

        bucket_of(ns, &range, &sub);
        h->buckets[range][sub]++;
        h->count++;
        h->sum_ns += ns;
        if (ns > h->max_ns)
                h->max_ns = ns;
}

uint64_t latency_quantile(const LatencyHistogram *h, double q) {
        uint64_t rank, seen = 0;

        if (h->count == 0)
                return 0;
        if (!(q > 0.0)) /* also NaN */
                q = 0.0;
        if (q > 1.0)
                q = 1.0;

        /* Nearest rank: the ceil(q * count)-th smallest value, at least the first. */
        double x = q * (double)h->count;
        rank = (uint64_t)x;
        if ((double)rank < x)
                rank++;
        if (rank < 1)
                rank = 1;
        if (rank > h->count)
                rank = h->count;

        for (unsigned r = 0; r < LATENCY_RANGES; r++)
                for (unsigned s = 0; s < LATENCY_SUB_BUCKETS; s++) {
                        seen += h->buckets[r][s];
                        if (seen >= rank) {
                                uint64_t u = bucket_upper(r, s);
                                return u < h->max_ns ? u : h->max_ns;
                        }
                }
        return h->max_ns;
}

uint64_t latency_count_at_most(const LatencyHistogram *h, uint64_t ns) {
        uint64_t n = 0;

        if (ns == UINT64_MAX)
                return h->count;
        /* Bucket upper bounds rise with (range, sub): stop at the first one above ns. */
        for (unsigned r = 0; r < LATENCY_RANGES; r++)
                for (unsigned s = 0; s < LATENCY_SUB_BUCKETS; s++) {
                        if (bucket_upper(r, s) > ns)
                                return n;
                        n += h->buckets[r][s];
                }
        return n;
}
