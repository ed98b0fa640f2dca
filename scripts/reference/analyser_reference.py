#!/usr/bin/env python3
"""Reference frequency data for Tests/AudioGraphNodesTests/AnalyserNodeTests.swift.

The Web Audio specification's AnalyserNode frequency analysis written with numpy, independently of
the Swift code: Blackman window (alpha 0.16), X[k] = FFT(w x)[k] / N, smoothing over time
Xs[k] = tau Xs_prev[k] + (1 - tau) |X[k]| starting from zero, dB = 20 log10(Xs[k]), k < N/2.

Usage: analyser_reference.py TAU BLOCK.f32 [BLOCK.f32 ...]
Each block is N raw little-endian float32 frames, analysed in order (one read per block); prints
the N/2 dB values after the last block, one per line.
"""
import sys

import numpy as np


def main():
    tau = float(sys.argv[1])
    smoothed = None
    for path in sys.argv[2:]:
        x = np.fromfile(path, dtype="<f4").astype(np.float64)
        n = len(x)
        a = 0.16
        i = np.arange(n)
        w = (1 - a) / 2 - 0.5 * np.cos(2 * np.pi * i / n) + a / 2 * np.cos(4 * np.pi * i / n)
        magnitude = np.abs(np.fft.fft(w * x)[: n // 2]) / n
        smoothed = (1 - tau) * magnitude if smoothed is None else tau * smoothed + (1 - tau) * magnitude
    with np.errstate(divide="ignore"):
        db = 20 * np.log10(smoothed)
    sys.stdout.write("".join(f"{float(v)!r}\n" for v in db))


if __name__ == "__main__":
    main()
