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

# Splits line into COMP_WORDS as bash does for completion (no quoting): at blanks, and at the
# characters "=" and ":" of COMP_WORDBREAKS, a run of which is a word of its own
# ("--bus-address=unix:path=/x" is "--bus-address" "=" "unix" ":" "path" "=" "/x"); an empty
# last word when the line ends with a blank.
split_words() {
        local line=$1 i ch word='' kind='' k
        COMP_WORDS=()
        for ((i = 0; i < ${#line}; i++)); do
                ch=${line:i:1}
                if [[ $ch == [[:space:]] ]]; then
                        [[ -n $word ]] && COMP_WORDS+=("$word")
                        word='' kind=''
                        continue
                fi
                if [[ $ch == [=:] ]]; then k="sep"; else k="text"; fi
                if [[ -n $word && $k != "$kind" ]]; then
                        COMP_WORDS+=("$word")
                        word=''
                fi
                word+=$ch
                kind=$k
        done
        [[ -n $word ]] && COMP_WORDS+=("$word")
        if [[ $line == *[[:space:]] ]]; then
                COMP_WORDS+=("")
        fi
}

# Completes the command line "$*" as if the cursor were at its end (an empty last word when
# the line ends with a blank); prints COMPREPLY sorted, one line.
complete_line() {
        local line=$1
        split_words "$line"
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
        "explain irqs metrics monitor net plan policies processes reload rescan status top validate" \
        "$(complete_line 'affinityctl ')"
expect "affinityctl ex<TAB>" "explain" "$(complete_line 'affinityctl ex')"
expect "affinityctl --json p<TAB>" "plan policies processes" "$(complete_line 'affinityctl --json p')"
expect "affinityctl --no<TAB>" "--no-legend" "$(complete_line 'affinityctl --no')"
expect "affinityctl validate --her<TAB>" "--here" "$(complete_line 'affinityctl validate --her')"
expect "affinityctl status <TAB>" "" "$(complete_line 'affinityctl status ')"

# A --bus-address with "=" and ":" in it (bash splits the word there) is one option.
expect "the splitting of this test" "affinityctl|--bus-address|=|unix|:|path|=|/tmp/x|ex" \
        "$(split_words 'affinityctl --bus-address=unix:path=/tmp/x ex' && IFS='|' && echo "${COMP_WORDS[*]}")"
expect "affinityctl --bus-address=unix:path=/tmp/x ex<TAB>" "explain" \
        "$(complete_line 'affinityctl --bus-address=unix:path=/tmp/x ex')"
expect "affinityctl --bus-address=unix:path=/tmp/x,guid=y --json p<TAB>" "plan policies processes" \
        "$(complete_line 'affinityctl --bus-address=unix:path=/tmp/x,guid=y --json p')"
expect "affinityctl --bus-address=unix:path=/tmp/x <TAB>" \
        "explain irqs metrics monitor net plan policies processes reload rescan status top validate" \
        "$(complete_line 'affinityctl --bus-address=unix:path=/tmp/x ')"
expect "affinityctl --bus-address=unix:pa<TAB>" "" "$(complete_line 'affinityctl --bus-address=unix:pa')"
expect "affinityctl --bus-address unix:path=/tmp/x <TAB> (value apart)" \
        "explain irqs metrics monitor net plan policies processes reload rescan status top validate" \
        "$(complete_line 'affinityctl --bus-address unix:path=/tmp/x ')"

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
rm -f "$dir/args"
expect "affinityctl --bus-address=unix:path=/tmp/x,guid=y explain <TAB>" "17 4242" \
        "$(complete_line 'affinityctl --bus-address=unix:path=/tmp/x,guid=y explain ')"
complete_line 'affinityctl --bus-address=unix:path=/tmp/x,guid=y explain ' >/dev/null
expect "the whole bus address is passed on" "--bus-address=unix:path=/tmp/x,guid=y --no-legend processes" \
        "$(cat "$dir/args" 2>&1)"
rm -f "$dir/args"
complete_line 'affinityctl --bus-address unix:path=/tmp/y explain ' >/dev/null
expect "the bus address given apart is passed on" "--bus-address=unix:path=/tmp/y --no-legend processes" \
        "$(cat "$dir/args" 2>&1)"
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

# --config-dir=DIR completes directories; readline replaces only what follows the last "=" or
# ":", so a reply is cut there.
mkdir "$dir/conf-a" "$dir/x:conf-b"
expect "affinityctl --config-dir=DIR/conf<TAB>" "$dir/conf-a" \
        "$(complete_line "affinityctl --config-dir=$dir/conf")"
expect "affinityctl --config-dir=DIR/x:conf<TAB>" "conf-b" \
        "$(complete_line "affinityctl --config-dir=$dir/x:conf")"

# --interrupts FILE (a saved /proc/interrupts): the option, then a file as its value, not a
# command.
touch "$dir/interrupts-server.txt"
expect "affinityctl plan --interr<TAB>" "--interrupts=" "$(complete_line 'affinityctl plan --interr')"
expect "affinityctl --interrupts DIR/interrupts-<TAB>" "$dir/interrupts-server.txt" \
        "$(complete_line "affinityctl --interrupts $dir/interrupts-")"
# --sysfs=DIR (a copy of /sys/class/net/*/queues) completes directories.
mkdir "$dir/sysfs-copy"
expect "affinityctl plan --sysfs=DIR/sysfs-<TAB>" "$dir/sysfs-copy" \
        "$(complete_line "affinityctl plan --sysfs=$dir/sysfs-")"

((failures == 0)) || exit 1
exit 0
