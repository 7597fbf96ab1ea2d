"""An independent Python implementation of the nanotick wire protocol v1.

Written from docs/PROTOCOL.md alone (never from the C++ codec in src/proto), so
that a disagreement between the spec and the server shows up as a failing
integration test instead of two copies of the same misreading. By subject:

- common: version, enum values, WireError;
- order_entry (TCP, PROTOCOL.md section 1): header, every client -> exchange and
  exchange -> client message, strict decoding, a stream framer;
- market_data (UDP multicast, section 2): packet header, every message, strict
  packet decoding (the books built from it are tests/integration/exchange/md_books.py),
  MulticastReceiver;
- sessions: OrderEntryClient (blocking TCP, logon, both directions' sequence
  numbers checked) and ShmOrderEntryClient (the shared-memory transport).

Everything is re-exported here, so `from tools import wire as w; w.NewOrder(...)`
reads as the protocol does. Credentials are not the wire's: tools.credential.
Not thread-safe: each object belongs to the thread that made it.
"""

from tools.wire.common import *  # noqa: F401,F403
from tools.wire.market_data import *  # noqa: F401,F403
from tools.wire.order_entry import *  # noqa: F401,F403
from tools.wire.sessions import *  # noqa: F401,F403
