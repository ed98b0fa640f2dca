#!/usr/bin/env python3
"""numpy's Web Audio AudioBufferSourceNode playhead: the independent reference of BufferSourceNodeTests.

Usage: buffer_source_reference.py BUFFER.f32 RATE LOOP LOOP_START LOOP_END OFFSET FRAMES
  BUFFER.f32   raw little-endian float32 mono samples (the buffer)
  RATE         computed playback rate (playbackRate * 2^(detune/1200)), buffer frames per output frame
  LOOP         1 or 0; LOOP_START, LOOP_END, OFFSET in buffer frames (LOOP_END 0: the buffer's end)
Writes FRAMES raw little-endian float64 samples: the buffer linearly interpolated at the playhead
p_n = OFFSET + n*RATE, wrapped into [LOOP_START, LOOP_END) when looping (the right neighbour of the
last loop frame is the loop start), 0 once the playhead leaves the buffer when not looping.
"""
import math
import sys

import numpy as np

x = np.fromfile(sys.argv[1], dtype="<f4").astype(np.float64)
rate = float(sys.argv[2])
loop = sys.argv[3] == "1"
ls, le, offset = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
frames = int(sys.argv[7])
n = len(x)
if not (0 <= ls < le) or le == 0:
    ls, le = 0.0, float(n)
le = min(le, n)
span = le - ls
end_index = math.ceil(le)
y = np.zeros(frames)
for k in range(frames):
    p = offset + k * rate
    if loop:
        if p >= le or p < ls:
            p = ls + math.fmod(p - ls, span)
            if p < ls:
                p += span
    elif p >= n or p < 0:
        break
    i = math.floor(p)
    f = p - i
    nxt = i + 1
    if loop and nxt >= end_index:
        nxt = math.floor(ls) + (nxt - end_index)
    a = x[i] if 0 <= i < n else 0.0
    b = x[nxt] if 0 <= nxt < n else 0.0
    y[k] = a + (b - a) * f
sys.stdout.buffer.write(y.astype("<f8").tobytes())
