#!/usr/bin/env bash
# Offline render speed of `audiograph` against a peer renderer (sox) synthesising the same tones.
#
#   scripts/bench.sh [GRAPH] [RUNS]     (defaults: Graphs/demo.json, 5)
#
# Renders GRAPH with the release CLI and asks sox to synthesise the graph's oscillators (same
# rate, duration, waveforms, frequencies, output channel count) mixed to one file, both as 32-bit
# float WAV. sox's square, sawtooth and triangle are not band-limited and it applies no
# automation or updates, so the peer does somewhat less work than audiograph.
# Prints the best wall time of RUNS runs of each and the ratio; ratio > 1 means audiograph is
# faster. The lead refines the graph and the comparison; `make bench` installs sox first.
set -euo pipefail
cd "$(dirname "$0")/.."

graph=${1:-Graphs/demo.json}
runs=${2:-5}
cli=.build/release/audiograph
[ -x "$cli" ] || { echo "bench: $cli is missing; run 'make build' first" >&2; exit 1; }
command -v sox >/dev/null || { echo "bench: sox is missing; 'make bench' installs it" >&2; exit 1; }
[ -f "$graph" ] || { echo "bench: $graph does not exist" >&2; exit 1; }

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

tmp=$(mktemp -d /tmp/ag-bench-XXXX)
trap 'rm -rf "$tmp"' EXIT

calc() { awk "BEGIN { print ($1) }"; }

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

synth=()
for t in "${tones[@]}"; do synth+=("${t%%:*}" "${t#*:}"); done
k=${#tones[@]}

echo "bench: $graph: ${duration} s at ${rate} Hz, ${channels} channel(s), ${k} oscillator(s) (${tones[*]}); best of $runs"
ours=$(best_time "$cli" render "$graph" -o "$tmp/ours.wav" --sample-type float32 --quiet)
# sox: one tone per channel of a K-channel null input, then all mixed and spread to the output channels.
peer=$(best_time sox -q -r "$rate" -c "$k" -n -c "$channels" -b 32 -e floating-point "$tmp/peer.wav" \
  synth "$duration" "${synth[@]}" remix - channels "$channels")

# Both must have written the same amount of audio, or the times compare nothing.
python3 - "$tmp/ours.wav" "$tmp/peer.wav" <<'PY' || exit 1
import sys
import soundfile as sf
for label, path in (("audiograph", sys.argv[1]), ("sox", sys.argv[2])):
    try:
        info = sf.info(path)
    except Exception as e:
        sys.exit(f"bench: {label} wrote no readable file ({e})")
    print(f"{label + ':':11} {info.frames} frames x {info.channels} channel(s) at {info.samplerate} Hz, {info.subtype}")
PY

printf 'audiograph: %.3f s (%.0fx real time)\n' "$ours" "$(calc "$duration / $ours")"
printf 'sox:        %.3f s (%.0fx real time)\n' "$peer" "$(calc "$duration / $peer")"
printf 'ratio sox/audiograph: %.2f (above 1: audiograph is faster)\n' "$(calc "$peer / $ours")"

# The environment at full load: 16 moving and still sources through HRTF convolution and the
# reverb (no peer renders HRTF from a SOFA set; it is measured against real time).
hrtf=scripts/bench/hrtf16.json
hrtf_time=$(best_time "$cli" render "$hrtf" -o "$tmp/hrtf16.wav" --quiet)
printf 'audiograph, 16 HRTF sources + reverb (%s): %.3f s for 10 s (%.1fx real time; includes loading the SOFA set)\n' \
  "$hrtf" "$hrtf_time" "$(calc "10 / $hrtf_time")"
