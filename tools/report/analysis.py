"""From telemetry files to latency samples: function timers, hop-to-hop
transits joined by key across processes, end-to-end tick-to-trade and order
round trip, and throughput per hop. docs/TELEMETRY.md explains every rule
here; TRANSITS below is the one table of hop pairs. Pure functions over a
Run (built once, then read-only).

Times. Every process on one host reads the same invariant TSC, so ticks from
different files are directly comparable; each file carries the rate its own
process calibrated, and the run uses the median of those rates (they differ
by parts per million). Timer samples come from Record.cycles, transits from
differences of Record.tsc; both are divided by the rate to get nanoseconds.
Files that do not share a clock (a steady-clock fallback next to TSC files)
cannot be joined and are refused.

Joining two hops A -> B ("occurrence matching"). Records of A are grouped
by their join key (and by file when both hops are in one process), records
of B by file and key, each group in time order. The k-th B of a group is
matched to the k-th A of the same key, or to the last A when A has fewer:
  * one A, one B (an order through the exchange): exact;
  * one A, many B (one engine step writing an ack and fills; one market data
    packet read by every trader; one packet leading to several decisions):
    every B is measured from that A;
  * many A, many B in FIFO order (several answers to one order on one TCP
    connection): the k-th write is paired with the k-th read, exact.
A pair whose B precedes its A is counted as negative and left out (it means
a keying error or a record lost to a full ring); a B with no A of its key is
counted as unmatched. Key 0 means "no id" (sequence numbers start at 1): a
record whose join key is 0, such as a decision no packet caused, is counted
as keyless and never joined.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pandas as pd

from . import ntt, stats


@dataclass(frozen=True)
class Transit:
    section: str        # "exchange", "wire" or "trader"
    src: str            # point A
    dst: str            # point B
    src_key: str = "key"  # field of A that joins: "key" or "aux"
    dst_key: str = "key"  # field of B that joins
    same_process: bool = True

    @property
    def name(self) -> str:
        return f"{self.src} -> {self.dst}"


# The hop-to-hop transits, in path order (docs/TELEMETRY.md: "Transits").
TRANSITS: List[Transit] = [
    Transit("exchange", "ex_tcp_read", "ex_sequencer_in"),
    Transit("exchange", "ex_sequencer_in", "ex_sequencer_out"),
    Transit("exchange", "ex_sequencer_out", "ex_engine_in"),
    Transit("exchange", "ex_engine_in", "ex_engine_out"),
    Transit("exchange", "ex_engine_out", "ex_tcp_write", dst_key="aux"),
    Transit("exchange", "ex_engine_out", "ex_md_effect"),
    Transit("wire", "tr_tcp_write", "ex_tcp_read", same_process=False),
    Transit("wire", "ex_md_write", "tr_udp_read", same_process=False),
    Transit("wire", "ex_tcp_write", "tr_response_read", same_process=False),
    Transit("trader", "tr_udp_read", "tr_engine_dequeue"),
    Transit("trader", "tr_engine_dequeue", "tr_decision"),
    Transit("trader", "tr_decision", "tr_tcp_write", src_key="aux"),
]

# Function timers shown, in this order, when present (others found in the
# files follow, sorted by name).
TIMER_ORDER = [
    "fn_book_add", "fn_book_cancel", "fn_book_match", "fn_engine_process", "fn_pre_trade", "fn_matching",
    "fn_settlement", "fn_ledger", "fn_sequencer", "fn_md_publish", "fn_feature_update", "fn_position_update", "fn_risk_check", "fn_order_manager",
]

SATURATED_CYCLES = 0xFFFFFFFF

# The exchange's engine step split by stage of the venue's pipeline
# (docs/CONTROLS.md "Where the time goes"): timer, stage name.
STAGES = [("fn_pre_trade", "pre-trade"), ("fn_matching", "matching"), ("fn_settlement", "settlement"),
          ("fn_ledger", "trade ledger")]


class ReportError(Exception):
    """The run's files cannot be reported together."""


@dataclass
class Metric:
    section: str    # "end to end", "exchange", "wire", "trader", "function"
    name: str
    description: str
    values_ns: np.ndarray     # samples, ns
    t_s: np.ndarray           # when each sample started, s since the run start
    notes: Dict[str, int] = field(default_factory=dict)  # unmatched, negative, saturated


@dataclass
class Run:
    files: List[ntt.TelemetryFile]
    records: pd.DataFrame     # file, tsc, key, aux, point (name), kind, cycles
    ticks_per_ns: float
    clock_source: str
    start_tsc: int

    def seconds(self, tsc: np.ndarray) -> np.ndarray:
        return (tsc.astype(np.int64) - np.int64(self.start_tsc)).astype(np.float64) / self.ticks_per_ns / 1e9

    def ns(self, ticks: np.ndarray) -> np.ndarray:
        return ticks.astype(np.float64) / self.ticks_per_ns

    def point(self, name: str) -> pd.DataFrame:
        return self.records[self.records["point"] == name]


def build_run(files: List[ntt.TelemetryFile]) -> Run:
    sources = sorted({f.clock_source for f in files})
    if len(sources) > 1:
        names = ", ".join(f"{f.path.name} ({f.clock_source})" for f in files)
        raise ReportError(
            f"the files do not share a clock ({names}): hops cannot be joined across "
            "a TSC file and a steady-clock file; report them from separate run directories"
        )
    frames = []
    for i, f in enumerate(files):
        r = f.records
        ids = {pid: p.name for pid, p in f.points.items()}
        kinds = {pid: p.kind for pid, p in f.points.items()}
        frames.append(
            pd.DataFrame(
                {
                    "file": np.full(r.size, i, dtype=np.int32),
                    "tsc": r["tsc"].astype(np.int64),
                    "key": r["key"],
                    "aux": r["aux"],
                    "point": pd.Series(r["point"]).map(ids).to_numpy(dtype=object),
                    "kind": pd.Series(r["point"]).map(kinds).to_numpy(dtype=np.int64),
                    "cycles": r["cycles"].astype(np.int64),
                }
            )
        )
    records = pd.concat(frames, ignore_index=True)
    start = min(f.start_tsc for f in files)
    if len(records):
        start = min(start, int(records["tsc"].min()))
    return Run(
        files=files,
        records=records,
        ticks_per_ns=float(np.median([f.ticks_per_ns for f in files])),
        clock_source=sources[0],
        start_tsc=start,
    )


def timer_metrics(run: Run) -> List[Metric]:
    timers = run.records[run.records["kind"] == ntt.KIND_TIMER]
    present = set(timers["point"].unique())
    names = [n for n in TIMER_ORDER if n in present] + sorted(present - set(TIMER_ORDER))
    out = []
    for name in names:
        t = timers[timers["point"] == name].sort_values("tsc", kind="stable")
        cycles = t["cycles"].to_numpy()
        notes = {}
        saturated = int((cycles == SATURATED_CYCLES).sum())
        if saturated:
            notes["saturated"] = saturated
        out.append(
            Metric("function", name, f"one call of {name}", run.ns(cycles), run.seconds(t["tsc"].to_numpy()), notes)
        )
    return out


@dataclass
class Stage:
    name: str           # "pre-trade", "matching", "settlement", "trade ledger"
    timer: str
    calls: int          # requests that had this stage (pre-trade: new orders and modifies; ledger: trades)
    mean_ns: float      # per call
    p50_ns: float
    p99_ns: float
    per_step_ns: float  # the stage's total over every engine step (fn_matching's count): its mean cost per request
    share: float        # of the four stages' total


def stage_split(metrics: List[Metric]) -> List[Stage]:
    """The engine step by stage, from the four stage timers; [] when the run has none (an exchange without the
    stage timers, or no exchange file)."""
    by_name = {m.name: m for m in metrics if m.section == "function"}
    steps = by_name.get("fn_matching")
    if steps is None or steps.values_ns.size == 0:
        return []
    totals = {t: float(by_name[t].values_ns.sum()) if t in by_name else 0.0 for t, _ in STAGES}
    whole = sum(totals.values()) or 1.0
    out = []
    for timer, name in STAGES:
        v = by_name[timer].values_ns if timer in by_name else np.zeros(0)
        s = stats.summarize(v)  # nearest rank, as every other figure of the report
        out.append(Stage(name, timer, int(v.size), float(v.mean()) if v.size else 0.0,
                         s["p50"] if v.size else 0.0, s["p99"] if v.size else 0.0,
                         totals[timer] / steps.values_ns.size, totals[timer] / whole))
    return out


def _join(a: pd.DataFrame, b: pd.DataFrame, same_process: bool) -> tuple[pd.DataFrame, Dict[str, int]]:
    """Occurrence matching (module docstring). a, b: columns file, jk, tsc.
    Returns the matched pairs (src_tsc, dst_tsc) and the notes: B records
    with no A of their key (unmatched) or with key 0 (keyless)."""
    notes = {}
    keyless = int((b["jk"] == 0).sum())
    if keyless:
        notes["keyless"] = keyless
    a = a[a["jk"] != 0]
    b = b[b["jk"] != 0]
    ga = ["file", "jk"] if same_process else ["jk"]
    gb = ["file", "jk"]
    a = a.sort_values("tsc", kind="stable").copy()
    a["rank"] = a.groupby(ga, sort=False).cumcount()
    counts = a.groupby(ga, sort=False).size().rename("n").reset_index()
    b = b.sort_values("tsc", kind="stable").copy()
    b["rank_b"] = b.groupby(gb, sort=False).cumcount()
    with_a = b.merge(counts, on=ga, how="inner")
    if len(b) != len(with_a):
        notes["unmatched"] = len(b) - len(with_a)
    with_a["rank"] = np.minimum(with_a["rank_b"].to_numpy(), with_a["n"].to_numpy() - 1)
    src = a[ga + ["rank", "tsc"]].rename(columns={"tsc": "src_tsc"})
    pairs = with_a.rename(columns={"tsc": "dst_tsc"}).merge(src, on=ga + ["rank"], how="inner")
    return pairs[["src_tsc", "dst_tsc"]], notes


def _hop(run: Run, point: str, key_field: str) -> pd.DataFrame:
    r = run.point(point)
    return pd.DataFrame({"file": r["file"].to_numpy(), "jk": r[key_field].to_numpy(), "tsc": r["tsc"].to_numpy()})


def _metric_from_pairs(run: Run, section: str, name: str, description: str, src: np.ndarray, dst: np.ndarray,
                       notes: Dict[str, int]) -> Metric:
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    negative = dst < src
    if negative.any():
        notes["negative"] = int(negative.sum())
    keep = ~negative
    return Metric(section, name, description, run.ns(dst[keep] - src[keep]), run.seconds(src[keep]), notes)


def transit_metric(run: Run, transit: Transit) -> Metric:
    a = _hop(run, transit.src, transit.src_key)
    b = _hop(run, transit.dst, transit.dst_key)
    pairs, notes = _join(a, b, transit.same_process)
    join = f"A.{transit.src_key} = B.{transit.dst_key}" + ("" if transit.same_process else ", across processes")
    return _metric_from_pairs(
        run, transit.section, transit.name, f"from {transit.src} to {transit.dst} ({join})",
        pairs["src_tsc"].to_numpy(), pairs["dst_tsc"].to_numpy(), notes,
    )


def _first(run: Run, point: str) -> pd.DataFrame:
    """Earliest record of `point` per (file, key): columns file, key, tsc."""
    r = run.point(point)
    return r.groupby(["file", "key"], sort=False)["tsc"].min().reset_index()


def tick_to_trade(run: Run) -> Metric:
    """tr_udp_read of the packet -> tr_tcp_write of each order it caused, joined
    through tr_decision (key = packet's md key, aux = order key), per trader."""
    reads = _first(run, "tr_udp_read").rename(columns={"tsc": "read_tsc"})
    writes = _first(run, "tr_tcp_write").rename(columns={"key": "aux", "tsc": "write_tsc"})
    d = run.point("tr_decision")[["file", "key", "aux"]]
    notes = {}
    if (d["key"] == 0).any():  # decided without a packet (a timer): no tick
        notes["keyless"] = int((d["key"] == 0).sum())
        d = d[d["key"] != 0]
    m = d.merge(reads, on=["file", "key"], how="inner").merge(writes, on=["file", "aux"], how="inner")
    if len(d) != len(m):
        notes["unmatched"] = len(d) - len(m)
    return _metric_from_pairs(
        run, "end to end", "tick_to_trade",
        "market data packet read (tr_udp_read) to the order it caused written (tr_tcp_write), via tr_decision",
        m["read_tsc"].to_numpy(), m["write_tsc"].to_numpy(), notes,
    )


def venue_tick_to_trade(run: Run) -> Metric:
    """ex_md_write of the packet -> ex_tcp_read of each order it caused, joined
    through each trader's tr_decision (key = packet's md key, aux = order
    key): the venue's view of a trader's reaction, both stamps in the
    exchange, so both wire hops and the trader's whole handling are inside."""
    md_writes = run.point("ex_md_write").groupby("key", sort=False)["tsc"].min().rename("md_tsc").reset_index()
    order_reads = (run.point("ex_tcp_read").groupby("key", sort=False)["tsc"].min()
                   .rename("read_tsc").reset_index().rename(columns={"key": "aux"}))
    d = run.point("tr_decision")[["key", "aux"]]
    notes = {}
    if (d["key"] == 0).any():
        notes["keyless"] = int((d["key"] == 0).sum())
        d = d[d["key"] != 0]
    m = d.merge(md_writes, on="key", how="inner").merge(order_reads, on="aux", how="inner")
    if len(d) != len(m):
        notes["unmatched"] = len(d) - len(m)
    return _metric_from_pairs(
        run, "end to end", "venue_tick_to_trade",
        "market data packet written by the exchange (ex_md_write) to the order it caused read by the exchange "
        "(ex_tcp_read), via the trader's tr_decision",
        m["md_tsc"].to_numpy(), m["read_tsc"].to_numpy(), notes,
    )


def order_round_trip(run: Run) -> Metric:
    """tr_tcp_write of an order -> the first tr_response_read of its key, per trader."""
    writes = _first(run, "tr_tcp_write").rename(columns={"tsc": "write_tsc"})
    answers = _first(run, "tr_response_read").rename(columns={"tsc": "answer_tsc"})
    m = writes.merge(answers, on=["file", "key"], how="inner")
    notes = {"unanswered": len(writes) - len(m)} if len(writes) != len(m) else {}
    return _metric_from_pairs(
        run, "end to end", "order_round_trip",
        "order written (tr_tcp_write) to its first answer read (tr_response_read)",
        m["write_tsc"].to_numpy(), m["answer_tsc"].to_numpy(), notes,
    )


def exchange_reaction_time(run: Run) -> Metric:
    """ex_tcp_read of an order -> the first ex_md_effect of its key: the exchange's reaction time, order in to
    the first market data packet carrying its effect written (the market data path's T4 -> T6)."""
    reads = _first(run, "ex_tcp_read").rename(columns={"tsc": "read_tsc"})
    effects = _first(run, "ex_md_effect").rename(columns={"tsc": "md_tsc"})
    m = reads[reads["key"] != 0].merge(effects, on=["file", "key"], how="inner")
    return _metric_from_pairs(
        run, "end to end", "exchange_reaction_time",
        "order read by the exchange (ex_tcp_read) to the first market data packet carrying its effect written "
        "(ex_md_effect); orders without an effect on the book (a rejected one) have none",
        m["read_tsc"].to_numpy(), m["md_tsc"].to_numpy(), {},
    )


def all_metrics(run: Run) -> List[Metric]:
    """End to end first, then transits in path order, then function timers."""
    return ([tick_to_trade(run), venue_tick_to_trade(run), order_round_trip(run), exchange_reaction_time(run)]
            + [transit_metric(run, t) for t in TRANSITS] + timer_metrics(run))


@dataclass
class Throughput:
    bin_s: float
    t_s: np.ndarray                    # bin starts, s since the run start
    per_second: Dict[str, np.ndarray]  # hop point -> records per second in each bin


def throughput(run: Run, bins: int = 200) -> Throughput:
    """Records per second of every hop point over time (all processes)."""
    hops = run.records[run.records["kind"] == ntt.KIND_HOP]
    if hops.empty:
        return Throughput(1.0, np.zeros(0), {})
    t = run.seconds(hops["tsc"].to_numpy())
    span = max(float(t.max()), 1e-9)
    bin_s = float(np.clip(span / bins, 1e-3, 1.0))
    edges = np.arange(0.0, span + bin_s, bin_s)
    if edges.size < 2:
        edges = np.array([0.0, bin_s])
    per_second = {}
    points = hops["point"].to_numpy()
    for name in sorted(set(points), key=_hop_order):
        counts, _ = np.histogram(t[points == name], bins=edges)
        per_second[name] = counts / bin_s
    return Throughput(bin_s, edges[:-1], per_second)


def _hop_order(name: str):
    order = [p for tr in TRANSITS for p in (tr.src, tr.dst)]
    return (order.index(name) if name in order else len(order), name)


def rolling_mean(values: np.ndarray, window: Optional[int] = None) -> tuple[np.ndarray, int]:
    """Trailing mean over `window` samples (default: n/50, 1..1000)."""
    n = values.size
    if window is None:
        window = int(np.clip(n // 50, 1, 1000))
    s = pd.Series(values).rolling(window, min_periods=1).mean().to_numpy()
    return s, window
