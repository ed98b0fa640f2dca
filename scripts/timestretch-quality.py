#!/usr/bin/env python3
"""Quality of time-stretching at tempo 1.25 (pitch kept, and shifted +300 cents): timePitch's modes beside the peers.

usage: scripts/timestretch-quality.py [AUDIOGRAPH]   (default .build/release/audiograph)

Per engine, three figures (Docs/Performance.md "Time-stretch"):
  pitch   a 3 s, 440 Hz sine (0.5): the output's spectral peak (Hann window over the middle
          60 %, FFT zero-padded to 2^22 points) in cents from 440 Hz; and the frequency from
          zero crossings over the same stretch.
  shifted the same sine at tempo 1.25 with the pitch shifted +300 cents (ours: `pitch` 300;
          rubberband -p 3; ffmpeg's filter pitch=2^(3/12); sox `pitch 300` before `tempo`): the
          spectral peak measured the same way, in cents from 440 * 2^(3/12) = 523.25 Hz.
  smear   a click train (a 2 ms decaying noise burst every 0.5 s, 6 s): per click, the shortest
          interval holding 90 % of the energy within +-60 ms of where the click belongs; median
          over the clicks, in ms (the input's own: about 1 ms).
  offset  the largest distance between a click's energy centroid (within +-60 ms) and where
          it belongs (its input time / 1.25), in ms: the time scale's accuracy and latency.
  kept    the clicks that come out: those with at least a quarter of the input click's energy
          within +-60 ms of where they belong (WSOLA skips input in pieces at rates above 1).
  stereo  a spaced pair (6 s of a chord plus noise; the right channel 0.8 x the left, 24 frames
          (0.5 ms) later): the output's normalized cross-correlation peak between the channels
          (the input: 1.000) and its lag in frames (the input: 24). One stereo stretcher locks
          the channels' phases; timePitch `finer` in a file render stretches each channel alone.
  length  output frames of the 6 s click train against 6 s / 1.25 = 230400 frames (ours: the
          graph's duration; the peers: their own).
Peers: `sox tempo -m 1.25` (WSOLA), ffmpeg's `rubberband=tempo=1.25` (R2, real-time mode),
`rubberband -3 -T1.25` (R3, offline mode), `rubberband -T1.25` (R2, offline mode).
"""
import json, os, subprocess, sys, tempfile
import numpy as np
import soundfile as sf

SR, TEMPO = 48000, 1.25
AG = sys.argv[1] if len(sys.argv) > 1 else ".build/release/audiograph"


def inputs(d):
    t = np.arange(3 * SR) / SR
    sf.write(os.path.join(d, "sine.wav"), (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), SR, subtype="FLOAT")
    x = np.zeros(6 * SR, dtype=np.float32)
    rng = np.random.default_rng(7)
    burst = (rng.standard_normal(96) * np.exp(-np.arange(96) / 20)).astype(np.float32) * 0.5
    clicks = np.arange(int(0.25 * SR), 6 * SR - SR // 4, SR // 2)
    for c in clicks:
        x[c:c + 96] += burst
    sf.write(os.path.join(d, "clicks.wav"), x, SR, subtype="FLOAT")
    rng = np.random.default_rng(3)
    t = np.arange(6 * SR) / SR
    left = sum(np.sin(2 * np.pi * f * t) for f in (110, 220, 277, 330, 440)) * 0.1 + 0.05 * rng.standard_normal(len(t))
    right = 0.8 * np.concatenate([np.zeros(24), left[:-24]])
    sf.write(os.path.join(d, "spaced.wav"), np.stack([left, right], 1).astype(np.float32), SR, subtype="FLOAT")
    return clicks


def coherence(y):
    """The peak of the normalized cross-correlation between the channels (middle 4 s) and its lag (frames)."""
    a, b = y[SR:-SR, 0], y[SR:-SR, 1]
    c = np.fft.irfft(np.fft.rfft(a, 2 * len(a)) * np.conj(np.fft.rfft(b, 2 * len(b))))
    k = int(np.argmax(np.abs(c)))
    return c[k] / np.sqrt((a ** 2).sum() * (b ** 2).sum()), -(k if k < len(a) else k - 2 * len(a))


SHIFT = 300


def audiograph(quality, cents=0):
    def run(src, dst, d):
        frames, channels = sf.info(src).frames, sf.info(src).channels
        g = {"version": 1, "sampleRate": SR, "duration": frames / SR / TEMPO,
             "nodes": [{"id": "in", "type": "player", "properties": {"file": src}},
                       {"id": "tp", "type": "timePitch", "parameters": {"rate": TEMPO, "pitch": cents}, "properties": {"quality": quality}},
                       {"id": "out", "type": "genericOutput", "properties": {"format": {"channels": channels}}}],
             "connections": [{"from": "in", "to": "tp"}, {"from": "tp", "to": "out"}]}
        gp = os.path.join(d, "g.json")
        with open(gp, "w") as f:
            json.dump(g, f)
        subprocess.run([AG, "render", gp, "-o", dst, "--sample-type", "float32", "--quiet"], check=True)
    return run


def cmd(argv):
    def run(src, dst, d):
        subprocess.run([a.replace("IN", src).replace("OUT", dst) for a in argv], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return run


# (name, the stretch, the stretch with the pitch shifted +SHIFT cents)
ENGINES = [
    ("timePitch finer (R3)", audiograph("finer"), audiograph("finer", SHIFT)),
    ("timePitch faster (R2)", audiograph("faster"), audiograph("faster", SHIFT)),
    ("timePitch fastest (WSOLA)", audiograph("fastest"), audiograph("fastest", SHIFT)),
    ("rubberband -3 (R3 offline)", cmd(["rubberband", "-q", "-3", "-T1.25", "IN", "OUT"]),
     cmd(["rubberband", "-q", "-3", "-T1.25", "-p%g" % (SHIFT / 100), "IN", "OUT"])),
    ("rubberband (R2 offline)", cmd(["rubberband", "-q", "-T1.25", "IN", "OUT"]),
     cmd(["rubberband", "-q", "-T1.25", "-p%g" % (SHIFT / 100), "IN", "OUT"])),
    ("ffmpeg rubberband (R2 real-time)", cmd(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", "IN",
                                              "-af", "rubberband=tempo=1.25", "-c:a", "pcm_f32le", "OUT"]),
     cmd(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", "IN",
          "-af", "rubberband=tempo=1.25:pitch=%.9f" % 2 ** (SHIFT / 1200), "-c:a", "pcm_f32le", "OUT"])),
    ("sox tempo -m (WSOLA)", cmd(["sox", "IN", "-e", "floating-point", "-b", "32", "OUT", "tempo", "-m", "1.25"]),
     cmd(["sox", "IN", "-e", "floating-point", "-b", "32", "OUT", "pitch", "%d" % SHIFT, "tempo", "-m", "1.25"])),
]


def pitch(y, expected=440.0):
    seg = y[int(0.2 * len(y)):int(0.8 * len(y))]
    spec = np.abs(np.fft.rfft(seg * np.hanning(len(seg)), 1 << 22))
    peak = np.argmax(spec) * SR / (1 << 22)
    zc = np.where((seg[:-1] < 0) & (seg[1:] >= 0))[0]
    fz = (len(zc) - 1) * SR / (zc[-1] - zc[0])
    return 1200 * np.log2(peak / expected), fz


def timing(y, clicks):
    """The largest distance (ms) between a click's energy centroid and where it belongs (c / tempo)."""
    worst = 0.0
    for c in clicks[1:-1]:
        centre = int(round(c / TEMPO))
        lo = max(0, centre - int(0.06 * SR))
        w = y[lo:centre + int(0.06 * SR)].astype(np.float64) ** 2
        if w.sum() > 0:
            worst = max(worst, abs((np.arange(len(w)) + lo) @ w / w.sum() - centre) / SR * 1000)
    return worst


def kept(y, x, clicks):
    """How many of the clicks (all but the first and last) keep a quarter of their energy within +-60 ms of their place."""
    n = 0
    for c in clicks[1:-1]:
        centre = int(round(c / TEMPO))
        e = np.sum(y[max(0, centre - int(0.06 * SR)):centre + int(0.06 * SR)].astype(np.float64) ** 2)
        n += e >= 0.25 * np.sum(x[c:c + 96].astype(np.float64) ** 2)
    return "%d/%d" % (n, len(clicks) - 2)


def smear(y, clicks):
    widths = []
    for c in clicks[1:-1]:
        centre = int(round(c / TEMPO))
        w = y[max(0, centre - int(0.06 * SR)):centre + int(0.06 * SR)].astype(np.float64) ** 2
        total = w.sum()
        if total <= 0:
            continue
        cs = np.concatenate([[0], np.cumsum(w)])
        best = len(w)
        j = 0
        for i in range(len(w) + 1):   # shortest [i, j) with 90 % of the energy
            while j <= len(w) and cs[j] - cs[i] < 0.9 * total:
                j += 1
            if j > len(w):
                break
            best = min(best, j - i)
        widths.append(best / SR * 1000)
    return float(np.median(widths))


def main():
    with tempfile.TemporaryDirectory() as d:
        clicks = inputs(d)
        print("| engine | pitch: spectral peak (cents) | zero-crossing Hz | pitch +%d cents: spectral peak (cents) | transient 90 %% width (ms) | worst click offset (ms) | clicks kept | stereo: coherence, lag | length (frames, expected 230400) |" % SHIFT)
        print("|---|---|---|---|---|---|---|---|---|")
        x, _ = sf.read(os.path.join(d, "clicks.wav"))
        print("| input | 0.00 | 440.00 | | %.1f | 0 | %d/%d | 1.000, 24 | 288000 (in) |" % (smear_input(d, clicks), len(clicks) - 2, len(clicks) - 2))
        for name, run, shifted in ENGINES:
            a, b = os.path.join(d, "a.wav"), os.path.join(d, "b.wav")
            run(os.path.join(d, "sine.wav"), a, d)
            run(os.path.join(d, "clicks.wav"), b, d)
            st = os.path.join(d, "st.wav")
            run(os.path.join(d, "spaced.wav"), st, d)
            ys, _ = sf.read(st)
            ya, _ = sf.read(a)
            yb, _ = sf.read(b)
            ya = ya if ya.ndim == 1 else ya[:, 0]
            yb = yb if yb.ndim == 1 else yb[:, 0]
            c, fz = pitch(ya)
            sh = os.path.join(d, "sh.wav")
            shifted(os.path.join(d, "sine.wav"), sh, d)
            ysh, _ = sf.read(sh)
            cs, _ = pitch(ysh if ysh.ndim == 1 else ysh[:, 0], 440 * 2 ** (SHIFT / 1200))
            print("| %s | %+.2f | %.2f | %+.2f | %.1f | %.1f | %s | %.3f, %d | %d |" % (name, c, fz, cs, smear(yb, clicks), timing(yb, clicks),
                                                                          kept(yb, x, clicks), *coherence(ys), len(yb)))


def smear_input(d, clicks):
    x, _ = sf.read(os.path.join(d, "clicks.wav"))
    global TEMPO
    saved, TEMPO = TEMPO, 1.0
    try:
        return smear(x, clicks)
    finally:
        TEMPO = saved


if __name__ == "__main__":
    main()
