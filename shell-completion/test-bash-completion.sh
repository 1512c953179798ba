#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sources the bash completion of affinityctl (argument 1) and checks what it completes.

set -u
failures=0

# shellcheck source=/dev/null
source "$1" || { echo "FAIL: sourcing $1"; exit 1; }

expect() { # DESCRIPTION EXPECTED ACTUAL
        if [[ $2 == "$3" ]]; then
                echo "ok: $1"
        else
                echo "FAIL: $1: expected \"$2\", got \"$3\""
                failures=$((failures + 1))
        fi
}

# Completes the command line "$*" as if the cursor were at its end (an empty last word when
# the line ends with a blank); prints COMPREPLY sorted, one line.
complete_line() {
        local line=$1
        read -r -a COMP_WORDS <<<"$line"
        [[ $line == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$line
        COMP_POINT=${#line}
        COMPREPLY=()
        _affinityctl affinityctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

expect "complete -p affinityctl" "complete -F _affinityctl affinityctl" "$(complete -p affinityctl 2>&1)"
expect "affinityctl <TAB>" \
        "explain irqs monitor net plan policies processes reload rescan status top validate" \
        "$(complete_line 'affinityctl ')"
expect "affinityctl ex<TAB>" "explain" "$(complete_line 'affinityctl ex')"
expect "affinityctl --json p<TAB>" "plan policies processes" "$(complete_line 'affinityctl --json p')"
expect "affinityctl --no<TAB>" "--no-legend" "$(complete_line 'affinityctl --no')"
expect "affinityctl status <TAB>" "" "$(complete_line 'affinityctl status ')"

# explain completes the PIDs the daemon manages (affinityctl --no-legend processes, asked on
# the bus of the command line), else every PID of /proc. A stand-in affinityctl answers.
affinityctl() {
        echo "$*" >"$dir/args"
        [[ $* == *" processes" ]] || return 1
        printf '4242  db-server  db  2-3\n17  web  web  0-1\n'
}
expect "affinityctl explain <TAB>" "17 4242" "$(complete_line 'affinityctl explain ')"
expect "affinityctl explain 4<TAB>" "4242" "$(complete_line 'affinityctl --bus-address=unix:path=/x explain 4')"
complete_line 'affinityctl --bus-address=unix:path=/x explain 4' >/dev/null
expect "the bus address is passed on" "--bus-address=unix:path=/x --no-legend processes" "$(cat "$dir/args")"
affinityctl() { return 3; } # no daemon
pids=" $(complete_line 'affinityctl explain ') "
if [[ $pids == *" $$ "* ]]; then
        echo "ok: affinityctl explain <TAB> without a daemon offers this shell's PID"
else
        echo "FAIL: affinityctl explain <TAB> without a daemon does not offer PID $$: $pids"
        failures=$((failures + 1))
fi
expect "affinityctl explain 1 <TAB>" "" "$(complete_line 'affinityctl explain 1 ')"

# validate completes files.
touch "$dir/policy-a.yaml" "$dir/policy-b.yaml"
expect "affinityctl validate DIR/pol<TAB>" "$dir/policy-a.yaml $dir/policy-b.yaml" \
        "$(complete_line "affinityctl validate $dir/pol")"

((failures == 0)) || exit 1
exit 0
