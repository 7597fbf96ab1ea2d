"""The demo's live console: one line per process, redrawn in place with plain
ANSI cursor movement when stdout is a terminal, printed as a block every few
seconds otherwise (CI logs, pipes).

The exchange's and the traders' rows come from their counters files
(docs/TELEMETRY.md "The counters file"; CountersRows reads them, rates are
the change between two readings), not from the text they log. The floor,
a measuring tool rather than a venue process, keeps its `--status` line
(apps/floor.cpp). A status line whose format this file does not know is
shown as logged, so a change in a binary's wording degrades the view, never
the run.

Not thread-safe: the demo's main thread owns the view.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import time
from typing import Callable, Dict, List, Optional, TextIO, Tuple

from tools.counters import labels
from tools.counters.counters_file import CountersFileError, Value, read

# "nanotick-exchange: ..." / "nanotick-trader[mm1]: ..." (apps/app_main.hpp: each program's logger).
_PREFIX_RE = re.compile(r"^nanotick-[A-Za-z0-9_-]+(?:\[[^\]]*\])?: ")
_FLOOR_RE = re.compile(
    r"^floor: tick-to-trade floor p50 (?P<t2t_p50>[\d.]+) us p99 (?P<t2t_p99>[\d.]+) us \((?P<t2t_count>\d+)\), "
    r"round trip floor p50 (?P<rt_p50>[\d.]+) us p99 (?P<rt_p99>[\d.]+) us \((?P<rt_count>\d+)\)")

LABEL_WIDTH = 10


def strip_prefix(line: str) -> str:
    """A log line without its "nanotick-<binary>[name]: " prefix."""
    return _PREFIX_RE.sub("", line, count=1)


def floor_status(text: str) -> Optional[Dict[str, str]]:
    m = _FLOOR_RE.match(text)
    return m.groupdict() if m else None


def is_status(text: str) -> bool:
    return floor_status(text) is not None


def format_row(label: str, text: Optional[str], placeholder: str = "no status line yet") -> str:
    """One console line: the process label and its latest status, columns aligned."""
    head = f"{label:<{LABEL_WIDTH}}"
    if text is None:
        return f"{head} {placeholder}"
    fl = floor_status(text)
    if fl is not None:
        return (f"{head} t2t floor p50 {float(fl['t2t_p50']):>7.2f} us p99 {float(fl['t2t_p99']):>8.2f} us "
                f"({int(fl['t2t_count'])})  round trip floor p50 {float(fl['rt_p50']):>7.2f} us "
                f"p99 {float(fl['rt_p99']):>8.2f} us ({int(fl['rt_count'])})")
    return f"{head} {text}"


def exchange_row(label: str, values: Dict[str, Value], rate: float) -> str:
    """The exchange's row from its counters: requests/s sequenced, totals, sessions, queues."""
    queued = sum(int(v) for k, v in values.items() if k.startswith("queue."))
    return (f"{label:<{LABEL_WIDTH}} {rate:>8.0f} req/s  {int(values.get('requests_sequenced', 0)):>9} sequenced  "
            f"{int(values.get('sessions_live', 0))} sessions  {int(values.get('messages_out', 0)):>9} msgs out  "
            f"{queued} queued")


def trader_row(label: str, values: Dict[str, Value], rate: float) -> str:
    """A trader's row from its counters: session, books, orders/s, fills, risk blocks, PnL, tick-to-trade."""
    blocks = sum(int(v) for k, v in values.items() if k.startswith("risk.blocked."))
    state = "logged on" if values.get("session.logged_on", 0) else "not logged on"
    return (f"{label:<{LABEL_WIDTH}} {state:<13} books {int(values.get('md.books_live', 0))}/"
            f"{int(values.get('md.instruments', 0))} {rate:>6.0f} orders/s  fills {int(values.get('fills', 0)):>6}  "
            f"risk blocks {blocks:>4}  PnL {float(values.get('pnl.total', 0.0)):>10.1f}  "
            f"t2t p50 {int(values.get('tick_to_trade_ns.p50', 0)) / 1e3:>7.2f} us "
            f"p99 {int(values.get('tick_to_trade_ns.p99', 0)) / 1e3:>8.2f} us")


# What a row's rate counts: the sum of these counters' changes per second.
RATE_OF = labels.RATE_OF


class CountersRows:
    """Console rows from counters files, each file read at most every `every` seconds; a
    row's rate is the change of its RATE_OF counters between the last two readings."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, every: float = 0.5) -> None:
        self._clock = clock
        self._every = every
        self._last: Dict[pathlib.Path, Tuple[float, Dict[str, Value], float, str]] = {}

    def row(self, label: str, kind: str, path: pathlib.Path) -> Optional[str]:
        """`kind` "exchange" or "trader"; None until the file can be read."""
        now = self._clock()
        last = self._last.get(path)
        if last is None or now - last[0] >= self._every:
            try:
                values = read(path).values()
            except CountersFileError:
                return last[3] if last is not None else None
            rate = 0.0
            if last is not None and now > last[0]:
                rate = sum(float(values.get(k, 0)) - float(last[1].get(k, 0)) for k in RATE_OF[kind]) / (now - last[0])
            text = exchange_row(label, values, rate) if kind == "exchange" else trader_row(label, values, rate)
            last = (now, values, rate, text)
            self._last[path] = last
        return last[3]


class LiveView:
    """Shows a header and one row per process: redrawn in place on a terminal, printed every
    `plain_every` seconds otherwise."""

    def __init__(self, out: TextIO, tty: bool, plain_every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic, first_after: float = 1.5) -> None:
        self._out = out
        self._tty = tty
        self._plain_every = plain_every
        self._clock = clock
        self._drawn = 0  # lines of the block on screen (terminal mode)
        # Plain mode: the first block waits `first_after` s from the first show(), so that it
        # holds the processes' first status lines (they log one a second) rather than none.
        self._first_after = min(first_after, plain_every)
        self._last_plain: Optional[float] = None

    def show(self, header: str, rows: List[str], force: bool = False) -> None:
        lines = [header] + [f"  {r}" for r in rows]
        if self._tty:
            width = max(20, shutil.get_terminal_size((120, 24)).columns - 1)
            parts = [f"\x1b[{self._drawn}F"] if self._drawn else []  # back to the block's first line
            for line in lines:
                parts.append("\x1b[2K" + line[:width] + "\n")  # cut: a wrapped line would break the count
            for _ in range(self._drawn - len(lines)):
                parts.append("\x1b[2K\n")
            self._out.write("".join(parts))
            self._drawn = max(self._drawn, len(lines))
        else:
            now = self._clock()
            if self._last_plain is None:
                self._last_plain = now - self._plain_every + self._first_after
            if not force and now - self._last_plain < self._plain_every:
                return
            self._last_plain = now
            self._out.write("\n".join(lines) + "\n")
        self._out.flush()

    def detach(self) -> None:
        """What is printed next goes below the block (it is never redrawn again)."""
        self._drawn = 0
