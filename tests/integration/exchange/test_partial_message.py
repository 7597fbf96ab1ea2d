"""A logged-on client that trickles a message byte by byte (issue 30): it is
never silent, so the heartbeat rule never closes it, yet it completes no
message and holds its session slot. The exchange closes it with Logout
PartialMessageTimeout once its message has been incomplete for
`partial_message_timeout_ms` (docs/PROTOCOL.md 1.4), while the clients beside
it keep trading, including one whose every message arrives in two pieces.
"""

from __future__ import annotations

import time

import pytest

from tools import wire as w
from tests.integration.exchange.exchange_harness import make_config

TIMEOUT_S = 2.0  # partial_message_timeout_ms below
TICK_S = 0.3     # the test's loop: the trader trades and the splitter sends a piece each tick


def new_order(coid: int, side: int, price: int, qty: int = 1, instrument: int = 0) -> w.NewOrder:
    return w.NewOrder(client_order_id=coid, instrument=instrument, side=side, order_type=w.LIMIT, price=price, qty=qty)


# timing: the trickling client is closed no sooner than the timeout and within TIMEOUT_S + 3 s of its first byte.
@pytest.mark.timing
def test_a_client_trickling_one_byte_every_0_9_s_is_closed_while_others_trade(start_exchange, tmp_path):
    config = make_config(tmp_path, server={"partial_message_timeout_ms": int(TIMEOUT_S * 1000)})
    ex = start_exchange(config)
    with ex.logon(1) as slow, ex.logon(2) as trader, ex.logon(3) as splitter:
        # The attacker: one NewOrder, one byte every 0.9 s (tens of seconds to complete it).
        trickle = new_order(99, w.BUY, 1000).encode(seq=slow.next_out_seq)
        # The splitter: each order sent as two pieces a tick apart, the first
        # piece of the next order with the end of the one before, so its input
        # always ends inside a message for longer than the timeout -- each one
        # completing in time.
        orders = [new_order(100 + i, w.SELL, 2000 + i).encode(seq=splitter.next_out_seq + i) for i in range(12)]
        stream = b"".join(orders)
        cut = len(orders[0]) // 2
        pieces = [stream[:cut]] + [stream[cut + i * len(orders[0]):cut + (i + 1) * len(orders[0])]
                                   for i in range(len(orders))]
        sent_bytes = 0
        logout, closed_after = None, None
        round_trips = 0
        t0 = time.monotonic()
        tick = 0
        last_piece, longest_gap = None, 0.0  # the splitter's pieces as sent (this loop may stall on a busy machine)
        # Until the splitter is done (~4 s, past the timeout) and the attacker closed (or given up on).
        while pieces or (logout is None and time.monotonic() - t0 < TIMEOUT_S + 4.0):
            if logout is None and tick % 3 == 0:  # every 0.9 s
                if sent_bytes < len(trickle):
                    slow.send_raw(trickle[sent_bytes:sent_bytes + 1])
                    sent_bytes += 1
            if logout is None:
                got = slow.poll()
                if got or slow.closed:
                    closed_after = time.monotonic() - t0
                    logout = got
            if pieces:
                now = time.monotonic()
                longest_gap = max(longest_gap, now - last_piece) if last_piece is not None else 0.0
                last_piece = now
                try:
                    splitter.send_raw(pieces.pop(0))
                except OSError as e:
                    raise AssertionError(f"the splitter's session was closed ({e}; it had received "
                                         f"{splitter.poll()}); longest gap between its pieces {longest_gap:.2f} s, "
                                         f"timeout {TIMEOUT_S} s") from e
            # The trader beside them: an order and its cancel, answered at once.
            coid = 1000 + round_trips
            s = trader.send(new_order(coid, w.BUY, 900))
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED, client_order_id=coid)
            s = trader.send(w.CancelOrder(client_order_id=coid, instrument=0))
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_CANCELLED, client_order_id=coid)
            round_trips += 1
            tick += 1
            time.sleep(TICK_S)

        assert logout is not None, (f"the trickling session was not closed within {TIMEOUT_S + 4.0:.1f} s "
                                    f"({sent_bytes} of {len(trickle)} bytes sent)")
        if not slow.closed:
            logout += slow.wait_closed(timeout=5.0)
        # Its last message (heartbeats aside, which poll() leaves out): the Logout naming why.
        assert [type(m) for m in logout] == [w.ServerLogout], logout
        assert logout[0].reason == w.LogoutReason.PARTIAL_MESSAGE_TIMEOUT, logout
        assert TIMEOUT_S <= closed_after < TIMEOUT_S + 3.0, closed_after
        assert sent_bytes < len(trickle)  # closed before its message could complete

        # Every piece of the splitter's was taken: each of its orders accepted, no Logout.
        for i in range(len(orders)):
            splitter.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, client_order_id=100 + i)
        assert splitter.poll() == [] and not splitter.closed
        assert not trader.in_seq_errors and not splitter.in_seq_errors
        # The slot is free again: client 1 logs on anew, and its half order never existed.
        with ex.logon(1, retry_already_logged_on=True) as again:
            s = again.send(w.CancelOrder(client_order_id=99, instrument=0))
            again.expect(w.CancelReject, ref_seq=s, reason=w.EngineReject.UNKNOWN_ORDER)
    counters = ex.stop()
    assert counters.get("logout.partial message timeout") == 1, counters
    assert counters.get("logout.heartbeat timeout", 0) == 0, counters
    assert round_trips >= 8, round_trips
