"""Two runs side by side (./nanotick report --compare RUN_A RUN_B): every
metric both runs have, hop by hop, with its p50, p99, p99.9 and jitter in
each and B's over A's, and the median order's path of each. What changed is
what a ratio far from 1 points at. Text for the terminal, and a
self-contained HTML page (plotly inlined). Pure functions of two loaded runs.
"""

from __future__ import annotations

import datetime as _dt
import html
from dataclasses import dataclass
from typing import List

import plotly.graph_objects as go
import plotly.offline

from . import analysis, ntt, page, paths

COLUMNS = ("p50", "p99", "p99.9", "jitter")


@dataclass
class Side:
    run_dir: str
    rows: List[dict]              # page.percentile_rows of the run
    path: paths.PathBreakdown


def read_side(run_dir) -> Side:
    run = analysis.build_run(ntt.read_run(run_dir))
    return Side(str(run_dir), page.percentile_rows(analysis.all_metrics(run)), paths.order_path(run))


def _ratio(a: float, b: float) -> float:
    return b / a if a == a and b == b and a > 0 else float("nan")


def paired(a: Side, b: Side) -> List[dict]:
    """One row per metric in both runs (A's order): section, metric, count_a, count_b, and per column X of
    COLUMNS: X_a, X_b, X_ratio (B / A)."""
    by_b = {(r["section"], r["metric"]): r for r in b.rows}
    out = []
    for ra in a.rows:
        rb = by_b.get((ra["section"], ra["metric"]))
        if rb is None or not ra["count"] or not rb["count"]:
            continue
        row = {"section": ra["section"], "metric": ra["metric"], "count_a": ra["count"], "count_b": rb["count"]}
        for c in COLUMNS:
            row[f"{c}_a"], row[f"{c}_b"], row[f"{c}_ratio"] = ra[c], rb[c], _ratio(ra[c], rb[c])
        out.append(row)
    return out


def only_in(a: Side, b: Side) -> List[str]:
    names_b = {r["metric"] for r in b.rows if r["count"]}
    return [r["metric"] for r in a.rows if r["count"] and r["metric"] not in names_b]


def _x(v: float) -> str:
    return "-" if v != v else f"{v:.2f}x"


def text(a: Side, b: Side) -> str:
    rows = paired(a, b)
    name_w = max([len("metric")] + [len(r["metric"]) for r in rows])
    head = f"{'section':<10}  {'metric':<{name_w}}" + "".join(f"  {c + ' A':>11}  {c + ' B':>11}  {'B/A':>7}"
                                                            for c in ("p50", "p99"))
    lines = [f"A: {a.run_dir}", f"B: {b.run_dir}", head + "  (ns)"]
    for r in rows:
        cells = "".join(f"  {page._fmt(r[c + '_a']):>11}  {page._fmt(r[c + '_b']):>11}  {_x(r[c + '_ratio']):>7}"
                        for c in ("p50", "p99"))
        lines.append(f"{r['section']:<10}  {r['metric']:<{name_w}}{cells}")
    for side, other, label in ((a, b, "A"), (b, a, "B")):
        missing = only_in(side, other)
        if missing:
            lines.append(f"only in {label}: {', '.join(missing)}")
    if a.path.complete and b.path.complete:
        lines.append("")
        lines.append(f"{'the median order, by segment':<44}  {'A':>11}  {'B':>11}  {'B/A':>7}")
        for seg, va, vb in zip(a.path.segments, a.path.median_order_ns, b.path.median_order_ns):
            lines.append(f"{seg:<44}  {page._fmt(va):>11}  {page._fmt(vb):>11}  {_x(_ratio(va, vb)):>7}")
        lines.append(f"{'total':<44}  {page._fmt(a.path.total_ns):>11}  {page._fmt(b.path.total_ns):>11}  "
                     f"{_x(_ratio(a.path.total_ns, b.path.total_ns)):>7}")
    return "\n".join(lines)


def figure(a: Side, b: Side) -> go.Figure:
    rows = paired(a, b)
    names = [f"{r['section']}: {r['metric']}" for r in rows]
    fig = go.Figure()
    for c, colour_a, colour_b in (("p50", "#9ecae9", "#4c78a8"), ("p99", "#ffbf79", "#f58518")):
        fig.add_trace(go.Bar(y=names, x=[r[f"{c}_a"] for r in rows], name=f"{c} A", orientation="h",
                             marker_color=colour_a))
        fig.add_trace(go.Bar(y=names, x=[r[f"{c}_b"] for r in rows], name=f"{c} B", orientation="h",
                             marker_color=colour_b))
    fig.update_layout(barmode="group", height=max(300, 34 * len(rows) + 120), template="plotly_white",
                      xaxis=dict(type="log", title="ns (log)"), yaxis=dict(autorange="reversed"),
                      margin=dict(l=320, r=20, t=30, b=40), legend=dict(orientation="h", y=1.04))
    return fig


def render(a: Side, b: Side) -> str:
    rows = paired(a, b)
    head = "".join(f"<th>{c} A</th><th>{c} B</th><th>B/A</th>" for c in COLUMNS)
    table = [f'<table><tr><th class="l">section</th><th class="l">metric</th><th>count A</th><th>count B</th>{head}</tr>']
    for r in rows:
        cells = "".join(f"<td>{page._fmt(r[c + '_a'])}</td><td>{page._fmt(r[c + '_b'])}</td>"
                        f"<td>{_x(r[c + '_ratio'])}</td>" for c in COLUMNS)
        table.append(f'<tr><td class="l">{html.escape(r["section"])}</td><td class="l">{html.escape(r["metric"])}'
                     f'</td><td>{r["count_a"]:,}</td><td>{r["count_b"]:,}</td>{cells}</tr>')
    table.append("</table>")
    body = [
        "<h1>nanotick: two runs side by side</h1>",
        f'<p class="note">A = {html.escape(a.run_dir)}<br>B = {html.escape(b.run_dir)}<br>generated '
        f'{_dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}. All figures in ns; B/A above '
        "1 means B is slower.</p>",
        "<h2>Every metric both runs have</h2>", "\n".join(table),
        page._div(figure(a, b)),
    ]
    for side, label in ((a, "A"), (b, "B")):
        if side.path.complete:
            body += [f"<h2>Run {label}: the median order's path</h2>", page._div(page.path_figure(side.path))]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>nanotick: two runs</title>"
            f"<style>{page._CSS}</style><script type=\"text/javascript\">{plotly.offline.get_plotlyjs()}</script>"
            "</head><body>\n" + "\n".join(body) + "\n</body></html>\n")
