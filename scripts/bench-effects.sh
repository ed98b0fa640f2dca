#!/usr/bin/env bash
# Effects speed against peers in the same run: convolution with a 3 s stereo response (ffmpeg afir,
# scipy fftconvolve) and the compressor (sox compand, ffmpeg acompressor).
#
#   scripts/bench-effects.sh [ROUNDS]      (default 5)
#
# Input: 60 s of stereo 48 kHz float WAV (seeded noise and a chord whose level steps every 2 s);
# response: 3 s of stereo decaying noise at 48 kHz. Every command is timed as a whole process
# (start-up, reading and writing the files included), rounds interleaved (each round runs every
# command once, so load drift hits all alike); the medians of the rounds' wall times and CPU times
# (user + system) count. Prints the times, x real time, and the ratios peer / audiograph per case
# (above 1: audiograph is faster); on a loaded machine the CPU ratio is the steadier one. The
# convolution also runs with `--threads 1` (the render's default is the core count: the
# convolver's second output on a helper thread), shown as a peer. The outputs are compared:
# ours against scipy's float64 convolution, and afir's (after its own gain); the one-thread
# render must be byte-identical to the default one.
# The machine's load average is printed: on a shared 2-core VM compare ratios from one run only.
# BENCH_FIFO=1 runs every command but scipy's (and their threads) under `chrt -f 10` (root or CAP_SYS_NICE):
# SCHED_FIFO processes run before the other sessions' builds, so wall times are those of a quiet
# machine even when it is not (each run is short; the kernel keeps 5 % for the others).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
fifo=""
if [ "${BENCH_FIFO:-0}" = 1 ]; then
  chrt -f 10 true 2>/dev/null || { echo "bench-effects: BENCH_FIFO=1 needs chrt -f (root or CAP_SYS_NICE)" >&2; exit 1; }
  fifo="chrt -f 10"
fi
cli=$PWD/.build/release/audiograph
[ -x "$cli" ] || { echo "bench-effects: $cli is missing; run 'make build' first" >&2; exit 1; }
command -v ffmpeg >/dev/null && command -v sox >/dev/null || { echo "bench-effects: ffmpeg and sox are needed (make deps-bench)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/ag-fxbench-XXXX)
trap 'rm -rf "$tmp"' EXIT
load() { echo "bench-effects: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) core(s) ($1)"; }

python3 - "$tmp" <<'PY'
import json, sys
import numpy as np
from scipy.io import wavfile
d = sys.argv[1]
rate, seconds = 48000, 60
rng = np.random.default_rng(1)
n = rate * seconds
t = np.arange(n) / rate
level = np.array([0.05, 0.9, 0.3, 0.6])[(np.arange(n) // (2 * rate)) % 4]
chord = sum(np.sin(2 * np.pi * f * t) for f in (220, 277.2, 329.6)) / 3
x = np.stack([level * (0.7 * chord + 0.3 * rng.uniform(-1, 1, n)),
              level * (0.7 * np.roll(chord, 100) + 0.3 * rng.uniform(-1, 1, n))], axis=1).astype(np.float32)
wavfile.write(f"{d}/in.wav", rate, x)
m = 3 * rate
decay = np.exp(-np.arange(m) / (0.6 * rate))
h = np.stack([rng.uniform(-1, 1, m) * decay, rng.uniform(-1, 1, m) * decay], axis=1).astype(np.float32) * 0.02
wavfile.write(f"{d}/ir.wav", rate, h)
def graph(effect):
    return {"version": 1, "sampleRate": rate, "duration": seconds,
            "nodes": [{"id": "in", "type": "player", "properties": {"file": "in.wav"}}, effect,
                      {"id": "out", "type": "genericOutput"}],
            "connections": [{"from": "in", "to": "fx"}, {"from": "fx", "to": "out"}]}
json.dump(graph({"id": "fx", "type": "convolver", "properties": {"file": "ir.wav", "normalize": False}}), open(f"{d}/conv.json", "w"))
json.dump(graph({"id": "fx", "type": "compressor", "parameters": {"threshold": -24, "knee": 6, "ratio": 12,
                                                                    "attack": 0.003, "release": 0.25}}), open(f"{d}/comp.json", "w"))
open(f"{d}/scipy_conv.py", "w").write('''import sys
import numpy as np
from scipy.io import wavfile
from scipy.signal import fftconvolve
rate, x = wavfile.read(sys.argv[1])
_, h = wavfile.read(sys.argv[2])
y = fftconvolve(x.astype(np.float64), h.astype(np.float64), axes=0)[: len(x)]
wavfile.write(sys.argv[3], rate, y.astype(np.float32))
''')
PY

# name|command (run in $tmp)
cases=(
  "conv:audiograph|$cli render conv.json -o out_ag_conv.wav --sample-type float32 --quiet"
  "conv:audiograph-1-thread|$cli render conv.json -o out_ag_conv1.wav --sample-type float32 --quiet --threads 1"
  "conv:ffmpeg-afir|ffmpeg -v error -y -i in.wav -i ir.wav -filter_complex [0:a][1:a]afir=gtype=none -c:a pcm_f32le out_afir.wav"
  "conv:scipy-fftconvolve|python3 scipy_conv.py in.wav ir.wav out_scipy.wav"
  "comp:audiograph|$cli render comp.json -o out_ag_comp.wav --sample-type float32 --quiet"
  "comp:sox-compand|sox in.wav -e floating-point -b 32 out_sox.wav compand 0.003,0.25 6:-24,-24,0,-22 0 -90 0.006"
  "comp:ffmpeg-acompressor|ffmpeg -v error -y -i in.wav -af acompressor=threshold=0.063:ratio=12:attack=3:release=250:knee=2:makeup=1 -c:a pcm_f32le out_acomp.wav"
)

load "start${fifo:+; commands under $fifo}"
declare -A times cpus
cd "$tmp"
for c in "${cases[@]}"; do bash -c "${c#*|}" >/dev/null 2>&1 || { echo "bench-effects: failed: ${c#*|}" >&2; exit 1; }; done
for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    prefix=$fifo; [[ $c == *scipy* ]] && prefix=""   # seconds long: not worth holding a core for
    $prefix /usr/bin/time -o "$tmp/time" -f '%e %U %S' bash -c "${c#*|}" >/dev/null 2>&1
    read -r wall cpu < <(tail -1 "$tmp/time" | awk '{ print $1, $2 + $3 }')
    times[${c%%|*}]+="$wall "
    cpus[${c%%|*}]+="$cpu "
  done
done
load "end"

python3 - "$tmp" <<PY
import sys, statistics
import numpy as np
from scipy.io import wavfile
d = sys.argv[1]
def medians(raw):
    out = {}
    for line in raw.strip().splitlines():
        name, *ts = line.split()
        out[name] = statistics.median(float(t) for t in ts)
    return out
med = medians("""$(for k in "${!times[@]}"; do echo "$k ${times[$k]}"; done)""")
cpu = medians("""$(for k in "${!cpus[@]}"; do echo "$k ${cpus[$k]}"; done)""")
print("bench-effects: medians of $rounds interleaved rounds (60 s of stereo 48 kHz; whole processes: start-up and files included)")
for case, label in (("conv", "convolution, 3 s stereo response"), ("comp", "compressor")):
    ours, ours_cpu = med[case + ":audiograph"], cpu[case + ":audiograph"]
    print(f"  {label}:")
    for name in sorted(k for k in med if k.startswith(case + ":")):
        peer = name.split(":", 1)[1]
        ratio = "" if peer == "audiograph" else f"   ratio {peer}/audiograph: wall {med[name] / ours:.2f}, CPU {cpu[name] / max(ours_cpu, 1e-3):.2f}"
        print(f"    {peer:22s} wall {med[name]:7.3f} s ({60 / med[name]:6.1f}x real time)  CPU {cpu[name]:6.3f} s{ratio}")
def read(p):
    return wavfile.read(f"{d}/{p}")[1].astype(np.float64)
ag, sc, af = read("out_ag_conv.wav"), read("out_scipy.wav"), read("out_afir.wav")
if open(f"{d}/out_ag_conv.wav", "rb").read() != open(f"{d}/out_ag_conv1.wav", "rb").read():
    sys.exit("bench-effects: the one-thread convolution differs from the default render")
peak = np.max(np.abs(sc))
n = min(len(af), len(sc))
gain = float(np.sum(af[:n] * sc[:n]) / np.sum(sc[:n] * sc[:n]))
print(f"  check: audiograph vs scipy convolution: worst |error| {np.max(np.abs(ag - sc)) / peak:.2e} of the peak; "
      f"ffmpeg afir = {gain:.4f} x scipy's, then worst |error| {np.max(np.abs(af[:n] / gain - sc[:n])) / peak:.2e}")
PY
