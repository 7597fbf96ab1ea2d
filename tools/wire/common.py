"""What both halves of the wire share (docs/PROTOCOL.md conventions): the
protocol version, the engine's enum values and the decoding error."""

from __future__ import annotations

VERSION = 1
HEADER_SIZE = 8
MAX_MESSAGE_LENGTH = 256  # kMaxMessageLength: a larger `length` is oversized
CREDENTIAL_BYTES = 32

# Enum values (PROTOCOL.md conventions, the engine's values).
BUY, SELL = 1, 2
LIMIT, IOC, FOK, MARKET = 1, 2, 3, 4
STP_NONE, STP_CANCEL_RESTING, STP_CANCEL_INCOMING, STP_CANCEL_BOTH = 0, 1, 2, 3

# ExecutionReport exec_type / cancel_reason.
EXEC_ACCEPTED, EXEC_REJECTED, EXEC_FILL, EXEC_CANCELLED, EXEC_MODIFIED = 1, 2, 3, 4, 5
CANCEL_USER, CANCEL_IOC_RESIDUAL, CANCEL_FOK_UNFILLABLE, CANCEL_SELF_TRADE, CANCEL_MODIFY_BELOW_FILLED, CANCEL_MASS = 1, 2, 3, 4, 5, 6


# ExecutionReport.flags bits (the last byte, reserved before the ReportsRequest).
REPORT_REPLAYED = 1  # sent again in answer to a ReportsRequest, not live


class SessionRejectReason:
    BAD_LENGTH = 1
    UNSUPPORTED_VERSION = 2
    UNKNOWN_TYPE = 3
    NOT_LOGGED_ON = 4
    SEQ_GAP = 5
    SEQ_REPEAT = 6
    ALREADY_LOGGED_ON = 7
    RATE_LIMITED = 8
    REPORTS_REQUEST_NOT_FIRST = 9  # a ReportsRequest that is not the first message after LogonAck


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

# What `from tools.wire import *` (tools/wire/__init__.py) takes from here.
__all__ = [
    "BUY", "CANCEL_FOK_UNFILLABLE", "CANCEL_IOC_RESIDUAL", "CANCEL_MASS", "CANCEL_MODIFY_BELOW_FILLED",
    "CANCEL_SELF_TRADE", "CANCEL_USER", "CREDENTIAL_BYTES", "EXEC_ACCEPTED", "EXEC_CANCELLED", "EXEC_FILL",
    "EXEC_MODIFIED", "EXEC_REJECTED", "EngineReject", "FOK", "HEADER_SIZE", "IOC", "LIMIT", "LogonRejectReason",
    "LogoutReason", "MARKET", "MAX_MESSAGE_LENGTH", "REPORT_REPLAYED", "SELL", "STP_CANCEL_BOTH",
    "STP_CANCEL_INCOMING", "STP_CANCEL_RESTING", "STP_NONE", "SessionRejectReason", "VERSION", "WireError",
]
