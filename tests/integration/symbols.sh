#!/usr/bin/env bash
# tests/integration/symbols.sh: no global function or object is defined in
# two of the build's static libraries (BIN_DIR/../lib/*.a).
#
#   bash symbols.sh BIN_DIR SOURCE_DIR        (ctest runs it so)
#
# Why: a program links several of them, and with two definitions of one
# name the linker takes whichever archive it meets first and never reports
# the other; two `rf__grow` with different signatures once sat in
# librackfit.a and librackfit_watch.a, so a call could reach the wrong one.
# Within one archive the linker itself refuses a duplicate, so only names
# across archives are checked. Ends with `N passed, N failed`.
set -uo pipefail

bin_dir=${1:?usage: symbols.sh BIN_DIR SOURCE_DIR}
lib_dir="$bin_dir/../lib"
shopt -s nullglob
libs=("$lib_dir"/*.a)
if ((${#libs[@]} < 2)); then
    echo "symbols: fewer than two static libraries in $lib_dir"
    echo "0 passed, 1 failed"
    exit 1
fi

# one line per (archive, defined global symbol): T/D/B/R (text, data, bss, read-only)
dups=$(for a in "${libs[@]}"; do
    nm -g --defined-only "$a" 2>/dev/null | awk -v lib="$(basename "$a")" '$2 ~ /^[TDBR]$/ { print $3, lib }'
done | sort -u | awk '{ n[$1]++; where[$1] = where[$1] " " $2 } END { for (s in n) if (n[s] > 1) print s ":" where[s] }' | sort)

if [[ -n "$dups" ]]; then
    echo "symbols: defined in more than one library:"
    echo "$dups" | sed 's/^/  /'
    echo "0 passed, 1 failed"
    exit 1
fi
echo "symbols: ${#libs[@]} libraries, no global symbol defined twice"
echo "1 passed, 0 failed"
