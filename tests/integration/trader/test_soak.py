"""Chaos soak (issue 14): the venue under load while the exchange and the traders
are killed with SIGKILL at random moments and restarted, for
NANOTICK_SOAK_SECONDS (default 30: the CI form; `./nanotick soak --minutes N`
runs the long one).

Load: two pipelining checking clients (tests/integration/exchange/chaos.py,
the recovery test's loop) plus two real traders, a random load generator and
a market maker (clients 3 and 4, cancel on disconnect). Between exchange kills
a trader may be killed and restarted; after every exchange restart the
invariants of the recovery test are checked: nothing acknowledged lost,
exec_seq and market data sequences continuing without gap or repeat, the
recovered books equal to an independent replay of the journal (which holds the
traders' requests too). At the end every trader still running must stop
cleanly (cancel, log out, summary).

Figures (seconds, kills of each kind, orders checked) are printed and written
to $NANOTICK_SOAK_REPORT when set.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import sys
import time

_EXCHANGE_TESTS = pathlib.Path(__file__).resolve().parent.parent / "exchange"
if str(_EXCHANGE_TESTS) not in sys.path:
    sys.path.insert(0, str(_EXCHANGE_TESTS))

from chaos import chaos_config, run_chaos  # noqa: E402
from trader_harness import TraderSpec, market_maker_instruments, random_instruments  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_chaos_soak(start_exchange, start_trader, processes, tmp_path):
    seconds = float(os.environ.get("NANOTICK_SOAK_SECONDS", "30"))
    seed = int(os.environ.get("NANOTICK_TEST_SEED", str(int(time.time()))))
    port = free_port()  # fixed across restarts: the traders reconnect to it
    config = chaos_config(tmp_path, order_entry=f"127.0.0.1:{port}")
    specs = [
        TraderSpec("soak-rnd", "random", config.client(3), random_instruments(orders_per_second=200.0, weight_ioc=30),
                   exchange_port=port, seed=seed % 1000 + 1),
        TraderSpec("soak-mm", "market_maker", config.client(4), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                   exchange_port=port, seed=seed % 1000 + 2),
    ]
    traders = {}
    trader_kills = 0
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

    figures = run_chaos(start_exchange, config, seed, deadline=start + seconds, between=between,
                        log=lambda line: print(line, flush=True))
    elapsed = time.monotonic() - start
    for name, p in traders.items():
        rc = p.stop(signal.SIGINT)
        assert rc == 0, f"trader {name} did not stop cleanly after the soak (seed {seed}): {p.describe()}"
    result = {"seed": seed, "seconds": round(elapsed, 1), "exchange_kills": figures.kills, "trader_kills": trader_kills,
              "requests_journaled": figures.requests_journaled, "orders_checked": figures.orders_checked,
              "reports_checked": figures.reports_checked, "lost": 0}
    print("soak:", json.dumps(result), flush=True)
    if os.environ.get("NANOTICK_SOAK_REPORT"):
        pathlib.Path(os.environ["NANOTICK_SOAK_REPORT"]).write_text(json.dumps(result) + "\n")
    assert figures.kills >= 1, "the soak ended before it killed the exchange once"
