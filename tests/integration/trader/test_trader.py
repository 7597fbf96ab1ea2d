"""The real trader against the real exchange on loopback (docs/TRADER.md):

- a market maker and a random load generator trade with each other for a few
  seconds; each trader's own summary (positions, realised PnL, fills) agrees
  exactly with the exchange's per-client fill totals;
- a market maker's book, dumped at exit, equals order by order the book this
  test rebuilds from the incremental multicast channel it recorded itself
  (tests/integration/exchange/md_books.py) at the dump's sequence number;
- bad input: an unknown config key or symbol is refused at start-up with exit
  code 2 and a message naming it; a wrong API key is refused by the
  exchange's logon reject (the trader does not read the venue's credentials:
  issue 33), after which the trader stops with a non-zero exit.

Each test writes its configs into its tmp dir (the exchange's from
exchange_harness.make_config: ephemeral port, its own multicast groups, random
API keys) and bounds every process: traders run with --duration or are
stopped by SIGINT, and conftest.py kills whatever is left.
"""

from __future__ import annotations

import secrets
import signal
import time
from typing import Dict

import pytest

from tests.integration.exchange.exchange_harness import MdRecorder, make_config
from tests.integration.trader.trader_harness import (TraderSpec, assert_books_equal_multicast, copy_exchange_config, market_maker_instruments,
                            parse_book_dump, positions, random_instruments)

SYMBOLS = ("T0", "T1")  # make_config()'s instruments, in InstrumentId order


def check_against_exchange(name: str, summary: Dict[str, str], counters: Dict[str, int], client_id: int) -> int:
    """The trader's positions agree exactly with the exchange's totals of its client; returns its fills.

    Position keeper identities (exact integer accounting): the net position is what was bought
    minus what was sold, and realised PnL is the cash made (sold minus bought notional) plus what
    the open position cost (open_cost is signed: position x average open price)."""
    p = positions(summary)
    k = f"client.{client_id}."
    ex_fills = counters.get(k + "fills", 0)
    bought, sold = counters.get(k + "bought_qty", 0), counters.get(k + "sold_qty", 0)
    bought_notional, sold_notional = counters.get(k + "bought_notional", 0), counters.get(k + "sold_notional", 0)
    what = f"trader {name} (client {client_id}): summary {summary}\nexchange counters {counters}"
    assert p.total_fills == ex_fills, f"fills {p.total_fills} != the exchange's {ex_fills}: {what}"
    assert sum(p.fills.values()) == p.total_fills, what
    assert sum(p.qty.values()) == bought - sold, f"net position {p.qty} != bought {bought} - sold {sold}: {what}"
    assert sum(p.realised.values()) == p.total_realised, what
    cash = sold_notional - bought_notional
    open_cost = sum(p.open_cost.values())
    assert p.total_realised == cash + open_cost, (
        f"realised {p.total_realised} != sold_notional - bought_notional ({cash}) + open_cost ({open_cost}): {what}")
    return p.total_fills


@pytest.mark.parametrize("transport", ["tcp", "shm"])
def test_market_maker_and_random_trader_agree_with_the_exchange(config, start_exchange, start_trader, tmp_path, transport):
    ex = start_exchange(config)
    mm = TraderSpec("mm", "market_maker", config.client(1), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                    exchange_port=ex.port, seed=11, transport=transport)
    # IOCs within 5 ticks of the fair price: about half of them cross a quote one tick away.
    rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=100.0, weight_ioc=50),
                     exchange_port=ex.port, seed=12, transport=transport)
    mm_proc = start_trader(mm.write(tmp_path))
    rnd_proc = start_trader(rnd.write(tmp_path), duration_s=5.0)  # stops itself; the market maker gets SIGINT
    time.sleep(2.7)
    mid_run = mm_proc.status_fills()  # the status lines of the first ~2 s
    rnd_rc = rnd_proc.wait_exit(15.0)
    mm_rc = mm_proc.stop(signal.SIGINT)
    counters = ex.stop()
    assert rnd_rc == 0, rnd_proc.describe()
    assert mm_rc == 0, mm_proc.describe()
    mm_sum, rnd_sum = mm_proc.summary(), rnd_proc.summary()
    mm_fills = check_against_exchange("mm", mm_sum, counters, 1)
    rnd_fills = check_against_exchange("rnd", rnd_sum, counters, 2)
    assert mm_fills > 0, f"the market maker never traded: {mm_proc.describe()}\nrandom: {rnd_proc.describe()}"
    assert rnd_fills > 0, rnd_proc.describe()
    # It kept quoting: it still traded in the second half of the run.
    assert mid_run and mm_fills > mid_run[-1], (
        f"the market maker stopped trading: {mid_run[-1:]} fills by ~2 s, {mm_fills} at the end: {mm_proc.describe()}")
    # Nobody else traded, and neither traded with itself (the trader sends every order with
    # self-trade prevention): every fill of one client is the other's too.
    assert counters.get("client.1.bought_qty", 0) == counters.get("client.2.sold_qty", 0), counters
    assert counters.get("client.1.sold_qty", 0) == counters.get("client.2.bought_qty", 0), counters
    # Each trader cancelled what it had open before it logged out: nothing was left for the
    # exchange's cancel on disconnect.
    assert int(mm_sum["orders.open_at_end"]) == 0, f"the market maker logged out with open orders: {mm_proc.describe()}"
    assert int(rnd_sum["orders.open_at_end"]) == 0, f"the random trader logged out with open orders: {rnd_proc.describe()}"
    assert counters.get("disconnect_cancels") == 0, counters
    if transport == "shm":
        assert counters.get("shm.connections_accepted") == 2, counters
        assert counters.get("connections_accepted") == 2, counters  # and none over TCP
        # Both read the incremental channel from the exchange's ring, and only from there.
        assert counters.get("md.shm.connections_accepted") == 2, counters
        assert counters.get("md.shm.packets") == counters.get("md.incremental.packets"), counters
        for name, summary in (("mm", mm_sum), ("rnd", rnd_sum)):
            assert summary.get("md.shm.connects") == "1", f"{name}: {summary}"
            assert int(summary.get("md.shm.packets", "0")) > 0, f"{name}: {summary}"
            assert summary.get("md.datagrams.incremental") == "0", f"{name} read the multicast group: {summary}"
            assert int(summary.get("md.datagrams.snapshot", "0")) > 0, f"{name}: the snapshot channel is multicast"
    else:
        assert counters.get("md.shm.readers", 0) == 0, counters
        assert "md.shm.connects" not in mm_sum, f"a TCP trader has no ring: {mm_sum}"


def test_trader_book_equals_the_book_rebuilt_from_multicast(start_exchange, start_trader, tmp_path):
    config = make_config(tmp_path, n_clients=3)
    with MdRecorder(config) as md:  # started before the exchange: the whole incremental channel from seq 1
        ex = start_exchange(config)
        # The other market maker quotes wider and larger, so the book has two layers; the random
        # trader keeps it moving (new orders, modifies, cancels, trades) while the dump is taken.
        other = TraderSpec("mm-other", "market_maker", config.client(2),
                           market_maker_instruments(quote_qty=9, half_spread_ticks=3), exchange_port=ex.port, seed=21)
        rnd = TraderSpec("rnd", "random", config.client(3), random_instruments(orders_per_second=80.0, weight_ioc=20),
                         exchange_port=ex.port, seed=22)
        dumper = TraderSpec("mm-dump", "market_maker", config.client(1), market_maker_instruments(quote_qty=4),
                            exchange_port=ex.port, seed=23)
        other_proc = start_trader(other.write(tmp_path))
        rnd_proc = start_trader(rnd.write(tmp_path))
        dump_path = tmp_path / "book.dump"
        dump_proc = start_trader(dumper.write(tmp_path), duration_s=4.0, book_dump=dump_path)
        dump_rc = dump_proc.wait_exit(15.0)
        rnd_rc = rnd_proc.stop(signal.SIGINT)
        other_rc = other_proc.stop(signal.SIGINT)
        assert (dump_rc, rnd_rc, other_rc) == (0, 0, 0), "\n".join(p.describe() for p in (dump_proc, rnd_proc, other_proc))
        assert dump_path.exists(), dump_proc.describe()
        dump = parse_book_dump(dump_path.read_text())
        assert int(dump_proc.summary()["md.next_seq"]) == dump.next_seq, dump_proc.describe()
        ex.stop()

        def recorded_through_dump():
            incr = md.packets()[0]
            return incr if incr and incr[-1].first_seq + len(incr[-1].messages) >= dump.next_seq else None

        incremental = md.wait_for(recorded_through_dump, 3.0, f"incremental seq {dump.next_seq}")
        md.check(from_start=True)  # the recording itself has no gap: it is the reference
    applied = assert_books_equal_multicast(dump, incremental, len(SYMBOLS))
    assert applied > 100, f"only {applied} market data messages before the dump: the run did not trade"


def bad_config(tmp_path, config, **changes) -> TraderSpec:
    """A market maker spec for client 1 of `config` (written, never started)."""
    config.write()
    spec = TraderSpec("bad", "market_maker", config.client(1), market_maker_instruments(), exchange_port=1)
    for k, v in changes.items():
        setattr(spec, k, v)
    return spec


def run_refused(start_trader, path, *needles: str) -> str:
    """Runs a trader that must refuse its config: exit code 2, one stderr message naming every needle."""
    proc = start_trader(path, duration_s=5.0, wait=False)
    rc = proc.wait_exit(10.0)
    err = proc.stderr_text()
    assert rc == 2, f"exit code {rc}, expected 2 (config error): {proc.describe()}"
    errors = [line for line in err.splitlines() if "config error" in line]
    assert errors, f"no 'config error' line: {proc.describe()}"
    assert any(all(n in line for n in needles) for line in errors), f"no config error names {needles}: {proc.describe()}"
    assert "ready" not in err, proc.describe()
    return err


def test_unknown_key_is_refused_with_its_name(binaries, start_trader, config, tmp_path):
    for table, key in (("trader", "strategy_name"), ("session", "apikey"), ("risk", "max_open_order")):
        spec = bad_config(tmp_path, config, name=f"bad-{table}", extra={table: {key: 1}})
        run_refused(start_trader, spec.write(tmp_path), key)
    instruments = market_maker_instruments()
    instruments[1]["quote_size"] = 5  # not quote_qty
    run_refused(start_trader, bad_config(tmp_path, config, name="bad-ins", instruments=instruments).write(tmp_path),
                "quote_size")


def test_missing_required_key_is_refused_with_its_name(binaries, start_trader, config, tmp_path):
    # docs/TRADER.md "Config": the risk limits that bound the money at risk have no default,
    # and the venue's required keys are checked in the exchange config the trader reads.
    instruments = market_maker_instruments()
    del instruments[1]["max_loss"]
    run_refused(start_trader, bad_config(tmp_path, config, name="no-max-loss", instruments=instruments).write(tmp_path),
                "instruments[1].max_loss: missing (required)")
    spec = bad_config(tmp_path, config, name="no-notional")
    del spec.risk["max_open_notional"]
    run_refused(start_trader, spec.write(tmp_path), "risk.max_open_notional: missing (required)")
    venue = copy_exchange_config(config, tmp_path / "no-order-entry")
    del venue.server["order_entry"]
    venue.write()
    spec = bad_config(tmp_path, config, name="venue-no-order-entry", exchange_config="no-order-entry/exchange.toml")
    run_refused(start_trader, spec.write(tmp_path), "trader.exchange_config", "server.order_entry: missing (required)")


def test_unknown_symbol_is_refused_with_its_name(binaries, start_trader, config, tmp_path):
    instruments = market_maker_instruments()
    instruments[0]["symbol"] = "NOPE"
    run_refused(start_trader, bad_config(tmp_path, config, instruments=instruments).write(tmp_path), "symbol", "NOPE")


# timing: the trader stops within 6 s of its start (one that kept retrying would run its 8 s).
@pytest.mark.timing
def test_logon_rejected_for_a_wrong_api_key_stops_the_trader(start_exchange, start_trader, config, tmp_path):
    ex = start_exchange(config)
    # The trader's key is not the one client 1's credential was made from (here: it reads an
    # exchange config that is out of date). Only the exchange checks keys: its logon refuses it.
    stale = copy_exchange_config(config, tmp_path / "stale")
    stale.client(1).key = secrets.token_hex(12)
    stale.write()
    spec = TraderSpec("wrong-key", "market_maker", stale.client(1), market_maker_instruments(), exchange_port=ex.port,
                      exchange_config="stale/exchange.toml")
    duration = 8.0  # the bound: a trader that kept retrying would run this long and exit 0
    started = time.monotonic()
    proc = start_trader(spec.write(tmp_path), duration_s=duration, wait=False)
    rc = proc.wait_exit(duration + 10.0)
    elapsed = time.monotonic() - started
    counters = ex.stop()
    assert counters.get("logon_reject.bad credentials") == 1, f"{counters}\n{proc.describe()}"
    assert counters.get("sessions_logged_on") == 0, counters
    assert rc not in (0, 2), f"exit code {rc} after a fatal logon reject (0: success, 2: config error): {proc.describe()}"
    assert elapsed < duration - 2.0, f"the trader ran {elapsed:.1f} s: it did not stop on the reject: {proc.describe()}"
    summary = proc.summary()
    assert summary.get("session.disconnect.logon rejected") == "1", f"not exactly one logon reject: {proc.describe()}"
    assert summary.get("session.logons") == "0", proc.describe()
    assert summary.get("session.logon_reject.bad credentials") == "1", proc.describe()
    assert "bad credentials" in proc.stderr_text(), f"the trader does not say why the logon failed: {proc.describe()}"
