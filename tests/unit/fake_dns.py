#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# fake_dns.py ZONE: a nameserver for the unit tests, on 127.0.0.1 (UDP,
# a port of its own, printed on stdout once it listens), answering from
# ZONE, lines of "NAME TYPE DATA":
#
#   _farswap._tcp.pool.test.  SRV  10 60 7471 d1.pool.test.
#   d1.pool.test.             A    10.0.0.1
#   d2.pool.test.             AAAA fd00::2
#   broken.test.              SERVFAIL
#   garbled.test.             MALFORMED
#
# A name with records but none of the type asked gets an empty answer
# (NODATA), any other name NXDOMAIN.  It runs until its stdin closes, so
# it never outlives the test that started it.  Stdlib only.
import ipaddress
import select
import socket
import struct
import sys

TYPES = {"A": 1, "AAAA": 28, "SRV": 33}


def load(path):
    zone = {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            zone.setdefault(words[0].lower().rstrip("."), []).append(
                (words[1], words[2:]))
    return zone


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def rdata(rtype, data):
    if rtype == "A":
        return ipaddress.IPv4Address(data[0]).packed
    if rtype == "AAAA":
        return ipaddress.IPv6Address(data[0]).packed
    prio, weight, port = (int(x) for x in data[:3])
    return struct.pack("!HHH", prio, weight, port) + encode_name(data[3])


def question(query):
    """The question's name (lower case), type, and where it ends."""
    pos, labels = 12, []
    while query[pos]:
        labels.append(query[pos + 1:pos + 1 + query[pos]].decode())
        pos += 1 + query[pos]
    qtype = struct.unpack("!H", query[pos + 1:pos + 3])[0]
    return ".".join(labels).lower(), qtype, pos + 5


def answer(zone, query):
    qid, flags = struct.unpack("!HH", query[:4])
    name, qtype, end = question(query)
    records = zone.get(name)
    rcode, answers = 0, []
    if records is None:
        rcode = 3                               # NXDOMAIN
    elif records[0][0] == "SERVFAIL":
        rcode = 2
    elif records[0][0] == "MALFORMED":
        # One answer announced, a few bytes of it given.
        head = struct.pack("!HHHHHH", qid, 0x8180, 1, 1, 0, 0)
        return head + query[12:end] + b"\xc0\x0c\x00\x21\x00\x01\x00"
    else:
        for rtype, data in records:
            if TYPES.get(rtype) != qtype:
                continue
            rd = rdata(rtype, data)
            answers.append(struct.pack("!HHHIH", 0xC00C, qtype, 1, 60,
                                       len(rd)) + rd)
    head = struct.pack("!HHHHHH", qid, 0x8180 | (flags & 0x0100) | rcode,
                       1, len(answers), 0, 0)
    return head + query[12:end] + b"".join(answers)


def main():
    zone = load(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    while True:
        ready, _, _ = select.select([sock, sys.stdin], [], [])
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):
            return
        if sock in ready:
            query, peer = sock.recvfrom(4096)
            try:
                sock.sendto(answer(zone, query), peer)
            except (IndexError, struct.error, ValueError):
                pass                            # not a query: no answer


if __name__ == "__main__":
    main()
