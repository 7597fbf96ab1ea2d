"""The venue's controls in the real exchange (docs/CONTROLS.md), over the
wire, written as a client and an auditor would check them:

- each refusal reaches the client as a reject with its 4xx reason, costs no
  other client anything, and is counted by reason (engine_reject.4xx);
- fills settle both sides at the trade price: the end-of-run balances the
  exchange prints equal the opening ones plus what the clients' own fills
  say;
- kill -9 under trading, then a restart on the same journal (recovery from
  an engine snapshot plus the journal after it): every balance is what the
  acknowledged fills make it, exactly, and the restored holds still bind
  (a buy that the cash held by recovered working orders leaves no room for
  is refused);
- the trade ledger (nanotick-ledger) holds every trade exactly once across
  the kill: its per-client sums are the clients' own fills, and its
  trade_seq chain has no gap.
"""

from __future__ import annotations

import csv
import io
import pathlib
import random
import subprocess

from tools import wire as w
from tests.integration.exchange.exchange_harness import make_config
from tests.integration.exchange.order_flow import OrderTracker, RandomFlow

T0, T1 = 0, 1
LEDGER = pathlib.Path(__file__).resolve().parents[3] / "build" / "release" / "bin" / "nanotick-ledger"


def ledger(*args):
    done = subprocess.run([str(LEDGER), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return list(csv.DictReader(io.StringIO(done.stdout)))


def accounts_config(tmp_path, **overrides):
    config = make_config(tmp_path, n_clients=3, **overrides)
    config.accounts = {"required": True}
    config.client(1).account = {"cash": 10_000, "positions": {"T0": 0}}
    config.client(2).account = {"cash": 0, "positions": {"T0": 50, "T1": 40}}
    # client 3: no account
    return config


def balances(counters, client, symbols=("T0", "T1")):
    return (counters[f"account.{client}.cash"],) + tuple(counters[f"account.{client}.position.{s}"] for s in symbols)


def test_refusals_carry_their_reason_and_fills_settle_both_sides(start_exchange, tmp_path):
    config = accounts_config(tmp_path)
    ex = start_exchange(config)
    with ex.logon(1) as buyer, ex.logon(2) as seller, ex.logon(3) as stranger:
        s = buyer.send(w.NewOrder(client_order_id=1, instrument=T0, side=w.BUY, order_type=w.LIMIT, price=100, qty=101))
        buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=406)
        s = seller.send(w.NewOrder(client_order_id=1, instrument=T0, side=w.SELL, order_type=w.LIMIT, price=90, qty=51))
        seller.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=407)
        s = stranger.send(w.NewOrder(client_order_id=1, instrument=T0, side=w.BUY, order_type=w.LIMIT, price=90, qty=1))
        stranger.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=400)
        # Just inside the limits: the seller's 50 and the buyer's 10,000.
        s = seller.send(w.NewOrder(client_order_id=2, instrument=T0, side=w.SELL, order_type=w.LIMIT, price=90, qty=50))
        seller.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        s = buyer.send(w.NewOrder(client_order_id=2, instrument=T0, side=w.BUY, order_type=w.LIMIT, price=100, qty=100))
        buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        fill = buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_FILL)
        assert (fill.last_price, fill.last_qty) == (90, 50)
        seller.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, last_qty=50)
        # The buyer's rest (50 at 100) holds 5,000 of the 5,500 left: a 6th unit more does not fit.
        s = buyer.send(w.NewOrder(client_order_id=3, instrument=T1, side=w.BUY, order_type=w.LIMIT, price=100, qty=6))
        buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=406)
        s = buyer.send(w.NewOrder(client_order_id=4, instrument=T1, side=w.BUY, order_type=w.LIMIT, price=100, qty=5))
        buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
    counters = ex.stop()
    assert balances(counters, 1) == (10_000 - 4_500, 50, 0), counters
    assert balances(counters, 2) == (4_500, 0, 40), counters
    assert "account.3.cash" not in counters, "client 3 has no account"
    assert (counters["engine_reject.400"], counters["engine_reject.406"], counters["engine_reject.407"]) == (1, 2, 1)
    # cancel on disconnect ended the working orders: nothing is held.
    assert counters["account.1.cash_held"] == 0 and counters["account.1.working_orders"] == 0, counters


def settle(expected, report):
    """Applies one fill the client was told of to its expected (cash, positions)."""
    cash, positions = expected
    value = report.last_price * report.last_qty
    if report.side == w.BUY:
        positions[report.instrument] += report.last_qty
        return cash - value, positions
    positions[report.instrument] -= report.last_qty
    return cash + value, positions


def test_kill_9_then_restart_restores_every_balance_exactly(start_exchange, tmp_path):
    rng = random.Random(20261127)
    # Snapshots every 100 requests: recovery is a snapshot plus the journal after it.
    config = accounts_config(tmp_path, journal={"snapshot_every": 100, "fsync": "every"})
    config.client(1).account = {"cash": 60_000, "positions": {"T0": 30, "T1": 10}}
    config.client(2).account = {"cash": 40_000, "positions": {"T0": 60, "T1": 25}}
    for c in (1, 2):
        config.client(c).cancel_on_disconnect = False  # working orders survive the kill: their holds must too
    expected = {1: (60_000, [30, 10]), 2: (40_000, [60, 25])}
    ex = start_exchange(config)
    trackers = [OrderTracker(1, ex.logon(1)), OrderTracker(2, ex.logon(2))]
    flows = [RandomFlow(rng, t, mids=[1000, 500], ticks=[1, 5]) for t in trackers]
    for _ in range(40):
        for t, f in zip(trackers, flows):
            for _ in range(8):
                t.send(f.next())
        for t in trackers:
            t.wait_answers()
    # A last request from each, in turn: its answer comes after every report of
    # every request sequenced before it, the other client's fills of this one included.
    for t in trackers:
        t.send(w.CancelOrder(client_order_id=99_999_999, instrument=T0))
        t.wait_answers()
    refused = sum(1 for t in trackers for r in t.reports if getattr(r, "reject_reason", 0) >= 400)
    assert refused > 0, "the accounts never bound: the test would not test them"
    for t in trackers:
        assert not t.errors, t.errors
        for r in t.reports:
            if isinstance(r, w.ExecutionReport) and r.exec_type == w.EXEC_FILL:
                expected[t.client_id] = settle(expected[t.client_id], r)
    ex.kill()  # SIGKILL: no shutdown, no final snapshot
    for t in trackers:
        t.session.close()
    # A crash can also come between a match and the ledger's write: drop the
    # trades after the newest engine snapshot from the file, as such a crash
    # would leave it; the restart's journal replay must put them back.
    before = ledger("list", config.journal_dir)
    snaps = sorted(int(p.name[len("snapshot-"):-len(".snap")]) for p in config.journal_dir.glob("snapshot-*.snap"))
    assert snaps, "no engine snapshot: the replay would start from the beginning"
    keep = [t for t in before if int(t["request_seq"]) <= snaps[-1]]
    from_snapshot = len(keep) < len(before)
    if not from_snapshot:  # the last trades are older than the newest snapshot: replay the whole journal instead
        for p in config.journal_dir.glob("snapshot-*.snap"):
            p.unlink()
        keep = before[:-3]
    ledger_file = config.journal_dir / "trades.ledger"
    with open(ledger_file, "r+b") as f:
        f.truncate(64 + 128 * len(keep))

    ex2 = start_exchange(config)
    if from_snapshot:
        assert "engine snapshot" in ex2.stderr_text() and "loaded" in ex2.stderr_text(), ex2.stderr_text()
    # The recovered holds bind: a buy that needs more than the cash left after them is refused.
    with ex2.logon(1) as c:
        cash = expected[1][0]
        s = c.send(w.NewOrder(client_order_id=9_000_000, instrument=T0, side=w.BUY, order_type=w.LIMIT, price=1,
                              qty=cash + 1))
        c.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=406)
    counters = ex2.stop()
    for client in (1, 2):
        cash, positions = expected[client]
        assert balances(counters, client) == (cash, *positions), (client, counters)
    # The ledger: every trade once, across the kill (the restart's replay adds what the file lacked).
    trades = ledger("list", config.journal_dir)
    assert [int(t["trade_seq"]) for t in trades] == list(range(1, len(trades) + 1))
    without_time = [{k: v for k, v in t.items() if k != "time_utc"} for t in trades]
    assert without_time[:len(before)] == [{k: v for k, v in t.items() if k != "time_utc"} for t in before], \
        "the replay put back exactly the trades that were dropped"
    fills = sum(1 for t in trackers for r in t.reports if isinstance(r, w.ExecutionReport) and r.exec_type == w.EXEC_FILL)
    assert 2 * len(trades) == fills, (len(trades), fills)
    opening = {1: (60_000, [30, 10]), 2: (40_000, [60, 25])}
    for row in ledger("balances", config.journal_dir):
        client, instrument = int(row["client"]), int(row["instrument"])
        assert int(row["position_change"]) == expected[client][1][instrument] - opening[client][1][instrument], row
    moved = {c: sum(int(r["cash_moved"]) for r in ledger("balances", config.journal_dir, "--client", c)) for c in (1, 2)}
    assert moved == {c: expected[c][0] - opening[c][0] for c in (1, 2)}, moved
