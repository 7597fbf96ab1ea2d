"""An independent Python implementation of the nanotick wire protocol v1.

Written from docs/PROTOCOL.md alone (never from the C++ codec in src/proto), so
that a disagreement between the spec and the server shows up as a failing
integration test instead of two copies of the same misreading. Contents:

- order entry (TCP, PROTOCOL.md section 1): header, every client -> exchange and
  exchange -> client message, strict decoding with a typed error, and a stream
  framer that cuts messages out of a byte stream;
- market data (UDP multicast, section 2): packet header, every message, strict
  packet decoding (the books built from it are md_books.py);
- OrderEntryClient: a blocking TCP client with logon and per-direction sequence
  number handling (it checks the exchange's sequence numbers too);
- MulticastReceiver: joins a group on 127.0.0.1 (IP_ADD_MEMBERSHIP) and decodes
  packets.

Not thread-safe: each object belongs to the thread that made it (MdRecorder gives
each receiver its own thread; the flooder runs in its own process).
"""

from __future__ import annotations

import hashlib
import select
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import ClassVar, Dict, Iterator, List, Optional, Tuple

VERSION = 1
HEADER_SIZE = 8
MAX_MESSAGE_LENGTH = 256  # kMaxMessageLength: a larger `length` is oversized
CREDENTIAL_BYTES = 32

_HEADER = struct.Struct("<HBBI")  # length, type, version, seq

# Enum values (PROTOCOL.md conventions, the engine's values).
BUY, SELL = 1, 2
LIMIT, IOC, FOK, MARKET = 1, 2, 3, 4
STP_NONE, STP_CANCEL_RESTING, STP_CANCEL_INCOMING, STP_CANCEL_BOTH = 0, 1, 2, 3

# ExecutionReport exec_type / cancel_reason.
EXEC_ACCEPTED, EXEC_REJECTED, EXEC_FILL, EXEC_CANCELLED, EXEC_MODIFIED = 1, 2, 3, 4, 5
CANCEL_USER, CANCEL_IOC_RESIDUAL, CANCEL_FOK_UNFILLABLE, CANCEL_SELF_TRADE, CANCEL_MODIFY_BELOW_FILLED, CANCEL_MASS = 1, 2, 3, 4, 5, 6


class SessionRejectReason:
    BAD_LENGTH = 1
    UNSUPPORTED_VERSION = 2
    UNKNOWN_TYPE = 3
    NOT_LOGGED_ON = 4
    SEQ_GAP = 5
    SEQ_REPEAT = 6
    ALREADY_LOGGED_ON = 7
    RATE_LIMITED = 8


class LogonRejectReason:
    BAD_CREDENTIALS = 1
    UNKNOWN_CLIENT = 2
    ALREADY_LOGGED_ON = 3
    MAX_SESSIONS = 4
    BAD_HEARTBEAT = 5


class LogoutReason:
    CLIENT_REQUEST = 0
    HEARTBEAT_TIMEOUT = 1
    PROTOCOL_ERROR = 2
    SERVER_SHUTDOWN = 3
    SLOW_CONSUMER = 4
    NOT_LOGGED_ON = 5
    LOGON_TIMEOUT = 6
    PARTIAL_MESSAGE_TIMEOUT = 7


class EngineReject:
    """The engine's RejectReason codes that the tests name (docs/MATCHING.md)."""

    UNKNOWN_INSTRUMENT = 100
    INVALID_SIDE = 102
    PRICE_OFF_TICK = 105
    PRICE_OUT_OF_BAND = 106
    ZERO_QUANTITY = 108
    QUANTITY_TOO_LARGE = 109
    DUPLICATE_CLIENT_ORDER_ID = 200
    UNKNOWN_ORDER = 201
    TOO_LATE_TO_CANCEL = 202


class WireError(ValueError):
    """A byte sequence that is not a valid message; `what` names the rule broken."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"{what}: {detail}")
        self.what = what


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


@_msg(
    110,
    96,
    "QQQqqqqqqIIBBBBHBx",
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
    seq: int = 0


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


CLIENT_MESSAGES = {c.TYPE: c for c in (Logon, Logout, Heartbeat, NewOrder, CancelOrder, ModifyOrder, AdminRequest)}
EXCHANGE_MESSAGES = {
    c.TYPE: c
    for c in (LogonAck, LogonReject, ServerLogout, ServerHeartbeat, ExecutionReport, CancelReject, ModifyReject, SessionReject,
              AdminResponse)
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


# --------------------------------------------------------------------------
# Credentials (src/venue/credential.hpp)
# --------------------------------------------------------------------------


def credential_hash(key: str, salt: bytes) -> str:
    """The config's stored form: sha256:<salt hex>:<hex of SHA-256(salt || key)>."""
    assert len(salt) == 16
    digest = hashlib.sha256(salt + key.encode("ascii")).hexdigest()
    return f"sha256:{salt.hex()}:{digest}"


# --------------------------------------------------------------------------
# Market data (PROTOCOL.md section 2)
# --------------------------------------------------------------------------

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


# --------------------------------------------------------------------------
# Sockets
# --------------------------------------------------------------------------


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

