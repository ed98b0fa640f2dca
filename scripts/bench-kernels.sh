#!/usr/bin/env bash
# Per-kernel throughput (M samples/s, release build) next to C floors compiled in the same run.
#
#   scripts/bench-kernels.sh [SECONDS]      (default 60 s of 48 kHz audio per kernel)
#
# Ours: .build/release/KernelBench (Sources/KernelBench). The C floors do the same per-sample
# work in plain C (scripts/bench/kernel-floors.c), built with gcc -O2 and -O3 -march=native; the
# biquad floor is ../shared/bench/c/biquad10.c (B2's cascade; its kernel time, when that folder
# exists). KERNEL_BENCH_BEFORE=path/to/another/KernelBench adds a column from an older build
# (run interleaved with ours, so both see the same load). A sample is one channel-sample through
# one kernel (biquad: through one section). Rounds alternate the programs; the best round counts.
# The load average is printed: on a shared machine compare columns of one run only.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/opt/swift/usr/bin

seconds=${1:-60}
rounds=${KERNEL_BENCH_ROUNDS:-5}
shared_c=${BENCH_PEERS_DIR:-../shared/bench}/c
before=${KERNEL_BENCH_BEFORE:-}

# The flags of `make build` (Makefile RELEASE_FLAGS): switching them recompiles every module.
swift build -c release --static-swift-stdlib --product KernelBench >/dev/null
ours=.build/release/KernelBench
tmp=$(mktemp -d /tmp/ag-kbench-XXXX)
trap 'rm -rf "$tmp"' EXIT

gcc -O2 -o "$tmp/floor-O2" scripts/bench/kernel-floors.c -lm
gcc -O3 -march=native -o "$tmp/floor-O3" scripts/bench/kernel-floors.c -lm
have_biquad=0
if [ -f "$shared_c/biquad10.c" ]; then
  gcc -O2 -fno-tree-vectorize -o "$tmp/bq-O2" "$shared_c/biquad10.c" -lm
  gcc -O3 -march=native -o "$tmp/bq-O3" "$shared_c/biquad10.c" -lm
  # A stereo float WAV of noise, as long as the kernels run.
  python3 - "$tmp/in.wav" "$seconds" <<'PY'
import struct, sys, random
path, seconds = sys.argv[1], float(sys.argv[2])
n = int(seconds * 48000) * 2
random.seed(1)
data = struct.pack("<%df" % n, *(random.uniform(-0.5, 0.5) for _ in range(n)))
fmt = struct.pack("<HHIIHH", 3, 2, 48000, 48000 * 8, 8, 32)
with open(path, "wb") as f:
    f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE")
    f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data)
PY
  have_biquad=1
fi

# biquad10 prints "kernel S s = ..."; as M section-samples/s: frames * 2 channels * 10 sections.
biquad_rate() {
  "$1" "$tmp/in.wav" "$tmp/out.wav" 2>&1 >/dev/null | awk -v n="$(( ${seconds%.*} * 48000 * 20 ))" '/kernel/ { printf "%.1f\n", n / $2 * 1e-6 }'
}

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
  for o in O2 O3; do
    while read -r name value; do keep "c$o" "$name" "$value"; done < <("$tmp/floor-$o" "$seconds")
    [ "$have_biquad" = 1 ] && keep "c$o" biquad "$(biquad_rate "$tmp/bq-$o")"
  done
done
echo "bench-kernels: load average $(cut -d' ' -f1-3 /proc/loadavg) (end); best of $rounds rounds, M samples/s"
# The C floor each kernel is held against (the biquad and eq cases: biquad10.c's float cascade),
# and the C floor with the same arithmetic as ours (double state, float between sections).
floor_of() { case $1 in biquad*|eq10|eq-graph) echo biquad ;; *) echo "$1" ;; esac; }
same_of() { case $1 in biquad1) echo biquad-d1 ;; biquad*|eq10|eq-graph) echo biquad-d ;; *) echo - ;; esac; }
ratio() { if [ "$1" != - ] && [ "$2" != - ]; then awk "BEGIN { printf \"%.2f\", $1 / $2 }"; else echo -; fi; }
header=(kernel)
[ -n "$before" ] && header+=(before)
header+=(audiograph C-O2 C-O3-native ours/C-O2 ours/C-O3 C-O2-same ours/same)
printf '%-12s' "${header[@]}"; echo
for name in biquad biquad1 biquad-b eq10 delay mix to-int16 from-int16 sine eq-graph; do
  row=("$name")
  [ -n "$before" ] && row+=("${best[before/$name]:--}")
  f=$(floor_of "$name") d=$(same_of "$name")
  o=${best[ours/$name]:--} c2=${best[cO2/$f]:--} c3=${best[cO3/$f]:--} cd=${best[cO2/$d]:--}
  row+=("$o" "$c2" "$c3" "$(ratio "$o" "$c2")" "$(ratio "$o" "$c3")" "$cd" "$(ratio "$o" "$cd")")
  printf '%-12s' "${row[@]}"; echo
done
echo "(biquad: 10 sections in one cascade (Biquad.processSteadyCascade, as an eq node), stereo; biquad1: the same,"
echo " mono (B6's EQs); biquad-b: the same sections band by band (Biquad.process); eq10: B2's 10 bands in one"
echo " eq node, stereo noise source included; eq-graph: 64 one-band eq nodes in series, mono; sine: one oscillator"
echo " node. C floors of the biquad and eq cases: biquad10.c (float state); C-O2-same: kernel-floors.c's biquad-d"
echo " (biquad1: biquad-d1, mono), the same cascade with our arithmetic (double state, float between sections))"
