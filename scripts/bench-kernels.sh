#!/usr/bin/env bash
# Per-kernel throughput (M samples/s, release build) next to C floors compiled in the same run.
#
#   scripts/bench-kernels.sh [SECONDS]      (default 60 s of 48 kHz audio per kernel)
#
# Ours: .build/release/KernelBench (Sources/KernelBench). The C floors do the same per-sample
# work in plain C (scripts/bench/kernel-floors.c), built with gcc -O2 and -O3 -march=native; the
# biquad floor is biquad-f there, the loop of ../shared/bench/c/biquad10.c (B2's C peer: float
# state) verbatim; C-O2-same is the same cascade with our arithmetic (double state, Float between
# sections). Both sides time themselves in thread CPU time (CLOCK_THREAD_CPUTIME_ID), not wall
# time. KERNEL_BENCH_BEFORE=path/to/another/KernelBench adds a column from an older build
# (run interleaved with ours, so both see the same load). A sample is one channel-sample through
# one kernel (biquad: through one section). Rounds alternate the programs; the best round counts.
# The load average is printed: on a shared machine compare columns of one run only.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/opt/swift/usr/bin

seconds=${1:-60}
rounds=${KERNEL_BENCH_ROUNDS:-5}
before=${KERNEL_BENCH_BEFORE:-}

# The flags of `make build` (Makefile RELEASE_FLAGS): switching them recompiles every module.
# shellcheck disable=SC2046
swift build $(make -s --no-print-directory print-release-flags) --product KernelBench >/dev/null
ours=.build/release/KernelBench
tmp=$(mktemp -d /tmp/ag-kbench-XXXX)
trap 'rm -rf "$tmp"' EXIT

gcc -O2 -o "$tmp/floor-O2" scripts/bench/kernel-floors.c -lm
# The biquad floors as the issue-9 floor was built (biquad10.c at -O2 -fno-tree-vectorize: gcc 12's
# -O2 otherwise pairs the two channels' float recurrences in SSE lanes; that build's figure is the
# C-O2-vec column).
gcc -O2 -fno-tree-vectorize -o "$tmp/floor-O2nv" scripts/bench/kernel-floors.c -lm
gcc -O3 -march=native -o "$tmp/floor-O3" scripts/bench/kernel-floors.c -lm
# best[prog/kernel] = highest figure over the rounds.
declare -A best
keep() { # prog name value
  local k="$1/$2"
  if [ -z "${best[$k]:-}" ] || awk "BEGIN { exit !($3 > ${best[$k]}) }"; then best[$k]=$3; fi
}
echo "bench-kernels: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) core(s) (start)"
for _ in $(seq "$rounds"); do
  while read -r name value; do keep ours "$name" "$value"; done < <("$ours" "$seconds")
  if [ -n "$before" ]; then
    while read -r name value; do keep before "$name" "$value"; done < <("$before" "$seconds")
  fi
  for o in O2 O2nv O3; do
    while read -r name value; do keep "c$o" "$name" "$value"; done < <("$tmp/floor-$o" "$seconds")
  done
done
echo "bench-kernels: load average $(cut -d' ' -f1-3 /proc/loadavg) (end); best of $rounds rounds, M samples/s"
# The C floor each kernel is held against (the biquad and eq cases: biquad10.c's float cascade),
# and the C floor with the same arithmetic as ours (double state, float between sections).
floor_of() { case $1 in biquad*|eq10|eq-graph) echo biquad-f ;; *) echo "$1" ;; esac; }
same_of() { case $1 in biquad1) echo biquad-d1 ;; eq-graph) echo eq-chain ;; biquad*|eq10) echo biquad-d ;; *) echo - ;; esac; }
ratio() { if [ "$1" != - ] && [ "$2" != - ]; then awk "BEGIN { printf \"%.2f\", $1 / $2 }"; else echo -; fi; }
header=(kernel)
[ -n "$before" ] && header+=(before)
header+=(audiograph C-O2 C-O3-native ours/C-O2 ours/C-O3 C-O2-same ours/same C-O2-vec ours/vec)
printf '%-12s' "${header[@]}"; echo
for name in biquad biquad1 biquad-b eq10 delay mix to-int16 from-int16 sine eq-graph; do
  row=("$name")
  [ -n "$before" ] && row+=("${best[before/$name]:--}")
  f=$(floor_of "$name") d=$(same_of "$name")
  o=${best[ours/$name]:--} c2=${best[cO2/$f]:--} c3=${best[cO3/$f]:--} cd=${best[cO2/$d]:--} cv=-
  if [ "$f" = biquad-f ]; then c2=${best[cO2nv/$f]:--} cv=${best[cO2/$f]:--}; fi
  row+=("$o" "$c2" "$c3" "$(ratio "$o" "$c2")" "$(ratio "$o" "$c3")" "$cd" "$(ratio "$o" "$cd")" "$cv" "$(ratio "$o" "$cv")")
  printf '%-12s' "${row[@]}"; echo
done
echo "(biquad: 10 sections in one cascade (Biquad.processSteadyCascade, as an eq node), stereo; biquad1: the same,"
echo " mono (B6's EQs); biquad-b: the same sections band by band (Biquad.process); eq10: B2's 10 bands in one"
echo " eq node, stereo noise source included; eq-graph: 64 one-band eq nodes in series, mono; sine: one oscillator"
echo " node. C floors of the biquad and eq cases: biquad-f (biquad10.c's loop, float state); C-O2-same: biquad-d"
echo " (biquad1: biquad-d1, mono), the same cascade with our arithmetic (double state, float between sections);"
echo " eq-graph's: eq-chain, 64 one-section filters in series block by block, our arithmetic)"
