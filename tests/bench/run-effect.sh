#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The effect benchmark (docs/performance.md, "Effect of placement"): a latency-sensitive UDP
# request/response server (effect-server) under a fixed open-loop load (effect-load), next to
# noisy neighbours — one CPU hog per online CPU (effect-neighbour hog) and UDP traffic over a
# veth pair from a network namespace of the benchmark's own (effect-neighbour flood → sink: the
# host side's NET_RX softirq work) — measured in alternating rounds:
#
#   unplaced  affinityd runs with the policies below in --dry-run (the operator's baseline:
#             nothing is written, `affinityctl verify` still measures)
#   placed    the same affinityd, placing: the server on one whole core of its own
#             (exclusive: true), the neighbours and the load generator on the other CPUs, the
#             IRQs and the veth's RPS off that core
#
#   tests/bench/run-effect.sh [BUILDDIR] [--rounds=N] [--seconds=S] [--rate=R] [--work-us=U]
#                             [--workers=W] [--no-perf-sched] [--no-verify]
#
# Per round: the load generator's p50/p99/p999 round trip and replies per second; of the
# server's threads, perf stat's cpu-migrations and context-switches (-p), the involuntary
# switches (/proc/PID/task/TID/status) and the run-queue wait (schedstat field 2), summed over
# threads and divided by the round's length; perf sched latency's per-wakeup average and
# maximum delay of the workers (sched_switch/sched_wakeup tracepoints, over a sub-window);
# affinityctl verify's verdict. Then the medians of each kind of round, and the change.
# The load generator runs SCHED_FIFO (chrt -f 10) in both kinds of round, so that its own
# timing is not what the neighbours delay.
#
# Needs root, ip(8), chrt(1), dbus-daemon, at least 2 online CPUs; perf for cpu-migrations and perf sched
# (without it, migrations come from se.nr_migrations of /proc/PID/task/TID/sched and context
# switches from status, and there is no perf sched figure). Restores what it changes
# (namespace, RPS).
#
# Environment: EFFECT_BIN_DIR (the effect-* programs; then nothing is built), AFFINITYD and
# AFFINITYCTL (the daemon and affinityctl to run: an installed package's, say).
set -euo pipefail

build=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
        build=$1
        shift
fi
rounds=3 seconds=20 rate=4000 work_us=40 workers=2 perf_sched=1 verify=1
for a in "$@"; do
        case "$a" in
        --rounds=*) rounds=${a#*=} ;;
        --seconds=*) seconds=${a#*=} ;;
        --rate=*) rate=${a#*=} ;;
        --work-us=*) work_us=${a#*=} ;;
        --workers=*) workers=${a#*=} ;;
        --no-perf-sched) perf_sched=0 ;;
        --no-verify) verify=0 ;;
        *)
                echo "usage: $0 [BUILDDIR] [--rounds=N] [--seconds=S] [--rate=R] [--work-us=U] [--workers=W] [--no-perf-sched] [--no-verify]" >&2
                exit 2
                ;;
        esac
done
[ "$(id -u)" = 0 ] || { echo "run-effect: needs root" >&2; exit 2; }
for t in ip chrt dbus-daemon; do
        command -v "$t" >/dev/null || { echo "run-effect: needs $t" >&2; exit 2; }
done
have_perf=0
perf stat -e cpu-migrations true >/dev/null 2>&1 && have_perf=1
[ "$have_perf" = 1 ] || perf_sched=0
if [ -n "${EFFECT_BIN_DIR:-}" ]; then
        progs=$EFFECT_BIN_DIR
        affinityd=${AFFINITYD:-affinityd}
        ctl=${AFFINITYCTL:-affinityctl}
else
        ninja -C "$build" daemon/affinityd daemon/affinityctl/affinityctl tests/bench/effect-server \
                tests/bench/effect-load tests/bench/effect-neighbour >/dev/null
        bin=$(cd "$build" && pwd)
        progs=$bin/tests/bench
        affinityd=${AFFINITYD:-$bin/daemon/affinityd}
        ctl=${AFFINITYCTL:-$bin/daemon/affinityctl/affinityctl}
fi
n_cpus=$(getconf _NPROCESSORS_ONLN)
[ "$n_cpus" -ge 2 ] || { echo "run-effect: needs 2 online CPUs, has $n_cpus" >&2; exit 2; }
if ! "$ctl" verify --help >/dev/null 2>&1; then
        verify=0
fi

work=$(mktemp -d /tmp/run-effect.XXXXXX)
ns=effbench$$
port=47000
pids=()
daemon_pid= bus_pid=

cleanup() {
        set +e
        stop_round
        [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
        ip netns del "$ns" 2>/dev/null
        ip link del eb$$a 2>/dev/null
        if [ "${EFFECT_KEEP:-0}" = 1 ]; then echo "run-effect: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The neighbours' network: veth eb<PID>a (here, 10.251.0.1) ↔ eb<PID>b (in $ns, 10.251.0.2).
veth=eb$$a
ip netns add "$ns"
ip link add "$veth" type veth peer name eb$$b
ip link set eb$$b netns "$ns"
ip addr add 10.251.0.1/30 dev "$veth"
ip link set "$veth" up
ip -n "$ns" addr add 10.251.0.2/30 dev eb$$b
ip -n "$ns" link set eb$$b up
ip -n "$ns" link set lo up
rps_files=$(ls /sys/class/net/"$veth"/queues/rx-*/rps_cpus)

mkdir -p "$work/conf/policy.d" "$work/state"
cat >"$work/conf/affinityd.yaml" <<YAML
restore-on-exit: true
effect-interval: 5s
YAML
cat >"$work/conf/policy.d/effect.yaml" <<YAML
policies:
  - name: server
    match: { comm: effect-server }
    cpus: { cores: 1, exclusive: true }
  # The load generator too: it stands for the clients, which would be on other machines. And
  # affinityd itself, which no policy moves unless one names it.
  - name: neighbours
    match: { comm: [effect-hog, effect-flood, effect-sink, effect-load, affinityd] }
    cpus: {}
irqs:
  # Every movable IRQ off the server's core (a selector leaves out exclusive CPUs).
  - name: off-server
    match: { action: "*" }
    cpus: { avoid: [] }
net:
  - device: "$veth"
    rps: { avoid: server }
YAML

# A private bus for the daemon and affinityctl.
dbus-daemon --session --nofork --print-address=3 3>"$work/bus" >/dev/null 2>&1 &
bus_pid=$!
for _ in $(seq 50); do [ -s "$work/bus" ] && break; sleep 0.1; done
bus=$(head -n1 "$work/bus")
[ -n "$bus" ] || { echo "run-effect: dbus-daemon printed no address" >&2; exit 1; }

stop_round() {
        if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; fi
        daemon_pid=
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
        pids=()
        for f in $rps_files; do echo 0 >"$f" 2>/dev/null; done
        return 0
}

# Sums, over every thread of pid $3, a number of its file /proc/$3/task/TID/$1: field $2 (1-based,
# white-space separated) of the first line, or with a key $4 that of the line whose first field is
# $4 (field 2 when $2 is 0).
sum_tasks() {
        local total=0 v
        for t in /proc/"$3"/task/*; do
                v=$(awk -v f="$2" -v k="$4" 'k == "" { print $f; exit } $1 == k { print (f > 0 ? $f : $2); exit }' "$t/$1" 2>/dev/null) || continue
                total=$((total + ${v:-0}))
        done
        echo "$total"
}

# One round: $1 = unplaced | placed. Prints "kind key=value ...".
round() {
        local kind=$1 server load inv0 inv1 rd0 rd1 ts0 ts1 perf_out sched_out verdict=- vstatus=-
        "$progs/effect-neighbour" sink 9 &
        pids+=($!)
        ip netns exec "$ns" "$progs/effect-neighbour" flood 10.251.0.1 9 &
        pids+=($!)
        for _ in $(seq "$n_cpus"); do
                "$progs/effect-neighbour" hog &
                pids+=($!)
        done
        "$progs/effect-server" "$port" "$workers" "$work_us" &
        server=$!
        pids+=("$server")
        local dry=()
        [ "$kind" = unplaced ] && dry=(--dry-run)
        "$affinityd" --bus-address="$bus" --config-dir="$work/conf" --state-dir="$work/state" \
                --log-level=warning "${dry[@]}" 2>>"$work/daemon.log" &
        daemon_pid=$!
        for _ in $(seq 100); do
                "$ctl" --bus-address="$bus" status >/dev/null 2>&1 && break
                sleep 0.1
        done
        sleep 2 # placed, and the load's sockets find the workers warm

        inv0=$(sum_tasks status 0 "$server" nonvoluntary_ctxt_switches:)
        rd0=$(sum_tasks schedstat 2 "$server" "")
        ts0=$(sum_tasks schedstat 3 "$server" "")
        local mg0 cs0 perf_pid
        mg0=$(sum_tasks sched 3 "$server" se.nr_migrations)
        cs0=$(( $(sum_tasks status 0 "$server" voluntary_ctxt_switches:) + inv0 ))
        if [ "$have_perf" = 1 ]; then
                perf stat -x, -e cpu-migrations,context-switches -p "$server" -o "$work/perf" -- sleep "$seconds" &
        else
                sleep "$seconds" &
        fi
        perf_pid=$!
        chrt -f 10 "$progs/effect-load" "$port" "$rate" "$seconds" >"$work/load" &
        local load_pid=$!
        if [ "$perf_sched" = 1 ] && [ "$seconds" -ge 8 ]; then
                sleep 2
                perf sched record -q -o "$work/sched.data" -- sleep 3 >/dev/null 2>&1 || true
        fi
        if [ "$verify" = 1 ] && [ "$seconds" -ge 10 ]; then
                set +e
                "$ctl" --bus-address="$bus" verify server --for=3 >"$work/verify" 2>&1
                vstatus=$?
                set -e
                verdict=$(grep -m1 -E "^server: (ok|pending|VIOLATION)" "$work/verify" | cut -d' ' -f2- | tr ' ' '_' | cut -c1-120)
                cp "$work/verify" "$work/verify.$kind.$(date +%s)"
        fi
        wait "$load_pid"
        wait "$perf_pid" || true
        inv1=$(sum_tasks status 0 "$server" nonvoluntary_ctxt_switches:)
        rd1=$(sum_tasks schedstat 2 "$server" "")
        ts1=$(sum_tasks schedstat 3 "$server" "")
        load=$(cat "$work/load")
        local migr cs
        if [ "$have_perf" = 1 ]; then
                migr=$(awk -F, '$3 == "cpu-migrations" { print $1 }' "$work/perf")
                cs=$(awk -F, '$3 == "context-switches" { print $1 }' "$work/perf")
        else
                migr=$(( $(sum_tasks sched 3 "$server" se.nr_migrations) - mg0 ))
                cs=$(( $(sum_tasks status 0 "$server" voluntary_ctxt_switches:) + inv1 - cs0 ))
        fi
        local sched_avg=- sched_max=-
        if [ -s "$work/sched.data" ]; then
                # "effect-worker:1234 | 1.2 ms | 300 | avg: 0.012 ms | max: 0.400 ms | ..."
                sched_out=$(perf sched latency -i "$work/sched.data" 2>/dev/null | grep effect-worker || true)
                sched_avg=$(echo "$sched_out" | sed -n 's/.*avg: *\([0-9.]*\) ms.*/\1/p' | awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n * 1000; else print "-" }')
                sched_max=$(echo "$sched_out" | sed -n 's/.*max: *\([0-9.]*\) ms.*/\1/p' | awk 'BEGIN { m = -1 } { if ($1 > m) m = $1 } END { if (m >= 0) printf "%.1f", m * 1000; else print "-" }')
                rm -f "$work/sched.data"
        fi
        stop_round
        echo "$kind $load migrations_per_s=$(awk -v m="$migr" -v s="$seconds" 'BEGIN { printf "%.1f", m / s }')" \
                "cs_per_s=$(awk -v m="$cs" -v s="$seconds" 'BEGIN { printf "%.0f", m / s }')" \
                "invol_per_s=$(( (inv1 - inv0) / seconds ))" \
                "wait_ms_per_s=$(awk -v a="$rd0" -v b="$rd1" -v s="$seconds" 'BEGIN { printf "%.2f", (b - a) / 1e6 / s }')" \
                "wait_us_per_run=$(awk -v a="$rd0" -v b="$rd1" -v x="$ts0" -v y="$ts1" 'BEGIN { printf "%.2f", (y > x) ? (b - a) / 1e3 / (y - x) : 0 }')" \
                "sched_avg_us=$sched_avg sched_max_us=$sched_max verify_exit=$vstatus verify=$verdict"
}

echo "# run-effect: $(uname -r), $n_cpus CPUs, $rounds rounds of each kind, ${seconds}s each," \
        "$rate requests/s, ${work_us}µs of work each, $workers workers"
for i in $(seq "$rounds"); do
        round unplaced | tee -a "$work/results"
        round placed | tee -a "$work/results"
done

# Medians per kind, and the change.
echo
printf '%-22s %12s %12s %10s\n' figure unplaced placed change
for key in p50_us p99_us p999_us max_us rps migrations_per_s cs_per_s invol_per_s wait_ms_per_s wait_us_per_run sched_avg_us sched_max_us; do
        med() {
                grep "^$1 " "$work/results" | tr ' ' '\n' | sed -n "s/^$key=//p" | { grep -v '^-$' || true; } | sort -g |
                        awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
        }
        u=$(med unplaced) p=$(med placed)
        c=$(awk -v u="$u" -v p="$p" 'BEGIN { if (u == "-" || p == "-" || u + 0 == 0) print "-"; else printf "%+.0f%%", (p - u) / u * 100 }')
        printf '%-22s %12s %12s %10s\n' "$key" "$u" "$p" "$c"
done
