#!/usr/bin/env python3
"""Writes seeds for the SOFA-reader fuzzer: the SOFA files Debian's libmysofa packages ship
(/usr/share/libmysofa/*.sofa, each content once), truncated copies (the HDF5 metadata sits near
the start, so short copies fail at different places) and copies with a few bytes changed in the
metadata, deterministically (a fixed random seed), so nothing binary is kept in the repository."""
import hashlib
import random
import sys
from pathlib import Path

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
sources = {}
for path in sorted(Path("/usr/share/libmysofa").glob("*.sofa")):
    data = path.read_bytes()
    sources.setdefault(hashlib.sha1(data).hexdigest(), (path.stem, data))
if not sources:
    sys.exit("seed-sofa.py: no /usr/share/libmysofa/*.sofa (Debian package libmysofa1)")

rng = random.Random(10)
for stem, data in sources.values():
    (out / f"{stem}.sofa").write_bytes(data)
    for cut in (8, 96, 512, 4096, 65536, len(data) // 2, len(data) - 1):
        (out / f"{stem}-cut{cut}.sofa").write_bytes(data[:cut])
    head = min(len(data), 8192)
    for n in range(4):
        mutated = bytearray(data)
        for _ in range(1 + n):
            mutated[rng.randrange(8, head)] = rng.randrange(256)
        (out / f"{stem}-mut{n}.sofa").write_bytes(bytes(mutated))
