"""Missed reports through the protocol (issue 33's wire contract, PROTOCOL.md
§1.8): a session's first message after LogonAck may ask for its
client's fills after a given exec_seq; the exchange sends each again from its
trade ledger (ExecutionReport with flags REPORT_REPLAYED, exec_seq order),
then ReportsReplayed. tools.wire's OrderEntryClient.request_reports checks
the order, the fills-only rule and the count on every call.

A replayed report repeats what a trade record keeps and leaves the rest 0
(PROTOCOL.md §1.8).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from tests.integration.exchange.exchange_harness import make_config
from tools import wire as w

# What a replayed fill must repeat of the live one, and what it leaves 0 (PROTOCOL.md §1.8).
SAME = ("exec_seq", "client_order_id", "order_id", "last_price", "last_qty", "instrument", "side", "is_maker",
        "exec_type")
ZERO = ("price", "order_qty", "cum_qty", "leaves_qty", "order_type", "ref_seq", "reject_reason", "cancel_reason")


def key(r: w.ExecutionReport) -> Tuple:
    return tuple(getattr(r, f) for f in SAME)


def trade(ex, rounds: int) -> Dict[int, List[w.ExecutionReport]]:
    """`rounds` crosses of client 1 (resting buys) with client 2 (selling into them): every
    fill report each client received live, by client."""
    fills: Dict[int, List[w.ExecutionReport]] = {1: [], 2: []}
    with ex.logon(1) as maker, ex.logon(2) as taker:
        for i in range(1, rounds + 1):
            s = maker.send(w.NewOrder(client_order_id=i, instrument=0, side=w.BUY, order_type=w.LIMIT, price=100 + i, qty=3))
            maker.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
            t = taker.send(w.NewOrder(client_order_id=i, instrument=0, side=w.SELL, order_type=w.IOC, price=100 + i, qty=3))
            taker.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=t)
            fills[2].append(taker.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, ref_seq=t))
            fills[1].append(maker.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, client_order_id=i))
    return fills


def test_every_fill_of_the_client_is_replayed_in_order(start_exchange, config):
    ex = start_exchange(config)
    live = trade(ex, 5)
    for client in (1, 2):
        with ex.logon(client, retry_already_logged_on=True) as c:
            replayed, done, others = c.request_reports(0)
            assert [key(r) for r in replayed] == [key(r) for r in live[client]]
            assert all(r.replayed for r in replayed) and not any(r.replayed for r in live[client])
            assert all(getattr(r, f) == 0 for r in replayed for f in ZERO), replayed
            assert done.count == 5 and done.through_exec_seq >= live[client][-1].exec_seq and others == []
            # The session goes on as any other after its replay.
            s = c.send(w.NewOrder(client_order_id=100, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1, qty=1))
            c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)


def test_only_fills_after_the_given_exec_seq_are_replayed(start_exchange, config):
    ex = start_exchange(config)
    live = trade(ex, 4)[1]
    with ex.logon(1, retry_already_logged_on=True) as c:
        replayed, done, _ = c.request_reports(live[1].exec_seq)
        assert [key(r) for r in replayed] == [key(r) for r in live[2:]] and done.count == 2
    with ex.logon(1, retry_already_logged_on=True) as c:  # past the last fill: nothing, still answered
        replayed, done, _ = c.request_reports(live[-1].exec_seq)
        assert replayed == [] and done.count == 0


def test_a_client_without_fills_gets_an_empty_replay(start_exchange, config):
    ex = start_exchange(config)
    trade(ex, 2)
    with ex.logon(3) as c:
        replayed, done, _ = c.request_reports(0)
        assert replayed == [] and done.count == 0


def test_a_reports_request_that_is_not_first_is_rejected(start_exchange, config):
    ex = start_exchange(config)
    trade(ex, 1)
    with ex.logon(1, retry_already_logged_on=True) as c:  # after another message
        c.send(w.Heartbeat())
        s = c.send(w.ReportsRequest(after_exec_seq=0))
        c.expect(w.SessionReject, reason=w.SessionRejectReason.REPORTS_REQUEST_NOT_FIRST, ref_seq=s,
                 ref_type=w.ReportsRequest.TYPE)
    with ex.logon(1, retry_already_logged_on=True) as c:  # twice
        c.request_reports(0)
        s = c.send(w.ReportsRequest(after_exec_seq=0))
        c.expect(w.SessionReject, reason=w.SessionRejectReason.REPORTS_REQUEST_NOT_FIRST, ref_seq=s)
    counters = ex.stop()
    assert counters.get("session_reject.reports request not first") == 2, counters


def test_no_fill_acknowledged_before_the_request_is_missed(start_exchange, tmp_path):
    # Many fills, then at once a new session asks for them: the ledger writer may lag the
    # engine, and the replay must still hold every fill the client saw acknowledged.
    ex = start_exchange(make_config(tmp_path, journal={"fsync": "none"}))
    live = trade(ex, 60)[1]
    with ex.logon(1, retry_already_logged_on=True) as c:
        replayed, done, _ = c.request_reports(0)
    assert [r.exec_seq for r in replayed] == [r.exec_seq for r in live] and done.count == 60
