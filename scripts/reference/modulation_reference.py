#!/usr/bin/env python3
"""numpy's amplitude and frequency modulation: the independent reference of ParameterConnectionTests.

Usage: modulation_reference.py am FC G FM A SAMPLE_RATE FRAMES
         y[n] = sin(2 pi FC n / sr) * (G + A sin(2 pi FM n / sr))        (a gain modulated by an LFO)
       modulation_reference.py fm FC D FM SAMPLE_RATE FRAMES
         f[n] = FC + D sin(2 pi FM n / sr),  p[0] = 0,  p[n+1] = p[n] + f[n] / sr,  y[n] = sin(2 pi p[n])
Writes FRAMES raw little-endian float64 samples to standard output.
"""
import sys

import numpy as np

kind = sys.argv[1]
if kind == "am":
    fc, g, fm, a, sr, frames = (float(v) for v in sys.argv[2:8])
    n = np.arange(int(frames))
    y = np.sin(2 * np.pi * fc * n / sr) * (g + a * np.sin(2 * np.pi * fm * n / sr))
else:
    fc, d, fm, sr, frames = (float(v) for v in sys.argv[2:7])
    n = np.arange(int(frames))
    f = fc + d * np.sin(2 * np.pi * fm * n / sr)
    p = np.concatenate([[0.0], np.cumsum(f[:-1] / sr)])
    y = np.sin(2 * np.pi * p)
sys.stdout.buffer.write(y.astype("<f8").tobytes())
