#!/usr/bin/env python3
"""Writes a deterministic General MIDI song (Standard MIDI File, format 1) for benchmarks and tests.

    scripts/bench/make-gm-song.py OUT.mid [SECONDS]   (default 180 s)

Eight tracks at 120 BPM (with a tempo dip to 100 BPM in the middle third): piano chords, a
bass line, a string pad, a lead melody with program changes and pitch bends, an arpeggio,
a brass stab, a choir pad, and drums on channel 10 (kick, snare, hats, crash). Written byte by
byte after the SMF 1.0 specification (no MIDI library needed); the same arguments give the same
bytes.
"""
import random
import struct
import sys


def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.insert(0, (n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out)


def track(events):
    """events: (tick, order, bytes); returns the MTrk chunk."""
    body = b""
    last = 0
    for tick, _, data in sorted(events, key=lambda e: (e[0], e[1])):
        body += vlq(tick - last) + data
        last = tick
    body += b"\x00\xff\x2f\x00"
    return b"MTrk" + struct.pack(">I", len(body)) + body


def main():
    out = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 180.0
    ppq = 480
    bars = int(seconds / 2)  # 4/4 at 120 BPM: 2 s a bar (the slower middle stretches it a little)
    rng = random.Random(20)
    bar = 4 * ppq
    tempo = [(0, 0, b"\xff\x51\x03" + (500000).to_bytes(3, "big")),
             (bars // 3 * bar, 0, b"\xff\x51\x03" + (600000).to_bytes(3, "big")),
             (2 * bars // 3 * bar, 0, b"\xff\x51\x03" + (500000).to_bytes(3, "big")),
             (0, 1, b"\xff\x58\x04\x04\x02\x18\x08")]
    roots = [48, 45, 41, 43]  # C, A, F, G
    tracks = [tempo]

    def note(ev, ch, key, vel, start, length, order=2):
        ev.append((start, order, bytes([0x90 | ch, key, vel])))
        ev.append((start + length, 0, bytes([0x80 | ch, key, 0])))

    piano, bass, strings, lead, arp, brass, choir, drums = ([] for _ in range(8))
    for ch, prog, ev in [(0, 0, piano), (1, 33, bass), (2, 48, strings), (3, 73, lead), (4, 4, arp),
                         (5, 61, brass), (6, 52, choir)]:
        ev.append((0, 1, bytes([0xC0 | ch, prog])))
        ev.append((0, 1, bytes([0xB0 | ch, 7, 100])))
    for b in range(bars):
        t = b * bar
        root = roots[b % 4]
        chord = [root + 12, root + 16, root + 19] if b % 4 != 1 else [root + 12, root + 15, root + 19]
        for beat in range(4):
            for k in chord:
                note(piano, 0, k, 70 + rng.randrange(20), t + beat * ppq, ppq - 40)
            note(bass, 1, root - 12 + (7 if beat == 2 else 0), 90, t + beat * ppq, ppq - 60)
        for k in chord:
            note(strings, 2, k + 12, 50, t, bar - 10)
        if b % 8 == 0:
            lead.append((t, 1, bytes([0xC3, [73, 71, 65, 56][(b // 8) % 4]])))
        for i in range(8):
            if rng.random() < 0.7:
                note(lead, 3, root + 24 + rng.choice([0, 2, 4, 7, 9, 12]), 80 + rng.randrange(30), t + i * ppq // 2, ppq // 2 - 20)
        lead.append((t + ppq, 1, bytes([0xE3, 0, 0x40 + rng.randrange(0x20)])))
        lead.append((t + 2 * ppq, 1, bytes([0xE3, 0, 0x40])))
        for i in range(16):
            note(arp, 4, chord[i % 3] + 24, 60, t + i * ppq // 4, ppq // 4 - 10)
        if b % 2 == 1:
            for k in chord:
                note(brass, 5, k + 12, 100, t + 3 * ppq + ppq // 2, ppq // 2)
        if b % 4 == 0:
            for k in chord:
                note(choir, 6, k + 12, 60, t, 2 * bar - 20)
        for i in range(8):
            note(drums, 9, 42, 70, t + i * ppq // 2, 60)
        for beat in (0, 2):
            note(drums, 9, 36, 110, t + beat * ppq, 100)
        for beat in (1, 3):
            note(drums, 9, 38, 100, t + beat * ppq, 100)
        if b % 8 == 0:
            note(drums, 9, 49, 110, t, 400)
    tracks += [piano, bass, strings, lead, arp, brass, choir, drums]
    data = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), ppq) + b"".join(track(e) for e in tracks)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
