#!/usr/bin/env python3
"""Independent reference for the waveShaper node: Web Audio's curve indexing in numpy, and the
documented oversampling (scipy.signal.firwin taps, scipy.signal.upfirdn up and down).

    waveshaper_reference.py FACTOR in.f32 FRAMES curve.f32 out.f32 taps.f64

in.f32: FRAMES float32 samples (one channel); curve.f32: the curve; out.f32 gets FRAMES outputs;
taps.f64 gets the filter (float64) for comparison with the node's own design.
"""
import sys

import numpy as np
from scipy.signal import firwin, upfirdn


def shape(x, curve):
    n = len(curve)
    v = (n - 1) / 2.0 * (x.astype(np.float64) + 1.0)
    y = np.empty_like(v)
    low, high = ~(v > 0), v >= n - 1
    mid = ~(low | high)
    k = np.floor(v[mid]).astype(np.int64)
    f = v[mid] - k
    y[mid] = (1 - f) * curve[k] + f * curve[k + 1]
    y[low] = curve[0]
    y[high] = curve[n - 1]
    return y


def main():
    factor = int(sys.argv[1])
    x = np.fromfile(sys.argv[2], dtype=np.float32)[: int(sys.argv[3])].astype(np.float64)
    curve = np.fromfile(sys.argv[4], dtype=np.float32).astype(np.float64)
    if factor == 1:
        y = shape(x, curve)
        taps = np.array([1.0])
    else:
        taps = firwin(32 * factor + 1, 1.0 / factor, window=("kaiser", 8.0))
        up = upfirdn(taps * factor, x, up=factor)[: len(x) * factor]
        y = upfirdn(taps, shape(up, curve), down=factor)[: len(x)]
    y.astype(np.float32).tofile(sys.argv[5])
    taps.astype(np.float64).tofile(sys.argv[6])


if __name__ == "__main__":
    main()
