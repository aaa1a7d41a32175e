#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Direct I/O checks of a farswap device: rawio.py DEVICE SLAB_BYTES SEED

Writes patterns with O_DIRECT from huge-page-backed buffers (a 2 MiB
aligned buffer is one physically contiguous segment when THP backs it),
reads them back, and checks never-written and discarded ranges read as
zeros.  Prints one line per check; exits 1 on the first mismatch.
"""
import mmap
import os
import random
import subprocess
import sys

MiB = 1 << 20
dev, slab, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
size = int(open(f"/sys/block/{os.path.basename(dev)}/size").read()) * 512
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)


def buffer(n):
    """An aligned buffer, asked to be backed by huge pages."""
    m = mmap.mmap(-1, max(n, 2 * MiB))
    m.madvise(mmap.MADV_HUGEPAGE)
    return m


def write(off, data):
    m = buffer(len(data))
    m[:len(data)] = data
    assert os.pwritev(fd, [memoryview(m)[:len(data)]], off) == len(data)
    m.close()


def read(off, n):
    m = buffer(n)
    got = os.preadv(fd, [memoryview(m)[:n]], off)
    assert got == n, f"short read {got} of {n} at {off}"
    data = bytes(m[:n])
    m.close()
    return data


def check(name, off, want):
    got = read(off, len(want))
    if got != want:
        bad = next(i for i in range(len(want)) if got[i] != want[i])
        print(f"FAIL {name}: byte {off + bad} differs")
        sys.exit(1)
    print(f"ok {name}: {len(want)} bytes at {off}")


# (offset, length) of every write: boundaries are what matter.
cases = [
    ("first page", 0, 4096),
    ("4 KiB before a slab boundary", slab - 4096, 4096),
    ("64 KiB across a slab boundary", slab - 32768, 65536),
    ("2 MiB aligned (one THP-sized request)", 2 * slab, 2 * MiB),
    ("2 MiB across a slab boundary", 3 * slab - MiB, 2 * MiB),
    ("3 MiB across two boundaries", 5 * slab - 512 * 1024, 3 * MiB)
    if slab >= 2 * MiB else None,
    ("last page", size - 4096, 4096),
    ("last 2 MiB", size - 2 * MiB, 2 * MiB),
]
written = {}
for c in cases:
    if c is None:
        continue
    name, off, n = c
    data = rng.randbytes(n)
    write(off, data)
    written[name] = (off, data)
for name, (off, data) in written.items():
    check(name, off, data)

# A range nothing wrote: zeros, served without the network.
check("never written", 7 * slab + 8192, bytes(65536))

# Discard a whole slab: its pages read as zeros afterwards.
subprocess.run(["blkdiscard", "-o", str(2 * slab), "-l", str(slab), dev],
               check=True)
check("discarded slab", 2 * slab, bytes(2 * MiB))
# Its neighbour, written across the boundary, is intact.
off, data = written["2 MiB across a slab boundary"]
check("neighbour of the discarded slab", off + MiB, data[MiB:])
os.close(fd)
