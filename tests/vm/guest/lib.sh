# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Helpers for the guest tests (sourced by each t-*.sh). A test calls reset first (a daemon
# stopped, no policies, no test units), sets things up, checks with expect_* (each failing
# check prints what was expected and what was found, and the test goes on), and ends with
# finish, which prints the result line run-tests collects:
#     RESULT: ok | RESULT: not ok | RESULT: skip REASON
set -u

GUEST_DIR=/usr/lib/affinityd-vm-tests
MEMHOG=$GUEST_DIR/memhog
POLICY_DIR=/etc/affinityd/policy.d
MSG_PLACED=f3ef3557485149bfbdce989b86b57403 # AFFINITYD_MESSAGE_PROCESS_PLACED, daemon/log.h
[[ -r /etc/affinityd-vm/host.conf ]] && . /etc/affinityd-vm/host.conf

failures=0
say() { echo "$*"; }
fail() {
        echo "FAIL: $*"
        failures=$((failures + 1))
}
skip() {
        echo "RESULT: skip $*"
        exit 77
}
finish() {
        if [[ $failures == 0 ]]; then
                echo "RESULT: ok"
                exit 0
        fi
        echo "RESULT: not ok ($failures failed checks)"
        exit 1
}
# A failure that makes the rest of the test meaningless.
abort() {
        fail "$*"
        finish
}

# cpulist_norm LIST: LIST (a kernel cpu-list, such as "0-1,3") in canonical form, the form
# the kernel prints (Cpus_allowed_list). norm LIST: the same in $NORM, without a subshell (the
# polling checks must be quick under TCG).
norm() {
        local IFS=, part a b out=() cpus=() c prev start
        for part in $1; do
                [[ -z $part ]] && continue
                if [[ $part == *-* ]]; then
                        a=${part%-*} b=${part#*-}
                else
                        a=$part b=$part
                fi
                for ((c = a; c <= b; c++)); do cpus[c]=1; done
        done
        start= prev=
        for c in "${!cpus[@]}" end; do
                if [[ $c != end && -n $prev && $c == $((prev + 1)) ]]; then
                        prev=$c
                        continue
                fi
                if [[ -n $start ]]; then
                        if [[ $start == "$prev" ]]; then out+=("$start"); else out+=("$start-$prev"); fi
                fi
                start=$c prev=$c
        done
        NORM="${out[*]}"
}
cpulist_norm() {
        norm "$1"
        echo "$NORM"
}
# hexmask_to_list MASK: a sysfs hex CPU mask ("c", "00000000,0000000c") as a cpu-list.
hexmask_to_list() {
        local hex=${1//,/} out=() i v
        hex=${hex,,}
        local n=${#hex}
        for ((i = 0; i < n; i++)); do
                v=$((16#${hex:n-1-i:1}))
                for b in 0 1 2 3; do
                        ((v >> b & 1)) && out+=($((i * 4 + b)))
                done
        done
        local IFS=,
        cpulist_norm "${out[*]}"
}

# read_mask FILE: the Cpus_allowed_list of a /proc status file in $REPLY (builtins only).
read_mask() {
        local line
        REPLY=
        [[ -r $1 ]] || return 1
        while IFS= read -r line; do
                if [[ $line == Cpus_allowed_list:* ]]; then
                        REPLY=${line#Cpus_allowed_list:}
                        REPLY=${REPLY//[[:space:]]/}
                        return 0
                fi
        done <"$1"
        return 1
}
# task_masks PID: "TID COMM CPUS" for every thread of PID.
task_masks() {
        local t comm
        for t in /proc/"$1"/task/*; do
                read -r comm <"$t/comm" 2>/dev/null
                read_mask "$t/status"
                echo "${t##*/} $comm $REPLY"
        done
}
# on_cpus PID LIST: every thread of PID may run on exactly LIST.
on_cpus() {
        local t
        norm "$2"
        [[ -d /proc/$1/task ]] || return 1
        for t in /proc/"$1"/task/*; do
                read_mask "$t/status" || return 1
                [[ $REPLY == "$NORM" ]] || return 1
        done
}
# expect_on PID LIST WHAT: checks on_cpus, and says which thread had what otherwise.
expect_on() {
        if on_cpus "$1" "$2"; then
                say "ok: $3 (PID $1) on CPUs $2"
        else
                fail "$3 (PID $1): expected every thread on CPUs $2, found:$(task_masks "$1" | sed 's/^/ [TID /; s/$/]/' | tr -d '\n')"
        fi
}
# wait_on PID LIST WHAT [SECONDS]: waits up to SECONDS (5) for on_cpus, then expect_on.
wait_on() {
        wait_until "${4:-5}" on_cpus "$1" "$2"
        expect_on "$1" "$2" "$3"
}
# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s; 0 when it succeeded in time.
wait_until() {
        local deadline now
        deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
        shift
        while ! "$@"; do
                now=${EPOCHREALTIME/./}
                ((now > deadline)) && return 1
                sleep 0.1
        done
        return 0
}
# now_ms: milliseconds since the epoch, without a fork
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
        if [[ $2 == "$3" ]]; then
                say "ok: $1 = '$3'"
        else
                fail "$1: expected '$2', found '$3'"
        fi
}

# prop NAME: a property of org.affinityd1.Manager, its value only.
prop() {
        busctl get-property org.affinityd1 /org/affinityd1 org.affinityd1.Manager "$1" | cut -d' ' -f2- | sed 's/^"//; s/"$//'
}

# probe NAME: NAME is a program (a copy of /bin/sleep) whose comm is NAME; its path.
probe() {
        install -m 0755 /bin/sleep "/usr/local/bin/$1"
        echo "/usr/local/bin/$1"
}
# bg_probe NAME [taskset CPUS]: starts probe NAME in the background (in this test's own
# cgroup: affinityd-vm-tests.service); its PID in $BG_PID.
bg_probe() {
        local path
        path=$(probe "$1")
        if [[ -n ${2:-} ]]; then
                taskset -c "$2" "$path" infinity &
        else
                "$path" infinity &
        fi
        BG_PID=$!
        echo "$BG_PID" >>/run/vmt-pids
}
# unit NAME [SERVICE-LINES...]: writes /etc/systemd/system/NAME.service running probe NAME
# ("ExecStart=" may be given to run something else) and loads it; does not start it.
unit() {
        local name=$1 path exec
        shift
        path=$(probe "$name")
        exec="ExecStart=$path infinity"
        local l extra=()
        for l in "$@"; do
                if [[ $l == ExecStart=* ]]; then exec=$l; else extra+=("$l"); fi
        done
        {
                echo "[Service]"
                echo "$exec"
                printf '%s\n' "${extra[@]}"
        } >"/etc/systemd/system/$name.service"
        systemctl daemon-reload
}
# main_pid UNIT
main_pid() { systemctl show -P MainPID "$1"; }
# unit_cgroup UNIT: its cgroup directory
unit_cgroup() { echo "/sys/fs/cgroup$(systemctl show -P ControlGroup "$1")"; }

# policy FILE: stdin becomes /etc/affinityd/policy.d/FILE.
policy() { cat >"$POLICY_DIR/$1"; }
settings() { cat >/etc/affinityd/affinityd.yaml; }

daemon_start() {
        systemctl reset-failed affinityd.service 2>/dev/null
        systemctl start affinityd.service
}

# journal_placed PID: how many "placed" messages the daemon logged about PID.
journal_placed() {
        journalctl -q -u affinityd.service MESSAGE_ID=$MSG_PLACED PID="$1" -o cat --no-pager | grep -c .
}
# journal_pid_lines PID: how many daemon messages name PID (the PID= field).
journal_pid_lines() {
        journalctl -q -u affinityd.service PID="$1" -o cat --no-pager | grep -c .
}
# journal_sync: the journal has every message sent so far.
journal_sync() { journalctl --sync 2>/dev/null || true; }

# nic: the guest's virtio-net interface name.
nic() {
        local d
        for d in /sys/class/net/*; do
                [[ $(readlink -f "$d/device/driver" 2>/dev/null) == */virtio_net ]] && { echo "${d##*/}"; return 0; }
        done
        return 1
}

# journal_live [FILE]: the PIDs the originals journal (default /run/affinityd/originals) still
# records: a "save" and no "drop" after it (lib/state-journal.h).
journal_live() {
        awk '$1 == "save" { s = $4; sub(/;.*/, "", s); live[$3 " " s] = 1 }
             $1 == "drop" { delete live[$2 " " $3] }
             END { for (k in live) { split(k, f, " "); print f[1] } }' \
                "${1:-/run/affinityd/originals}" 2>/dev/null | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# reset: no daemon, no policies or settings, no state, no test units or probes, no runtime
# unit properties left by an earlier test.
reset() {
        local u pid
        systemctl stop affinityd.service 2>/dev/null
        systemctl reset-failed affinityd.service 2>/dev/null
        rm -f "$POLICY_DIR"/* /etc/affinityd/affinityd.yaml /run/affinityd/policy.d/*
        rm -rf /run/affinityd/originals /run/affinityd/processes /run/affinityd/units /run/affinityd/targets
        for u in $(systemctl list-units --all --plain --no-legend 'vmt-*' | awk '{ print $1 }'); do
                systemctl stop "$u" 2>/dev/null
                systemctl reset-failed "$u" 2>/dev/null
        done
        if [[ -e /run/vmt-pids ]]; then
                while read -r pid; do kill "$pid" 2>/dev/null; done </run/vmt-pids
                rm -f /run/vmt-pids
        fi
        rm -rf /etc/systemd/system/vmt-* /run/systemd/system.control/vmt-* /run/systemd/transient/vmt-*
        systemctl daemon-reload
        mkdir -p "$POLICY_DIR"
        say "--- $(basename "$0") at $(cut -d' ' -f1 /proc/uptime) s of uptime"
}
