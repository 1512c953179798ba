#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's test command is what CI runs: .ci/run takes it from tests/readme-test-command
# (so it has no copy of its own), and the command installs the test dependencies from
# tests/install-deps and runs the whole meson suite. Argument: the source root.
set -euo pipefail
src=$1
fail=0
cmd=$("$src/tests/readme-test-command" "$src/README.md") || exit 1
case "$cmd" in
"tests/install-deps --tests && "*"meson setup build"*"meson test -C build"*) ;;
*) echo "FAIL: the README's test command does not install, set up and test: $cmd" >&2; fail=1 ;;
esac
case "$cmd" in *--suite*|*--no-suite*) echo "FAIL: the README's test command runs part of the suite: $cmd" >&2; fail=1 ;; esac
if ! grep -q 'tests/readme-test-command' "$src/.ci/run"; then
        echo "FAIL: .ci/run does not take the README's test command from tests/readme-test-command" >&2
        fail=1
fi
# No second copy: .ci/run neither installs packages nor sets up the plain build itself.
if grep -nE 'apt-get|meson setup build( |$)' "$src/.ci/run"; then
        echo "FAIL: .ci/run has its own copy of what the README's command does (above)" >&2
        fail=1
fi
[ "$fail" = 0 ] && echo "ok: CI runs: $cmd"
exit $fail
