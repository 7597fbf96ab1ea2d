"""Chaos soak (issue 14, loss measured since issue 30): the venue under load
while the exchange and the traders are killed with SIGKILL at random moments
and restarted, for NANOTICK_SOAK_SECONDS (default 30: the CI form;
`./nanotick soak --minutes N` runs the long one) and at least 3 exchange
kills (past the deadline if the machine is slow, giving up 120 s after it).

Load: two pipelining checking clients (tests/integration/exchange/chaos.py,
the recovery test's loop) plus two real traders, a random load generator and
a market maker (clients 3 and 4, cancel on disconnect), connected through a
recording relay (wire_tap.py) that keeps every execution report the exchange
writes to them. Between exchange kills a trader may be killed and restarted;
after every exchange restart the invariants of the recovery test are checked:
nothing the checking clients saw acknowledged lost, exec_seq and market data
sequences continuing without gap or repeat, the recovered books equal to an
independent replay of the journal (which holds the traders' requests too).

At the end the traders stop cleanly (cancel, log out, summary), the relay
stops, the exchange stops cleanly, and the traders' reports are checked
against the final journal and trade ledger (soak_loss.py defines an
acknowledged order, a fill and what counts as lost): the test fails if any
is lost.

Binaries: $NANOTICK_EXCHANGE and $NANOTICK_TRADER (default build/release/
bin); nanotick-journal and nanotick-ledger are taken from the exchange's
directory (`./nanotick soak --bin-dir DIR` sets both). Figures (seconds,
kills of each kind, orders checked, loss of each kind) are printed and
written to $NANOTICK_SOAK_REPORT when set.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import time


from tests.integration.exchange.chaos import chaos_config, run_chaos
from tests.integration.exchange.exchange_harness import BINARY, ExchangeProcess
from tests.integration.trader.soak_loss import check_loss, read_tap
from tests.integration.trader.wire_tap import WireTapProcess
from tests.integration.trader.trader_harness import TraderSpec, market_maker_instruments, random_instruments

JOURNAL_TOOL = BINARY.parent / "nanotick-journal"
LEDGER_TOOL = BINARY.parent / "nanotick-ledger"
MIN_KILLS = 3
GIVE_UP_AFTER_S = 120.0  # past the deadline, waiting for MIN_KILLS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_chaos_soak(start_exchange, start_trader, processes, tmp_path):
    for tool in (JOURNAL_TOOL, LEDGER_TOOL):
        assert tool.exists(), f"{tool} is missing: build it (cmake --build build/release --target nanotick-apps)"
    seconds = float(os.environ.get("NANOTICK_SOAK_SECONDS", "30"))
    seed = int(os.environ.get("NANOTICK_TEST_SEED", str(int(time.time()))))
    port = free_port()  # fixed across restarts: the relay connects to it
    config = chaos_config(tmp_path, order_entry=f"127.0.0.1:{port}")
    tap = WireTapProcess(port, tmp_path / "trader-reports.csv")
    processes.append(tap)
    tap_port = tap.wait_ready()
    specs = [
        TraderSpec("soak-rnd", "random", config.client(3), random_instruments(orders_per_second=200.0, weight_ioc=30),
                   exchange_port=tap_port, seed=seed % 1000 + 1),
        TraderSpec("soak-mm", "market_maker", config.client(4), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                   exchange_port=tap_port, seed=seed % 1000 + 2),
    ]
    traders = {}
    trader_kills = 0
    tap_figures = {}
    start = time.monotonic()

    def between(rng, run):
        nonlocal trader_kills
        if not traders:
            for spec in specs:
                traders[spec.name] = start_trader(spec.write(tmp_path))
            return
        if rng.random() < 0.6:
            name = rng.choice(sorted(traders))
            traders[name].kill()
            trader_kills += 1
            traders[name] = start_trader(next(s for s in specs if s.name == name).write(tmp_path))

    def before_stop():
        # The traders wind down while the exchange still runs (cancel, log out); then the relay.
        for name, p in traders.items():
            rc = p.stop(signal.SIGINT)
            assert rc == 0, f"trader {name} did not stop cleanly after the soak (seed {seed}): {p.describe()}"
        tap_figures.update(tap.stop())

    figures = run_chaos(start_exchange, config, seed, deadline=start + seconds, between=between,
                        log=lambda line: print(line, flush=True), min_kills=MIN_KILLS,
                        give_up=start + seconds + GIVE_UP_AFTER_S, before_stop=before_stop)
    elapsed = time.monotonic() - start
    reports = read_tap(tap.out)
    assert len(reports) == tap_figures["reports"], (len(reports), tap_figures)
    loss = check_loss(reports, figures.final_model, JOURNAL_TOOL, LEDGER_TOOL, config.journal_dir)
    result = {"seed": seed, "seconds": round(elapsed, 1), "exchange_kills": figures.kills, "trader_kills": trader_kills,
              "requests_journaled": figures.requests_journaled, "orders_checked": figures.orders_checked,
              "reports_checked": figures.reports_checked, "trader_sessions": loss.sessions,
              "trader_reports": loss.reports, "trader_acks_checked": loss.acks_checked,
              "trader_fills_checked": loss.fills_checked, "lost_acks": loss.lost_acks, "lost_fills": loss.lost_fills,
              "trader_reports_differing": loss.reports_differing, "replay_fills": loss.replay_fills,
              "replay_fills_missing_from_ledger": loss.replay_fills_missing_from_ledger}
    print("soak:", json.dumps(result), flush=True)
    if os.environ.get("NANOTICK_SOAK_REPORT"):
        pathlib.Path(os.environ["NANOTICK_SOAK_REPORT"]).write_text(json.dumps(result) + "\n")
    if loss.problems():
        # What the exchanges said about their journal and ledger at each start names the cause.
        said = [f"exchange run {n}: {line}" for n, p in enumerate(p for p in processes if isinstance(p, ExchangeProcess))
                for line in p.lines(stdout=False) if "ledger" in line or "journal" in line]
        raise AssertionError(f"the soak lost what the exchange had reported (seed {seed}): {result}\n"
                             + "\n".join(loss.examples) + "\n" + "\n".join(said))
    # Without these the check above proves nothing: the traders traded and were told about it.
    assert loss.acks_checked > 0 and loss.fills_checked > 0, result
    assert figures.kills >= MIN_KILLS, f"the soak killed the exchange {figures.kills} times, fewer than {MIN_KILLS} in {elapsed:.0f} s (seed {seed})"
