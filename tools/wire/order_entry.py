"""Order entry (TCP, docs/PROTOCOL.md section 1) of the independent Python
implementation of the nanotick wire protocol v1 (tools.wire, whose __init__
says why it is written from the spec alone): header, every client -> exchange
and exchange -> client message, strict decoding with a typed error, and a
stream framer that cuts messages out of a byte stream.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar, Dict, Optional, Tuple

from tools.wire.common import BUY, HEADER_SIZE, LIMIT, MAX_MESSAGE_LENGTH, REPORT_REPLAYED, STP_NONE, VERSION, WireError

_HEADER = struct.Struct("<HBBI")  # length, type, version, seq

# --------------------------------------------------------------------------
# Order entry messages (PROTOCOL.md 1.2 and 1.3)
# --------------------------------------------------------------------------


@dataclass
class Message:
    """Base of every order-entry message: `seq` is the header's sequence number."""

    TYPE: ClassVar[int] = 0
    LENGTH: ClassVar[int] = 0
    BODY: ClassVar[struct.Struct] = struct.Struct("<")
    FIELDS: ClassVar[Tuple[str, ...]] = ()

    def encode(self, seq: Optional[int] = None, version: int = VERSION) -> bytes:
        """The message's bytes; `seq` overrides the field (the client sets it on send)."""
        s = self.seq if seq is None else seq
        body = self.BODY.pack(*[getattr(self, f) for f in self.FIELDS])
        out = _HEADER.pack(self.LENGTH, self.TYPE, version, s) + body
        assert len(out) == self.LENGTH, (type(self).__name__, len(out))
        return out

    @classmethod
    def decode_body(cls, seq: int, data: bytes) -> "Message":
        values = cls.BODY.unpack_from(data, HEADER_SIZE)
        return cls(*values, seq=seq)  # type: ignore[call-arg]


def _msg(type_: int, length: int, fmt: str, fields: Tuple[str, ...]):
    """Class decorator: binds a dataclass to its type, fixed length and body layout."""

    def wrap(cls):
        cls.TYPE = type_
        cls.LENGTH = length
        cls.BODY = struct.Struct("<" + fmt)
        cls.FIELDS = fields
        assert HEADER_SIZE + cls.BODY.size == length, (cls.__name__, cls.BODY.size)
        return cls

    return wrap


# Client -> exchange ---------------------------------------------------------


@_msg(1, 48, "II32s", ("client_id", "heartbeat_ms", "credential"))
@dataclass
class Logon(Message):
    client_id: int = 0
    heartbeat_ms: int = 0
    credential: bytes = b""  # the API key; struct zero-pads it to 32 bytes
    seq: int = 0


@_msg(2, 16, "H6x", ("reason",))
@dataclass
class Logout(Message):
    reason: int = 0
    seq: int = 0


@_msg(3, 8, "", ())
@dataclass
class Heartbeat(Message):
    seq: int = 0


@_msg(4, 16, "Q", ("after_exec_seq",))
@dataclass
class ReportsRequest(Message):
    """Every fill of this session's client with exec_seq > after_exec_seq, sent again
    (0: all of them). Once per session, as the first message after LogonAck."""

    after_exec_seq: int = 0
    seq: int = 0


@_msg(10, 40, "QIBBBBqq", ("client_order_id", "instrument", "side", "order_type", "stp", "reserved", "price", "qty"))
@dataclass
class NewOrder(Message):
    client_order_id: int = 0
    instrument: int = 0
    side: int = BUY
    order_type: int = LIMIT
    stp: int = STP_NONE
    reserved: int = 0
    price: int = 0
    qty: int = 0
    seq: int = 0


@_msg(11, 24, "QII", ("client_order_id", "instrument", "reserved"))
@dataclass
class CancelOrder(Message):
    client_order_id: int = 0
    instrument: int = 0
    reserved: int = 0
    seq: int = 0


@_msg(12, 40, "QIIqq", ("client_order_id", "instrument", "reserved", "price", "qty"))
@dataclass
class ModifyOrder(Message):
    client_order_id: int = 0
    instrument: int = 0
    reserved: int = 0
    price: int = 0
    qty: int = 0
    seq: int = 0


ADMIN_HALT, ADMIN_RESUME, ADMIN_BLOCK, ADMIN_UNBLOCK, ADMIN_CANCEL_ALL, ADMIN_ADJUST = 1, 2, 3, 4, 5, 6
ALL_INSTRUMENTS = 0xFFFFFFFF


@_msg(20, 40, "QB3xIIIq", ("request_id", "action", "instrument", "target_client", "reserved", "amount"))
@dataclass
class AdminRequest(Message):
    request_id: int = 0
    action: int = ADMIN_HALT
    instrument: int = 0
    target_client: int = 0
    reserved: int = 0
    amount: int = 0  # adjust: the signed change
    seq: int = 0


# Exchange -> client ---------------------------------------------------------


@_msg(101, 24, "IIQ", ("client_id", "heartbeat_ms", "session_id"))
@dataclass
class LogonAck(Message):
    client_id: int = 0
    heartbeat_ms: int = 0
    session_id: int = 0
    seq: int = 0


@_msg(102, 16, "H6x", ("reason",))
@dataclass
class LogonReject(Message):
    reason: int = 0
    seq: int = 0


@_msg(103, 16, "H6x", ("reason",))
@dataclass
class ServerLogout(Message):
    reason: int = 0
    seq: int = 0


@_msg(104, 8, "", ())
@dataclass
class ServerHeartbeat(Message):
    seq: int = 0


@_msg(105, 24, "QQ", ("count", "through_exec_seq"))
@dataclass
class ReportsReplayed(Message):
    """The end of a ReportsRequest's replay: `count` ExecutionReports (flags REPORT_REPLAYED)
    came before it; through_exec_seq is the highest exec_seq the replay covered."""

    count: int = 0
    through_exec_seq: int = 0
    seq: int = 0


@_msg(
    110,
    96,
    "QQQqqqqqqIIBBBBHBB",
    (
        "exec_seq",
        "client_order_id",
        "order_id",
        "price",
        "order_qty",
        "last_price",
        "last_qty",
        "cum_qty",
        "leaves_qty",
        "instrument",
        "ref_seq",
        "exec_type",
        "side",
        "order_type",
        "is_maker",
        "reject_reason",
        "cancel_reason",
        "flags",
    ),
)
@dataclass
class ExecutionReport(Message):
    exec_seq: int = 0
    client_order_id: int = 0
    order_id: int = 0
    price: int = 0
    order_qty: int = 0
    last_price: int = 0
    last_qty: int = 0
    cum_qty: int = 0
    leaves_qty: int = 0
    instrument: int = 0
    ref_seq: int = 0
    exec_type: int = 0
    side: int = 0
    order_type: int = 0
    is_maker: int = 0
    reject_reason: int = 0
    cancel_reason: int = 0
    flags: int = 0  # REPORT_REPLAYED or 0: no other bit is defined
    seq: int = 0

    @classmethod
    def decode_body(cls, seq: int, data: bytes) -> "Message":
        msg = super().decode_body(seq, data)
        if msg.flags & ~REPORT_REPLAYED:  # type: ignore[attr-defined]
            raise WireError("flags", f"ExecutionReport flags {msg.flags:#x}: bits other than REPORT_REPLAYED set")  # type: ignore[attr-defined]
        return msg

    @property
    def replayed(self) -> bool:
        return bool(self.flags & REPORT_REPLAYED)


@_msg(111, 40, "QQIIH6x", ("exec_seq", "client_order_id", "instrument", "ref_seq", "reason"))
@dataclass
class CancelReject(Message):
    exec_seq: int = 0
    client_order_id: int = 0
    instrument: int = 0
    ref_seq: int = 0
    reason: int = 0
    seq: int = 0


@_msg(112, 40, "QQIIH6x", ("exec_seq", "client_order_id", "instrument", "ref_seq", "reason"))
@dataclass
class ModifyReject(Message):
    exec_seq: int = 0
    client_order_id: int = 0
    instrument: int = 0
    ref_seq: int = 0
    reason: int = 0
    seq: int = 0


@_msg(113, 24, "IIBxH4x", ("ref_seq", "expected_seq", "ref_type", "reason"))
@dataclass
class SessionReject(Message):
    ref_seq: int = 0
    expected_seq: int = 0
    ref_type: int = 0
    reason: int = 0
    seq: int = 0


@_msg(120, 48, "QQIIIBxHI4x",
      ("exec_seq", "request_id", "instrument", "target_client", "ref_seq", "action", "reason", "orders_cancelled"))
@dataclass
class AdminResponse(Message):
    exec_seq: int = 0  # 0: refused by the gateway, never sequenced
    request_id: int = 0
    instrument: int = 0
    target_client: int = 0
    ref_seq: int = 0
    action: int = 0
    reason: int = 0
    orders_cancelled: int = 0
    seq: int = 0


CLIENT_MESSAGES = {
    c.TYPE: c for c in (Logon, Logout, Heartbeat, ReportsRequest, NewOrder, CancelOrder, ModifyOrder, AdminRequest)
}
EXCHANGE_MESSAGES = {
    c.TYPE: c
    for c in (LogonAck, LogonReject, ServerLogout, ServerHeartbeat, ReportsReplayed, ExecutionReport, CancelReject, ModifyReject,
              SessionReject, AdminResponse)
}
ORDER_MESSAGE_TYPES = (NewOrder.TYPE, CancelOrder.TYPE, ModifyOrder.TYPE)


def encode_header(length: int, type_: int, seq: int, version: int = VERSION) -> bytes:
    """A bare header, for hand-made malformed messages."""
    return _HEADER.pack(length, type_, version, seq)


def decode_header(data: bytes) -> Tuple[int, int, int, int]:
    """(length, type, version, seq) of the header at the start of `data`."""
    if len(data) < HEADER_SIZE:
        raise WireError("short", f"{len(data)} bytes, a header needs {HEADER_SIZE}")
    return _HEADER.unpack_from(data, 0)


def decode_message(data: bytes, table: Dict[int, type]) -> Message:
    """Decodes exactly one message occupying all of `data`, checking every header rule."""
    length, type_, version, seq = decode_header(data)
    if length < HEADER_SIZE or length > MAX_MESSAGE_LENGTH:
        raise WireError("bad_length", f"length {length} outside [{HEADER_SIZE}, {MAX_MESSAGE_LENGTH}]")
    if length != len(data):
        raise WireError("bad_length", f"length field {length} but {len(data)} bytes given")
    if version != VERSION:
        raise WireError("version", f"version {version}, expected {VERSION}")
    cls = table.get(type_)
    if cls is None:
        raise WireError("unknown_type", f"type {type_}")
    if length != cls.LENGTH:
        raise WireError("bad_length", f"{cls.__name__} is {cls.LENGTH} bytes, length field says {length}")
    return cls.decode_body(seq, data)


def decode_exchange_message(data: bytes) -> Message:
    return decode_message(data, EXCHANGE_MESSAGES)


def decode_client_message(data: bytes) -> Message:
    return decode_message(data, CLIENT_MESSAGES)


class StreamFramer:
    """Cuts whole messages out of a TCP byte stream (partial reads kept)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data

    @property
    def pending(self) -> int:
        return len(self._buf)

    def next_frame(self) -> Optional[bytes]:
        """The next complete message's bytes, None if incomplete; WireError if framing is lost."""
        if len(self._buf) < HEADER_SIZE:
            return None
        length = struct.unpack_from("<H", self._buf, 0)[0]
        if length < HEADER_SIZE or length > MAX_MESSAGE_LENGTH:
            raise WireError("bad_length", f"length {length}: framing lost")
        if len(self._buf) < length:
            return None
        frame = bytes(self._buf[:length])
        del self._buf[:length]
        return frame

# What `from tools.wire import *` (tools/wire/__init__.py) takes from here.
__all__ = [
    "ADMIN_ADJUST", "ADMIN_BLOCK", "ADMIN_CANCEL_ALL", "ADMIN_HALT", "ADMIN_RESUME", "ADMIN_UNBLOCK",
    "ALL_INSTRUMENTS", "AdminRequest", "AdminResponse", "CLIENT_MESSAGES", "CancelOrder", "CancelReject",
    "EXCHANGE_MESSAGES", "ExecutionReport", "Heartbeat", "Logon", "LogonAck", "LogonReject", "Logout", "Message",
    "ModifyOrder", "ModifyReject", "NewOrder", "ORDER_MESSAGE_TYPES", "ReportsReplayed", "ReportsRequest",
    "ServerHeartbeat", "ServerLogout", "SessionReject", "StreamFramer", "decode_client_message",
    "decode_exchange_message", "decode_header", "decode_message", "encode_header",
]
