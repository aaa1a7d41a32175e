#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Direct I/O on a farswap device, with its expected content kept in a file.

    storm.py fill   DEV IMAGE SEED MB      random data over the first MB MiB
    storm.py storm  DEV IMAGE SEED SECS    discards and writes for SECS s
    storm.py verify DEV IMAGE              every byte as IMAGE says

IMAGE is the device's expected content (zeros where never written or
discarded).  The storm aims at whole chunks and at pieces of them, so a
chunk being copied loses all its pages or some while writes wait.
"""

import fcntl
import mmap
import os
import random
import struct
import sys
import time

CHUNK = 2 << 20
PAGE = 4096
BLKDISCARD = 0x1277
BLKGETSIZE64 = 0x80081272


def dev_size(fd):
    buf = fcntl.ioctl(fd, BLKGETSIZE64, b"\0" * 8)
    return struct.unpack("Q", buf)[0]


def aligned(n):
    # O_DIRECT wants page-aligned buffers: anonymous mmap gives them.
    return mmap.mmap(-1, n)


def write(fd, img, off, data):
    buf = aligned(len(data))
    buf[:] = data
    n = os.pwritev(fd, [buf], off)
    if n != len(data):
        sys.exit(f"short write at {off}: {n} of {len(data)}")
    img.seek(off)
    img.write(data)


def discard(fd, img, off, n):
    fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", off, n))
    img.seek(off)
    img.write(bytes(n))


def fill(dev, image, seed, mb):
    rng = random.Random(seed)
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    size = dev_size(fd)
    with open(image, "wb") as img:
        img.truncate(size)
        for off in range(0, mb << 20, CHUNK):
            write(fd, img, off, rng.randbytes(CHUNK))
    os.close(fd)
    print(f"filled {mb} MiB of {size >> 20}")


def storm(dev, image, seed, secs):
    rng = random.Random(seed + 1)
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    size = dev_size(fd)
    nchunks = size // CHUNK
    counts = {"discard_chunk": 0, "discard_part": 0, "write": 0}
    end = time.monotonic() + secs
    with open(image, "r+b") as img:
        while time.monotonic() < end:
            c = rng.randrange(nchunks) * CHUNK
            op = rng.random()
            if op < 0.35:
                discard(fd, img, c, CHUNK)
                counts["discard_chunk"] += 1
            elif op < 0.6:
                first = rng.randrange(CHUNK // PAGE)
                n = rng.randint(1, CHUNK // PAGE - first)
                discard(fd, img, c + first * PAGE, n * PAGE)
                counts["discard_part"] += 1
            else:
                first = rng.randrange(CHUNK // PAGE)
                n = rng.randint(1, min(64, CHUNK // PAGE - first))
                write(fd, img, c + first * PAGE, rng.randbytes(n * PAGE))
                counts["write"] += 1
    os.close(fd)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))


def verify(dev, image):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    size = dev_size(fd)
    buf = aligned(CHUNK)
    bad = 0
    with open(image, "rb") as img:
        for off in range(0, size, CHUNK):
            n = os.preadv(fd, [buf], off)
            want = img.read(CHUNK)
            if n != CHUNK:
                sys.exit(f"short read at {off}: {n}")
            if buf[:] != want:
                pages = [p for p in range(0, CHUNK, PAGE)
                         if buf[p:p + PAGE] != want[p:p + PAGE]]
                print(f"MISMATCH chunk {off // CHUNK}: {len(pages)} pages, first at +{pages[0]}")
                bad += 1
    os.close(fd)
    if bad:
        sys.exit(f"{bad} chunks differ from what was written")
    print(f"verified {size >> 20} MiB")


def main():
    cmd = sys.argv[1]
    if cmd == "fill":
        fill(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "storm":
        storm(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif cmd == "verify":
        verify(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
