#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# i. Selectors on real SMT siblings: {cores: 2, smt: one-per-core} is one CPU of each of the
# two cores; {cpus: 2} one CPU per core too; {cores: 1} both siblings of one core.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-i.yaml <<'YAML'
policies:
  - name: vmt-i-one
    match: { comm: vmt-i-one }
    cpus: { cores: 2, smt: one-per-core }
  - name: vmt-i-cpus
    match: { comm: vmt-i-cpus }
    cpus: { cpus: 2 }
  - name: vmt-i-core
    match: { comm: vmt-i-core }
    cpus: { cores: 1 }
YAML
bg_probe vmt-i-one; p_one=$BG_PID
bg_probe vmt-i-cpus; p_cpus=$BG_PID
bg_probe vmt-i-core; p_core=$BG_PID
daemon_start || abort "systemctl start affinityd failed"

siblings() { cat /sys/devices/system/cpu/cpu$1/topology/thread_siblings_list; }
mask() { cpulist_norm "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$1/status)"; }
expand() { local IFS=, p; for p in $(cpulist_norm "$1"); do [[ $p == *-* ]] && seq "${p%-*}" "${p#*-}" || echo "$p"; done; }

# one CPU of each core: as many CPUs as cores, no two with the same sibling list
one_per_core() { # WHAT PID
        local m cores c
        m=$(mask "$2")
        cores=$(for c in $(expand "$m"); do siblings "$c"; done | sort)
        if [[ $(expand "$m" | wc -l) == 2 && $(sort -u <<<"$cores" | wc -l) == 2 ]]; then
                say "ok: $1: CPUs $m, one of each core ($(tr '\n' ' ' <<<"$cores"))"
        else
                fail "$1: expected 2 CPUs, one of each core (siblings 0-1 and 2-3), found CPUs $m (cores: $(tr '\n' ' ' <<<"$cores"))"
        fi
}
one_per_core "{cores: 2, smt: one-per-core}" "$p_one"
one_per_core "{cpus: 2}" "$p_cpus"
m=$(mask "$p_core")
first=$(expand "$m" | head -n 1)
if [[ -n $first && $m == "$(cpulist_norm "$(siblings "$first")")" ]]; then
        say "ok: {cores: 1}: CPUs $m, a whole core"
else
        fail "{cores: 1}: expected both SMT siblings of one core (0-1 or 2-3), found CPUs $m"
fi
say "policies: $(affinityctl policies --no-legend 2>&1)"
finish
