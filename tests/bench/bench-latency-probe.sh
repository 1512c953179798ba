#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# affinityctl verify --latency's probe (lib/latency-probe, via BUILD/tests/bench/bench-latency-probe)
# side by side with rt-tests' cyclictest on the same CPU, one after the other, idle and with a
# CPU hog (a shell busy loop pinned there with taskset), SCHED_FIFO 95 at a 1 ms interval for
# both. Prints p50/p99/max in µs. Run as root: tests/bench/bench-latency-probe.sh BUILD [CPU] [SECONDS]
# CPU defaults to the last online CPU (from /sys/devices/system/cpu/online).
set -euo pipefail

build=${1:?usage: $0 BUILD [CPU] [SECONDS]}
cpu=${2:-$(sed 's/.*[,-]//' /sys/devices/system/cpu/online)}
secs=${3:-10}
probe=$build/tests/bench/bench-latency-probe
command -v cyclictest >/dev/null || { echo "cyclictest missing (Debian: rt-tests)" >&2; exit 77; }

# cyclictest's histogram (-h, 1 µs buckets) to p50/p99/max in µs.
cyclic() {
        cyclictest -m -q -t1 -a "$cpu" -p 95 -i 1000 -D "$secs" -h 10000 2>/dev/null |
                awk '/^[0-9]/ { n[$1 + 0] = $2; total += $2 }
                     /# Max Latencies/ { max = $NF }
                     END { c = 0; for (i = 0; i < 10000; i++) { c += n[i];
                             if (!h50 && c >= total * 0.50) { p50 = i; h50 = 1 }
                             if (!h99 && c >= total * 0.99) { p99 = i; h99 = 1 } }
                           printf "p50 %d p99 %d max %d (µs, %d wake-ups)\n", p50, p99, max + 0, total }'
}

ours() {
        "$probe" "$cpu" "$secs" |
                awk '{ printf "p50 %.0f p99 %.0f max %.0f (µs, %d wake-ups)\n", $8 / 1000, $10 / 1000, $12 / 1000, $6 }'
}

hog_pid=
stop_hog() { [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null; hog_pid=; }
trap stop_hog EXIT

for load in idle hog; do
        if [ $load = hog ]; then
                taskset -c "$cpu" sh -c 'while :; do :; done' &
                hog_pid=$!
        fi
        echo "CPU $cpu, $load, ${secs}s each:"
        echo "  cyclictest: $(cyclic)"
        echo "  probe:      $(ours)"
        stop_hog
done
