#!/usr/bin/env python3
# Write the seed corpus for fuzz_donor (see the op list in fuzz_donor.c):
# valid connects and every host message, alone and in short sequences.
import os
import struct
import sys

MAGIC = 0x50575346
V = 1
SLAB = 4 << 20


def hdr(t, length, cookie=1):
    return struct.pack('<IBBHQ', MAGIC, V, t, length, cookie)


def alloc_req(size=SLAB, host_slab=0):
    return hdr(1, 48) + struct.pack('<QQ', size, host_slab) + bytes(16)


def free_req(slab_id):
    return hdr(3, 32) + struct.pack('<II', slab_id, 0) + bytes(8)


def reclaim_rep(slab_id, cookie, status=0):
    return hdr(6, 32, cookie) + struct.pack('<HHI', status, 0, slab_id) + bytes(8)


def stats_req():
    return hdr(7, 16)


def conn_req(qtype, qid, nr, session, depth=128, host=b'fuzz-a'):
    return struct.pack('<IBBBBHHI16sQI12s', MAGIC, 1, 1, qtype, 0, qid, nr, 3,
                       host.ljust(16, b'\0'), session, depth, bytes(12))


def raw(sess, msg):
    return bytes([0, sess, len(msg)]) + msg


def connect(data):
    return bytes([1, len(data)]) + data


def tick(avail, psi=0, dt=10):
    return bytes([2, avail, psi, dt])


seeds = {
    'alloc': raw(0, alloc_req()),
    'alloc_wrong_size': raw(0, alloc_req(SLAB * 2)),
    'alloc_free': raw(0, alloc_req()) + raw(0, free_req(0)),
    'free_other': raw(0, alloc_req()) + raw(1, free_req(0)),
    'double_free': raw(1, alloc_req()) + raw(1, free_req(0)) * 2,
    'stats': raw(1, stats_req()),
    'connect_ctrl': connect(conn_req(1, 0, 2, 0)),
    'connect_io_bad_token': connect(conn_req(2, 1, 2, 12345)),
    'connect_version': connect(conn_req(1, 0, 2, 0)[:4] + b'\x09\x09' +
                               conn_req(1, 0, 2, 0)[6:]),
    'pressure': raw(0, alloc_req()) * 6 + raw(1, alloc_req()) * 6 +
                tick(100, 0, 10) + raw(0, reclaim_rep(11, 1)) + tick(255),
    'pressure_refused': raw(0, alloc_req()) * 12 + tick(120) +
                        raw(0, reclaim_rep(11, 1, 3)) + tick(120, 0, 200),
    'recover': tick(0) + tick(255) + bytes([4, 0]),
    'framed_all': b''.join(bytes([6, 0, t]) + bytes(48) for t in range(1, 9)),
    'bad_magic': raw(0, b'\0' * 16),
    'too_long': raw(0, alloc_req() + bytes(40)),
    'close': raw(0, alloc_req()) + bytes([3, 0]) + raw(0, stats_req()),
    # Idle sessions probed, one probe acked, one failing: slabs freed.
    'keepalive': raw(0, alloc_req()) + raw(1, alloc_req()) +
                 bytes([7, 80, 30]) + bytes([4, 0]) + bytes([7, 80, 30]) +
                 bytes([8, 1, 1]) + raw(0, stats_req()),
    # A probe in flight while pressure asks for reclaims: the budget holds.
    'keepalive_pressure': raw(0, alloc_req()) * 12 + bytes([7, 80, 30]) +
                          tick(60) + bytes([8, 0, 0]) + tick(60, 0, 100),
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), 'seeds')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
