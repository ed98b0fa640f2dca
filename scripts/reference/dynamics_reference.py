#!/usr/bin/env python3
"""Independent references for the compressor and limiter nodes, written from Docs/Nodes.md's formulas.

    dynamics_reference.py compressor RATE CHANNELS FRAMES in.f32 out.f32 threshold knee ratio attack release
    dynamics_reference.py limiter    RATE CHANNELS FRAMES in.f32 out.f32 attackTime decayTime preGain ceiling
    dynamics_reference.py dynamicsProcessor RATE CHANNELS FRAMES in.f32 out.f32 threshold headRoom expansionRatio expansionThreshold attackTime releaseTime overallGain

in.f32 holds CHANNELS planes of FRAMES float32 samples (channel after channel); out.f32 gets the
output in the same layout (the compressor prints its final reduction in dB, the limiter the
largest |sample| before its final clamp, as a multiple of the ceiling).
Parameters are constant. Float64 arithmetic in plain numpy/Python (no code shared with the Swift
kernels): the compressor is the Web Audio DynamicsCompressorNode processing algorithm with the
curve, detector and envelope choices Docs/Nodes.md states; the limiter computes the sliding
minimum, the boxcar and the release envelope directly from their definitions.
"""
import math
import sys

import numpy as np


def db_to_linear(db):
    return 10.0 ** (db / 20.0)


def curve(x, t, k, r):
    if x <= t:
        return x
    if x < t + k:
        d = x - t
        return x + (1.0 / r - 1.0) * d * d / (2.0 * k)
    return t + k * (1.0 + 1.0 / r) / 2.0 + (x - t - k) / r


def compressor(rate, x, t, k, r, attack, release):
    channels, frames = x.shape
    delay = int(round(0.006 * rate))
    makeup = db_to_linear(-0.6 * curve(0.0, t, k, r))
    lin_t = db_to_linear(t)
    attack_step = db_to_linear(-10.0 / (attack * rate)) if attack * rate > 0 else 0.0
    release_step = db_to_linear(10.0 / (release * rate)) if release * rate > 0 else math.inf
    g = 1.0
    y = np.zeros_like(x)
    padded = np.concatenate([np.zeros((channels, delay), dtype=np.float32), x], axis=1)
    level = np.max(np.abs(x), axis=0).astype(np.float64)
    gains = np.zeros(frames, dtype=np.float32)
    for n in range(frames):
        v = level[n]
        a = 1.0
        if v >= 0.0001 and v > lin_t:
            db = 20.0 * math.log10(v)
            a = db_to_linear(curve(db, t, k, r) - db)
        detector = min(1.0, a)
        if a > g:
            g = 1.0 if math.isinf(release_step) else min(1.0, g * release_step)
        else:
            g = max(detector, g * attack_step)
        gains[n] = np.float32(g * makeup)
    y = (padded[:, :frames] * gains[np.newaxis, :]).astype(np.float32)
    return y, 20.0 * math.log10(g)


def limiter(rate, x, attack, decay, pre_gain_db, ceiling_db):
    channels, frames = x.shape
    look = max(1, int(round(attack * rate)))
    w = min(look + 1, max(1, int(round(attack * rate))))
    pre = np.float32(10.0 ** (pre_gain_db / 20.0))
    ceil = np.float32(10.0 ** (ceiling_db / 20.0))
    p = (x * pre).astype(np.float32)
    peak = np.max(np.abs(p), axis=0).astype(np.float64)
    required = np.where(peak > ceil, np.float64(ceil) / np.maximum(peak, 1e-300), 1.0)
    # m[n] = min(required[n - L .. n]); frames before the start need no reduction (1).
    history = np.concatenate([np.ones(look), required])
    m = np.array([history[n:n + look + 1].min() for n in range(frames)])
    mh = np.concatenate([np.ones(w - 1), m])
    s = np.minimum(1.0, np.array([mh[n:n + w].sum() / w for n in range(frames)]))
    k = 1.0 - math.exp(-1.0 / (decay * rate))
    e = 1.0
    env = np.zeros(frames)
    for n in range(frames):
        e = s[n] if s[n] < e else e + (s[n] - e) * k
        env[n] = e
    delayed = np.concatenate([np.zeros((channels, look), dtype=np.float32), p], axis=1)[:, :frames]
    unclamped = (delayed * env.astype(np.float32)[np.newaxis, :]).astype(np.float32)
    print(float(np.max(np.abs(unclamped))) / float(ceil))
    return np.clip(unclamped, -ceil, ceil)


def dynamics_processor(rate, x, t, h, er, et, attack, release, overall):
    a, r = math.exp(-1.0 / (attack * rate)), math.exp(-1.0 / (release * rate))
    level = np.max(np.abs(x), axis=0).astype(np.float64)
    g = 0.0
    gains = np.zeros(x.shape[1], dtype=np.float32)
    for n in range(x.shape[1]):
        lv = 20.0 * math.log10(level[n]) if level[n] > 1e-6 else -120.0
        if lv > t:
            goal = t + h * (1.0 - math.exp(-(lv - t) / h)) - lv
        elif lv < et:
            goal = (lv - et) * (er - 1.0)
        else:
            goal = 0.0
        g = goal + (g - goal) * (a if goal < g else r)
        gains[n] = np.float32(10.0 ** ((g + overall) / 20.0))
    print(g)
    return (x * gains[np.newaxis, :]).astype(np.float32)


def main():
    kind, rate, channels, frames, src, dst = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
    values = [float(v) for v in sys.argv[7:]]
    x = np.fromfile(src, dtype=np.float32).reshape(channels, frames)
    if kind == "compressor":
        y, reduction = compressor(rate, x, *values)
        print(reduction)
    elif kind == "dynamicsProcessor":
        y = dynamics_processor(rate, x, *values)
    else:
        y = limiter(rate, x, *values)
    y.astype(np.float32).tofile(dst)


if __name__ == "__main__":
    main()
