"""Two clients trade with each other through the real exchange: both receive
their fills, and the market data received over multicast (incremental feed and
snapshot channel) reproduces the exchange's book: it equals what the clients
know is resting, the snapshots equal the incremental book order by order, the
trades match the fills, each instrument's messages are numbered by their own
gap-free instrument_seq (which the snapshots' instrument_seq matches: the
snapshot audit), and a replay of the exchange's journal through the
independent model (engine_model.py) gives every report the clients received,
byte for byte, and the same books and market data sequence numbers.
"""

from __future__ import annotations

import collections
import os
import random
import time

import pytest

from tests.integration.exchange import engine_model as em
from tests.integration.exchange import journal_reader as jr
from tests.integration.exchange import md_books as mb
from tools import wire as w
from tests.integration.exchange.exchange_harness import MdRecorder, make_config
from tests.integration.exchange.order_flow import OrderTracker, RandomFlow, check_reports_against_model


def test_two_clients_trade_and_both_receive_their_fills(start_exchange, config):
    with MdRecorder(config) as md:
        ex = start_exchange(config)
        with ex.logon(1) as a, ex.logon(2) as b:
            sa = a.send(w.NewOrder(client_order_id=11, instrument=0, side=w.SELL, order_type=w.LIMIT, price=1000, qty=10))
            a.expect(w.ExecutionReport, exec_seq=1, exec_type=w.EXEC_ACCEPTED, ref_seq=sa, order_id=1, leaves_qty=10)
            sb = b.send(w.NewOrder(client_order_id=21, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1001, qty=4))
            b.expect(w.ExecutionReport, exec_seq=2, exec_type=w.EXEC_ACCEPTED, ref_seq=sb, order_id=2, price=1001, leaves_qty=4)
            taker = b.expect(w.ExecutionReport, exec_seq=3, exec_type=w.EXEC_FILL, ref_seq=sb)
            assert (taker.client_order_id, taker.order_id, taker.last_price, taker.last_qty, taker.cum_qty, taker.leaves_qty, taker.is_maker) == (21, 2, 1000, 4, 4, 0, 0)
            maker = a.expect(w.ExecutionReport, exec_seq=4, exec_type=w.EXEC_FILL, ref_seq=0)
            assert (maker.client_order_id, maker.order_id, maker.price, maker.last_price, maker.last_qty, maker.cum_qty, maker.leaves_qty, maker.is_maker, maker.side) == (
                11, 1, 1000, 1000, 4, 4, 6, 1, w.SELL)
            md.wait_incremental_heartbeat(5)
            msgs = [m for p in md.packets()[0] for m in p.messages]
            assert msgs == [
                w.MdAddOrder(side=w.SELL, instrument=0, order_id=1, price=1000, qty=10, instrument_seq=1, seq=1),
                w.MdTopOfBook(instrument=0, bid_price=0, bid_qty=0, ask_price=1000, ask_qty=10, instrument_seq=2, seq=2),
                w.MdTrade(side=w.BUY, instrument=0, maker_order_id=1, taker_order_id=2, price=1000, qty=4, instrument_seq=3, seq=3),
                w.MdTopOfBook(instrument=0, bid_price=0, bid_qty=0, ask_price=1000, ask_qty=6, instrument_seq=4, seq=4),
            ]
            snaps = md.wait_snapshots(2, 4)
            assert snaps[0].last_seq == 4 and snaps[0].priority_list() == [(w.SELL, 1, 1000, 6)]
            assert snaps[0].instrument_seq == 4
            assert snaps[1].priority_list() == [] and snaps[1].instrument_seq == 0  # no message of instrument 1 yet
            md.check(mtu=1400, from_start=True)
            assert not a.in_seq_errors and not b.in_seq_errors
        counters = ex.stop()
    # The gateway's two acknowledgement histograms saw the same answers (two
    # orders: the first answer of each), and handing an answer to send()
    # comes no later than send() returning.
    assert counters["ack_latency_ns.count"] == counters["ack_ready_latency_ns.count"] == 2, counters
    assert 0 < counters["ack_ready_latency_ns.max"] <= counters["ack_latency_ns.max"], counters


# Both thread layouts: compact hands the engine's outputs straight to the gateway
# and the publisher; dedicated writes them into rings published once per batch.
@pytest.mark.parametrize("mode", ["compact", "dedicated"])
def test_market_data_reproduces_the_book_and_the_journal_replays_to_the_same_reports(start_exchange, tmp_path, mode):
    seed = int(os.environ.get("NANOTICK_TEST_SEED", "20261122"))
    rng = random.Random(seed)
    # A small MTU: bursts (a sweep's trades, a snapshot) must be split across packets.
    config = make_config(tmp_path, journal={"snapshot_every": 100}, market_data={"mtu": 200}, threads={"mode": mode})
    with MdRecorder(config) as md:
        ex = start_exchange(config)
        trackers = [OrderTracker(1, ex.logon(1)), OrderTracker(2, ex.logon(2))]
        flows = [RandomFlow(rng, t, mids=[1000, 500], ticks=[1, 5]) for t in trackers]
        for _ in range(30):
            for t, f in zip(trackers, flows):
                for _ in range(10):  # pipelined: both clients' requests interleave at the exchange
                    t.send(f.next())
            for t in trackers:
                t.wait_answers()
        time.sleep(0.05)
        for t in trackers:
            t.pump()
            assert not t.errors and not t.session_rejects, (seed, t.errors[:3], t.session_rejects[:3])
            assert not t.session.in_seq_errors, t.session.in_seq_errors[:3]

        def quiet_books():
            books = md.books()
            incr = md.packets()[0]
            return books if incr and incr[-1].is_heartbeat and incr[-1].first_seq == books.next_seq else None

        books = md.wait_for(quiet_books, 3.0, "a quiet incremental channel")
        last_seq = books.next_seq - 1
        fills = [r for t in trackers for r in t.reports if isinstance(r, w.ExecutionReport) and r.exec_type == w.EXEC_FILL]
        assert len(fills) > 50, f"seed {seed}: the flow produced only {len(fills)} fills"
        for ins in (0, 1):
            md_book = set(books.book(ins).priority_list())
            known = set().union(*(t.resting_set(ins) for t in trackers))
            assert md_book == known, f"seed {seed} instrument {ins}: market data has {md_book ^ known} the clients do not agree with"
        # Every fill is a market data trade: maker fills by maker id, taker fills by taker id.
        makers = collections.Counter((r.order_id, r.last_price, r.last_qty) for r in fills if r.is_maker)
        takers = collections.Counter((r.order_id, r.last_price, r.last_qty) for r in fills if not r.is_maker)
        assert makers == collections.Counter((m.maker_order_id, m.price, m.qty) for m in books.trades)
        assert takers == collections.Counter((m.taker_order_id, m.price, m.qty) for m in books.trades)
        snaps = md.wait_snapshots(2, last_seq)
        assert sum(books.instrument_seqs.values()) == last_seq, (books.instrument_seqs, last_seq)  # from 1, no gaps
        for ins in (0, 1):
            assert snaps[ins].last_seq == last_seq
            assert snaps[ins].priority_list() == books.book(ins).priority_list(), f"seed {seed}: snapshot of {ins} differs from the incremental book"
            assert snaps[ins].instrument_seq == books.instrument_seqs[ins], f"seed {seed}: snapshot of {ins}"
        incremental = md.packets()[0]
        for snap in md.snapshots():  # every snapshot heard, also those taken while the flow ran
            problem = mb.audit_snapshot(snap, incremental)
            assert problem is None, f"seed {seed}: {problem}"
        md.check(mtu=200, from_start=True)
        for t in trackers:
            t.session.close()
        md.wait_for(lambda: all(not md.books().book(i).orders for i in (0, 1)), 3.0, "the cancels on disconnect")
        counters = ex.stop()
    model, scan = jr.replay_journal(config.journal_dir, config.instruments)
    assert scan.stopped_because == "end", scan.stopped_because
    received = sum(len(t.reports) for t in trackers)
    assert check_reports_against_model(trackers, model) == received
    assert counters.get("requests_sequenced") == len(scan.requests) == counters.get("journal_records"), counters
    # Both clients had cancel_on_disconnect: their closes cancelled what was resting.
    assert model.books() == {0: [], 1: []}
    # The model after the clients' 600 requests (before those cancels): the same books and
    # the same market data sequence as the multicast feed.
    before = em.EngineModel(config.instruments)
    for r in scan.requests[:600]:
        before.apply(r)
    assert before.next_md_seq - 1 == last_seq, (before.next_md_seq, last_seq)
    assert before.instrument_seqs() == books.instrument_seqs, (before.instrument_seqs(), books.instrument_seqs)
    assert before.books() == {ins: books.book(ins).priority_list() for ins in (0, 1)}


def test_cancel_on_disconnect_is_published(start_exchange, tmp_path):
    config = make_config(tmp_path)
    config.client(2).cancel_on_disconnect = False
    with MdRecorder(config) as md:
        ex = start_exchange(config)
        a, b = ex.logon(1), ex.logon(2)
        for c, side, base in ((a, w.BUY, 990), (b, w.SELL, 1010)):
            for i in range(3):
                price = base - i if side == w.BUY else base + i
                s = c.send(w.NewOrder(client_order_id=i + 1, instrument=0, side=side, order_type=w.LIMIT, price=price, qty=5))
                c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
        # All six adds on the feed first: otherwise a recorder that has seen only the three
        # buys so far already holds "three orders" (the flake this wait removed).
        md.wait_for(lambda: len(md.books().book(0).orders) == 6, 3.0, "the six resting orders")
        a.close()
        b.close()

        def after_cancels():
            books = md.books()
            return books if len(books.book(0).orders) == 3 else None

        books = md.wait_for(after_cancels, 3.0, "the cancels of client 1's orders")
        assert {o.side for o in books.book(0).orders.values()} == {w.SELL}
        deletes = [m for p in md.packets()[0] for m in p.messages if isinstance(m, w.MdDeleteOrder)]
        assert sorted(m.order_id for m in deletes) == [1, 2, 3]
        with ex.logon(2, retry_already_logged_on=True) as b2:  # client 2's orders survived its disconnect
            for i in range(3):
                s = b2.send(w.CancelOrder(client_order_id=i + 1, instrument=0))
                b2.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, cancel_reason=w.CANCEL_USER)
        with ex.logon(1, retry_already_logged_on=True) as a2:  # client 1's were cancelled
            s = a2.send(w.CancelOrder(client_order_id=1, instrument=0))
            a2.expect(w.CancelReject, ref_seq=s, reason=w.EngineReject.TOO_LATE_TO_CANCEL)
        md.check()
        ex.stop()
