#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs the placement benchmark (docs/performance.md) against a build directory:
#
#   tests/bench/run-bench.sh [BUILDDIR] [OPTIONS...] [MEASUREMENTS...]
#
#   tests/bench/run-bench.sh build                       # everything (about 4 minutes)
#   tests/bench/run-bench.sh build --perf rate:1000       # one rate, with perf stat
#   tests/bench/run-bench.sh build --callgrind --count=500 rate:200
#   tests/bench/run-bench.sh build --perf-record=/tmp/affinityd.perf rate:1000
#   tests/bench/run-bench.sh build --processes=10000 rss startup
#
# Needs root (it places real processes and reads the daemon's /proc) and CPUs 0 and 1. Builds
# what it needs first. Everything else is bench-affinityd's: see its --help.
set -eu

build=build
case "${1:-}" in
-* | "" | all | idle | rss | startup | rate:* | floor:*) ;;
*)
        build=$1
        shift
        ;;
esac

ninja -C "$build" daemon/affinityd tests/bench/bench-affinityd tests/bench/bench-probe tests/bench/bench-probe-dynamic \
        tests/bench/bench-listener >/dev/null
exec "$build/tests/bench/bench-affinityd" --daemon="$build/daemon/affinityd" "$@"
