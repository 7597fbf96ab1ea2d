"""Tests of demo_console.py: status lines as the binaries log them (copied
from real logs) become aligned console rows, unknown lines are shown as
logged, and the live view redraws in place on a terminal and prints every
few seconds otherwise.
"""

from __future__ import annotations

import io

import demo_console as dcon

EXCHANGE_LINE = "nanotick-exchange: exchange: 363 req/s, 726 sequenced, 2 sessions, 874 msgs out"
TRADER_LINE = ("nanotick-trader[mm1]: mm1: logged on, books live 2/2, 160 orders/s, fills 28, risk blocks 3, "
               "pnl -3216.2, position volume 203, tick-to-trade p50 19.33 us p99 55.04 us (283)")


def test_prefixes_are_stripped():
    assert dcon.strip_prefix("nanotick-exchange: ready") == "ready"
    assert dcon.strip_prefix("nanotick-trader[random]: ready") == "ready"
    assert dcon.strip_prefix("nanotick-trader: config error: x") == "config error: x"
    assert dcon.strip_prefix("something else: ready") == "something else: ready"


def test_exchange_status_is_parsed():
    st = dcon.exchange_status(dcon.strip_prefix(EXCHANGE_LINE))
    assert st == {"rate": "363", "sequenced": "726", "sessions": "2", "msgs_out": "874"}
    assert dcon.trader_status(dcon.strip_prefix(EXCHANGE_LINE)) is None


def test_trader_status_is_parsed():
    st = dcon.trader_status(dcon.strip_prefix(TRADER_LINE))
    assert st is not None
    assert (st["name"], st["state"], st["rate"], st["fills"], st["risk_blocks"], st["pnl"]) == (
        "mm1", "logged on", "160", "28", "3", "-3216.2")
    assert (st["p50"], st["p99"], st["count"]) == ("19.33", "55.04", "283")
    assert dcon.is_status(dcon.strip_prefix(TRADER_LINE))
    assert not dcon.is_status("ready")


def test_rows_show_the_status_fields_aligned():
    ex = dcon.format_row("exchange", dcon.strip_prefix(EXCHANGE_LINE))
    tr = dcon.format_row("mm1", dcon.strip_prefix(TRADER_LINE))
    assert ex.startswith("exchange ") and "363 req/s" in ex and "726 sequenced" in ex and "2 sessions" in ex
    assert tr.startswith("mm1 ") and "160 orders/s" in tr and "fills     28" in tr and "risk blocks    3" in tr
    assert "PnL    -3216.2" in tr and "p50   19.33 us" in tr and "p99    55.04 us" in tr
    assert dcon.format_row("taker", None) == f"{'taker':<{dcon.LABEL_WIDTH}} no status line yet"
    assert dcon.format_row("taker", None, "was killed by SIGKILL").endswith("was killed by SIGKILL")
    # A line in a format this file does not know is shown as logged.
    assert dcon.format_row("mm2", "mm2: something new").endswith("mm2: something new")


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
