/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What bench-probe reports to bench-affinityd over its fd 3 (one write per probe). */

#include <stdint.h>

#define BENCH_PROBE_MAGIC 0x62707231U /* "bpr1" */

typedef struct BenchProbeReport {
        uint32_t magic;
        int32_t pid;
        int64_t spawn_ns;     /* CLOCK_MONOTONIC when the benchmark called posix_spawn() */
        int64_t main_ns;      /* CLOCK_MONOTONIC at the start of main() */
        int64_t placed_ns;    /* when the mask was first seen right; -1: never within the bound */
        uint32_t before_main; /* 1: already right at the first check in main() (window 0) */
        uint32_t error;       /* 1: sched_getaffinity() failed */
} BenchProbeReport;

_Static_assert(sizeof(BenchProbeReport) < 512, "a report must be one atomic pipe write");
