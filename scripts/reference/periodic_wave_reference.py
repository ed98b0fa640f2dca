#!/usr/bin/env python3
"""numpy's Web Audio PeriodicWave oscillator: the independent reference of OscillatorNodeTests.

Usage: periodic_wave_reference.py REAL IMAG DISABLE_NORMALIZATION FREQUENCY SAMPLE_RATE FRAMES
  REAL, IMAG   comma-separated Fourier terms a_k, b_k (index 0, the DC term, ignored)
Writes FRAMES raw little-endian float64 samples to standard output:
  x[n] = s * sum_{k >= 1, k f < sr/2} a_k cos(2 pi k p_n) + b_k sin(2 pi k p_n),  p_n = n f / sr mod 1,
with s = 1 / max|x~(t)| (the whole series, sampled exactly at 2^20 phases by an inverse FFT)
unless DISABLE_NORMALIZATION is 1.
"""
import sys

import numpy as np

a = np.array([float(v) for v in sys.argv[1].split(",")])
b = np.array([float(v) for v in sys.argv[2].split(",")])
disable = sys.argv[3] == "1"
f, sr, frames = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
a[0] = b[0] = 0
scale = 1.0
if not disable:
    n = 1 << 20
    spectrum = np.zeros(n // 2 + 1, dtype=complex)
    spectrum[: len(a)] = (a - 1j * b) * n / 2
    scale = 1 / np.max(np.abs(np.fft.irfft(spectrum, n)))
k = np.arange(len(a))
keep = (k >= 1) & (k * f < sr / 2)
p = np.mod(np.arange(frames) * f / sr, 1.0)
angles = 2 * np.pi * np.outer(p, k[keep])
x = scale * (np.cos(angles) @ a[keep] + np.sin(angles) @ b[keep])
sys.stdout.buffer.write(x.astype("<f8").tobytes())
