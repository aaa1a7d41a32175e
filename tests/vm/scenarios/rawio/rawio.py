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


# (name, offset, length) of every write, each in slabs of its own: the
# boundaries are what matter.  Needs 16 slabs of at least 4 MiB.
assert size >= 16 * slab and slab >= 4 * MiB
cases = [
    ("first page", 0, 4096),
    ("4 KiB before a slab boundary", slab - 4096, 4096),
    ("64 KiB across a slab boundary", 2 * slab - 32768, 65536),
    ("2 MiB aligned (one THP-sized request)", 3 * slab, 2 * MiB),
    ("2 MiB across a slab boundary", 5 * slab - MiB, 2 * MiB),
    ("across two slab boundaries", 7 * slab - MiB, slab + 2 * MiB),
    ("the last 2 MiB, up to the last page", size - 2 * MiB, 2 * MiB),
]
written = {}
for name, off, n in cases:
    data = rng.randbytes(n)
    write(off, data)
    written[name] = (off, data)
for name, (off, data) in written.items():
    check(name, off, data)

# A range nothing wrote: zeros, served without the network.
check("never written", 10 * slab + 8192, bytes(65536))

# Discard slab 4: its pages read as zeros afterwards, including the first
# half of the write that crossed into slab 5; the second half is intact.
subprocess.run(["blkdiscard", "-o", str(4 * slab), "-l", str(slab), dev],
               check=True)
check("discarded slab", 4 * slab, bytes(slab))
off, data = written["2 MiB across a slab boundary"]
check("neighbour of the discarded slab", 5 * slab, data[MiB:])
os.close(fd)
