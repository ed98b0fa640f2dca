#!/usr/bin/env python3
"""Independent reference for the convolver node: Web Audio's ConvolverNode channel rules and
normalization, with scipy.signal.fftconvolve (float64) as the convolution.

    convolution_reference.py RATE NORMALIZE in.f32 IN_CHANNELS FRAMES ir.f32 IR_CHANNELS IR_FRAMES out.f32

Files hold channel planes of float32 (channel after channel). out.f32 gets the output planes
(1 channel for mono in and a mono response, else 2), FRAMES long (the convolution's first FRAMES).
"""
import sys

import numpy as np
from scipy.signal import fftconvolve


def normalization_scale(h, rate):
    # The spec's calculateNormalizationScale, on the response at the context's rate.
    power = np.sqrt(np.sum(h.astype(np.float64) ** 2) / h.size)
    if not np.isfinite(power) or power < 0.000125:
        power = 0.000125
    scale = 0.00125 / power * 44100.0 / rate
    if h.shape[0] == 4:
        scale *= 0.5
    return scale


def main():
    rate, normalize = float(sys.argv[1]), sys.argv[2] == "1"
    x = np.fromfile(sys.argv[3], dtype=np.float32).reshape(int(sys.argv[4]), int(sys.argv[5])).astype(np.float64)
    h = np.fromfile(sys.argv[6], dtype=np.float32).reshape(int(sys.argv[7]), int(sys.argv[8])).astype(np.float64)
    frames = x.shape[1]
    if normalize:
        h = h * normalization_scale(h, rate)

    def conv(a, b):
        return fftconvolve(a, b)[:frames]

    if x.shape[0] == 1 and h.shape[0] == 1:
        y = [conv(x[0], h[0])]
    else:
        xl, xr = (x[0], x[0]) if x.shape[0] == 1 else (x[0], x[1])
        if h.shape[0] == 1:
            y = [conv(xl, h[0]), conv(xr, h[0])]
        elif h.shape[0] == 2:
            y = [conv(xl, h[0]), conv(xr, h[1])] if x.shape[0] == 2 else [conv(xl, h[0]), conv(xl, h[1])]
        else:
            y = [conv(xl, h[0]) + conv(xr, h[2]), conv(xl, h[1]) + conv(xr, h[3])]
    np.array(y, dtype=np.float32).tofile(sys.argv[9])


if __name__ == "__main__":
    main()
