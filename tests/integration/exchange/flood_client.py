"""A client that sends order messages as fast as it can (run as its own process
by test_flood.py, so its busy loop does not share the test's interpreter).

    python -m tests.integration.exchange.flood_client PORT CLIENT_ID API_KEY SECONDS

Logs on, then for SECONDS keeps the socket's send side full of IOC NewOrders
(with correct, increasing sequence numbers) while reading everything the
exchange answers, so that it is throttled by the rate limit and not closed as
a slow consumer. Prints one JSON object: messages sent, acknowledgements,
RateLimited rejects, other session rejects, whether and why the exchange closed
the session. After SECONDS it waits (up to 5 s) for the answers to everything it
sent. Single-threaded.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import time

from tools import wire as w

BATCH = 256
_NEW = struct.Struct("<HBBIQIBBBBqq")


def main() -> int:
    port, client_id, key, seconds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(w.Logon(client_id=client_id, credential=key.encode()).encode(seq=1))
    framer = w.StreamFramer()
    while True:
        framer.feed(sock.recv(4096))
        frame = framer.next_frame()
        if frame is not None:
            break
    ack = w.decode_exchange_message(frame)
    if not isinstance(ack, w.LogonAck):
        print(json.dumps({"error": f"logon answered with {ack}"}))
        return 1
    sock.setblocking(False)
    out = {"sent": 0, "accepted": 0, "rate_limited": 0, "other_session_rejects": 0, "reports": 0, "closed": False, "logout_reason": None}
    seq = 2
    coid = 1
    pending = memoryview(b"")
    buf = bytearray()
    sent_bytes = 0
    t_end = time.monotonic() + seconds
    while True:
        now = time.monotonic()
        if now < t_end and not pending:
            batch = bytearray(BATCH * 40)
            for i in range(BATCH):
                # IOC buy at the band's lowest price: never trades, never rests.
                _NEW.pack_into(batch, i * 40, 40, w.NewOrder.TYPE, 1, seq, coid, 0, w.BUY, w.IOC, 0, 0, 1, 1)
                seq += 1
                coid += 1
            pending = memoryview(bytes(batch))
        if not pending and now >= t_end:
            # The last batch is out (never half a message): wait for every answer (bounded).
            answered = out["accepted"] + out["rate_limited"] + out["other_session_rejects"]
            if answered >= sent_bytes // 40 or now > t_end + 5.0:
                break
        readable, writable, _ = select.select([sock], [sock] if pending else [], [], 0.05)
        if writable:
            try:
                n = sock.send(pending)
                sent_bytes += n
                pending = pending[n:]
            except BlockingIOError:
                pass
        if readable:
            try:
                data = sock.recv(1 << 20)
            except BlockingIOError:
                data = None
            except ConnectionResetError:
                data = b""
            if data == b"":
                out["closed"] = True
                break
            if data:
                buf += data
                pos = 0
                while len(buf) - pos >= 8:
                    length, type_ = buf[pos] | buf[pos + 1] << 8, buf[pos + 2]
                    if len(buf) - pos < length:
                        break
                    if type_ == w.SessionReject.TYPE:
                        if buf[pos + 18] | buf[pos + 19] << 8 == w.SessionRejectReason.RATE_LIMITED:
                            out["rate_limited"] += 1
                        else:
                            out["other_session_rejects"] += 1
                    elif type_ == w.ExecutionReport.TYPE:
                        out["reports"] += 1
                        if buf[pos + 88] == w.EXEC_ACCEPTED:
                            out["accepted"] += 1
                    elif type_ == w.ServerLogout.TYPE:
                        out["logout_reason"] = buf[pos + 8] | buf[pos + 9] << 8
                    pos += length
                del buf[:pos]
    sock.close()
    out["sent"] = sent_bytes // 40
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
