"""The demo's live console: one line per process, built from the latest status
line each process logged on stderr (the exchange's `--status` line, the
trader's status_interval_ms line, the floor's `--status` line:
apps/exchange.cpp, src/trading/trader.hpp, apps/floor.cpp),
redrawn in place with plain ANSI cursor movement when stdout is a terminal,
printed as a block every few seconds otherwise (CI logs, pipes).

A status line whose format this file does not know is shown as logged, so a
change in a binary's wording degrades the view, never the run.

Not thread-safe: the demo's main thread owns the view.
"""

from __future__ import annotations

import re
import shutil
import time
from typing import Callable, Dict, List, Optional, TextIO

# "nanotick-exchange: ..." / "nanotick-trader[mm1]: ..." (apps/*.cpp log_line()).
_PREFIX_RE = re.compile(r"^nanotick-[A-Za-z0-9_-]+(?:\[[^\]]*\])?: ")
_EXCHANGE_RE = re.compile(
    r"^exchange: (?P<rate>[\d.]+) req/s, (?P<sequenced>\d+) sequenced, (?P<sessions>\d+) sessions, "
    r"(?P<msgs_out>\d+) msgs out")
_TRADER_RE = re.compile(
    r"^(?P<name>[^:]+): (?P<state>logged on|not logged on), books live (?P<books>\d+/\d+), "
    r"(?P<rate>[\d.]+) orders/s, fills (?P<fills>\d+), risk blocks (?P<risk_blocks>\d+), pnl (?P<pnl>-?[\d.]+), "
    r"position volume (?P<volume>-?\d+), tick-to-trade p50 (?P<p50>[\d.]+) us p99 (?P<p99>[\d.]+) us "
    r"\((?P<count>\d+)\)")
_FLOOR_RE = re.compile(
    r"^floor: tick-to-trade floor p50 (?P<t2t_p50>[\d.]+) us p99 (?P<t2t_p99>[\d.]+) us \((?P<t2t_count>\d+)\), "
    r"round trip floor p50 (?P<rt_p50>[\d.]+) us p99 (?P<rt_p99>[\d.]+) us \((?P<rt_count>\d+)\)")

LABEL_WIDTH = 10


def strip_prefix(line: str) -> str:
    """A log line without its "nanotick-<binary>[name]: " prefix."""
    return _PREFIX_RE.sub("", line, count=1)


def exchange_status(text: str) -> Optional[Dict[str, str]]:
    m = _EXCHANGE_RE.match(text)
    return m.groupdict() if m else None


def trader_status(text: str) -> Optional[Dict[str, str]]:
    m = _TRADER_RE.match(text)
    return m.groupdict() if m else None


def floor_status(text: str) -> Optional[Dict[str, str]]:
    m = _FLOOR_RE.match(text)
    return m.groupdict() if m else None


def is_status(text: str) -> bool:
    return exchange_status(text) is not None or trader_status(text) is not None or floor_status(text) is not None


def format_row(label: str, text: Optional[str], placeholder: str = "no status line yet") -> str:
    """One console line: the process label and its latest status, columns aligned."""
    head = f"{label:<{LABEL_WIDTH}}"
    if text is None:
        return f"{head} {placeholder}"
    ex = exchange_status(text)
    if ex is not None:
        return (f"{head} {float(ex['rate']):>8.0f} req/s  {int(ex['sequenced']):>9} sequenced  "
                f"{ex['sessions']} sessions  {int(ex['msgs_out']):>9} msgs out")
    tr = trader_status(text)
    if tr is not None:
        return (f"{head} {tr['state']:<13} {float(tr['rate']):>6.0f} orders/s  fills {int(tr['fills']):>6}  "
                f"risk blocks {int(tr['risk_blocks']):>4}  PnL {float(tr['pnl']):>10.1f}  "
                f"t2t p50 {float(tr['p50']):>7.2f} us p99 {float(tr['p99']):>8.2f} us")
    fl = floor_status(text)
    if fl is not None:
        return (f"{head} t2t floor p50 {float(fl['t2t_p50']):>7.2f} us p99 {float(fl['t2t_p99']):>8.2f} us "
                f"({int(fl['t2t_count'])})  round trip floor p50 {float(fl['rt_p50']):>7.2f} us "
                f"p99 {float(fl['rt_p99']):>8.2f} us ({int(fl['rt_count'])})")
    return f"{head} {text}"


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
