#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# h. memory: {nodes: "1", migrate: true} moves the memory a process allocated on node 0
# (numactl --membind=0) to node 1, as numastat -p shows.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

MIB=128
policy 50-h.yaml <<'YAML'
policies:
  - name: vmt-h
    match: { comm: vmt-h-hog }
    cpus: { nodes: "1" }
    memory: { nodes: "1", migrate: true }
YAML
install -m 0755 "$MEMHOG" /usr/local/bin/vmt-h-hog
rm -f /run/vmt-h.ready
numactl --membind=0 -- /usr/local/bin/vmt-h-hog -m $MIB -r /run/vmt-h.ready &
hog=$!
echo "$hog" >>/run/vmt-pids
wait_until 30 test -s /run/vmt-h.ready || abort "vmt-h-hog did not get ready"
# MB on node N: the Total line of numastat -p
node_mb() { numastat -p "$hog" | awk -v col=$(($1 + 2)) '$1 == "Total" { printf "%d", $col }'; }
say "before: $(numastat -p "$hog" | tr -s ' ' | tr '\n' ';')"
n0=$(node_mb 0)
[[ $n0 -ge $((MIB - 8)) ]] || abort "before: expected at least $((MIB - 8)) MB on node 0, numastat says $n0"

daemon_start || abort "systemctl start affinityd failed"
wait_until 10 test "$(node_mb 1)" -ge $((MIB - 8))
say "after: $(numastat -p "$hog" | tr -s ' ' | tr '\n' ';')"
n0=$(node_mb 0) n1=$(node_mb 1)
if [[ $n1 -ge $((MIB - 8)) && $n0 -le 8 ]]; then
        say "ok: memory moved to node 1: node 0 $n0 MB, node 1 $n1 MB"
else
        fail "memory after placement: expected >= $((MIB - 8)) MB on node 1 and <= 8 on node 0, found node 0 $n0 MB, node 1 $n1 MB"
fi
expect_on "$hog" 2-3 "vmt-h-hog on node 1's CPUs"
say "journal: $(journalctl -q -u affinityd -o cat | grep -i -E 'migrat|moved|pages' | tail -n 3)"
finish
