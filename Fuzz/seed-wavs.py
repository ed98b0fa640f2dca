#!/usr/bin/env python3
"""Writes small WAV seeds for the WAV-reader fuzzer: 16-bit PCM, 24-bit PCM, 32-bit float,
WAVE_FORMAT_EXTENSIBLE, 8-bit and a file with an extra chunk before the data."""
import struct
import sys
import base64
from pathlib import Path


def wav(tag, channels, rate, bits, frames, extensible=False, extra_chunk=False):
    block = channels * bits // 8
    if extensible:
        fmt = struct.pack("<HHIIHHHHI16s", 0xFFFE, channels, rate, rate * block, block, bits, 22, bits,
                          (1 << channels) - 1, struct.pack("<H", tag) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71")
    else:
        fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    data = bytes((i * 37) & 0xFF for i in range(frames * block))
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt
    if extra_chunk:
        chunks += b"LIST" + struct.pack("<I", 4) + b"INFO"
    chunks += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
seeds = {
    "pcm16-stereo.wav": wav(1, 2, 44100, 16, 32),
    "pcm24-mono.wav": wav(1, 1, 48000, 24, 32),
    "float32-stereo.wav": wav(3, 2, 48000, 32, 16),
    "extensible-pcm16.wav": wav(1, 2, 48000, 16, 16, extensible=True),
    "pcm8-mono.wav": wav(1, 1, 8000, 8, 64),
    "list-chunk.wav": wav(1, 1, 22050, 16, 16, extra_chunk=True),
}
# The inputs on which libsndfile 1.2.0's sf_open looped (found by this fuzzer in CI runs; the
# check in Sources/AudioGraphNodes/WAVHeaderCheck.swift refuses them): kept as seeds so every run
# starts from them and from their neighbours.
seeds["hang-list-202.wav"] = base64.b64decode(
    "UklGRlAAAABXQVZFZm10IBAAAAABAAEAIlYAAESsAAACABAATElTVAT/////////////////////////////////////////"
    "////////////////////////////////////////////////////////////////////////////////////////////////"
    "/////////////////////9////////8AAABJTkZPZGF0YSD//wAAAEreA7zh5AkuLVN4nTcYDDFXew==")
seeds["hang-list-175.wav"] = base64.b64decode(
    "UklGRlADAABXQVZFZm10IBAAAAABAAEAIlYAAESsAAACABAATElTVAQAAABJTkZPZGF0YSAAAAADJUpvlLneRWZtdCAQAAAA"
    "AQABACJWAABErAAAAgAQAExJU1QEdCAQAAAAAQAAAABJTkZPZGH//////////////////////////////////////////////"
    "////////////////////+////8ASU5GT2RhdGEgAA==")
for name, data in seeds.items():
    (out / name).write_bytes(data)
