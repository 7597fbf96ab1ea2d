"""Unit tests of the test oracle engine_model.py (no server needed): the
matching rules of docs/MATCHING.md it implements, and the journal reader on a
journal written here byte by byte (good records, then a corrupt one).
"""

from __future__ import annotations

import struct

from tests.integration.exchange import engine_model as em
from tests.integration.exchange import journal_reader as jr
from tools import wire as w
from tests.integration.exchange.exchange_harness import InstrumentSpec


def model():
    return em.EngineModel([InstrumentSpec("A"), InstrumentSpec("B", tick_size=5, min_price=5, max_price=1000, collar=50)])


class Feed:
    def __init__(self, m):
        self.m = m
        self.seq = 0

    def __call__(self, type_, client, coid, side=w.BUY, price=100, qty=10, order_type=w.LIMIT, instrument=0):
        self.seq += 1
        start = len(self.m.reports)
        self.m.apply(em.Request(self.seq, type_, side, order_type, 0, instrument, client, 0, coid, price, qty, 0))
        return self.m.reports[start:]


def test_price_time_priority_fills_and_trade_price():
    m = model()
    f = Feed(m)
    f(em.REQ_NEW, 1, 1, w.SELL, 101, 5)
    f(em.REQ_NEW, 1, 2, w.SELL, 100, 5)
    f(em.REQ_NEW, 2, 3, w.SELL, 100, 5)
    out = f(em.REQ_NEW, 3, 4, w.BUY, 101, 12)
    kinds = [(r.client, r.exec_type, r.last_price, r.last_qty, r.is_maker) for r in out]
    assert kinds == [
        (3, w.EXEC_ACCEPTED, 0, 0, 0),
        (3, w.EXEC_FILL, 100, 5, 0), (1, w.EXEC_FILL, 100, 5, 1),
        (3, w.EXEC_FILL, 100, 5, 0), (2, w.EXEC_FILL, 100, 5, 1),
        (3, w.EXEC_FILL, 101, 2, 0), (1, w.EXEC_FILL, 101, 2, 1),
    ]
    assert [r.exec_seq for r in out] == list(range(4, 11))
    assert m.books()[0] == [(w.SELL, 1, 101, 3)]
    assert out[-1].leaves_qty == 3 and out[-2].leaves_qty == 0 and out[-2].cum_qty == 12
    # md: 3 adds + 3 tops, then 3 trades + 1 top
    assert m.md_count_by_type == {"add": 3, "top": 4, "trade": 3}


def test_ioc_fok_market_and_rejects():
    m = model()
    f = Feed(m)
    f(em.REQ_NEW, 1, 1, w.SELL, 100, 5)
    out = f(em.REQ_NEW, 2, 2, w.BUY, 100, 8, w.IOC)
    assert [r.exec_type for r in out] == [w.EXEC_ACCEPTED, w.EXEC_FILL, w.EXEC_FILL, w.EXEC_CANCELLED]
    assert out[-1].cancel_reason == w.CANCEL_IOC_RESIDUAL and out[-1].cum_qty == 5 and out[-1].leaves_qty == 0
    f(em.REQ_NEW, 1, 3, w.SELL, 100, 5)
    out = f(em.REQ_NEW, 2, 4, w.BUY, 100, 6, w.FOK)
    assert [(r.exec_type, r.cancel_reason) for r in out] == [(w.EXEC_ACCEPTED, 0), (w.EXEC_CANCELLED, w.CANCEL_FOK_UNFILLABLE)]
    out = f(em.REQ_NEW, 2, 5, w.BUY, 0, 2, w.MARKET)
    assert [r.exec_type for r in out] == [w.EXEC_ACCEPTED, w.EXEC_FILL, w.EXEC_FILL] and out[0].price == 0
    assert f(em.REQ_NEW, 2, 6, w.BUY, 7, 1, instrument=1)[0].reject_reason == em.R_OFF_TICK
    assert f(em.REQ_NEW, 2, 6, w.BUY, 100, 0)[0].reject_reason == em.R_ZERO_QTY
    assert f(em.REQ_NEW, 2, 6, w.BUY, 100, 1, instrument=5)[0].reject_reason == em.R_UNKNOWN_INSTRUMENT
    assert f(em.REQ_NEW, 1, 3, w.BUY, 100, 1)[0].reject_reason == em.R_DUPLICATE
    rej = f(em.REQ_NEW, 2, 6, w.BUY, 100, 1, instrument=5)[0]
    assert rej.order_id == 0 and rej.exec_type == w.EXEC_REJECTED and rej.order_qty == 1


def test_cancel_too_late_unknown_and_another_clients_order():
    m = model()
    f = Feed(m)
    f(em.REQ_NEW, 1, 1, w.SELL, 100, 5)
    assert f(em.REQ_CANCEL, 2, 1)[0].reject_reason == em.R_UNKNOWN_ORDER  # client 2 cannot name client 1's order
    out = f(em.REQ_CANCEL, 1, 1)
    assert (out[0].exec_type, out[0].cancel_reason, out[0].leaves_qty) == (w.EXEC_CANCELLED, w.CANCEL_USER, 0)
    assert f(em.REQ_CANCEL, 1, 1)[0].reject_reason == em.R_TOO_LATE
    assert f(em.REQ_CANCEL, 1, 99)[0].kind == em.CANCEL_REJECT


def test_modify_keeps_or_loses_priority():
    m = model()
    f = Feed(m)
    f(em.REQ_NEW, 1, 1, w.BUY, 100, 10)
    f(em.REQ_NEW, 2, 2, w.BUY, 100, 10)
    f(em.REQ_MODIFY, 1, 1, price=100, qty=4)  # smaller, same price: keeps its place
    assert m.books()[0] == [(w.BUY, 1, 100, 4), (w.BUY, 2, 100, 10)]
    f(em.REQ_MODIFY, 1, 1, price=100, qty=6)  # larger: back of the level
    assert m.books()[0] == [(w.BUY, 2, 100, 10), (w.BUY, 1, 100, 6)]
    assert f(em.REQ_MODIFY, 1, 1, price=100, qty=6)[0].reject_reason == em.R_NO_CHANGE
    f(em.REQ_NEW, 3, 3, w.SELL, 100, 12)  # fills 10 of order 2 and 2 of order 1
    out = f(em.REQ_MODIFY, 1, 1, price=100, qty=2)  # at the filled quantity: cancelled
    assert (out[0].exec_type, out[0].cancel_reason) == (w.EXEC_CANCELLED, w.CANCEL_MODIFY_BELOW_FILLED)
    assert m.books()[0] == []


def test_journal_reader_checks_crc_and_stops_at_a_corrupt_record(tmp_path):
    def record(seq, coid):
        req = struct.pack("<BBBBIIIQqqQ", 1, 1, 1, 0, 0, 7, 0, coid, 100, 1, 0)
        head = struct.pack("<HBB", 64, 1, 0)
        tail = struct.pack("<Q", seq) + req
        crc = jr.crc32c(tail, jr.crc32c(head))
        return head + struct.pack("<I", crc) + tail

    header = b"NTJRNL01" + struct.pack("<IIQQ", 1, 64, 1, 0) + bytes(32)
    bad = bytearray(record(3, 3))
    bad[40] ^= 1
    (tmp_path / "journal-00000000000000000001.log").write_bytes(header + record(1, 1) + record(2, 2) + bytes(bad) + record(4, 4) + bytes(128))
    scan = jr.read_journal(tmp_path)
    assert [r.client_order_id for r in scan.requests] == [1, 2]
    assert "bad CRC" in scan.stopped_because
    (tmp_path / "journal-00000000000000000001.log").write_bytes(header + record(1, 1) + record(2, 2) + bytes(128))
    model, scan = jr.replay_journal(tmp_path, [InstrumentSpec("A")])
    assert scan.stopped_because == "end" and model.books()[0] == [(w.BUY, 1, 100, 1), (w.BUY, 2, 100, 1)]
