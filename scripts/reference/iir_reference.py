#!/usr/bin/env python3
"""scipy's IIR filtering and frequency response: the independent reference of IIRFilterNodeTests.

Usage: iir_reference.py B A INPUT.f32 SAMPLE_RATE FREQUENCIES
  B, A          comma-separated feedforward / feedback coefficients (Web Audio's order: b0, b1, ...)
  INPUT.f32     raw little-endian float32 samples
  SAMPLE_RATE   Hz
  FREQUENCIES   comma-separated frequencies in Hz for the response
Writes to standard output, as raw little-endian float64: scipy.signal.lfilter(b, a, x) (len(x)
values), then |H| and arg H from scipy.signal.freqz(b, a, worN=frequencies, fs=SAMPLE_RATE).
"""
import sys

import numpy as np
from scipy import signal

b = np.array([float(v) for v in sys.argv[1].split(",")])
a = np.array([float(v) for v in sys.argv[2].split(",")])
x = np.fromfile(sys.argv[3], dtype="<f4").astype(np.float64)
fs = float(sys.argv[4])
freqs = np.array([float(v) for v in sys.argv[5].split(",")])
y = signal.lfilter(b, a, x)
_, h = signal.freqz(b, a, worN=freqs, fs=fs)
sys.stdout.buffer.write(np.concatenate([y, np.abs(h), np.angle(h)]).astype("<f8").tobytes())
