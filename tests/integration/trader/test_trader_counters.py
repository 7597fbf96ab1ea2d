"""The trader's counters file (docs/TELEMETRY.md "The counters file") read from
outside while it trades: the session, the books and the fills show as they
happen, and after a clean stop the file is marked stopped and holds what
the trader printed (its summary is the file's text); it carries every label
the tools read by name."""

from __future__ import annotations

import signal
import time

from tests.integration.trader.trader_harness import TraderSpec, market_maker_instruments, random_instruments
from tools.counters import labels
from tools.counters.counters_file import read


def wait_for(path, what, predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    values = {}
    while time.monotonic() < deadline:
        try:
            values = read(path).values()
        except Exception:  # not created yet
            values = {}
        if values and predicate(values):
            return values
        time.sleep(0.05)
    raise AssertionError(f"{what} not seen in {path} within {timeout} s: {values}")


def test_trader_counters_are_live_and_final(config, start_exchange, start_trader, tmp_path):
    ex = start_exchange(config)
    path = tmp_path / "mm.counters"
    mm = TraderSpec("mm", "market_maker", config.client(1), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                    exchange_port=ex.port, seed=21)
    rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=100.0, weight_ioc=50),
                     exchange_port=ex.port, seed=22)
    mm_proc = start_trader(mm.write(tmp_path), extra_args=["--counters", str(path)])
    live = wait_for(path, "the session and every book live",
                    lambda v: v.get("session.logged_on") == 1 and v.get("md.instruments", 0) > 0
                    and v.get("md.books_live") == v.get("md.instruments"))
    assert live["orders.placed"] >= 0 and read(path).status == "running" and read(path).process == "trader-mm"
    # The labels the tools read by name (tools/counters/labels.py) are the trader's own.
    have = [c.label for c in read(path).counters]
    assert not labels.missing(have, labels.TRADER, labels.TRADER_PREFIXES), have
    rnd_proc = start_trader(rnd.write(tmp_path), duration_s=4.0)
    wait_for(path, "a fill", lambda v: v.get("fills", 0) > 0 and v.get("engine.fills", 0) > 0)
    assert rnd_proc.wait_exit(15.0) == 0, rnd_proc.describe()
    assert mm_proc.stop(signal.SIGINT) == 0, mm_proc.describe()
    ex.stop()
    final = read(path)
    assert final.status == "stopped"
    values = final.values()
    assert values["session.logged_on"] == 0 and values["orders.in_state.live"] == 0
    summary = mm_proc.summary()
    for key in ("fills", "orders.placed", "orders.cancels", "risk.allowed", "session.logons", "md.gaps",
                "tick_to_trade_ns.count", "pnl.realised"):
        assert str(values[key]) == summary[key], (key, values[key], summary[key])
    assert f"{values['pnl.total']:.6f}" == summary["pnl.total"]
