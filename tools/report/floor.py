"""The demo's end-to-end figures beside the loopback floor measured in the
same run (docs/TELEMETRY.md "The loopback floor").

nanotick-floor runs beside the traders, under the same load, on the same
CPUs, and prints its summary at exit; the demo keeps it in
RUN_DIR/counters/floor.txt ("key value" lines, src/floor/floor_summary.hpp):
  floor.order_entry_shm: 1 when the order leg went over a shared-memory session (else TCP on loopback)
  tick_to_trade_floor.{count,p50_ns,p90_ns,p99_ns,p99.9_ns,max_ns}: multicast recv -> 64-byte order written
  round_trip_floor.{count,p50_ns,...}: a 40-byte ping -> its 96-byte answer read
Our figures are the report's own end-to-end metrics (analysis.tick_to_trade
and analysis.order_round_trip over the traders' telemetry, every trader
together), summarised by stats.summarize: the same numbers as the
percentile table's end-to-end rows. Ratio = ours / floor, per percentile.

The floor's percentiles come from a LatencyHistogram (each reported as its
bucket's highest value, at most 0.79% above the sample); ours are exact
nearest-rank samples. The ratios carry that difference, well below what
they show.

A run directory without counters/floor.txt (an older run, --no-floor) has no
block; a file without a floor's keys (the process failed) shows "n/a".
Pure functions and plain data: thread-safe.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from tools.counters.summary_text import parse_counters

from . import stats

FLOOR_FILE = Path("counters") / "floor.txt"
COLUMNS = ("p50", "p99", "p99.9", "max")


@dataclass(frozen=True)
class Figures:
    """count and percentiles (ns) of one latency."""

    count: int
    ns: Dict[str, float]  # COLUMNS -> ns


@dataclass(frozen=True)
class Line:
    """One end-to-end figure beside its floor."""

    name: str           # "tick-to-trade", "order round trip"
    ours: Optional[Figures]
    floor_name: str     # what the floor measures
    floor: Optional[Figures]

    def ratio(self, column: str) -> Optional[float]:
        if self.ours is None or self.floor is None or not self.ours.count or not self.floor.count:
            return None
        f = self.floor.ns[column]
        return self.ours.ns[column] / f if f > 0 else None


# (our metric in analysis.py, its name here, the floor's key prefix, what the floor measures: {transport})
PAIRS = (
    ("tick_to_trade", "tick-to-trade", "tick_to_trade_floor", "floor: multicast recv -> 64 B {transport} write"),
    ("order_round_trip", "order round trip", "round_trip_floor", "floor: {transport} ping-pong, 40 B -> 96 B"),
)
TRANSPORT_KEY = "floor.order_entry_shm"  # 1: the floor's order leg was a shared-memory session (nanotick-floor --transport shm)


def floor_transport(floor: Dict[str, str]) -> str:
    """The order-entry transport the floor stood for, as the block names it."""
    return "shm" if floor.get(TRANSPORT_KEY) == "1" else "TCP"


def floor_figures(counters: Dict[str, str], prefix: str) -> Optional[Figures]:
    """A floor's figures from its summary lines, or None when any is missing."""
    keys = {c: f"{prefix}.{c}_ns" for c in COLUMNS}
    if f"{prefix}.count" not in counters or any(k not in counters for k in keys.values()):
        return None
    return Figures(int(float(counters[f"{prefix}.count"])), {c: float(counters[k]) for c, k in keys.items()})


def read_floor(run_dir: Path) -> Optional[Dict[str, str]]:
    """RUN_DIR/counters/floor.txt parsed, or None when the run has no such file."""
    path = Path(run_dir) / FLOOR_FILE
    if not path.is_file():
        return None
    return parse_counters(path.read_text(encoding="utf-8", errors="replace"))


def figures_of(values_ns: Sequence[float]) -> Figures:
    """Our figures from samples: stats.summarize (nearest rank), as the percentile table."""
    s = stats.summarize(values_ns)
    return Figures(int(s["count"]), {c: float(s[c]) for c in COLUMNS})


def lines(ours: Dict[str, Optional[Figures]], floor: Dict[str, str]) -> List[Line]:
    """`ours`: analysis metric name -> figures (None: no telemetry); `floor`: floor.txt parsed."""
    transport = floor_transport(floor)
    return [Line(name, ours.get(metric), what.format(transport=transport), floor_figures(floor, prefix))
            for metric, name, prefix, what in PAIRS]


def _us(f: Optional[Figures], column: str) -> str:
    if f is None or not f.count:
        return "n/a"
    return f"{f.ns[column] / 1000:.2f}"


def _ratio(r: Optional[float]) -> str:
    return "n/a" if r is None else f"{r:.1f}x"


def _rows(block: Sequence[Line]) -> List[List[str]]:
    rows = []
    for line in block:
        rows.append([line.name + " (all traders)", str(line.ours.count) if line.ours else "n/a"]
                    + [_us(line.ours, c) for c in COLUMNS])
        rows.append(["  " + line.floor_name, str(line.floor.count) if line.floor else "n/a"]
                    + [_us(line.floor, c) for c in COLUMNS])
        rows.append(["  ratio (ours / floor)", ""] + [_ratio(line.ratio(c)) for c in COLUMNS])
    return rows


TITLE = "Beside the loopback floor (same run, same load, same CPUs; us)"
NOTE = ("ours: the traders' telemetry, as in the percentile table; the floor's: nanotick-floor beside the "
        "traders (counters/floor.txt)")


def text_block(block: Sequence[Line]) -> str:
    """The plain-text table: one line per figure, its floor, and the ratios."""
    headers = ["", "count"] + list(COLUMNS)
    rows = _rows(block)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([TITLE, fmt(headers)] + [fmt(r) for r in rows] + [NOTE])


def html_block(block: Sequence[Line]) -> str:
    """The same table for report.html."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ("count",) + COLUMNS)
    out = ["<h2>Beside the loopback floor (same run)</h2>",
           '<p class="note">The end-to-end figures above beside the floor nanotick-floor measured during the same '
           "run, under the same load, on the same CPUs: the tick-to-trade floor reads the same market data group "
           "and writes a 64-byte order per datagram over the run's order-entry transport (loopback TCP or a "
           "shared-memory session, as each floor row names it); the round trip floor is a ping-pong over that "
           "transport of an order's and its answer's sizes (40 and 96 bytes) against an echo that waits like the "
           "exchange's gateway. Ratio = ours / floor. Times in microseconds.</p>",
           f'<table><tr><th class="l">figure</th>{head}</tr>']
    for row in _rows(block):
        label = html.escape(row[0].strip())
        cls = ' style="padding-left:24px"' if row[0].startswith("  ") else ""
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in row[1:])
        out.append(f'<tr><td class="l"{cls}>{label}</td>{cells}</tr>')
    out.append("</table>")
    return "\n".join(out)


def block_for_metrics(run_dir: Path, metrics: Sequence) -> Optional[List[Line]]:
    """The block from the report's metrics, or None when the run has no floor file."""
    floor = read_floor(run_dir)
    if floor is None:
        return None
    by_name = {m.name: m for m in metrics}
    ours = {metric: (figures_of(by_name[metric].values_ns) if metric in by_name else None) for metric, *_ in PAIRS}
    return lines(ours, floor)


def block_for_run(run_dir: Path) -> Optional[str]:
    """The plain-text block of a run directory (the demo's summary): our figures from its
    telemetry through the report's own analysis, or "n/a" when it has none. None when the
    run has no floor file."""
    from . import analysis, ntt  # pandas only when a block is asked for

    floor = read_floor(run_dir)
    if floor is None:
        return None
    try:
        run = analysis.build_run(ntt.read_run(run_dir))
    except (ntt.NttError, analysis.ReportError) as e:
        return text_block(lines({}, floor)) + f"\n(no end-to-end figures: {e})"
    ours = {"tick_to_trade": figures_of(analysis.tick_to_trade(run).values_ns),
            "order_round_trip": figures_of(analysis.order_round_trip(run).values_ns)}
    return text_block(lines(ours, floor))
