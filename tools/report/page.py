"""The self-contained HTML page of the latency report: plotly.js inlined
once in <head> (no network), one figure per metric (distribution beside a
time series with its rolling mean), the percentile table, throughput per hop
and the run's files. Pure functions from analysis results to a string.

Figures stay small whatever the run's size: distributions are histogrammed
here (80 bins up to p99.9, the tail counted in the title), and time series
are thinned to at most MAX_POINTS samples, always keeping the largest ones so
spikes stay visible; rolling means are computed on every sample first.
"""

from __future__ import annotations

import datetime as _dt
import html
from typing import List, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.offline
from plotly.subplots import make_subplots

from . import analysis, paths, stats
from .ntt import TelemetryFile

MAX_POINTS = 3000
KEEP_LARGEST = 100
HIST_BINS = 80

_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { margin-bottom: 4px; } h2 { margin-top: 36px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.note { color: #666; font-size: 13px; } .warn { color: #a40; }
.metric { margin: 18px 0; }
"""


def _fmt(v: float) -> str:
    if v != v:  # NaN
        return "-"
    return f"{v:,.1f}" if abs(v) < 100 else f"{v:,.0f}"


def _thin(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Indices of at most MAX_POINTS samples: evenly spaced plus the largest."""
    n = v.size
    if n <= MAX_POINTS:
        return np.arange(n)
    even = np.linspace(0, n - 1, MAX_POINTS - KEEP_LARGEST).astype(np.int64)
    largest = np.argpartition(v, n - KEEP_LARGEST)[n - KEEP_LARGEST :]
    return np.unique(np.concatenate([even, largest]))


def log_bins(body: np.ndarray) -> np.ndarray:
    """HIST_BINS + 1 edges spaced evenly on a log scale from the smallest positive sample to the largest
    (values <= 0, zero-length timers, fall in the first bin)."""
    positive = body[body > 0]
    lo = float(positive.min()) if positive.size else 1.0
    hi = float(body.max()) if body.size else lo
    if hi <= lo * 1.0001:
        hi = lo * 1.01
    return np.geomspace(lo, hi * 1.0001, HIST_BINS + 1)


def metric_figure(m: analysis.Metric) -> go.Figure:
    s = stats.summarize(m.values_ns)
    v = m.values_ns
    hi = s["p99.9"]
    body = v[v <= hi]
    tail = int(v.size - body.size)
    edges = log_bins(body)
    counts = np.histogram(np.clip(body, edges[0], None), bins=edges)[0] if body.size else np.zeros(HIST_BINS)
    dist_title = "distribution (ns, log bins)" + (f": {tail} above p99.9 not drawn, max {_fmt(s['max'])}"
                                                  if tail else "")
    fig = make_subplots(rows=1, cols=2, column_widths=[0.4, 0.6],
                        subplot_titles=(dist_title, "over time (ns, log) with rolling mean"))
    # Log-spaced bins on a log axis: a 4 ms outlier no longer flattens the 10 us body. Drawn as a filled step
    # line (bars on a log axis get widths in the wrong units).
    fig.add_trace(
        go.Scatter(x=np.append(edges[:-1], edges[-1]), y=np.append(counts, counts[-1:] if counts.size else 0),
                   mode="lines", line_shape="hv", fill="tozeroy", name="samples", line=dict(color="#4c78a8"),
                   fillcolor="#4c78a8", showlegend=False, hovertemplate="from %{x:.1f} ns: %{y} samples<extra></extra>"),
        row=1, col=1,
    )
    mean, window = analysis.rolling_mean(v)
    keep = _thin(m.t_s, v)
    fig.add_trace(
        go.Scatter(x=m.t_s[keep], y=v[keep], mode="markers", name="sample",
                   marker=dict(size=3, color="#4c78a8", opacity=0.45),
                   hovertemplate="t=%{x:.3f} s: %{y:.1f} ns<extra></extra>"),
        row=1, col=2,
    )
    fig.add_trace(
        go.Scatter(x=m.t_s[keep], y=mean[keep], mode="lines", name=f"rolling mean ({window} samples)",
                   line=dict(color="#e45756", width=2)),
        row=1, col=2,
    )
    fig.update_xaxes(title_text="ns", type="log", row=1, col=1)
    fig.update_yaxes(title_text="samples", row=1, col=1)
    fig.update_xaxes(title_text="s since run start", row=1, col=2)
    fig.update_yaxes(title_text="ns", type="log", row=1, col=2)
    fig.update_layout(height=330, margin=dict(l=50, r=20, t=40, b=40),
                      legend=dict(orientation="h", x=0.42, y=-0.22), template="plotly_white")
    return fig


SEGMENT_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6",
                   "#9d755d", "#bab0ac"]


def path_figure(p: paths.PathBreakdown) -> go.Figure:
    """One stacked horizontal bar per row: the median order's own segments, and each segment's median."""
    rows = [f"the median order ({_fmt(p.total_ns)} ns)", f"each hop's median ({_fmt(float(p.segment_medians_ns.sum()))} ns)"]
    fig = go.Figure()
    for i, seg in enumerate(p.segments):
        vals = [p.median_order_ns[i], p.segment_medians_ns[i]]
        fig.add_trace(go.Bar(y=rows, x=vals, name=seg, orientation="h",
                             marker_color=SEGMENT_COLOURS[i % len(SEGMENT_COLOURS)],
                             hovertemplate=f"{html.escape(seg)}: %{{x:.1f}} ns<extra></extra>"))
    fig.update_layout(barmode="stack", height=260, template="plotly_white", margin=dict(l=50, r=20, t=20, b=40),
                      xaxis_title="ns", legend=dict(orientation="h", y=-0.35))
    return fig


PATH_INTROS = {
    "order": ("The median order's path",
              "From the strategy's decision to its answer read back, hop by hop"),
    "market data": ("The exchange's market data path",
                    "From an order read by the exchange to the first trader's read of the market data packet "
                    "carrying its effect, hop by hop"),
}


def _path_section(p: paths.PathBreakdown) -> str:
    heading, intro = PATH_INTROS[p.name]
    title = f"<h2>{heading}</h2>"
    if not p.complete:
        return title + (f'<p class="note">No {p.name} path has every hop stamped ({p.incomplete:,} started): the '
                        "run lacks an exchange or a trader file, or ran without telemetry.</p>")
    rows = "".join(f'<tr><td class="l">{html.escape(seg)}</td><td>{_fmt(a)}</td><td>{_fmt(b)}</td></tr>'
                   for seg, a, b in zip(p.segments, p.median_order_ns, p.segment_medians_ns))
    return (title + f'<p class="note">{intro}: the order whose total is the median of the {p.complete:,} with '
            f"every hop stamped ({p.incomplete:,} others lack one), and each hop's own median (these need not add "
            "up to the median total).</p>"
            + _div(path_figure(p), f"{p.name.replace(' ', '-')}-path")
            + '<table><tr><th class="l">segment</th><th>median order (ns)</th><th>hop median (ns)</th></tr>'
            + rows + "</table>")


def throughput_figure(tp: analysis.Throughput) -> go.Figure:
    fig = go.Figure()
    for name, rate in tp.per_second.items():
        # Steps: each value is the rate over its whole bin.
        fig.add_trace(go.Scatter(x=tp.t_s, y=rate, mode="lines", line_shape="hv", name=name))
    fig.update_layout(height=380, template="plotly_white", margin=dict(l=50, r=20, t=30, b=40),
                      xaxis_title=f"s since run start (bins of {tp.bin_s * 1e3:g} ms)",
                      yaxis_title="records per second")
    return fig


def _div(fig: go.Figure, div_id: str | None = None) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


def percentile_rows(metrics: Sequence[analysis.Metric]) -> List[dict]:
    rows = []
    for m in metrics:
        s = stats.summarize(m.values_ns)
        rows.append({"section": m.section, "metric": m.name, **s, "jitter": s["p99"] - s["p50"], "notes": m.notes})
    return rows


def _percentile_table(metrics: Sequence[analysis.Metric]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("count", "p50", "p90", "p99", "p99.9", "max", "mean", "jitter (p99 - p50)"))
    out = [f'<table><tr><th class="l">section</th><th class="l">metric</th>{head}<th class="l">notes</th></tr>']
    for r in percentile_rows(metrics):
        notes = ", ".join(f"{v} {k}" for k, v in r["notes"].items())
        cells = "".join(f"<td>{_fmt(r[k])}</td>" for k in ("p50", "p90", "p99", "p99.9", "max", "mean", "jitter"))
        out.append(f'<tr><td class="l">{html.escape(r["section"])}</td><td class="l">{html.escape(r["metric"])}</td>'
                   f'<td>{r["count"]:,}</td>{cells}<td class="l">{html.escape(notes)}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _stage_table(stages: Sequence[analysis.Stage]) -> str:
    if not stages:
        return ""
    out = ["<h2>Engine step by stage</h2>",
           '<p class="note">The exchange\'s engine step split as the venue\'s pipeline runs it: pre-trade checks '
           "(new orders and modifies) &rarr; matching &rarr; settlement of every report &rarr; each trade into the "
           "trade ledger's ring. Settlement and ledger interleave with matching and are summed per request; each "
           "timed region includes about one clock read. Per request: the stage's total over every engine step.</p>",
           '<table><tr><th class="l">stage</th><th class="l">timer</th><th>calls</th><th>mean</th><th>p50</th>'
           "<th>p99</th><th>per request</th><th>share</th></tr>"]
    for s in stages:
        out.append(f'<tr><td class="l">{html.escape(s.name)}</td><td class="l">{html.escape(s.timer)}</td>'
                   f"<td>{s.calls:,}</td><td>{_fmt(s.mean_ns)}</td><td>{_fmt(s.p50_ns)}</td><td>{_fmt(s.p99_ns)}</td>"
                   f"<td>{_fmt(s.per_step_ns)}</td><td>{s.share * 100:.0f}%</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _files_table(files: Sequence[TelemetryFile]) -> str:
    out = ['<table><tr><th class="l">file</th><th class="l">process</th><th>pid</th><th>ticks/ns</th>'
           '<th class="l">clock</th><th class="l">started (UTC)</th><th>records</th><th>dropped</th>'
           '<th class="l">recorders</th></tr>']
    for f in files:
        started = _dt.datetime.fromtimestamp(f.start_epoch_ns / 1e9, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        if f.trailer is None:
            dropped = '<span class="warn">unknown: no trailer</span>'
            recorders = '<span class="warn">file cut short (process did not stop cleanly)</span>'
        else:
            dropped = f'{f.trailer.dropped:,}' if not f.trailer.dropped else f'<span class="warn">{f.trailer.dropped:,}</span>'
            recorders = ", ".join(f"{html.escape(r.name)} ({r.records:,} / {r.dropped:,} dropped)" for r in f.trailer.recorders)
        out.append(f'<tr><td class="l">{html.escape(f.path.name)}</td><td class="l">{html.escape(f.process_name)}</td>'
                   f'<td>{f.pid}</td><td>{f.ticks_per_ns:.6f}</td><td class="l">{f.clock_source}</td>'
                   f'<td class="l">{started}</td><td>{f.records.size:,}</td><td>{dropped}</td>'
                   f'<td class="l">{recorders}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _section(title: str, metrics: Sequence[analysis.Metric]) -> str:
    parts = [f"<h2>{html.escape(title)}</h2>"]
    empty = [m.name for m in metrics if m.values_ns.size == 0]
    for m in metrics:
        if m.values_ns.size == 0:
            continue
        parts.append(f'<div class="metric"><h3>{html.escape(m.name)}</h3>'
                     f'<p class="note">{html.escape(m.description)}; {m.values_ns.size:,} samples</p>{_div(metric_figure(m))}</div>')
    if empty:
        parts.append(f'<p class="note">No samples: {html.escape(", ".join(empty))}</p>')
    return "\n".join(parts)


def render(run_dir: str, run: analysis.Run, metrics: Sequence[analysis.Metric], tp: analysis.Throughput,
           beside_floor: str = "", load_curve: str = "", queue_depths: str = "") -> str:
    """The page; `beside_floor` is floor.html_block's section (empty: the run has no floor), `load_curve`
    loadcurve.section's (empty: the run has no loadtest.json)."""
    by = lambda *sections: [m for m in metrics if m.section in sections]  # noqa: E731
    clock = ("invariant TSC, calibrated by each process against its steady clock"
             if run.clock_source == "tsc" else "steady clock (no invariant TSC: ticks are ns)")
    rates = ", ".join(f"{f.process_name} {f.ticks_per_ns:.6f}" for f in run.files)
    generated = _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    body = [
        "<h1>nanotick latency report</h1>",
        f'<p class="note">run directory {html.escape(str(run_dir))}; generated {generated}</p>',
        f"<p><b>Clock:</b> {clock}. <b>Rate used: {run.ticks_per_ns:.6f} ticks per ns</b> "
        f"(median of the files' calibrated rates: {html.escape(rates)}). All figures are in nanoseconds.</p>",
        "<h2>Percentiles</h2>",
        '<p class="note">Nearest-rank percentiles of every sample. Notes: unmatched = records of the later hop '
        "with no record of the earlier hop for their key; negative = pairs whose later hop came first (keying "
        "error or a record lost to a full ring), left out; keyless = records with key 0 (no id, e.g. a decision "
        "no packet caused), never joined; saturated = timer calls longer than 2^32 ticks.</p>",
        _percentile_table(metrics),
        beside_floor,
        _path_section(paths.order_path(run)),
        _path_section(paths.md_path(run)),
        load_curve,
        _section("End to end", by("end to end")),
        _section("Hop to hop: exchange", by("exchange")),
        _section("Hop to hop: wire (between processes)", by("wire")),
        _section("Hop to hop: trader", by("trader")),
        _stage_table(analysis.stage_split(list(metrics))),
        _section("Function timers", by("function")),
        "<h2>Throughput</h2>",
        '<p class="note">Records per second of every hop point, all processes together.</p>',
        _div(throughput_figure(tp)) if tp.per_second else '<p class="note">No hop records.</p>',
        queue_depths,
        "<h2>Telemetry files</h2>",
        _files_table(run.files),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>nanotick latency report</title>"
        f"<style>{_CSS}</style>"
        f"<script type=\"text/javascript\">{plotly.offline.get_plotlyjs()}</script>"
        "</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
