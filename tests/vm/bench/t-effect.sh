#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The effect benchmark (tests/bench/run-effect.sh, docs/performance.md "Effect of placement")
# in the guest, with the installed affinityd and affinityctl: the service is stopped for the
# run (the benchmark runs its own daemon on a private bus, unplaced then placed) and started
# again after. Run by `VM_BENCH=effect tests/vm/run BUILD` only, never by the test lane.
. /usr/lib/affinityd-vm-tests/lib.sh

bench=$GUEST_DIR/bench
systemctl stop affinityd
EFFECT_BIN_DIR=$bench AFFINITYD=/usr/sbin/affinityd AFFINITYCTL=/usr/bin/affinityctl \
        bash "$bench/run-effect.sh" ${EFFECT_ARGS:-} || fail "run-effect.sh exited with status $?"
systemctl start affinityd
finish
