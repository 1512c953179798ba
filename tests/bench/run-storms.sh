#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Fault storms the daemon must come through, kept as a suite so that it still does
# (docs/security.md, "Fault suite"). Each runs the daemon of BUILDDIR (--bus=none, its own
# config and state directories) and checks what must hold afterwards, printing one "ok"/"FAIL"
# line per check:
#
#   threads   a managed process creates and joins threads for 20 s (one "ephemeral" command at
#             a time, as fast as it answers): every live thread on the policy's CPUs after;
#   reloads   200 SIGHUPs in a row, the policy file flipping between cpus "0" and "1": the
#             process ends on the CPUs of the last file, the daemon still answers;
#   kill -9   the daemon killed with SIGKILL and started again 10 times while the process runs:
#             placed every time;
#   state     seven kinds of corrupt state file (empty, binary, truncated, huge, a directory, a
#             future version, a bad name) from before the journal, and a corrupt originals
#             journal (random bytes; bad, NUL and torn lines): the daemon starts and places;
#   fds       the daemon's open file descriptors after all of it: as many as after its start.
#
# The exec storm (50,000 fork+execs) and the reuse, hostile command line and D-Bus flood
# reproductions are bench-affinityd's and bench-reuse's (docs/performance.md).
#
#   tests/bench/run-storms.sh [BUILDDIR]       (as root; exits 1 if a check failed)
set -u

build=${1:-build}
daemon=$build/daemon/affinityd
helper=$build/tests/integration/integ-threads
[ "$(id -u)" = 0 ] || { echo "run-storms: run as root" >&2; exit 2; }
ninja -C "$build" daemon/affinityd tests/integration/integ-threads >/dev/null || exit 2

work=$(mktemp -d /tmp/affinityd-storms.XXXXXX)
mkdir -p "$work/config/policy.d" "$work/state" "$work/bin"
cp "$helper" "$work/bin/storm-managed"
failed=0 dpid= mpid=
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
policy() { printf 'policies:\n  - name: storm\n    match: { comm: storm-managed }\n    cpus: "%s"\n' "$1" >"$work/config/policy.d/50-storm.yaml"; }
start_daemon() {
        "$daemon" --config-dir="$work/config" --state-dir="$work/state" --bus=none >>"$work/daemon.log" 2>&1 &
        dpid=$!
        for _ in $(seq 100); do grep -q "Ready:" "$work/daemon.log" 2>/dev/null && break; sleep 0.05; done
}
stop_daemon() { [ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=; }
cleanup() {
        stop_daemon
        [ -n "$mpid" ] && kill -9 "$mpid" 2>/dev/null
        exec 3>&- 4<&- 2>/dev/null
        rm -rf "$work"
}
trap cleanup EXIT
# every thread of pid on cpu-list $2 (Cpus_allowed_list), within 5 s
all_on() {
        local pid=$1 want=$2 bad
        for _ in $(seq 100); do
                bad=$(grep -h Cpus_allowed_list /proc/"$pid"/task/*/status 2>/dev/null | awk -v w="$want" '$2 != w' | wc -l)
                [ "$bad" = 0 ] && return 0
                sleep 0.05
        done
        return 1
}

policy 1
start_daemon
# The managed process, commanded through a FIFO pair.
mkfifo "$work/in" "$work/out"
taskset -c 0 "$work/bin/storm-managed" -n 4 <"$work/in" >"$work/out" &
mpid=$!
exec 3>"$work/in" 4<"$work/out"
read -r _ <&4 # ready 4
all_on "$mpid" 1 && ok "the managed process is placed on CPU 1" || fail "the managed process is not placed"
fds0=$(ls /proc/"$dpid"/fd | wc -l)

# threads: as fast as the helper answers, for 20 s
n=0 end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
        echo ephemeral >&3
        read -r _ <&4
        n=$((n + 1))
done
echo spawn 8 >&3
read -r _ <&4
all_on "$mpid" 1 && ok "threads: $n threads created and joined in 20 s, every live thread on CPU 1" ||
        fail "threads: a live thread is not on CPU 1 after $n"

# reloads
for i in $(seq 200); do
        policy $((i % 2))
        kill -HUP "$dpid"
done
sleep 1
kill -0 "$dpid" 2>/dev/null && ok "reloads: the daemon is alive after 200 SIGHUPs" || fail "reloads: the daemon died"
all_on "$mpid" 0 && ok "reloads: the process is on the last file's CPU 0" || fail "reloads: not on CPU 0 after the last reload"

# fds, before the restarts below replace the daemon
fds1=$(ls /proc/"$dpid"/fd | wc -l)
[ "$fds1" -le "$fds0" ] && ok "fds: $fds1 open after the storms, $fds0 after the start" ||
        fail "fds: $fds1 open after the storms, $fds0 after the start"

# kill -9 and start again
policy 1
placed=0
for i in $(seq 10); do
        stop_daemon
        taskset -p -c 0 "$mpid" >/dev/null
        start_daemon
        all_on "$mpid" 1 && placed=$((placed + 1))
done
[ $placed = 10 ] && ok "kill -9: placed after each of 10 restarts" || fail "kill -9: placed after $placed of 10 restarts"

# restart_placed WHAT: the process put back on CPU 0, the daemon started over WHAT in its state
# directory: it must run and place the process again.
restart_placed() {
        taskset -p -c 0 "$mpid" >/dev/null
        start_daemon
        if kill -0 "$dpid" 2>/dev/null && all_on "$mpid" 1; then
                ok "state: started and placed with $1"
        else
                fail "state: did not start or place with $1 (see $work/daemon.log)"
                tail -n 20 "$work/daemon.log"
        fi
}

# corrupt state files
stop_daemon
mkdir -p "$work/state/processes"
s=$work/state/processes
: >"$s/999999-1"
head -c 4096 /dev/urandom >"$s/999998-2"
printf 'affinityd-state 1\npid 999997\nstart' >"$s/999997-3"
yes 'thread 1 0-1' | head -c 8000000 >"$s/999996-4"
mkdir -p "$s/999995-5"
printf 'affinityd-state 999\n' >"$s/999994-6"
printf 'x' >"$s/not-a-pid"
restart_placed "seven kinds of corrupt state file"

# a corrupt originals journal: not one at all (moved aside), then one with bad and torn lines
for kind in binary lines; do
        stop_daemon
        if [ $kind = binary ]; then
                head -c 65536 /dev/urandom >"$work/state/originals"
        else
                printf 'affinityd-originals 1\nsave process 1 x\ndrop\nsave process 999990 1;default 0-x -\n\0\0\nsave process 2 1;def' \
                        >"$work/state/originals"
        fi
        restart_placed "a corrupt originals journal ($kind)"
done
[ -f "$work/state/originals.bad" ] && ok "state: the journal that was none was moved aside (originals.bad)" ||
        fail "state: no originals.bad after a journal of random bytes"

echo 'exit' >&3
echo "run-storms: $failed failed"
[ $failed = 0 ]
