"""Captures both market data channels to a file, run as its own process (so it
can run inside a network namespace: `ip netns exec NS python md_capture.py ...`).

usage: md_capture.py INTERFACE INCR_GROUP:PORT SNAP_GROUP:PORT OUT_FILE
Prints "ready" once both groups are joined; on SIGTERM writes OUT_FILE (each
datagram as: u8 channel index, u32 length, bytes) and exits 0.
"""

from __future__ import annotations

import select
import signal
import socket
import struct
import sys


def join(group: str, port: int, interface: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((group, port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(group) + socket.inet_aton(interface))
    s.setblocking(False)
    return s


def main() -> int:
    interface, incr, snap, out = sys.argv[1:5]
    socks = [join(g, int(p), interface) for g, p in (incr.split(":"), snap.split(":"))]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    captured = []
    print("ready", flush=True)
    while not stop:
        ready, _, _ = select.select(socks, [], [], 0.05)
        for s in ready:
            while True:
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    break
                captured.append((socks.index(s), data))
    with open(out, "wb") as f:
        for channel, data in captured:
            f.write(struct.pack("<BI", channel, len(data)) + data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
