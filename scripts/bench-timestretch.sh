#!/usr/bin/env bash
# B7 time-stretch wall times: timePitch's three qualities against the rubberband tool, ffmpeg's filter and sox, interleaved.
#
#   scripts/bench-timestretch.sh [ROUNDS]      (default 5)
#
# 60 s of 48 kHz stereo (../shared/bench's in/stereo48.wav, generated once into BENCH_DIR,
# default .build/bench) stretched to 48 s (tempo 1.25, pitch kept) by the release CLI with
# timePitch `finer` (R3), `faster` (R2) and `fastest` (WSOLA), and by the peers:
# `rubberband -q -3 -T1.25` (R3, offline), `rubberband -q -T1.25` (R2, offline), ffmpeg's
# `rubberband=tempo=1.25` filter (R2, real-time), `sox tempo -m 1.25` (WSOLA). Each round times
# every run once (whole process, /usr/bin/time), so the machine's drift hits all alike; prints
# the median wall and user CPU per run, the load average before and after, and the ratios the
# issue asks for: each peer's median / our mode's (above 1: ours is faster).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
cli=$PWD/.build/release/audiograph
peers_dir=${BENCH_PEERS_DIR:-../shared/bench}
d=${BENCH_DIR:-$PWD/.build/bench}
[ -x "$cli" ] || { echo "bench-timestretch: $cli is missing; run 'make build' first" >&2; exit 1; }
mkdir -p "$d/out" "$d/b7"
[ -f "$d/in/stereo48.wav" ] || python3 "$peers_dir/graphs.py" gen "$d" >/dev/null

for q in finer faster fastest; do
  cat > "$d/b7/$q.json" <<EOF
{ "version": 1, "sampleRate": 48000, "duration": 48,
  "nodes": [ { "id": "clip", "type": "player", "properties": { "file": "$d/in/stereo48.wav" } },
             { "id": "tp", "type": "timePitch", "parameters": { "rate": 1.25 }, "properties": { "quality": "$q" } },
             { "id": "out", "type": "genericOutput" } ],
  "connections": [ { "from": "clip", "to": "tp" }, { "from": "tp", "to": "out" } ] }
EOF
done

in=$d/in/stereo48.wav
names=(ours-finer ours-faster ours-fastest rubberband-3 rubberband-R2 ffmpeg-rubberband sox-tempo)
cmds=(
  "$cli render $d/b7/finer.json -o $d/out/b7-finer.wav --sample-type float32 --quiet"
  "$cli render $d/b7/faster.json -o $d/out/b7-faster.wav --sample-type float32 --quiet"
  "$cli render $d/b7/fastest.json -o $d/out/b7-fastest.wav --sample-type float32 --quiet"
  "rubberband -q -3 -T1.25 $in $d/out/b7-rb3.wav"
  "rubberband -q -T1.25 $in $d/out/b7-rb2.wav"
  "ffmpeg -nostdin -loglevel error -y -i $in -af rubberband=tempo=1.25 -c:a pcm_f32le $d/out/b7-ff.wav"
  "sox -V1 $in -e floating-point -b 32 $d/out/b7-sox.wav tempo -m 1.25"
)
echo "bench-timestretch: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) core(s) (start)"
rm -f "$d"/b7/time-*.txt
for i in "${!names[@]}"; do ${cmds[$i]} >/dev/null 2>&1 || { echo "bench-timestretch: ${names[$i]} fails" >&2; exit 1; }; done
for r in $(seq "$rounds"); do
  for i in "${!names[@]}"; do
    /usr/bin/time -a -o "$d/b7/time-${names[$i]}.txt" -f '%e %U' ${cmds[$i]} >/dev/null 2>&1
  done
done
echo "bench-timestretch: load average $(cut -d' ' -f1-3 /proc/loadavg) (end, $rounds rounds)"
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
printf '| run | median wall (s) | median user (s) |\n|---|---|---|\n'
declare -A wall
for n in "${names[@]}"; do
  wall[$n]=$(awk '{print $1}' "$d/b7/time-$n.txt" | median)
  printf '| %s | %s | %s |\n' "$n" "${wall[$n]}" "$(awk '{print $2}' "$d/b7/time-$n.txt" | median)"
done
ratio() { awk -v a="${wall[$1]}" -v b="${wall[$2]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
echo "ratio rubberband -3 / ours finer (R3):        $(ratio rubberband-3 ours-finer)"
echo "ratio ffmpeg filter / ours faster (R2):       $(ratio ffmpeg-rubberband ours-faster)"
echo "ratio ffmpeg filter / ours fastest (WSOLA):   $(ratio ffmpeg-rubberband ours-fastest)"
echo "ratio sox tempo / ours fastest (WSOLA):       $(ratio sox-tempo ours-fastest)"
