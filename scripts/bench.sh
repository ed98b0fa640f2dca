#!/usr/bin/env bash
# Offline render speed: the issue-9 benchmark graphs against peer renderers, and the cost per node.
#
#   scripts/bench.sh [ROUNDS]      (default 5)
#
# 1. Peers (when ../shared/bench exists, or BENCH_PEERS_DIR): B1..B6 rendered by audiograph,
#    sox, ffmpeg, gst and numpy with ../shared/bench/interleaved.sh (each round times every peer
#    once, so the machine's drift hits all alike); prints each peer's median wall time and the
#    ratio table: the fastest other peer's time / ours per case (above 1: audiograph is faster).
#    Then B7 (time-stretch) with both timePitch qualities against the rubberband tool, ffmpeg's
#    rubberband filter and sox, and one table of every case: median wall, x real time, peak RSS
#    and ratio per peer. Inputs are generated once into BENCH_DIR (default .build/bench).
# 2. Node-count scaling: N oscillators -> one mixer, and one noise source through a chain of N
#    eq nodes (one peak band each), N = 1, 16, 64, 256, 1024, 10 s at 48 kHz; prints the wall
#    time (best of 3) and the cost per node: total / N and the marginal cost between sizes
#    (serial: --threads 1). Then parallel rendering: the 256-oscillator mixer with --threads 1
#    and --threads $(nproc) (at least 2), best wall of 3 and user+sys CPU, and the ratio
#    serial wall / parallel wall (above 1: the parallel render is faster).
# 3. The demo graph against sox synthesising the same tones, and the HRTF scene against real time.
# 4. A 3-minute General MIDI song through the sampler against fluidsynth -F and timidity -Ow
#    (scripts/bench/midi.sh).
#
# 5. Start-up: a 0.1 s graph against SoX synthesising the same 0.1 s, whole processes, 15
#    interleaved rounds (scripts/bench/startup.py: median wall, CPU and peak RSS).
#
# The machine's load average is printed before and after: on a shared 2-core VM other work
# makes absolute times meaningless; compare ratios from one run. `make bench` installs the peers
# and prints every result of issue 23 in one table at the end (scripts/bench/summary.sh): this
# script adds the rows of B1..B7 (ours, the fastest other peer, the ratio, both peak RSS) and of
# the start-up.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
cli=$PWD/.build/release/audiograph
peers_dir=${BENCH_PEERS_DIR:-../shared/bench}
bench_dir=${BENCH_DIR:-$PWD/.build/bench}
peers=${BENCH_PEERS:-audiograph sox ffmpeg gst numpy}
[ -x "$cli" ] || { echo "bench: $cli is missing; run 'make build' first" >&2; exit 1; }

tmp=$(mktemp -d /tmp/ag-bench-XXXX)
trap 'rm -rf "$tmp"' EXIT

calc() { awk "BEGIN { print ($1) }"; }
source scripts/bench/summary.sh

# Summary rows from an interleaved.tsv (case, peer, median wall, x real time, peak RSS): per case,
# ours against the fastest other peer among PEERS (all when empty); LABEL replaces the case name.
summary_cases() {
  local tsv=$1 peers=${2:-} label=${3:-}
  awk -F'\t' -v peers=" $peers " -v label="$label" '
    BEGIN { name["B1"] = "B1 mix 32"; name["B2"] = "B2 10-band EQ"; name["B3"] = "B3 feedback delay"
            name["B4"] = "B4 44.1 -> 48 kHz"; name["B5"] = "B5 spatial 16"; name["B6"] = "B6 chain" }
    NR > 1 { if ($2 == "audiograph") { ours[$1] = $3; orss[$1] = $5; order[++n] = $1 }
             else if (peers == "  " || index(peers, " " $2 " ")) if (!($1 in best) || $3 < best[$1]) { best[$1] = $3; who[$1] = $2; prss[$1] = $5 } }
    END { for (i = 1; i <= n; i++) { c = order[i]
            printf "%s\t%.2f s\t%s\t%s\t%s\t%s\n", (label != "" ? label : (c in name) ? name[c] : c), ours[c],
              (c in best) ? sprintf("%s %.2f s", who[c], best[c]) : "-",
              (c in best && ours[c] > 0) ? sprintf("%.2f", best[c] / ours[c]) : "-", orss[c], (c in best) ? prss[c] : "-" } }' "$tsv" |
    while IFS=$'\t' read -r item ours peer ratio orss prss; do summary_row "$item" "$ours" "$peer" "$ratio" "$orss" "$prss"; done
}
load() { echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) core(s) ($1)"; }

# Best wall time of $runs runs of the command, in seconds.
best_time() {
  local best="" t0 t1 dt
  for _ in $(seq "$runs"); do
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    dt=$(calc "$t1 - $t0")
    if [ -z "$best" ] || [ "$(calc "$dt < $best")" = 1 ]; then best=$dt; fi
  done
  echo "$best"
}

load "start"

# ------------------------------------------------------------------------- 5 (first). start-up
# Before the long cases, while the load is what it was at the start.
python3 scripts/bench/startup.py "$cli" "${BENCH_STARTUP_ROUNDS:-15}" "$summary_file"

# ------------------------------------------------------------------ 1. B1..B6 against the peers
if [ -d "$peers_dir" ]; then
  echo "bench: B1..B6, $runs interleaved rounds, peers: $peers (inputs in $bench_dir)"
  mkdir -p "$bench_dir"
  # Graph files follow the CLI's format version; regenerate them each time (cheap), not the inputs.
  rm -f "$bench_dir"/audiograph_B*.json
  AUDIOGRAPH=$cli bash "$peers_dir/interleaved.sh" -n "$runs" -p "$peers" "$bench_dir"
  cp "$bench_dir/interleaved.tsv" "$tmp/b1-b6.tsv"
  summary_cases "$tmp/b1-b6.tsv"
  load "after B1..B6"

  # B7, time-stretch (60 s stereo at tempo 1.25): timePitch's default quality (finer, R3)
  # against the rubberband tool (`-3`, R3), ffmpeg's rubberband filter (R2) and SoX's tempo
  # (WSOLA); then quality "faster" (R2) against ffmpeg's filter, from a second directory with
  # the same inputs and the graph file set to "faster" (row B7faster).
  echo "bench: B7 time-stretch, $runs interleaved rounds: audiograph (finer) rubberband ffmpeg sox"
  AUDIOGRAPH=$cli bash "$peers_dir/interleaved.sh" -n "$runs" -c B7 -p "audiograph rubberband ffmpeg sox" "$bench_dir"
  tail -n +2 "$bench_dir/interleaved.tsv" > "$tmp/b7.tsv"
  summary_cases "$bench_dir/interleaved.tsv" "rubberband" "B7 timePitch finer (R3)"
  fast=$tmp/b7faster
  mkdir -p "$fast"
  ln -s "$bench_dir/in" "$fast/in"
  ln -s "$bench_dir/params.env" "$fast/params.env"   # the shell peers' case parameters
  python3 "$peers_dir/audiograph_graphs.py" "$fast"
  python3 - "$fast/audiograph_B7.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    if n["type"] == "timePitch":
        n.setdefault("properties", {})["quality"] = "faster"
json.dump(g, open(sys.argv[1], "w"), indent=1)
PY
  echo "bench: B7 with timePitch quality faster, $runs interleaved rounds: audiograph ffmpeg"
  AUDIOGRAPH=$cli bash "$peers_dir/interleaved.sh" -n "$runs" -c B7 -p "audiograph ffmpeg" "$fast"
  tail -n +2 "$fast/interleaved.tsv" | sed 's/^B7\t/B7faster\t/' > "$tmp/b7faster.tsv"
  summary_cases "$fast/interleaved.tsv" "ffmpeg" "B7 timePitch faster (R2)"
  load "after B7"

  # One table with every case: each peer's median wall time, x real time, peak RSS, and
  # ratio = that peer's time / audiograph's (above 1: audiograph is faster).
  echo "bench: all cases (peak RSS per case from GNU time; ratio = peer's median wall / audiograph's)"
  cat "$tmp/b1-b6.tsv" "$tmp/b7.tsv" "$tmp/b7faster.tsv" > "$bench_dir/all.tsv"
  awk -F'\t' 'NR == 1 { print "case\tpeer\tmedian_wall_s\tx_realtime\tpeak_rss_MiB\tratio"; next }
    { row[NR] = $0; c[NR] = $1; p[NR] = $2; w[NR] = $3; if ($2 == "audiograph") ours[$1] = $3 }
    END { for (i = 2; i <= NR; i++) {
            r = (c[i] in ours && ours[c[i]] > 0) ? sprintf("%.2f", w[i] / ours[c[i]]) : "-"
            print row[i] "\t" r } }' "$bench_dir/all.tsv" | column -t
else
  echo "bench: $peers_dir does not exist: B1..B7 against the peers skipped"
  summary_row "B1..B7" "skipped" "($peers_dir does not exist)"
fi

# ----------------------------------------------------------------------- 2. node-count scaling
scaling_seconds=10
echo "bench: node-count scaling, ${scaling_seconds} s at 48 kHz, best of 3"
python3 - "$tmp" "$scaling_seconds" <<'PY'
import json, sys
out, seconds = sys.argv[1], float(sys.argv[2])
def doc(nodes, conns):
    nodes.append({"id": "out", "type": "genericOutput"})
    return {"version": 1, "sampleRate": 48000, "duration": seconds, "nodes": nodes, "connections": conns}
for n in (1, 16, 64, 256, 1024):
    oscs = [{"id": "o%d" % i, "type": "oscillator", "parameters": {"frequency": 100 + 7 * i}} for i in range(n)]
    mix = {"id": "mix", "type": "mixer", "inputBusCount": n}
    conns = [{"from": "o%d" % i, "to": "mix:%d" % i} for i in range(n)] + [{"from": "mix", "to": "out"}]
    json.dump(doc(oscs + [mix], conns), open("%s/mix%d.json" % (out, n), "w"))
    eqs = [{"id": "eq%d" % i, "type": "eq",
            "properties": {"bands": [{"type": "peak", "frequency": 100 + 15 * i, "gain": 3 if i % 2 else -3}]}}
           for i in range(n)]
    src = {"id": "src", "type": "oscillator", "properties": {"waveform": "noise", "seed": 1}}
    chain = ["src"] + ["eq%d" % i for i in range(n)] + ["out"]
    conns = [{"from": a, "to": b} for a, b in zip(chain, chain[1:])]
    json.dump(doc([src] + eqs, conns), open("%s/eq%d.json" % (out, n), "w"))
PY
saved_runs=$runs
runs=3
for kind in mix eq; do
  case $kind in
    mix) echo "  N oscillators -> mixer:" ;;
    eq)  echo "  noise -> chain of N eq nodes (one peak band each):" ;;
  esac
  printf '  %6s %10s %16s %22s\n' N "wall s" "us/node per s" "marginal us/node per s"
  prev_n="" prev_t=""
  for n in 1 16 64 256 1024; do
    "$cli" render "$tmp/$kind$n.json" -o "$tmp/$kind$n.wav" --sample-type float32 --quiet --threads 1 \
      || { echo "bench: rendering $kind$n.json failed" >&2; exit 1; }
    t=$(best_time "$cli" render "$tmp/$kind$n.json" -o "$tmp/$kind$n.wav" --sample-type float32 --quiet --threads 1)
    per=$(calc "$t / $n / $scaling_seconds * 1e6")
    marginal="-"
    [ -n "$prev_n" ] && marginal=$(calc "($t - $prev_t) / ($n - $prev_n) / $scaling_seconds * 1e6")
    printf '  %6d %10.3f %16.1f %22s\n' "$n" "$t" "$per" "$marginal"
    prev_n=$n prev_t=$t
  done
done
threads=$(nproc); [ "$threads" -ge 2 ] || threads=2
echo "  parallel rendering, 256 oscillators -> mixer (best wall of 3; user+sys of one run):"
printf '  %8s %10s %12s\n' threads "wall s" "user+sys s"
for th in 1 "$threads"; do
  t=$(best_time "$cli" render "$tmp/mix256.json" -o "$tmp/par$th.wav" --sample-type float32 --quiet --threads "$th")
  cpu=$( { /usr/bin/time -f '%U %S' "$cli" render "$tmp/mix256.json" -o "$tmp/par$th.wav" --sample-type float32 \
           --quiet --threads "$th" >/dev/null; } 2>&1 | tail -1 | awk '{ print $1 + $2 }')
  printf '  %8s %10.3f %12.3f\n' "$th" "$t" "$cpu"
  eval "wall_$th=$t"
done
cmp -s "$tmp/par1.wav" "$tmp/par$threads.wav" || { echo "bench: the parallel render differs from the serial one" >&2; exit 1; }
echo "  ratio serial/parallel (wall): $(calc "$wall_1 / $(eval echo \$wall_$threads)") (outputs bit-identical)"
runs=$saved_runs
load "after the scaling curve"

# --------------------------------------------------------- 3. the demo graph against sox synth
graph=Graphs/demo.json
if command -v sox >/dev/null; then
  # What sox must synthesise: rate, duration, output channels and the oscillators (waveform:frequency).
  read -r rate duration channels tone_list < <(python3 - "$graph" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
rate = g.get("sampleRate", 48000)
duration = g.get("duration", 10.0)
channels = 2
sox_type = {"sine": "sine", "square": "square", "sawtooth": "sawtooth", "triangle": "triangle",
            "noise": "whitenoise"}
tones = []
for n in g["nodes"]:
    p, q = n.get("parameters", {}), n.get("properties", {})
    if n["type"] == "oscillator":
        tones.append(f'{sox_type[q.get("waveform", "sine")]}:{p.get("frequency", 440)}')
    if n["type"] in ("genericOutput", "output"):
        channels = n.get("format", {}).get("channels", channels)
if not tones:
    tones = ["sine:440"]
print(rate, duration, channels, ",".join(tones))
PY
  )
  IFS=, read -r -a tones <<<"$tone_list"
  synth=()
  for t in "${tones[@]}"; do synth+=("${t%%:*}" "${t#*:}"); done
  k=${#tones[@]}
  echo "bench: $graph: ${duration} s at ${rate} Hz, ${channels} channel(s), ${k} oscillator(s); best of $runs"
  ours=$(best_time "$cli" render "$graph" -o "$tmp/ours.wav" --sample-type float32 --quiet)
  # sox: one tone per channel of a K-channel null input, then all mixed and spread to the output
  # channels (its square, sawtooth and triangle are not band-limited: it does somewhat less work).
  peer=$(best_time sox -q -r "$rate" -c "$k" -n -c "$channels" -b 32 -e floating-point "$tmp/peer.wav" \
    synth "$duration" "${synth[@]}" remix - channels "$channels")
  # Both must have written the same amount of audio, or the times compare nothing.
  [ "$(soxi -s "$tmp/ours.wav")" = "$(soxi -s "$tmp/peer.wav")" ] \
    || { echo "bench: audiograph and sox wrote different lengths" >&2; exit 1; }
  printf '  audiograph: %.3f s (%.0fx real time)\n' "$ours" "$(calc "$duration / $ours")"
  printf '  sox:        %.3f s (%.0fx real time)\n' "$peer" "$(calc "$duration / $peer")"
  printf '  ratio sox/audiograph: %.2f (above 1: audiograph is faster)\n' "$(calc "$peer / $ours")"
fi

# The environment at full load: 16 moving and still sources through HRTF convolution and the
# reverb (no peer renders HRTF from a SOFA set; it is measured against real time).
hrtf=scripts/bench/hrtf16.json
hrtf_time=$(best_time "$cli" render "$hrtf" -o "$tmp/hrtf16.wav" --quiet)
printf 'bench: 16 HRTF sources + reverb (%s): %.3f s for 10 s (%.1fx real time; includes loading the SOFA set)\n' \
  "$hrtf" "$hrtf_time" "$(calc "10 / $hrtf_time")"

# ---------------------------------------------- 4. a General MIDI song against fluidsynth, timidity
bash scripts/bench/midi.sh "$runs"
load "end"
