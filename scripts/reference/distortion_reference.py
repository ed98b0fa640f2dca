#!/usr/bin/env python3
"""Reference output of the `distortion` node for Tests/AudioGraphNodesTests/DistortionNodeTests.swift.

The formulas of Docs/Nodes.md ("distortion") written again in Python, independently of the Swift
code, in float64 with the C library's exp/pow/sin (Python's math module), per frame and channel:

  u  = g x,                     g = 10^(softClipGain/20)
  e  = d[n-D], d[n] = u + r e   D = max(1, floor(delay fs/1000 + 1/2)) (at most 500 ms), r = exp(-decay)
  s1 = (1-m1) u + m1 e          m1 = delayMix/100
  h  = s1 held for P frames     P = max(1, floor(2^(6 decimation/100) + 1/2)), hold counter shared by channels
  q  = D_q floor(h/D_q + 1/2)   D_q = 2^(1-b), b = 24 - floor(23 rounding/100 + 1/2)
  s2 = (1-m2) s1 + m2 q         m2 = decimationMix/100
  s3 = (1-m3) s2 + m3 (a1 s2 + a2 s2 s2 + a3 s2 s2 s2)
  c  = (1-B) sin(2 pi phi1) + B sin(2 pi phi2), phi_k += f_k/fs mod 1 (phases start at 0)
  s4 = (1-m4) s3 + m4 s3 c
  s5 = s4 - (4/27) s4^3 for |s4| <= 1.5, else sign(s4)
  y  = (1-mf) x + mf s5         (y = x exactly when mf = 0)

Echo-line values below 1e-30 in magnitude are stored as 0.

Usage: distortion_reference.py FS CHANNELS INPUT.f32 PARAMS.f32 OUTPUT.f32
INPUT: CHANNELS x N float32 (channel after channel); PARAMS: 16 x N float32 (one row of N
per-frame values per parameter, AUDistortion's order); OUTPUT: CHANNELS x N float32.
"""
import math
import sys

import numpy as np


def settings(v, fs, max_delay):
    bits = 24 - int(math.floor(23 * v[4] / 100 + 0.5))
    return dict(
        D=min(max_delay, max(1, int(math.floor(v[0] * fs / 1000 + 0.5)))),
        r=math.exp(-v[1]), m1=v[2] / 100,
        P=max(1, int(math.floor(math.pow(2.0, 6 * v[3] / 100) + 0.5))),
        dq=math.ldexp(1.0, 1 - bits), inv=math.ldexp(1.0, bits - 1), m2=v[5] / 100,
        a1=v[6], a2=v[7], a3=v[8], m3=v[9] / 100,
        i1=v[10] / fs, i2=v[11] / fs, B=v[12] / 100, m4=v[13] / 100,
        g=math.pow(10, v[14] / 20), mf=v[15] / 100)


def main():
    fs = float(sys.argv[1])
    channels = int(sys.argv[2])
    x = np.fromfile(sys.argv[3], dtype="<f4").astype(np.float64).reshape(channels, -1)
    params = np.fromfile(sys.argv[4], dtype="<f4").astype(np.float64).reshape(16, -1)
    n_frames = x.shape[1]
    capacity = int(math.ceil(500 * fs / 1000)) + 2
    max_delay = capacity - 1
    line = [[0.0] * capacity for _ in range(channels)]
    held = [0.0] * channels
    xs = x.tolist()
    rows = [tuple(r) for r in params.T.tolist()]
    y = [[0.0] * n_frames for _ in range(channels)]
    w = 0
    counter = 0
    phi1 = phi2 = 0.0
    last_row, s = None, None
    for n in range(n_frames):
        row = rows[n]
        if row != last_row:
            s = settings(row, fs, max_delay)
            last_row = row
        if counter >= s["P"]:
            counter = 0
        read = (w - s["D"]) % capacity
        carrier = (1 - s["B"]) * math.sin(2 * math.pi * phi1) + s["B"] * math.sin(2 * math.pi * phi2)
        for c in range(channels):
            xv = xs[c][n]
            u = s["g"] * xv
            e = line[c][read]
            d = u + s["r"] * e
            if not math.isfinite(d) or abs(d) < 1e-30:
                d = 0.0
            line[c][w] = d
            s1 = (1 - s["m1"]) * u + s["m1"] * e
            if counter == 0:
                held[c] = s1
            q = s["dq"] * math.floor(held[c] * s["inv"] + 0.5)
            s2 = (1 - s["m2"]) * s1 + s["m2"] * q
            p = s["a1"] * s2 + s["a2"] * s2 * s2 + s["a3"] * s2 * s2 * s2
            s3 = (1 - s["m3"]) * s2 + s["m3"] * p
            s4 = (1 - s["m4"]) * s3 + s["m4"] * s3 * carrier
            s5 = 1.0 if s4 > 1.5 else -1.0 if s4 < -1.5 else s4 - (4 / 27) * s4 * s4 * s4
            y[c][n] = xv if s["mf"] == 0 else (1 - s["mf"]) * xv + s["mf"] * s5
        w = (w + 1) % capacity
        counter += 1
        phi1 += s["i1"]
        phi1 -= math.floor(phi1)
        phi2 += s["i2"]
        phi2 -= math.floor(phi2)
    np.array(y, dtype="<f4").tofile(sys.argv[5])


if __name__ == "__main__":
    main()
