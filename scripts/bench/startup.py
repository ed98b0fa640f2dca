#!/usr/bin/env python3
"""Start-up: a 0.1 s graph rendered by the CLI against SoX synthesising the same 0.1 s, whole processes.

    python3 scripts/bench/startup.py CLI [ROUNDS] [SUMMARY.tsv]

Renders a 0.1 s stereo 1 kHz sine at 48 kHz to a 16-bit WAV (`render sine.json -o a.wav --quiet`)
with a copy of the CLI made as `install` makes one (SoX runs as its package installed it): the
executable the linker just wrote takes ~20 more page faults and up to 0.3 ms more at every start
until the kernel drops it from the page cache (Docs/Performance.md "Start-up: at SoX's time"),
and `sox -n -r 48000 -c 2 -b 16 b.wav synth 0.1 sine 1000 vol 0.5`, alternating the two ROUNDS
times (default 15) after one warm-up each, every run timed as a whole process from fork to exit
(scripts/bench/spawn-time.c: vfork + exec, wall from the fork to the exit, user + system CPU from
wait4 in microseconds, peak RSS). Prints the medians and the ratios sox / ours (above 1: ours is faster); with
SUMMARY (an existing file), appends its rows to `make bench`'s one table (scripts/bench/summary.sh).
"""
import json, os, shutil, statistics, subprocess, sys, tempfile


def run(timer, argv, cwd):
    """One whole-process run through spawn-time: (wall s, CPU s, peak RSS MiB)."""
    p = subprocess.run([timer] + argv, cwd=cwd, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"startup: {' '.join(argv)} failed ({p.returncode})")
    wall, cpu, rss = p.stderr.split()[-3:]
    return float(wall), float(cpu), int(rss) / 1024


def main():
    cli = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    summary = sys.argv[3] if len(sys.argv) > 3 else None
    if not shutil.which("sox"):
        print("startup: sox is not installed (make deps-bench): skipped")
        return
    d = tempfile.mkdtemp(prefix="ag-startup-")
    try:
        timer = os.path.join(d, "spawn-time")
        subprocess.run(["gcc", "-O2", "-o", timer, os.path.join(os.path.dirname(os.path.abspath(__file__)), "spawn-time.c")], check=True)
        graph = {"version": 1, "sampleRate": 48000, "duration": 0.1,
                 "nodes": [{"id": "o", "type": "oscillator", "parameters": {"frequency": 1000, "amplitude": 0.5},
                            "properties": {"channels": 2}},
                           {"id": "out", "type": "genericOutput"}],
                 "connections": [{"from": "o", "to": "out"}]}
        with open(os.path.join(d, "sine.json"), "w") as f:
            json.dump(graph, f)
        installed = os.path.join(d, "audiograph")
        shutil.copyfile(cli, installed)
        os.chmod(installed, 0o755)
        ours = [installed, "render", "sine.json", "-o", "a.wav", "--sample-type", "int16", "--quiet"]
        sox = ["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", "b.wav", "synth", "0.1", "sine", "1000", "vol", "0.5"]
        runs = {"audiograph": [], "sox": []}
        run(timer, ours, d), run(timer, sox, d)  # warm-up: page cache
        if os.path.getsize(os.path.join(d, "a.wav")) != os.path.getsize(os.path.join(d, "b.wav")):
            sys.exit("startup: audiograph and sox wrote files of different sizes")
        for _ in range(rounds):
            runs["audiograph"].append(run(timer, ours, d))
            runs["sox"].append(run(timer, sox, d))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    med = {k: (statistics.median(r[0] for r in v) * 1e3, statistics.median(r[1] for r in v) * 1e3, max(r[2] for r in v))
           for k, v in runs.items()}
    print(f"startup: 0.1 s sine, 48 kHz stereo 16-bit WAV, {rounds} interleaved rounds, medians (whole process)")
    print(f"  {'':12s} {'wall ms':>8s} {'CPU ms':>8s} {'peak RSS MiB':>13s}")
    for k in ("audiograph", "sox"):
        w, c, m = med[k]
        print(f"  {k:12s} {w:8.2f} {c:8.2f} {m:13.1f}")
    (ow, oc, om), (sw, sc, sm) = med["audiograph"], med["sox"]
    print(f"  ratio sox/audiograph: wall {sw / ow:.2f}, CPU {sc / oc:.2f} (above 1: audiograph is faster)")
    if summary and os.path.exists(summary):
        with open(summary, "a") as f:
            f.write(f"start-up: 0.1 s render, wall\t{ow:.1f} ms\tsox {sw:.1f} ms\t{sw / ow:.2f}\t{om:.1f}\t{sm:.1f}\n")
            f.write(f"start-up: 0.1 s render, CPU\t{oc:.1f} ms\tsox {sc:.1f} ms\t{sc / oc:.2f}\t-\t-\n")

if __name__ == "__main__":
    main()
