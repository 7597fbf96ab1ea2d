"""Harness of the trader integration tests: trader configs written per test
(docs/TRADER.md, the layout commented in config/trader-mm1.toml) that point at
an exchange config written by tests/integration/exchange/exchange_harness.py,
and the real nanotick-trader process, read like the exchange (a "ready" log
line, "key value" summary lines on stdout at exit).

Each config lives in the test's tmp dir beside the exchange's, so the
trader's `exchange_config` is a bare file name (resolved against the trader
file's directory). The exchange of a test listens on an ephemeral port, which
the exchange config cannot name: every trader gets `session.exchange` once the
exchange has logged it. Market data groups and API keys come from the
exchange config (per test, see exchange_harness.py), so tests never hear each
other. Every wait has a timeout; conftest.py kills whatever a test left
running.

Not thread-safe (pytest runs one test at a time; the reader threads only
append to their own process's line lists under its lock).
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tests.integration.exchange.exchange_harness import REPO, ClientSpec, ExchangeConfig
from tests.integration.exchange.logged_process import LoggedProcess

TRADER_BINARY = pathlib.Path(os.environ.get("NANOTICK_TRADER", REPO / "build" / "release" / "bin" / "nanotick-trader"))

_NUMBER_RE = re.compile(r"-?\d+(\.\d+)?")
_STATUS_FILLS_RE = re.compile(r", fills (\d+), ")  # Trader::status_line()


def toml_value(v) -> str:
    """A TOML literal: the trader's rates, thresholds and EWMA weights are reals (repr keeps
    the decimal point, which TOML needs to read a float)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class TraderSpec:
    """One trader's config; write() renders it as TOML next to the exchange config.

    `instruments` are the [[instruments]] tables (symbol, reference_price, risk
    limits, features, the strategy's keys); `extra` adds or replaces keys of
    any table ({"trader": {"bogus": 1}} puts an unknown key in [trader]).
    """

    name: str
    strategy: str
    client: ClientSpec
    instruments: List[Dict[str, object]]
    exchange_port: Optional[int] = None  # the running exchange's order-entry port
    api_key: Optional[str] = None  # default: the client's key in the exchange config
    exchange_config: str = "exchange.toml"  # relative to the trader file's directory
    transport: str = "tcp"  # [trader] transport: "shm" connects to the exchange config's server.shm_path
    seed: int = 1
    risk: Dict[str, object] = field(default_factory=lambda: {
        "max_open_orders": 64,
        "max_open_notional": 1_000_000_000,
        "max_loss": 1_000_000_000,
        "orders_per_second": 5000,
        "burst": 500,
    })
    extra: Dict[str, Dict[str, object]] = field(default_factory=dict)

    def tables(self) -> List[Tuple[str, Dict[str, object]]]:
        session: Dict[str, object] = {
            "client_id": self.client.id,
            "api_key": self.api_key if self.api_key is not None else self.client.key,
            "heartbeat_ms": 1000,
            "connect_timeout_ms": 1000,
            "logon_timeout_ms": 2000,
            "reconnect_initial_ms": 100,
            "reconnect_max_ms": 1000,
        }
        if self.exchange_port is not None and self.transport == "tcp":
            session["exchange"] = f"127.0.0.1:{self.exchange_port}"
        out: List[Tuple[str, Dict[str, object]]] = [
            ("trader", {"name": self.name, "exchange_config": self.exchange_config, "strategy": self.strategy,
                        "seed": self.seed, "status_interval_ms": 1000, "max_orders": 4096,
                        "transport": self.transport}),
            ("threads", {"mode": "compact", "idle": "backoff"}),
            ("session", session),
            ("market_data", {"reorder_packets": 8, "reorder_us": 200, "buffer_messages": 65536}),
            ("risk", dict(self.risk)),
        ]
        for name, values in self.extra.items():
            table = next((t for n, t in out if n == name), None)
            if table is None:
                out.append((name, dict(values)))
            else:
                table.update(values)
        return out

    def write(self, directory: pathlib.Path) -> pathlib.Path:
        lines = ["# written by tests/integration/trader/trader_harness.py"]
        for name, table in self.tables():
            lines.append(f"[{name}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
            lines.append("")
        for ins in self.instruments:
            lines.append("[[instruments]]")
            lines += [f"{k} = {toml_value(v)}" for k, v in ins.items()]
            lines.append("")
        path = directory / f"trader-{self.name}.toml"
        path.write_text("\n".join(lines))
        return path


def market_maker_instruments(quote_qty: int = 5, half_spread_ticks: int = 1) -> List[Dict[str, object]]:
    """Quotes on both instruments of make_config() (T0 tick 1 around 1000, T1 tick 5 around 500)."""
    common = {"max_position": 100_000, "max_open_orders": 8, "max_open_notional": 1_000_000_000,
              "max_loss": 1_000_000_000, "fair_price": "microprice", "quote_qty": quote_qty,
              "half_spread_ticks": half_spread_ticks, "skew_ticks_per_unit": 0.0, "requote_ticks": 1}
    return [
        {"symbol": "T0", "reference_price": 1000, "max_order_qty": 100, "price_band": 200, **common},
        {"symbol": "T1", "reference_price": 500, "max_order_qty": 100, "price_band": 250, **common},
    ]


def random_instruments(orders_per_second: float = 100.0, weight_ioc: int = 50,
                       price_range_ticks: int = 5) -> List[Dict[str, object]]:
    """The load generator on both instruments of make_config(): with the default weights half
    its actions are IOCs within price_range_ticks of the fair price, so many cross the quotes
    of a market maker quoting a tick or two away."""
    common = {"max_position": 100_000, "max_open_orders": 48, "max_open_notional": 1_000_000_000,
              "max_loss": 1_000_000_000, "orders_per_second": orders_per_second, "weight_new": 30,
              "weight_cancel": 10, "weight_modify": 10, "weight_ioc": weight_ioc,
              "price_range_ticks": price_range_ticks, "max_qty": 5, "random_max_open_orders": 20}
    return [
        {"symbol": "T0", "reference_price": 1000, "max_order_qty": 100, "price_band": 200, **common},
        {"symbol": "T1", "reference_price": 500, "max_order_qty": 100, "price_band": 250, **common},
    ]


def copy_exchange_config(config: ExchangeConfig, directory: pathlib.Path) -> ExchangeConfig:
    """The same exchange config (same groups, same clients and keys) written into `directory`:
    a trader reading it sees what the running exchange uses, unless the test changes it."""
    directory.mkdir(parents=True, exist_ok=True)
    clients = [ClientSpec(**vars(c)) for c in config.clients]
    return ExchangeConfig(dir=directory, clients=clients, instruments=list(config.instruments),
                          server=dict(config.server), market_data=dict(config.market_data),
                          journal=dict(config.journal), threads=dict(config.threads))


class TraderProcess(LoggedProcess):
    """A running nanotick-trader; its stdout and stderr are read by threads."""

    def __init__(self, config_path: pathlib.Path, duration_s: Optional[float] = None,
                 book_dump: Optional[pathlib.Path] = None, prefix: Optional[List[str]] = None,
                 extra_args: Optional[List[str]] = None) -> None:
        """`prefix` runs the binary through another command (`ip netns exec NS`), which must exec it."""
        self.config_path = config_path
        args = (prefix or []) + [str(TRADER_BINARY), "--config", str(config_path)] + (extra_args or [])
        if duration_s is not None:
            args += ["--duration", str(duration_s)]
        if book_dump is not None:
            args += ["--book-dump", str(book_dump)]
        super().__init__(args, config_path.parent, "the trader")

    def on_stderr_line(self, line: str) -> None:
        # "nanotick-trader[<name>]: ready" (before the config is loaded the prefix has no name).
        if line.startswith("nanotick-trader") and line.endswith(": ready"):
            self.mark_ready()

    def describe(self) -> str:
        return f"{' '.join(self.args)}\nstderr:\n{self.stderr_text()}\nstdout:\n{self.stdout_text()}"

    def wait_ready(self, timeout: float = 10.0) -> None:
        if not self._ready.wait(timeout):
            self.kill()
            raise AssertionError(f"the trader did not log 'ready' within {timeout} s: {self.describe()}")
        if self.proc.poll() is not None:
            self.wait_exit(5.0)
            raise AssertionError(f"the trader exited ({self.proc.returncode}) before 'ready': {self.describe()}")

    def wait_exit(self, timeout: float, detail: str = "") -> int:
        """Waits for the exit (killing it after `timeout` s and failing) and returns the exit code."""
        try:
            return super().wait_exit(timeout, detail)
        except AssertionError:
            raise AssertionError(f"the trader did not exit within {timeout} s{detail}: {self.describe()}") from None

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        """Signals (unless it already exited) and returns the exit code. The trader winds down
        (cancels, waits up to 2 s for the answers, logs out) before it exits."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait_exit(timeout)

    def status_fills(self) -> List[int]:
        """The fill counts of the status lines logged so far (one a status_interval_ms)."""
        lines = self.lines(stdout=False)
        return [int(m.group(1)) for m in (_STATUS_FILLS_RE.search(line) for line in lines) if m]

    def summary(self) -> Dict[str, str]:
        """The "key value" lines of stdout (values as printed: integers or reals)."""
        out: Dict[str, str] = {}
        lines = self.lines()
        for line in lines:
            key, _, value = line.strip().rpartition(" ")
            if key and _NUMBER_RE.fullmatch(value):
                out[key] = value
        return out


@dataclass
class Positions:
    """A trader's positions from its summary: per symbol qty, open_cost, realised, fills."""

    qty: Dict[str, int]
    open_cost: Dict[str, int]
    realised: Dict[str, int]
    fills: Dict[str, int]
    total_fills: int
    total_realised: int


def positions(summary: Dict[str, str]) -> Positions:
    """Reads the position.<SYMBOL>.* lines (printed for instruments with fills) and the totals."""
    per: Dict[str, Dict[str, int]] = {"qty": {}, "open_cost": {}, "realised": {}, "fills": {}}
    for key, value in summary.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "position" and parts[2] in per:
            per[parts[2]][parts[1]] = int(value)
    for what in ("fills", "pnl.realised"):
        if what not in summary:
            raise AssertionError(f"the trader's summary has no '{what}' line: {summary}")
    return Positions(per["qty"], per["open_cost"], per["realised"], per["fills"], int(summary["fills"]),
                     int(summary["pnl.realised"]))


@dataclass
class DumpedOrder:
    instrument: int
    order_id: int
    side: str  # "B" or "S"
    price: int
    qty: int


@dataclass
class BookDump:
    """Trader::book_dump(): "next_seq N", then per instrument "instrument I live|stale" and its
    orders "I order_id B|S price qty" in priority order."""

    next_seq: int
    states: Dict[int, str]
    orders: Dict[int, List[DumpedOrder]]


def parse_book_dump(text: str) -> BookDump:
    lines = text.splitlines()
    if not lines or not re.fullmatch(r"next_seq \d+", lines[0]):
        raise AssertionError(f"a book dump starts with 'next_seq N', got {lines[:1]}")
    dump = BookDump(int(lines[0].split()[1]), {}, {})
    current: Optional[int] = None
    for n, line in enumerate(lines[1:], start=2):
        m = re.fullmatch(r"instrument (\d+) (live|stale)", line)
        if m:
            current = int(m.group(1))
            if current in dump.states:
                raise AssertionError(f"book dump line {n}: instrument {current} listed twice")
            dump.states[current] = m.group(2)
            dump.orders[current] = []
            continue
        m = re.fullmatch(r"(\d+) (\d+) ([BS]) (-?\d+) (\d+)", line)
        if not m or current is None or int(m.group(1)) != current:
            raise AssertionError(f"book dump line {n} is not an order of instrument {current}: {line!r}")
        dump.orders[current].append(DumpedOrder(int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)),
                                                int(m.group(5))))
    return dump


def wire_side(side: str) -> int:
    """A dumped order's side ("B" / "S") as the wire's (nanotick_wire.BUY / SELL: 1 / 2)."""
    return 1 if side == "B" else 2


def assert_books_equal_multicast(dump: BookDump, incremental: list, instruments: int) -> int:
    """The dumped books equal, order by order in priority order, the books rebuilt from the
    recorded incremental multicast channel (`incremental`: MdRecorder packets from seq 1) up to
    the dump's next_seq; every book is live. Returns the messages applied."""
    from tests.integration.exchange import md_books as mb  # the exchange suite's books

    assert dump.states == {i: "live" for i in range(instruments)}, f"not every book is live at exit: {dump.states}"
    books = mb.IncrementalBooks()
    applied = 0
    for pkt in incremental:
        for m in pkt.messages:
            if m.seq < dump.next_seq:
                books.apply(m)
                applied += 1
    assert applied == dump.next_seq - 1, (applied, dump.next_seq)
    total = 0
    for ins in range(instruments):
        want = books.book(ins).priority_list()
        got = [(wire_side(o.side), o.order_id, o.price, o.qty) for o in dump.orders[ins]]
        assert got == want, (f"instrument {ins} at seq {dump.next_seq - 1}: the trader's book differs from multicast\n"
                             f"trader only: {sorted(set(got) - set(want))}\nmulticast only: {sorted(set(want) - set(got))}\n"
                             f"trader: {got}\nmulticast: {want}")
        total += len(want)
    assert total > 0, "every book is empty at the dump: the comparison proves nothing"
    return applied
