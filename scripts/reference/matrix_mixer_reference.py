#!/usr/bin/env python3
"""numpy's matrix mixer: the independent reference of MatrixMixerNodeTests.

Usage: matrix_mixer_reference.py SPEC.json INPUT.f32
  SPEC: {"rate", "frames", "inputs": I, "outputs": O, "parameters": {address: value},
         "automation": {address: [[kind, value, time], ...]}}  (kind "set" or "linear", Web Audio's
         setValueAtTime / linearRampToValueAtTime; before the first event the parameter's value)
  INPUT: I x frames raw little-endian float32, channel after channel.
Per frame n (time n / rate), with every gain at that time:
  y[o, n] = volume * outputChannel.o.volume * sum_i crosspoint.i.o * inputChannel.i.volume * x[i, n]
Defaults: crosspoints 0, volumes 1. Writes O x frames raw little-endian float64 to standard output.
"""
import json
import sys

import numpy as np

spec = json.load(open(sys.argv[1]))
rate, frames, ni, no = spec["rate"], spec["frames"], spec["inputs"], spec["outputs"]
x = np.fromfile(sys.argv[2], dtype="<f4").astype(np.float64).reshape(ni, frames)
t = np.arange(frames) / rate


def trace(address, default):
    value = float(spec["parameters"].get(address, default))
    v = np.full(frames, value)
    previous_time, previous_value = 0.0, value
    for kind, target, time in spec["automation"].get(address, []):
        if kind == "set":
            v[t >= time] = target
        else:  # linear ramp from the previous event to (time, target), then held
            inside = (t >= previous_time) & (t < time)
            v[inside] = previous_value + (target - previous_value) * (t[inside] - previous_time) / (time - previous_time)
            v[t >= time] = target
        previous_time, previous_value = time, target
    return v


master = trace("volume", 1)
inputs = np.stack([trace(f"inputChannel.{i}.volume", 1) for i in range(ni)])
outputs = np.stack([trace(f"outputChannel.{o}.volume", 1) for o in range(no)])
cross = np.stack([np.stack([trace(f"crosspoint.{i}.{o}", 0) for o in range(no)]) for i in range(ni)])  # [i, o, n]
# The matrix multiply per frame: y[:, n] = G[n]^T (v_in[:, n] * x[:, n]).
y = np.einsum("ion,in->on", cross, inputs * x) * outputs * master
sys.stdout.buffer.write(y.astype("<f8").tobytes())
