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


def resume(sess, slab_id, how, token=0):
    """op 14: a SLAB_RESUME_REQ (how: 1 the slab's token, 2 the one it
    was resumed from, 4 another slab size)."""
    return bytes([14, sess, slab_id, how]) + struct.pack('<Q', token)


def stats_req():
    return hdr(7, 16)


def auth_req():
    return hdr(9, 32) + bytes(range(1, 17))


def info_req(cookie=1):
    return hdr(13, 32, cookie) + bytes(16)


def info_rep(domain=b'rackA'):
    return hdr(14, 64) + domain.ljust(32, b'\0') + bytes(16)


def conn_req(qtype, qid, nr, session, depth=128, host=b'fuzz-a', features=3):
    return struct.pack('<IBBBBHHI16sQI12s', MAGIC, 1, 1, qtype, 0, qid, nr,
                       features, host.ljust(16, b'\0'), session, depth,
                       bytes(12))


def raw(sess, msg):
    return bytes([0, sess, len(msg)]) + msg


def connect(data):
    return bytes([1, len(data)]) + data


def tick(avail, psi=0, dt=10):
    return bytes([2, avail, psi, dt])


def connect_from(family, addr, data):
    return bytes([9, family]) + addr.ljust(16, b'\0') + bytes([len(data)]) + data


def limits(acl, cap, per_addr, rate, revoke):
    return bytes([12, acl, cap, per_addr, rate, revoke])


V4_10_0_0_1 = bytes([10, 0, 0, 1])
V4_OTHER = bytes([192, 0, 2, 7])
V4_MAPPED = bytes(10) + b'\xff\xff' + V4_10_0_0_1

seeds = {
    'alloc': raw(0, alloc_req()),
    'alloc_wrong_size': raw(0, alloc_req(SLAB * 2)),
    'alloc_free': raw(0, alloc_req()) + raw(0, free_req(0)),
    'free_other': raw(0, alloc_req()) + raw(1, free_req(0)),
    'double_free': raw(1, alloc_req()) + raw(1, free_req(0)) * 2,
    'stats': raw(1, stats_req()),
    'info': raw(1, info_req()) + raw(0, info_req(2)),
    'info_from_host': raw(0, info_rep()),
    'type_9_unknown': raw(0, hdr(9, 16)),
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

def kx_host(wrong=False):
    """op 15: a host with a session key runs its handshake."""
    return bytes([15, 1 if wrong else 0]) + bytes(range(0x40, 0x60))


def tagged(sess, t, wrong=False, body=b''):
    """op 16: a framed message tagged as the host of @sess would."""
    return bytes([16, sess, t, 1 if wrong else 0]) + body.ljust(112, b'\0')


seeds.update({
    # The donor takes a key (op 5, bit 7); a host with a session key
    # comes in; tagged messages to whichever session, one wrongly tagged.
    'kx_session': bytes([5, 128]) + kx_host() +
                  b''.join(tagged(k, 7) for k in range(4)) +
                  tagged(2, 1, body=struct.pack('<Q', SLAB)) +
                  tagged(2, 7, wrong=True) + raw(2, stats_req()),
    'kx_wrong_key': bytes([5, 128]) + kx_host(wrong=True) +
                    tagged(2, 7),
})

seeds.update({
    # allowed-hosts 10.0.0.0/8: one host in, one out, one mapped IPv6 in.
    'acl_connects': limits(1, 0, 4, 0, 3) +
                    connect_from(0, V4_10_0_0_1, conn_req(1, 0, 2, 0)) +
                    connect_from(0, V4_OTHER, conn_req(1, 0, 2, 0)) +
                    connect_from(1, V4_MAPPED, conn_req(1, 0, 2, 0)) +
                    connect_from(2, b'', conn_req(1, 0, 2, 0)),
    # Two sessions per address at most, three slabs per host, 1 grant/s.
    'limits_alloc': limits(0, 3, 2, 1, 3) +
                    connect_from(0, V4_10_0_0_1, conn_req(1, 0, 2, 0)) +
                    connect_from(0, V4_10_0_0_1, conn_req(1, 0, 2, 0)) +
                    raw(0, alloc_req()) * 5 + bytes([2, 200, 0, 50]) +
                    raw(0, alloc_req()),
    # Grants on the worker; a session closes with two in flight.
    'async_teardown': bytes([5, 32]) + raw(0, alloc_req()) * 3 +
                      bytes([10, 0]) + bytes([3, 0]) + bytes([10, 0]) +
                      bytes([10, 1]) + raw(1, alloc_req()),
    # Drain while short of memory, a host that never answers: nothing
    # revoked while it lasts; undrained, revoked after 2 deadlines.
    'drain': limits(0, 0, 4, 0, 2) + raw(0, alloc_req()) * 12 +
             bytes([13, 1]) + tick(100, 0, 10) + tick(100, 0, 110) +
             tick(100, 0, 110) + raw(0, alloc_req()) + bytes([13, 0]) +
             tick(100, 0, 110) + tick(100, 0, 110),
    # A reload drops the host holding slabs: drained, then closed.
    'reload_drain': raw(0, alloc_req()) * 3 + limits(2, 0, 4, 0, 3) +
                    tick(200, 0, 10) + tick(200, 0, 110),
    # Pressure, a host that never answers: revoked after 2 deadlines.
    'revoke': limits(0, 0, 4, 0, 2) + raw(0, alloc_req()) * 12 +
              tick(100, 0, 10) + tick(100, 0, 110) + tick(100, 0, 110),
    # The same with deregistration failing: quarantined.
    'quarantine': bytes([5, 64]) + raw(0, alloc_req()) * 2 +
                  raw(0, free_req(0)) + bytes([3, 1]),
    # After a restart (session 0 is fuzz-b, 1 fuzz-a): fuzz-a takes slab
    # 3 back, twice; fuzz-b tries fuzz-a's 7, takes its 9 with the token's
    # bytes, and fuzz-a tries 9 after; the grace ends, slab 7 is freed.
    'resume': resume(1, 3, 1) + resume(1, 3, 2) + resume(0, 7, 1) +
              resume(0, 9, 0, 0x102) + resume(1, 9, 1) + resume(1, 7, 5) +
              tick(200, 0, 10) + tick(200, 0, 255) * 3,
    # A resume on the worker whose host leaves: kept again, then resumed
    # by a new session of it while draining, and asked back.
    'resume_async': bytes([5, 32]) + resume(1, 3, 1) + bytes([3, 1]) +
                    bytes([10, 0]) + bytes([13, 1]) + resume(1, 3, 1) +
                    bytes([10, 0]) + tick(200, 0, 10),
    # Half-made connections are closed after handshake-timeout.
    'handshake': connect_from(0, V4_10_0_0_1, conn_req(1, 0, 2, 0)) +
                 bytes([11, 0, 0, 1]) + bytes([11, 60, 0, 1]),
    # With a key: hosts from five addresses connect and none proves it;
    # the fifth is over max-unauthenticated (4 in the target).  One asks
    # for a challenge; handshake-timeout closes them all, and a sixth
    # gets in.
    'unauthenticated_flood':
        bytes([5, 128]) +
        b''.join(connect_from(0, bytes([192, 0, 2, i]),
                              conn_req(1, 0, 2, 0, host=b'fuzz-%d' % i,
                                       features=7))
                 for i in range(1, 6)) +
        raw(0, auth_req()) + bytes([11, 60, 0, 1]) +
        connect_from(0, bytes([192, 0, 2, 9]),
                     conn_req(1, 0, 2, 0, host=b'fuzz-9', features=7)),
})

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), 'seeds')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)

# fuzz_access: 16 address bytes, 16 host_id bytes, then the list.
ACCESS = {
    'v4': V4_MAPPED + b'host-a'.ljust(16, b'\0') + b'10.0.0.0/24, 192.168.1.1',
    'v6': bytes.fromhex('20010db8000000000000000000000001') + bytes(16) +
          b'2001:db8::/32 [fe80::1]/64',
    'ids': V4_MAPPED + b'host-a'.ljust(16, b'\0') +
           b'name:host-a id:12345678-9abc-def0-0123-456789abcdef 10.0.0.0/8',
    'bad': bytes(32) + b'10.0.0.0/33 id:xyz',
    'any': bytes(32) + b'any',
}
aout = os.path.join(os.path.dirname(os.path.abspath(out)), 'seeds-access')
os.makedirs(aout, exist_ok=True)
for name, data in ACCESS.items():
    with open(os.path.join(aout, name), 'wb') as f:
        f.write(data)

# fuzz_ctl: the stats socket's commands, and a drain reply.
CTL = {
    'drain': b'drain\n',
    'undrain': b'undrain\n',
    'status': b'drain-status\n',
    'restart': b'restart\n',
    'reply': b'ok draining\nstate draining\nslabs_left 3\nhosts_holding 1\n'
             b'slabs_returned 5\nbytes_moved 20971520\nrefusals 2\n'
             b'waiting host 1 host-a: 3 slabs, no room elsewhere '
             b'(2 refused, asked again every 10000 ms)\n',
}
cout = os.path.join(os.path.dirname(os.path.abspath(out)), 'seeds-ctl')
os.makedirs(cout, exist_ok=True)
for name, data in CTL.items():
    with open(os.path.join(cout, name), 'wb') as f:
        f.write(data)
