#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# k. A reload with a broken policy file fails, the daemon keeps running the old configuration
# (the placement stays, the change in the good file too is not applied), `affinityctl status`
# shows the error as file:line:column; fixed, the reload succeeds and is in force at once.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

policy 50-k.yaml <<'YAML'
policies:
  - name: vmt-k
    match: { comm: vmt-k-probe }
    cpus: "1"
YAML
bg_probe vmt-k-probe
p=$BG_PID
daemon_start || abort "systemctl start affinityd failed"
expect_on "$p" 1 "vmt-k-probe after start"
pid_before=$(main_pid affinityd.service)

sed -i 's/cpus: "1"/cpus: "3"/' "$POLICY_DIR/50-k.yaml"
policy 60-broken.yaml <<'YAML'
policies:
  - name: vmt-broken
    match: { comm: nothing }
    cpu: "2"
YAML
if out=$(systemctl reload affinityd.service 2>&1); then
        fail "systemctl reload with a broken file succeeded"
else
        say "ok: systemctl reload failed: $out"
fi
expect_eq "affinityd after the failed reload" active "$(systemctl is-active affinityd.service)"
expect_eq "MainPID after the failed reload" "$pid_before" "$(main_pid affinityd.service)"
expect_on "$p" 1 "vmt-k-probe after the failed reload (the old placement)"
status=$(affinityctl status 2>&1)
grep -q '/etc/affinityd/policy.d/60-broken.yaml:4:5' <<<"$status" ||
        fail "affinityctl status: expected the error at /etc/affinityd/policy.d/60-broken.yaml:4:5 in: $status"
say "status: $(grep -i -A2 'error' <<<"$status")"
err=$(prop LastReloadError)
grep -q '60-broken.yaml:4:5' <<<"$err" || fail "LastReloadError: expected 60-broken.yaml:4:5 in '$err'"

rm "$POLICY_DIR/60-broken.yaml"
systemctl reload affinityd.service || fail "systemctl reload after removing the broken file failed"
expect_on "$p" 3 "vmt-k-probe as soon as the fixed reload returned"
expect_eq "LastReloadError after the fixed reload" "" "$(prop LastReloadError)"
finish
