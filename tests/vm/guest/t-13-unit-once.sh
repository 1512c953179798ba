#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# g. match: unit: places each process of the unit once: exactly one "placed" message per PID,
# not one for systemd's forked child before its exec ("(vmt-g)", already in the unit's cgroup
# when it changes its name and, with User=, its uid) and another for the program. Policies with
# comm: and user: keys are in force, so that COMM and UID events are matched at all.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-g.yaml <<'YAML'
policies:
  - name: vmt-g-names
    match: { comm: vmt-g-nothing, user: nobody }
    cpus: "3"
  - name: vmt-g
    match: { unit: [vmt-g.service, vmt-g-user.service] }
    cpus: "1"
YAML
unit vmt-g
unit vmt-g-user User=nobody PrivateTmp=yes ProtectSystem=strict
daemon_start || abort "systemctl start affinityd failed"
for i in 1 2 3; do
        for u in vmt-g vmt-g-user; do
                systemctl restart $u.service
                p=$(main_pid $u.service)
                wait_on "$p" 1 "$u.service's process (start $i)" 2
                wait_until 5 test "$(journal_placed "$p")" -ge 1
                sleep 0.5
                journal_sync
                n=$(journal_placed "$p")
                if [[ $n == 1 ]]; then
                        say "ok: $u start $i: one placed message for PID $p"
                else
                        fail "$u start $i: expected 1 placed message for PID $p, found $n: $(journalctl -q -u affinityd MESSAGE_ID=$MSG_PLACED PID=$p -o short-monotonic | tr '\n' '|')"
                fi
        done
done
finish
