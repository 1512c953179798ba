#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-keys.sh AFFINITYD.YAML.5.SCD LOADER.C...
#
# Every key of the policy schema is documented in affinityd.yaml(5): reads each KeySpec table of
# the loader's files (lib/policy-*.c: one table per YAML mapping, static or not, with the entries
# of a #define'd list of entries expanded where a table names it) and checks that the section of
# the man page that documents that mapping has an entry for every key the table accepts — a line
# "*key:* TYPE" after a blank line, followed by text that gives a default ("Default:" or
# "Required") and an "Example:". Keys whose parser only rejects them (misplaced_*: a setting in a
# policy.d file or a rule in affinityd.yaml) need no entry. A new table without a section here is
# an error too, so a key can't be added to the loader without a place in the manual.
# Exit status: 0 all documented, 1 something missing (each listed on stderr), 2 usage.

set -eu

if [ $# -lt 2 ]; then
        echo "usage: $0 AFFINITYD.YAML.5.SCD LOADER.C..." >&2
        exit 2
fi
page=$1
shift
source="$*"
for f in "$page" "$@"; do
        if [ ! -r "$f" ]; then
                echo "$0: cannot read $f" >&2
                exit 2
        fi
done

# "TABLE KEY" for every key of every KeySpec table, without the misplaced_* ones.
keys=$(awk '
        # Prints "TABLE KEY" for each {"key", parser...} entry of line, but misplaced_* ones.
        function entries(table, line,    entry, key, parser) {
                while (match(line, /\{"[^"]+", *[a-z_]+/)) {
                        entry = substr(line, RSTART + 2, RLENGTH - 2)
                        line = substr(line, RSTART + RLENGTH)
                        key = entry
                        sub(/".*/, "", key)
                        parser = entry
                        sub(/^[^"]*", */, "", parser)
                        if (parser !~ /^misplaced_/)
                                print table, key
                }
        }
        # A #define of entries: its lines (continued with backslashes) kept for the tables.
        /^#define [A-Z_]+ *\\$/ { define = $2; macro[define] = ""; next }
        define != "" {
                macro[define] = macro[define] " " $0
                if ($0 !~ /\\$/)
                        define = ""
                next
        }
        /^(static )?const KeySpec [a-z_]+\[\] = \{/ {
                table = $0
                sub(/^(static )?const KeySpec /, "", table)
                sub(/\[\].*/, "", table)
                next
        }
        table != "" && /^\};/ { table = ""; next }
        table != "" {
                line = $0
                name = line
                gsub(/[ \t,]/, "", name)
                if (name in macro) {
                        entries(table, macro[name])
                        next
                }
                entries(table, line)
        }' "$@")

if [ -z "$keys" ]; then
        echo "$0: no KeySpec tables found in $source" >&2
        exit 1
fi

# The man page section (heading text after "# " or "## ") that documents each table.
section_of() {
        case $1 in
        settings_keys) echo "SETTINGS" ;;
        rules_keys) echo "RULE FILES" ;;
        policy_keys) echo "POLICIES" ;;
        match_keys) echo "match:" ;;
        selector_keys | device_selector_keys) echo "cpus:" ;;
        reserve_selector_keys) echo "reserve: selector" ;;
        thread_keys) echo "threads:" ;;
        memory_keys) echo "memory:" ;;
        scheduler_keys | io_keys) echo "scheduler:" ;;
        irq_rule_keys) echo "IRQS" ;;
        irq_match_keys) echo "irqs match:" ;;
        net_rule_keys) echo "NET" ;;
        *) echo "" ;;
        esac
}

failed=0
checked=0
tab=$(printf '\t')
echo "$keys" | {
        while read -r table key; do
                section=$(section_of "$table")
                if [ -z "$section" ]; then
                        echo "$source: KeySpec table $table has no section in $page (add one, and map it in $0)" >&2
                        failed=1
                        continue
                fi
                # The entry of key inside the section: from its "*key:*" line to the next entry or
                # heading. Prints "missing", or what the entry lacks, or "ok".
                verdict=$(awk -v section="$section" -v key="$key" -v tab="$tab" '
                        function finish() {
                                if (!in_entry)
                                        return
                                in_entry = 0
                                done = 1
                                if (!typed)
                                        print "no type after the key"
                                else if (text !~ /Default:|Required/)
                                        print "no \"Default:\" (or \"Required\")"
                                else if (text !~ /Example:/)
                                        print "no \"Example:\""
                                else
                                        print "ok"
                        }
                        /^##? / {
                                finish()
                                heading = $0
                                sub(/^##? /, "", heading)
                                in_section = (heading == section)
                                prev_blank = 1
                                next
                        }
                        !in_section || done { next }
                        {
                                line = $0
                                sub("^" tab "*", "", line)
                        }
                        # A term: "*key:* ..." after a blank line (not a paragraph line that
                        # happens to begin with a key).
                        prev_blank && line ~ /^\*[a-z-]+:\*( |$)/ {
                                prev_blank = 0
                                finish()
                                if (index(line, "*" key ":*") == 1) {
                                        in_entry = 1
                                        rest = substr(line, length(key) + 4)
                                        typed = (rest ~ /^ +[^ ]/)
                                        text = ""
                                }
                                next
                        }
                        { prev_blank = (line == "") }
                        in_entry { text = text "\n" line }
                        END {
                                finish()
                                if (!done)
                                        print "missing"
                        }' "$page")
                checked=$((checked + 1))
                if [ "$verdict" != "ok" ]; then
                        echo "$page: key \"$key:\" ($table in $source), section \"$section\": $verdict" >&2
                        failed=1
                fi
        done
        echo "$checked keys of $source checked against $page"
        exit $failed
}
