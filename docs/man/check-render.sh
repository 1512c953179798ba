#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-render.sh PAGE
#
# Renders a built man page the way a reader's man(1) does, 80 columns wide, with groff's warnings
# on (`man --warnings -l -E UTF-8 PAGE`), and fails on any message on standard error (a bad
# request, a line that can't be broken, a character with no glyph) or when the page renders to
# nothing. Exit status: 0 clean, 1 warnings or no output, 2 usage, 77 (a skip) without man(1).

set -eu

if ! command -v man >/dev/null 2>&1; then
        echo "SKIP: no man(1) to render with (package man-db)"
        exit 77
fi

if [ $# -ne 1 ] || [ ! -r "$1" ]; then
        echo "usage: $0 PAGE (a readable roff file)" >&2
        exit 2
fi
page=$1
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

status=0
MANWIDTH=80 MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8 man --warnings -l -E UTF-8 "$page" >"$out" 2>"$err" || status=$?
if [ "$status" -ne 0 ] || [ -s "$err" ]; then
        echo "man --warnings -l -E UTF-8 $page (exit status $status):" >&2
        cat "$err" >&2
        exit 1
fi
if ! grep -q '^NAME' "$out"; then
        echo "$page rendered without a NAME section:" >&2
        head -n 20 "$out" >&2
        exit 1
fi
echo "$page: $(wc -l <"$out") lines, no warnings"
