#!/usr/bin/env python3
"""Reference numbers for Tests/AudioGraphCoreTests/Testing/ToneFitTests.swift.

Builds the same test signal as the Swift test (tones by formula plus an integer LCG noise that both
sides compute exactly), fits it with agcheck.tone_fit's method (numpy.linalg.lstsq, DC + cos/sin
per tone) and prints the fitted amplitudes, phases, DC and THD+N to paste into the test.
Run: python3 scripts/reference/tone_fit_reference.py
"""
import math

import numpy as np

SR = 44100.0
N = 10000
FIT = [1000.5, 3333.3]


def lcg_noise(count, seed=12345):
    """state = (1103515245*state + 12345) mod 2^31; value = state/2^31*2 - 1, in -1...1."""
    out = np.empty(count)
    s = seed
    for i in range(count):
        s = (1103515245 * s + 12345) % 2147483648
        out[i] = s / 2147483648.0 * 2.0 - 1.0
    return out


n = np.arange(N, dtype=np.float64)
x = (0.01
     + 0.3 * np.sin(2 * np.pi * 1000.5 * n / SR + 0.7)
     + 0.05 * np.sin(2 * np.pi * 3333.3 * n / SR - 1.2)
     + 0.001 * np.sin(2 * np.pi * 7000.0 * n / SR)
     + 1e-3 * lcg_noise(N))

cols = [np.ones(N)]
for f in FIT:
    w = 2 * np.pi * f * n / SR
    cols += [np.cos(w), np.sin(w)]
M = np.stack(cols, axis=1)
coef, *_ = np.linalg.lstsq(M, x, rcond=None)
resid = x - M @ coef
rms = lambda v: math.sqrt(float(np.mean(v * v)))
print(f"dc = {float(coef[0])!r}")
for i, f in enumerate(FIT):
    a, b = coef[1 + 2 * i], coef[2 + 2 * i]
    print(f"{f}: amplitude {math.hypot(a, b)!r} phase {math.atan2(a, b)!r}")
print(f"residualRMS = {rms(resid)!r}")
print(f"thdPlusNoiseDB = {20 * math.log10(rms(resid) / rms(x - resid))!r}")
