#!/usr/bin/env bash
# A 3-minute General MIDI song rendered offline by audiograph, fluidsynth and timidity (issue 20).
#
#   scripts/bench/midi.sh [ROUNDS]      (default 5)
#
# The song: scripts/bench/make-gm-song.py (8 tracks, drums, program changes, pitch bends, a
# tempo dip; 192 s). The SoundFont: TimGM6mb (timgm6mb-soundfont), the same for all three; no
# reverb or chorus anywhere (audiograph's sampler has none; fluidsynth -R 0 -C 0, timidity
# -EFreverb=0 -EFchorus=0), 48 kHz stereo. Each round times every renderer once, in turn (one
# interleaved run: the machine's drift hits all alike); the median wall time of each is printed
# and the ratios peer / audiograph (above 1: audiograph is faster). audiograph writes float32
# and 2 s of release tail; fluidsynth float; timidity 16-bit (its fastest).
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${1:-5}
cli=$PWD/.build/release/audiograph
sf=${BENCH_SOUNDFONT:-/usr/share/sounds/sf2/TimGM6mb.sf2}
[ -x "$cli" ] || { echo "bench: $cli is missing; run 'make build' first" >&2; exit 1; }
for tool in fluidsynth timidity; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (make deps-bench)" >&2; exit 1; }
done
[ -r "$sf" ] || { echo "bench: $sf is missing (timgm6mb-soundfont)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/ag-bench-midi-XXXX)
trap 'rm -rf "$tmp"' EXIT
python3 scripts/bench/make-gm-song.py "$tmp/song.mid" 180

calc() { awk "BEGIN { print ($1) }"; }
wall() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "bench: $1 failed" >&2; exit 1; }; t1=$(date +%s.%N); calc "$t1 - $t0"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

ours=() fluid=() timi=()
for r in $(seq "$runs"); do
  ours+=("$(wall "$cli" render "$tmp/song.mid" --soundfont "$sf" -o "$tmp/ours.wav" --quiet)")
  fluid+=("$(wall fluidsynth -n -i -q -R 0 -C 0 -g 0.2 -r 48000 -O float -T wav -F "$tmp/fluid.wav" "$sf" "$tmp/song.mid")")
  timi+=("$(wall timidity -idq -Ow -s 48000 -EFreverb=0 -EFchorus=0 -x "soundfont $sf" -o "$tmp/timi.wav" "$tmp/song.mid")")
  echo "  round $r: audiograph ${ours[-1]} s, fluidsynth ${fluid[-1]} s, timidity ${timi[-1]} s"
done
o=$(printf '%s\n' "${ours[@]}" | median)
f=$(printf '%s\n' "${fluid[@]}" | median)
t=$(printf '%s\n' "${timi[@]}" | median)
len=$(soxi -D "$tmp/ours.wav" 2>/dev/null || echo "?")
echo "bench: GM song (192 s, TimGM6mb, 48 kHz), median of $runs interleaved rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  audiograph: %.3f s (%s s written)\n' "$o" "$len"
printf '  fluidsynth: %.3f s (%s s written)\n' "$f" "$(soxi -D "$tmp/fluid.wav" 2>/dev/null || echo "?")"
printf '  timidity:   %.3f s (%s s written)\n' "$t" "$(soxi -D "$tmp/timi.wav" 2>/dev/null || echo "?")"
printf '  ratios (above 1: audiograph is faster): fluidsynth/audiograph %.2f, timidity/audiograph %.2f\n' \
  "$(calc "$f / $o")" "$(calc "$t / $o")"
