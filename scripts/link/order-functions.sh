#!/bin/bash
# Writes scripts/link/render-order.txt: the functions a short render runs, in the order the
# release link lays them out first (gold's --section-ordering-file, RELEASE_FLAGS in the Makefile).
#
#     scripts/link/order-functions.sh [CLI]      (default: .build/release/audiograph; needs valgrind)
#
# Why: a 0.1 s render runs about 1 250 functions of the executable (the loader, the checker, the
# JSON reader, the Swift runtime, the writer: ~500 KB of code). Placed by object file they spread
# over ~380 pages of the 6 MB of code, and every 64 KB window the process touches costs a page
# fault (the kernel maps a file's pages 16 at a time); placed together they take ~170 pages
# (Docs/Performance.md "Start-up: at SoX's time"). The functions are compiled into sections of
# their own (-function-sections) so the linker can move them; the standard library's already are.
#
# The list is valgrind's (callgrind: every function that ran, exactly, not a sample) for a render
# of the start-up benchmark's graph (scripts/bench/startup.py). A stale list costs only speed:
# a function missing from it stays where its object file puts it, a name no longer linked is
# ignored. Rerun this after changes to what a render runs at start-up.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLI=${1:-.build/release/audiograph}
command -v valgrind >/dev/null || { echo "order-functions: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the executable's DWARF 5 debug information: a copy without it (symbols kept).
strip --strip-debug -o "$work/audiograph" "$CLI"
cat > "$work/sine.json" <<'EOF'
{"version": 1, "sampleRate": 48000, "duration": 0.1, "nodes": [{"id": "o", "type": "oscillator", "parameters": {"frequency": 1000, "amplitude": 0.5}, "properties": {"channels": 2}}, {"id": "out", "type": "genericOutput"}], "connections": [{"from": "o", "to": "out"}]}
EOF
(cd "$work" && valgrind -q --tool=callgrind --demangle=no --callgrind-out-file=calls.out \
    ./audiograph render sine.json -o out.wav --sample-type int16 --quiet)
# Every function of the executable that ran (callgrind_annotate: "count  file:function [object]"),
# most instructions first, as the section names it is compiled into (Swift and C++ functions:
# .text.NAME; clang's C may use .text.unlikely.NAME or .text.startup.NAME).
callgrind_annotate --threshold=100 "$work/calls.out" | grep -F "[$work/audiograph]" \
    | sed -E 's/^ *[0-9,]+ +//; s/^\( *[0-9.]+%\) +//; s/^[^:]*://; s/ \[[^]]*\]$//' \
    | awk '{ print ".text." $0; print ".text.unlikely." $0; print ".text.startup." $0 }' > "$work/order.txt"
n=$(($(wc -l < "$work/order.txt") / 3))
[ "$n" -gt 100 ] || { echo "order-functions: only $n functions found; not writing the list" >&2; exit 1; }
{
    echo "# The functions a 0.1 s render runs (scripts/link/order-functions.sh, $n functions), laid out"
    echo "# first by the release link (Makefile RELEASE_FLAGS: --section-ordering-file)."
    cat "$work/order.txt"
} > scripts/link/render-order.txt
echo "order-functions: $n functions -> scripts/link/render-order.txt"
