"""Tests of demo_console.py: counters become aligned console rows with rates,
unknown status lines are shown as logged, and the live view redraws in place on a terminal and prints every
few seconds otherwise.
"""

from __future__ import annotations

import io

from tools.demo import demo_console as dcon

EXCHANGE = {"requests_sequenced": 726, "sessions_live": 2, "messages_out": 874, "queue.gateway_to_sequencer": 3}
TRADER = {"session.logged_on": 1, "md.books_live": 2, "md.instruments": 2, "fills": 28, "risk.blocked.price_band": 2,
          "risk.blocked.rate_throttle": 1, "pnl.total": -3216.2, "tick_to_trade_ns.p50": 19330,
          "tick_to_trade_ns.p99": 55040, "orders.placed": 100, "orders.modifies": 50, "orders.cancels": 10}


def test_prefixes_are_stripped():
    assert dcon.strip_prefix("nanotick-exchange: ready") == "ready"
    assert dcon.strip_prefix("nanotick-trader[random]: ready") == "ready"
    assert dcon.strip_prefix("nanotick-trader: config error: x") == "config error: x"
    assert dcon.strip_prefix("something else: ready") == "something else: ready"


def test_rows_show_the_counters_aligned():
    ex = dcon.exchange_row("exchange", EXCHANGE, 363.0)
    tr = dcon.trader_row("mm1", TRADER, 160.0)
    assert ex.startswith("exchange ") and "363 req/s" in ex and "726 sequenced" in ex and "2 sessions" in ex
    assert "874 msgs out" in ex and "3 queued" in ex
    assert tr.startswith("mm1 ") and "logged on" in tr and "books 2/2" in tr and "160 orders/s" in tr
    assert "fills     28" in tr and "risk blocks    3" in tr
    assert "PnL    -3216.2" in tr and "p50   19.33 us" in tr and "p99    55.04 us" in tr
    assert "not logged on" in dcon.trader_row("mm1", {}, 0.0)
    assert dcon.format_row("taker", None) == f"{'taker':<{dcon.LABEL_WIDTH}} no status line yet"
    assert dcon.format_row("taker", None, "was killed by SIGKILL").endswith("was killed by SIGKILL")
    # A line in a format this file does not know is shown as logged.
    assert dcon.format_row("mm2", "mm2: something new").endswith("mm2: something new")


def test_counters_rows_read_files_at_most_every_half_second_and_rate_the_change(monkeypatch, tmp_path):
    readings = [dict(TRADER), dict(TRADER, **{"orders.placed": 400})]
    reads = []

    class File:
        def __init__(self, values):
            self._values = values

        def values(self):
            return self._values

    def fake_read(path):
        reads.append(path)
        if len(reads) == 1:
            raise dcon.CountersFileError("not there yet")
        return File(readings[min(len(reads) - 2, 1)])

    now = [0.0]
    monkeypatch.setattr(dcon, "read", fake_read)
    rows = dcon.CountersRows(clock=lambda: now[0], every=0.5)
    path = tmp_path / "trader-mm1.counters"
    assert rows.row("mm1", "trader", path) is None  # unreadable, nothing shown before
    now[0] = 1.0
    first = rows.row("mm1", "trader", path)
    assert "0 orders/s" in first
    now[0] = 1.2
    assert rows.row("mm1", "trader", path) == first and len(reads) == 2  # within 0.5 s: not read again
    now[0] = 3.0
    assert "150 orders/s" in rows.row("mm1", "trader", path)  # 300 more in 2 s


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_view_redraws_the_block_in_place():
    out = FakeTty()
    view = dcon.LiveView(out, tty=True)
    view.show("header 1", ["a", "b"])
    first = out.getvalue()
    assert "\x1b[" not in first.split("\x1b[2K", 1)[0], "the first draw moves the cursor nowhere"
    assert first.count("\n") == 3
    view.show("header 2", ["a2"])  # one row fewer: the old row is blanked
    second = out.getvalue()[len(first):]
    assert second.startswith("\x1b[3F"), repr(second)  # back three lines
    assert second.count("\x1b[2K") == 3 and second.count("\n") == 3
    assert "header 2" in second and "a2" in second
    view.detach()
    view.show("header 3", ["x"])
    third = out.getvalue()[len(first) + len(second):]
    assert third.startswith("\x1b[2K"), "after detach the block is drawn anew below, no cursor-up"


def test_plain_view_prints_every_interval_and_when_forced():
    now = [0.0]
    out = io.StringIO()
    view = dcon.LiveView(out, tty=False, plain_every=5.0, clock=lambda: now[0], first_after=1.5)
    view.show("h", ["r"])
    assert out.getvalue() == "", "the first block waits for the first status lines"
    now[0] = 1.6
    view.show("h1", ["r"])
    assert out.getvalue() == "h1\n  r\n"
    now[0] = 4.0
    view.show("h2", ["r"])
    assert "h2" not in out.getvalue()
    now[0] = 6.7
    view.show("h3", ["r"])
    assert "h3" in out.getvalue()
    view.show("h4", ["r"], force=True)
    assert "h4" in out.getvalue()
    assert "\x1b" not in out.getvalue()
