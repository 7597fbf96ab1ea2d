"""A message's whole path through the stack, hop by hop, for the report's
stacked breakdown (docs/TELEMETRY.md "The report"): each order that has
every hop stamped, its segments (the time between consecutive hops) and
total; the median order (the one at the middle of the totals) and each
segment's own median beside it. Pure functions over an analysis.Run.

The order path joins by order key ((client_id << 32) | seq, unique across
traders): tr_decision (by aux) -> tr_tcp_write -> ex_tcp_read ->
ex_sequencer_in -> ex_sequencer_out -> ex_engine_in -> ex_engine_out ->
ex_tcp_write of its own first answer (key = aux) -> tr_response_read.
The market data path joins the same way up to the engine, then through
ex_md_effect (the first packet carrying the order's effect; its aux is that
packet's md key) to the first tr_udp_read of that packet by any trader. An
order missing a hop (sent without telemetry, a record lost to a full ring,
a decision no packet caused still counts) or with a hop out of order is
left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np
import pandas as pd

from .analysis import Run

# (point, the field holding the order key, the segment that ends at this hop)
ORDER_HOPS = [
    ("tr_decision", "aux", None),
    ("tr_tcp_write", "key", "trader: decision -> order written"),
    ("ex_tcp_read", "key", "wire: order -> exchange read"),
    ("ex_sequencer_in", "key", "exchange: gateway -> sequencer"),
    ("ex_sequencer_out", "key", "exchange: sequencer (journal)"),
    ("ex_engine_in", "key", "exchange: sequencer -> engine"),
    ("ex_engine_out", "key", "exchange: engine"),
    ("ex_tcp_write", "own", "exchange: engine -> answer written"),
    ("tr_response_read", "key", "wire: answer -> trader read"),
]


@dataclass
class PathBreakdown:
    name: str
    segments: List[str]
    median_order_ns: np.ndarray    # the median order's segments (empty: no complete order)
    segment_medians_ns: np.ndarray  # each segment's median over the complete orders
    complete: int                  # orders with every hop, in order
    incomplete: int                # orders seen at the first hop but left out

    @property
    def total_ns(self) -> float:
        return float(self.median_order_ns.sum()) if self.median_order_ns.size else float("nan")


def _first_by_key(run: Run, point: str, field: str) -> pd.Series:
    r = run.point(point)
    if field == "own":  # an answer to the request itself: key == aux
        r = r[r["key"] == r["aux"]]
        field = "key"
    r = r[r[field] != 0]
    return r.groupby(field, sort=False)["tsc"].min()


MD_HOPS = [
    ("ex_tcp_read", "key", None),
    ("ex_sequencer_in", "key", "exchange: gateway -> sequencer"),
    ("ex_sequencer_out", "key", "exchange: sequencer (journal)"),
    ("ex_engine_in", "key", "exchange: sequencer -> engine"),
    ("ex_engine_out", "key", "exchange: engine"),
    ("ex_md_effect", "key", "exchange: engine -> market data written"),
]
MD_READ_SEGMENT = "wire: market data -> first trader read"


def _breakdown(run: Run, name: str, segments: List[str], table: pd.DataFrame, started: int) -> PathBreakdown:
    if table.empty:
        return PathBreakdown(name, segments, np.zeros(0), np.zeros(0), 0, started)
    ticks = np.diff(table.to_numpy(dtype=np.int64), axis=1)
    in_order = (ticks >= 0).all(axis=1)
    ticks = ticks[in_order]
    if ticks.shape[0] == 0:
        return PathBreakdown(name, segments, np.zeros(0), np.zeros(0), 0, started)
    ns = run.ns(ticks)
    totals = ns.sum(axis=1)
    middle = np.argsort(totals, kind="stable")[(totals.size - 1) // 2]
    return PathBreakdown(name, segments, ns[middle], np.median(ns, axis=0), int(ns.shape[0]),
                         started - int(ns.shape[0]))


def order_path(run: Run) -> PathBreakdown:
    """Decision to the answer read back (ORDER_HOPS)."""
    cols = [_first_by_key(run, p, f).rename(p) for p, f, _ in ORDER_HOPS]
    return _breakdown(run, "order", [seg for _, _, seg in ORDER_HOPS[1:]], pd.concat(cols, axis=1, join="inner"),
                      len(cols[0]))


def md_path(run: Run) -> PathBreakdown:
    """An order read by the exchange to the first trader's read of the market data packet carrying its effect
    (MD_HOPS, then tr_udp_read by the packet's md key)."""
    segments = [seg for _, _, seg in MD_HOPS[1:]] + [MD_READ_SEGMENT]
    cols = [_first_by_key(run, p, f).rename(p) for p, f, _ in MD_HOPS]
    started = len(cols[0])
    table = pd.concat(cols, axis=1, join="inner")
    effects = run.point("ex_md_effect")
    if table.empty or effects.empty:
        return _breakdown(run, "market data", segments, pd.DataFrame(), started)
    # The md key of each order's first effect packet, then that packet's first read by any trader.
    first = effects[effects["key"] != 0].sort_values("tsc", kind="stable").drop_duplicates("key")
    md_key = first.set_index("key")["aux"]
    reads = run.point("tr_udp_read").groupby("key", sort=False)["tsc"].min()
    table["tr_udp_read"] = md_key.reindex(table.index).map(reads)
    table = table.dropna()
    return _breakdown(run, "market data", segments, table.astype(np.int64), started)
