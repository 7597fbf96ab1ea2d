"""Order-entry sessions of the independent Python wire (tools.wire):
OrderEntryClient, a blocking TCP client with logon and per-direction sequence
number handling (it checks the exchange's sequence numbers too), and
ShmOrderEntryClient, the same session over the exchange's shared-memory
transport. Not thread-safe: each client belongs to the thread that made it.
"""

from __future__ import annotations

import select
import socket
import struct
import time
from typing import List, Optional, Tuple

from tools.wire.common import EXEC_FILL

from tools.wire.order_entry import (
    Logon,
    LogonAck,
    ExecutionReport,
    Message,
    ReportsReplayed,
    ReportsRequest,
    ServerHeartbeat,
    StreamFramer,
    decode_exchange_message,
)


class ConnectionClosed(Exception):
    """The exchange closed the connection."""


class OrderEntryClient:
    """A blocking order-entry session: numbers its messages, checks the exchange's numbering.

    Every received message is kept in `received` (in order) so a test can look
    back; `recv`/`expect` return the next unseen one.
    """

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 5.0, rcvbuf: Optional[int] = None) -> None:
        """`rcvbuf` sets SO_RCVBUF before connecting (the window the exchange sees)."""
        if rcvbuf is None:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self.sock.settimeout(timeout)
            self.sock.connect((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._start_session(timeout)

    def _start_session(self, timeout: float) -> None:
        """The session's own state, whatever the transport: numbering both ways, framing, what arrived."""
        self.timeout = timeout
        self.next_out_seq = 1
        self.next_in_seq = 1
        self.in_seq_errors: List[str] = []
        self.framer = StreamFramer()
        self.received: List[Message] = []
        self._unseen: List[Message] = []
        self.closed = False

    # -- sending --
    def send(self, msg: Message, seq: Optional[int] = None) -> int:
        """Sends `msg` with the next sequence number (or `seq`); returns the seq used."""
        s = self.next_out_seq if seq is None else seq
        if seq is None:
            self.next_out_seq += 1
        self._write(msg.encode(seq=s))
        return s

    def send_raw(self, data: bytes, consumes_seq: bool = False) -> None:
        self._write(data)
        if consumes_seq:
            self.next_out_seq += 1

    # -- the transport (ShmOrderEntryClient replaces these three) --
    def _write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _read_some(self, timeout: float) -> Optional[bytes]:
        """Bytes that arrived within `timeout` (None: none; b"": the exchange closed)."""
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return None
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:
            return b""

    # -- receiving --
    def _pump(self, deadline: float) -> bool:
        """Reads once (until `deadline`); False on timeout. Raises ConnectionClosed at EOF."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        data = self._read_some(remaining)
        if data is None:
            return False
        if not data:
            self.closed = True
            raise ConnectionClosed("the exchange closed the connection")
        self.framer.feed(data)
        while True:
            frame = self.framer.next_frame()
            if frame is None:
                break
            msg = decode_exchange_message(frame)
            if msg.seq != self.next_in_seq:
                self.in_seq_errors.append(f"{type(msg).__name__} has seq {msg.seq}, expected {self.next_in_seq}")
            self.next_in_seq = msg.seq + 1
            self.received.append(msg)
            self._unseen.append(msg)
        return True

    def recv(self, timeout: Optional[float] = None, skip_heartbeats: bool = True) -> Message:
        """The next message; TimeoutError if none arrives in time."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            while self._unseen:
                msg = self._unseen.pop(0)
                if skip_heartbeats and isinstance(msg, ServerHeartbeat):
                    continue
                return msg
            if not self._pump(deadline) and time.monotonic() >= deadline:
                raise TimeoutError("no message from the exchange in time")

    def poll(self) -> List[Message]:
        """Every message that is already readable, without waiting."""
        try:
            while self._pump(time.monotonic() + 0.0001):
                pass
        except ConnectionClosed:
            pass
        out = [m for m in self._unseen if not isinstance(m, ServerHeartbeat)]
        self._unseen.clear()
        return out

    def expect(self, cls: type, timeout: Optional[float] = None, **fields) -> Message:
        msg = self.recv(timeout)
        if not isinstance(msg, cls):
            raise AssertionError(f"expected {cls.__name__} {fields}, got {msg}")
        for k, v in fields.items():
            if getattr(msg, k) != v:
                raise AssertionError(f"expected {cls.__name__} with {k}={v}, got {msg}")
        return msg

    def wait_closed(self, timeout: Optional[float] = None) -> List[Message]:
        """Reads until the exchange closes; returns what came before. TimeoutError if it stays open."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                if not self._pump(deadline) and time.monotonic() >= deadline:
                    raise TimeoutError("the exchange did not close the connection")
            except ConnectionClosed:
                out = [m for m in self._unseen if not isinstance(m, ServerHeartbeat)]
                self._unseen.clear()
                return out

    # -- session --
    def logon(self, client_id: int, key: str, heartbeat_ms: int = 0) -> LogonAck:
        self.send(Logon(client_id=client_id, heartbeat_ms=heartbeat_ms, credential=key.encode("ascii")))
        msg = self.recv()
        if not isinstance(msg, LogonAck):
            raise AssertionError(f"logon of client {client_id} answered with {msg}")
        return msg

    def request_reports(self, after_exec_seq: int = 0,
                        timeout: Optional[float] = None) -> Tuple[List[ExecutionReport], ReportsReplayed, List[Message]]:
        """Sends a ReportsRequest (right after logon, as the protocol requires) and reads its
        replay through the closing ReportsReplayed: (replayed reports, ReportsReplayed, live
        messages that came meanwhile). Checks what the exchange promises: every replayed
        report a fill past `after_exec_seq`, in exec_seq order, as many as `count` says."""
        self.send(ReportsRequest(after_exec_seq=after_exec_seq))
        replayed: List[ExecutionReport] = []
        live: List[Message] = []
        while True:
            msg = self.recv(timeout)
            if isinstance(msg, ReportsReplayed):
                break
            if isinstance(msg, ExecutionReport) and msg.replayed:
                last = replayed[-1].exec_seq if replayed else after_exec_seq
                if msg.exec_type != EXEC_FILL or msg.exec_seq <= last:
                    raise AssertionError(f"replayed report out of order or not a fill (after exec_seq {last}): {msg}")
                replayed.append(msg)
            else:
                live.append(msg)
        if (msg.count != len(replayed) or msg.through_exec_seq < after_exec_seq
                or (replayed and msg.through_exec_seq < replayed[-1].exec_seq)):
            raise AssertionError(f"{msg} after {len(replayed)} replayed reports (last {replayed[-1:]})")
        return replayed, msg, live

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            self.closed = True

    def __enter__(self) -> "OrderEntryClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ShmOrderEntryClient(OrderEntryClient):
    """The same session over the exchange's shared-memory transport, done by hand
    as any client in any language could (docs/EXCHANGE.md "Shared-memory sessions"):
    connect to the UNIX socket at `path`, take the segment's descriptor from
    the hello (SCM_RIGHTS), map it, and move bytes through its two rings.
    `layout` exposes the mapping so a test can write what an attacker would."""

    HELLO = struct.Struct("<QIIQQ")  # magic, version, reserved, ring_bytes, segment_bytes
    MAGIC = 0x314E4F4953534E54
    TO_EXCHANGE_TAIL, TO_EXCHANGE_HEAD, TO_CLIENT_TAIL, TO_CLIENT_HEAD = 64, 128, 192, 256
    CLIENT_CLOSED, EXCHANGE_CLOSED, DATA = 320, 384, 4096

    def __init__(self, path: str, timeout: float = 5.0) -> None:  # noqa: D107 -- no super(): no TCP socket
        import mmap
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        hello, fds, _, _ = socket.recv_fds(self.sock, self.HELLO.size, 1)
        if len(hello) != self.HELLO.size or len(fds) != 1:
            self.sock.close()
            raise ConnectionClosed(f"no session segment from the exchange ({len(hello)} bytes, {len(fds)} fds)")
        magic, version, _, self.ring, self.segment_bytes = self.HELLO.unpack(hello)
        assert magic == self.MAGIC and version == 1, (hex(magic), version)
        self.mem = mmap.mmap(fds[0], self.segment_bytes)
        import os
        os.close(fds[0])
        self.sock.setblocking(False)
        self.out_pos = 0  # our private positions, as the C++ client keeps them
        self.in_pos = 0
        self._start_session(timeout)

    # Native "Q", not "<Q": CPython packs and unpacks the standard-size formats a
    # byte at a time, so the exchange could read a position half-written (and,
    # rightly, close the session as a broken ring); the native format copies the
    # 8 bytes with one memcpy, a single aligned load or store on x86-64.
    def word(self, offset: int) -> int:
        return struct.unpack_from("Q", self.mem, offset)[0]

    def set_word(self, offset: int, value: int) -> None:
        struct.pack_into("Q", self.mem, offset, value)

    def _exchange_gone(self) -> bool:
        try:
            return self.sock.recv(64) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _write(self, data: bytes) -> None:
        deadline = time.monotonic() + self.timeout
        base = self.DATA
        while data:
            room = self.ring - (self.out_pos - self.word(self.TO_EXCHANGE_HEAD))
            if room <= 0:
                if time.monotonic() > deadline or self._exchange_gone():
                    raise ConnectionClosed("the exchange stopped reading")
                time.sleep(0.0002)
                continue
            n = min(room, len(data))
            at = self.out_pos % self.ring
            first = min(n, self.ring - at)
            self.mem[base + at:base + at + first] = data[:first]
            if n > first:
                self.mem[base:base + n - first] = data[first:n]
            self.out_pos += n
            self.set_word(self.TO_EXCHANGE_TAIL, self.out_pos)
            data = data[n:]

    def _read_some(self, timeout: float) -> Optional[bytes]:
        deadline = time.monotonic() + timeout
        base = self.DATA + self.ring
        while True:
            avail = self.word(self.TO_CLIENT_TAIL) - self.in_pos
            if avail > 0:
                at = self.in_pos % self.ring
                first = min(avail, self.ring - at)
                data = bytes(self.mem[base + at:base + at + first]) + bytes(self.mem[base:base + avail - first])
                self.in_pos += avail
                self.set_word(self.TO_CLIENT_HEAD, self.in_pos)
                return data
            if self.word(self.EXCHANGE_CLOSED) and self.word(self.TO_CLIENT_TAIL) == self.in_pos:
                return b""
            if self._exchange_gone():
                return b""
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.0002)

    def close(self) -> None:
        if not self.mem.closed:
            self.set_word(self.CLIENT_CLOSED, 1)
            self.mem.close()
        try:
            self.sock.close()
        finally:
            self.closed = True

# What `from tools.wire import *` (tools/wire/__init__.py) takes from here.
__all__ = [
    "ConnectionClosed", "OrderEntryClient", "ShmOrderEntryClient",
]
