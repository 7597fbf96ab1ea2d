"""Market data (UDP multicast, docs/PROTOCOL.md section 2) of the independent
Python wire (tools.wire): packet header, every message, strict packet decoding
(the books built from it are tests/integration/exchange/md_books.py), and
MulticastReceiver, which joins a group on 127.0.0.1 (IP_ADD_MEMBERSHIP) and
decodes packets. Not thread-safe: a receiver belongs to the thread that made it.
"""

from __future__ import annotations

import select
import socket
import struct
from dataclasses import dataclass, field
from typing import ClassVar, Iterator, List, Optional, Tuple

from tools.wire.common import VERSION, WireError

CHANNEL_INCREMENTAL, CHANNEL_SNAPSHOT = 1, 2
PACKET_HEADER_SIZE = 16
_PACKET_HEADER = struct.Struct("<HBBH2xQ")  # length, channel, version, count, reserved, first_seq
_MD_HEADER = struct.Struct("<HBB")  # length, type, side


@dataclass
class MdMessage:
    TYPE: ClassVar[int] = 0
    LENGTH: ClassVar[int] = 0
    CHANNEL: ClassVar[int] = 0
    BODY: ClassVar[struct.Struct] = struct.Struct("<")
    FIELDS: ClassVar[Tuple[str, ...]] = ()

    def encode(self) -> bytes:
        body = self.BODY.pack(*[getattr(self, f) for f in self.FIELDS])
        out = _MD_HEADER.pack(self.LENGTH, self.TYPE, getattr(self, "side", 0)) + body
        assert len(out) == self.LENGTH
        return out


def _md(type_: int, length: int, channel: int, fmt: str, fields: Tuple[str, ...]):
    def wrap(cls):
        cls.TYPE, cls.LENGTH, cls.CHANNEL = type_, length, channel
        cls.BODY = struct.Struct("<" + fmt)
        cls.FIELDS = fields
        assert _MD_HEADER.size + cls.BODY.size == length, (cls.__name__, cls.BODY.size)
        return cls

    return wrap


# The 4-byte message header is length (2), type (1), side (1); the body starts at 4.
# Every message ends with a u64 instrument_seq (PROTOCOL.md 2.2/2.3): on the
# incremental channel its instrument's own sequence number, on the snapshot
# channel the one the snapshot reflects. `seq` is not on the wire in a message:
# it is the packet's first_seq + the message's position (set by decode_packet).
@_md(1, 40, CHANNEL_INCREMENTAL, "IQqqQ", ("instrument", "order_id", "price", "qty", "instrument_seq"))
@dataclass
class MdAddOrder(MdMessage):
    side: int = 0
    instrument: int = 0
    order_id: int = 0
    price: int = 0
    qty: int = 0
    instrument_seq: int = 0
    seq: int = 0


@_md(2, 32, CHANNEL_INCREMENTAL, "IQqQ", ("instrument", "order_id", "qty", "instrument_seq"))
@dataclass
class MdModifyOrder(MdMessage):
    side: int = 0
    instrument: int = 0
    order_id: int = 0
    qty: int = 0
    instrument_seq: int = 0
    seq: int = 0


@_md(3, 24, CHANNEL_INCREMENTAL, "IQQ", ("instrument", "order_id", "instrument_seq"))
@dataclass
class MdDeleteOrder(MdMessage):
    side: int = 0
    instrument: int = 0
    order_id: int = 0
    instrument_seq: int = 0
    seq: int = 0


@_md(4, 48, CHANNEL_INCREMENTAL, "IQQqqQ", ("instrument", "maker_order_id", "taker_order_id", "price", "qty", "instrument_seq"))
@dataclass
class MdTrade(MdMessage):
    side: int = 0  # the aggressor's side
    instrument: int = 0
    maker_order_id: int = 0
    taker_order_id: int = 0
    price: int = 0
    qty: int = 0
    instrument_seq: int = 0
    seq: int = 0


@_md(5, 48, CHANNEL_INCREMENTAL, "IqqqqQ", ("instrument", "bid_price", "bid_qty", "ask_price", "ask_qty", "instrument_seq"))
@dataclass
class MdTopOfBook(MdMessage):
    side: int = 0
    instrument: int = 0
    bid_price: int = 0
    bid_qty: int = 0
    ask_price: int = 0
    ask_qty: int = 0
    instrument_seq: int = 0
    seq: int = 0


TRADING_OPEN, TRADING_HALTED = 0, 1


@_md(6, 24, CHANNEL_INCREMENTAL, "IB7xQ", ("instrument", "state", "instrument_seq"))
@dataclass
class MdInstrumentState(MdMessage):
    side: int = 0
    instrument: int = 0
    state: int = TRADING_OPEN
    instrument_seq: int = 0
    seq: int = 0


@_md(10, 32, CHANNEL_SNAPSHOT, "IQIB3xQ", ("instrument", "last_seq", "orders", "trading_state", "instrument_seq"))
@dataclass
class MdSnapshotStart(MdMessage):
    side: int = 0
    instrument: int = 0
    last_seq: int = 0
    orders: int = 0
    trading_state: int = TRADING_OPEN
    instrument_seq: int = 0  # the instrument's last incremental instrument_seq with seq <= last_seq (0: none)
    seq: int = 0


@_md(11, 40, CHANNEL_SNAPSHOT, "IQqqQ", ("instrument", "order_id", "price", "qty", "instrument_seq"))
@dataclass
class MdSnapshotOrder(MdMessage):
    side: int = 0
    instrument: int = 0
    order_id: int = 0
    price: int = 0
    qty: int = 0
    instrument_seq: int = 0  # its snapshot's
    seq: int = 0


@_md(12, 32, CHANNEL_SNAPSHOT, "IQIB3xQ", ("instrument", "last_seq", "orders", "trading_state", "instrument_seq"))
@dataclass
class MdSnapshotEnd(MdMessage):
    side: int = 0
    instrument: int = 0
    last_seq: int = 0
    orders: int = 0
    trading_state: int = TRADING_OPEN
    instrument_seq: int = 0
    seq: int = 0


MD_MESSAGES = {
    c.TYPE: c
    for c in (MdAddOrder, MdModifyOrder, MdDeleteOrder, MdTrade, MdTopOfBook, MdInstrumentState, MdSnapshotStart,
              MdSnapshotOrder, MdSnapshotEnd)
}


@dataclass
class Packet:
    channel: int
    first_seq: int
    messages: List[MdMessage] = field(default_factory=list)
    version: int = VERSION
    size: int = 0  # bytes of the datagram (set by decode_packet)

    @property
    def is_heartbeat(self) -> bool:
        return not self.messages

    def encode(self) -> bytes:
        body = b"".join(m.encode() for m in self.messages)
        return _PACKET_HEADER.pack(PACKET_HEADER_SIZE + len(body), self.channel, self.version, len(self.messages), self.first_seq) + body


def decode_packet(data: bytes) -> Packet:
    """Decodes one datagram, checking every rule of PROTOCOL.md 2.1/2.2; messages get their seq."""
    if len(data) < PACKET_HEADER_SIZE:
        raise WireError("short", f"packet of {len(data)} bytes, header needs {PACKET_HEADER_SIZE}")
    length, channel, version, count, first_seq = _PACKET_HEADER.unpack_from(data, 0)
    if length != len(data):
        raise WireError("bad_length", f"packet length field {length} but datagram is {len(data)} bytes")
    if version != VERSION:
        raise WireError("version", f"packet version {version}")
    if channel not in (CHANNEL_INCREMENTAL, CHANNEL_SNAPSHOT):
        raise WireError("channel", f"channel {channel}")
    if first_seq == 0:
        raise WireError("seq", "first_seq 0 (sequence numbers start at 1)")
    pos = PACKET_HEADER_SIZE
    messages: List[MdMessage] = []
    for i in range(count):
        if pos + _MD_HEADER.size > length:
            raise WireError("bad_length", f"message {i} of {count} starts past the packet's end")
        mlen, mtype, side = _MD_HEADER.unpack_from(data, pos)
        cls = MD_MESSAGES.get(mtype)
        if cls is None:
            raise WireError("unknown_type", f"market data type {mtype}")
        if cls.CHANNEL != channel:
            raise WireError("channel", f"{cls.__name__} on channel {channel}")
        if mlen != cls.LENGTH:
            raise WireError("bad_length", f"{cls.__name__} is {cls.LENGTH} bytes, length field says {mlen}")
        if pos + mlen > length:
            raise WireError("bad_length", f"{cls.__name__} runs past the packet's end")
        values = cls.BODY.unpack_from(data, pos + _MD_HEADER.size)
        msg = cls(side, *values, seq=first_seq + i)  # type: ignore[call-arg]
        if channel == CHANNEL_INCREMENTAL and msg.instrument_seq == 0:  # type: ignore[attr-defined]
            raise WireError("seq", f"{cls.__name__} seq {first_seq + i} with instrument_seq 0 (they start at 1)")
        messages.append(msg)
        pos += mlen
    if pos != length:
        raise WireError("bad_length", f"{length - pos} bytes after the last of {count} messages")
    return Packet(channel, first_seq, messages, version, len(data))


class MulticastReceiver:
    """Receives one multicast group on 127.0.0.1 and decodes its packets."""

    def __init__(self, group: str, port: int, interface: str = "127.0.0.1") -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((group, port))  # binding the group address filters out other groups on the port
        mreq = socket.inet_aton(group) + socket.inet_aton(interface)
        self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
        self.sock.setblocking(False)

    def recv(self, timeout: float) -> Optional[Packet]:
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            return None
        data = self.sock.recv(65536)
        return decode_packet(data)

    def drain(self) -> Iterator[Packet]:
        """Every packet already queued, without waiting."""
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return
            yield decode_packet(data)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "MulticastReceiver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

# What `from tools.wire import *` (tools/wire/__init__.py) takes from here.
__all__ = [
    "CHANNEL_INCREMENTAL", "CHANNEL_SNAPSHOT", "MD_MESSAGES", "MdAddOrder", "MdDeleteOrder", "MdInstrumentState",
    "MdMessage", "MdModifyOrder", "MdSnapshotEnd", "MdSnapshotOrder", "MdSnapshotStart", "MdTopOfBook", "MdTrade",
    "MulticastReceiver", "PACKET_HEADER_SIZE", "Packet", "TRADING_HALTED", "TRADING_OPEN", "decode_packet",
]
