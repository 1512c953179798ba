#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# o. processes: spread on real SMT siblings: a pre-fork master (a shell that forks its workers
# without exec, as nginx, php-fpm or PostgreSQL do) with 8 workers on the 4 vCPUs: each worker
# gets one CPU, the first two on distinct cores, two per CPU; the master keeps the policy's 4
# CPUs. A restarted daemon moves no worker. A killed worker's replacement takes its CPU; every
# worker killed and 4 forked again ("after a crash"): one per CPU, distinct cores first.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-o.yaml <<'YAML'
policies:
  - name: vmt-o
    match: { comm: vmt-o-web }
    cpus: {}
    processes: spread
YAML
d=/run/vmt-o
rm -rf "$d" && mkdir -p "$d" && mkfifo "$d/hold" "$d/ctl" && : >"$d/workers"
cat >"$d/master.sh" <<'SH'
d=/run/vmt-o
worker() { ( read -r _ <"$d/hold" ) & echo "$!" >>"$d/workers"; }
for i in 1 2 3 4 5 6 7 8; do worker; done
# "fork N" on the control FIFO forks N more workers (one line per opening of the FIFO)
while :; do
        read -r cmd n <"$d/ctl"
        [[ $cmd == fork ]] && for ((i = 0; i < ${n:-1}; i++)); do worker; done
done
SH
install -m 0755 /bin/bash /usr/local/bin/vmt-o-web
unit vmt-o "ExecStart=/usr/local/bin/vmt-o-web $d/master.sh"
daemon_start || abort "systemctl start affinityd failed"
systemctl start vmt-o.service
master=$(main_pid vmt-o.service)

siblings() { cat /sys/devices/system/cpu/cpu$1/topology/thread_siblings_list; }
mask() { read_mask "/proc/$1/status" && echo "$REPLY"; }
n_workers() { grep -c . "$d/workers"; }
# workers FROM: the PIDs of the workers from line FROM of the list on
workers() { tail -n "+$1" "$d/workers"; }
# all_single FROM: every worker from line FROM on has a single CPU
all_single() {
        local p
        for p in $(workers "$1"); do [[ $(mask "$p") =~ ^[0-9]+$ ]] || return 1; done
}
# spread_ok FROM N: the N workers from line FROM on: one CPU each, the first two on distinct
# cores, each CPU N/4 of them
spread_ok() {
        local ps=($(workers "$1")) c counts
        ((${#ps[@]} == $2)) || return 1
        [[ $(siblings "$(mask "${ps[0]}")") != "$(siblings "$(mask "${ps[1]}")")" ]] || return 1
        counts=$(for p in "${ps[@]}"; do mask "$p"; done | sort | uniq -c | awk '{ print $1 }' | sort -u)
        [[ $(for p in "${ps[@]}"; do mask "$p"; done | sort -u | wc -l) == 4 && $counts == $(($2 / 4)) ]]
}
show() { for p in $(workers "$1"); do echo -n " $p:$(mask "$p")"; done; }

wait_until 10 test "$(n_workers)" == 8 || abort "the master forked $(n_workers) workers, not 8"
if wait_until 10 all_single 1 && spread_ok 1 8; then
        say "ok: 8 workers, one CPU each, distinct cores first, two per CPU:$(show 1)"
else
        fail "8 workers on 4 vCPUs: expected one CPU each, the first two on distinct cores, two per CPU; found:$(show 1)"
fi
wait_on "$master" 0-3 "the pre-fork master (no slot: every CPU of the policy)"
if affinityctl explain "$master" | grep -q "a pre-fork master"; then
        say "ok: explain says the master holds no slot"
else
        fail "explain $master: $(affinityctl explain "$master" 2>&1 | tr '\n' '|')"
fi
before=$(show 1)

systemctl restart affinityd.service || abort "systemctl restart affinityd failed"
after=$(show 1)
expect_eq "worker CPUs after a restart of the daemon" "$before" "$after"

victim=$(workers 2 | head -n 1)
vcpu=$(mask "$victim")
kill -9 "$victim"
echo "fork 1" >"$d/ctl"
wait_until 10 test "$(n_workers)" == 9 || abort "no replacement worker"
repl=$(workers 9)
wait_on "$repl" "$vcpu" "the replacement of killed worker $victim (its CPU)"

for p in $(workers 1); do kill -9 "$p" 2>/dev/null; done
wait_until 10 test "$(affinityctl processes --no-legend 2>/dev/null | grep -c vmt-o-web)" == 1 ||
        fail "the killed workers are still listed: $(affinityctl processes --no-legend 2>&1 | tr '\n' '|')"
echo "fork 4" >"$d/ctl"
wait_until 10 test "$(n_workers)" == 13 || abort "the master forked $(($(n_workers) - 9)) workers again, not 4"
if wait_until 10 all_single 10 && spread_ok 10 4; then
        say "ok: after a crash, 4 workers again, one per CPU, distinct cores first:$(show 10)"
else
        fail "after a crash: expected one worker per CPU, the first two on distinct cores; found:$(show 10)"
fi
finish
