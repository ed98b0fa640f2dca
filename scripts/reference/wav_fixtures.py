#!/usr/bin/env python3
"""WAV files written by libsndfile (through Python's soundfile), printed as base64 for
Tests/AudioGraphCoreTests/Testing/WAVFileTests.swift: an independent writer for WAVFile's reader.
Run: python3 scripts/reference/wav_fixtures.py
"""
import base64
import io

import numpy as np
import soundfile as sf

# frames x channels; every value is exact in 16-bit (k/32768) and in float32.
STEREO = np.array([[0.5, -0.25], [1.0 - 1 / 32768, -1.0], [0.125, 0.0], [-0.5, 0.75]])
MONO = STEREO[:, :1]

for name, data, fmt, subtype in [
    ("float32Stereo", STEREO, "WAV", "FLOAT"),
    ("int16Stereo", STEREO, "WAV", "PCM_16"),
    ("int24Mono", MONO, "WAV", "PCM_24"),
    ("float64Mono", MONO, "WAV", "DOUBLE"),
    ("extensibleFloat32Stereo", STEREO, "WAVEX", "FLOAT"),
]:
    buf = io.BytesIO()
    sf.write(buf, data, 22050, format=fmt, subtype=subtype)
    print(f'    static let {name} = "{base64.b64encode(buf.getvalue()).decode()}"')
