/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/latency-probe on one CPU for a while, as affinityctl verify --latency runs it: prints
 * "cpu N fifo 0|1 wakeups N p50_ns N p99_ns N max_ns N". Usage: bench-latency-probe CPU SECONDS.
 * Run by tests/bench/bench-latency-probe.sh next to cyclictest.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpuset.h"
#include "latency-probe.h"

int main(int argc, char **argv) {
        _cleanup_(latency_probe_freep) LatencyProbe *p = NULL;
        _cleanup_(cpuset_done) CpuSet cpus = {};
        const LatencyProbeCpu *res;
        size_t n;
        int r;

        if (argc != 3) {
                fprintf(stderr, "usage: %s CPU SECONDS\n", argv[0]);
                return 2;
        }
        r = cpuset_add(&cpus, (unsigned)strtoul(argv[1], NULL, 10));
        if (r < 0)
                return 1;
        (void)mlockall(MCL_CURRENT | MCL_FUTURE);
        r = latency_probe_start(&cpus, 1000000, &p);
        if (r < 0) {
                fprintf(stderr, "latency_probe_start: %s\n", strerror(-r));
                return 1;
        }
        sleep((unsigned)strtoul(argv[2], NULL, 10));
        (void)latency_probe_stop(p, &res, &n);
        printf("cpu %u fifo %d wakeups %" PRIu64 " p50_ns %" PRIu64 " p99_ns %" PRIu64 " max_ns %" PRIu64
               "\n",
               res[0].cpu, res[0].fifo, res[0].wakeup.count, latency_quantile(&res[0].wakeup, 0.50),
               latency_quantile(&res[0].wakeup, 0.99), res[0].wakeup.max_ns);
        return 0;
}
