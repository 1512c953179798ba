#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-terms.sh PAGE.scd [--options-from=FILE.c] [--message-ids-from=FILE.h] [--dbus-from=FILE.xml]
#                [--term=WORD...]
#
# A man page documents everything its program offers: each source named gives a list of names
# that must each have an entry in PAGE (a line, after leading tabs, that begins with the name in
# bold — "*name*" — as scdoc definition lists are written):
#   --options-from     the long options of the getopt_long(3) table of FILE.c ({"name", ...
#                      _argument, ...}): "*--name*" or "*--name=*..." (may follow "*-h*, ")
#   --message-ids-from the journal MESSAGE_IDs #defined as AFFINITYD_MESSAGE_* in FILE.h
#   --dbus-from        every method, property and signal of the org.affinityd1.* interfaces of
#                      an introspection XML file; a property's entry also gives its type and
#                      change flag as the XML does: "*Name* TYPE, const", "*Name* TYPE,
#                      emits-change" (the default of D-Bus), or "*Name* TYPE" (EmitsChangedSignal
#                      "false")
#   --term             WORD itself (a command of the contract)
# Exit status: 0 all present, 1 something missing (each listed on stderr), 2 usage.

set -eu

usage() {
        echo "usage: $0 PAGE.scd [--options-from=FILE.c] [--message-ids-from=FILE.h] [--dbus-from=FILE.xml] [--term=WORD...]" >&2
        exit 2
}

[ $# -ge 1 ] || usage
page=$1
shift
[ -r "$page" ] || { echo "$0: cannot read $page" >&2; exit 2; }

readable() {
        [ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 2; }
}

# The bold names that begin entries: "*name*" at the start of a line (tabs stripped), and after
# "*-h*, " the long option too. One name per line.
terms=$(sed -n 's/^\t*//; /^\*/p' "$page" | sed 's/^\*-[a-zA-Z]\*, //' |
        sed -n 's/^\*\([^*=(]*\)[*=(].*/\1/p')

failed=0
n=0
# require KIND NAME: NAME must be among the terms.
require() {
        n=$((n + 1))
        if ! printf '%s\n' "$terms" | grep -qxF -e "$2"; then
                echo "$page: no entry for $1 $2" >&2
                failed=1
        fi
}

for arg in "$@"; do
        case $arg in
        --options-from=*)
                file=${arg#*=}
                readable "$file"
                options=$(sed -n 's/^[[:space:]]*{"\([a-z][a-z-]*\)", *\(no\|required\|optional\)_argument.*/\1/p' "$file")
                [ -n "$options" ] || { echo "$0: no long options in $file" >&2; exit 1; }
                for o in $options; do
                        require "option of $file:" "--$o"
                done
                ;;
        --message-ids-from=*)
                file=${arg#*=}
                readable "$file"
                ids=$(sed -n 's/^#define AFFINITYD_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)".*/\1/p' "$file")
                [ -n "$ids" ] || { echo "$0: no AFFINITYD_MESSAGE_* in $file" >&2; exit 1; }
                for id in $ids; do
                        require "MESSAGE_ID of $file:" "$id"
                done
                ;;
        --dbus-from=*)
                file=${arg#*=}
                readable "$file"
                members=$(awk '
                        /<interface name="/ {
                                iface = $0
                                sub(/.*<interface name="/, "", iface)
                                sub(/".*/, "", iface)
                        }
                        /<\/interface>/ { iface = "" }
                        iface ~ /^org\.affinityd1\./ && /<(method|property|signal) name="/ {
                                kind = $0
                                sub(/.*</, "", kind)
                                sub(/ .*/, "", kind)
                                name = $0
                                sub(/.* name="/, "", name)
                                sub(/".*/, "", name)
                                print iface "." name
                        }' "$file")
                [ -n "$members" ] || { echo "$0: no org.affinityd1 members in $file" >&2; exit 1; }
                for m in $members; do
                        require "member of $file: ${m%.*}" "${m##*.}"
                done
                # "NAME TYPE FLAG" of every property; FLAG: const, emits-change or none.
                properties=$(awk '
                        function emit() {
                                if (prop != "")
                                        print prop, type, flag
                                prop = ""
                        }
                        /<interface name="/ {
                                iface = $0
                                sub(/.*<interface name="/, "", iface)
                                sub(/".*/, "", iface)
                        }
                        /<\/interface>/ { iface = "" }
                        iface ~ /^org\.affinityd1\./ && /<property name="/ {
                                prop = $0
                                sub(/.* name="/, "", prop)
                                sub(/".*/, "", prop)
                                type = $0
                                sub(/.* type="/, "", type)
                                sub(/".*/, "", type)
                                flag = "emits-change"
                                if ($0 ~ /\/>[[:space:]]*$/)
                                        emit()
                                next
                        }
                        prop != "" && /EmitsChangedSignal/ {
                                v = $0
                                sub(/.* value="/, "", v)
                                sub(/".*/, "", v)
                                flag = v == "const" ? "const" : v == "false" ? "none" : v == "invalidates" ? "invalidates" : "emits-change"
                        }
                        /<\/property>/ { emit() }' "$file")
                lines=$(sed -n 's/^\t*//; /^\*[A-Za-z0-9]*\* /p' "$page")
                printf '%s\n' "$properties" | {
                        bad=0
                        while read -r name type flag; do
                                [ -n "$name" ] || continue
                                case $flag in
                                none) want="*$name* $type" ;;
                                *) want="*$name* $type, $flag" ;;
                                esac
                                if ! printf '%s\n' "$lines" | grep -qxF -e "$want"; then
                                        echo "$page: property $name is \"$type\" ($flag) in $file: its entry should read \"$want\"" >&2
                                        bad=1
                                fi
                        done
                        exit $bad
                } || failed=1
                ;;
        --term=*)
                require "command" "${arg#*=}"
                ;;
        *)
                usage
                ;;
        esac
done

echo "$n names checked against $page"
exit $failed
