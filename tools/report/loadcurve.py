"""The latency-against-load curve of ./nanotick loadtest (RUN_DIR/loadtest.json,
tools/loadtest/loadtest.py): p50, p99, p99.9 and max of each offered rate,
both axes logarithmic, one set of lines per run (e.g. backoff beside spin),
the knee marked. A figure for the report's page and a page of its own. Pure
functions of the loaded JSON.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import List, Optional

import plotly.graph_objects as go
import plotly.offline

DASHES = {"p50_ns": "solid", "p99_ns": "dash", "p99_9_ns": "dot", "max_ns": "longdashdot"}
LABELS = {"p50_ns": "p50", "p99_ns": "p99", "p99_9_ns": "p99.9", "max_ns": "max"}
COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756"]


def read(run_dir) -> Optional[dict]:
    """RUN_DIR/loadtest.json, or None when the run has none."""
    path = Path(run_dir) / "loadtest.json"
    return json.loads(path.read_text()) if path.is_file() else None


def figure(results: List[dict]) -> go.Figure:
    fig = go.Figure()
    for i, r in enumerate(results):
        steps = r["steps"]
        x = [s["offered_per_s"] for s in steps]
        for field, dash in DASHES.items():
            fig.add_trace(go.Scatter(x=x, y=[max(s[field], 1) / 1e3 for s in steps], mode="lines+markers",
                                     name=f"{r.get('idle', '?')}: {LABELS[field]}",
                                     line=dict(color=COLOURS[i % len(COLOURS)], dash=dash),
                                     hovertemplate="%{x:,.0f}/s: %{y:,.1f} us<extra></extra>"))
        if r.get("knee_per_s"):
            fig.add_vline(x=r["knee_per_s"], line=dict(color=COLOURS[i % len(COLOURS)], width=1, dash="dot"),
                          annotation_text=f"knee ({r.get('idle', '?')})")
    fig.update_layout(height=460, template="plotly_white", margin=dict(l=60, r=20, t=30, b=50),
                      xaxis=dict(type="log", title="offered load, messages/s (log)"),
                      yaxis=dict(type="log", title="latency from the due time, us (log)"))
    return fig


def section(results: List[dict]) -> str:
    """The report's section: the curve and a table per run."""
    parts = ["<h2>Latency against offered load</h2>",
             '<p class="note">./nanotick loadtest: open-loop, each message measured from the time it was due (no '
             "coordinated omission), over the run's sessions; the sweep stops at the first saturated rate.</p>",
             figure(results).to_html(full_html=False, include_plotlyjs=False, div_id="load-curve",
                                     config={"displaylogo": False})]
    for r in results:
        rows = "".join(
            f"<tr><td>{s['offered_per_s']:,.0f}</td><td>{s['achieved_per_s']:,.0f}</td><td>{s['answered']:,}</td>"
            f"<td>{s['p50_ns'] / 1e3:,.1f}</td><td>{s['p99_ns'] / 1e3:,.1f}</td><td>{s['p99_9_ns'] / 1e3:,.1f}</td>"
            f"<td>{s['max_ns'] / 1e3:,.1f}</td><td>{(s['p99_ns'] - s['p50_ns']) / 1e3:,.1f}</td>"
            f'<td class="l">{html.escape(s.get("saturated") or "")}</td></tr>' for s in r["steps"])
        knee = f"{r['knee_per_s']:,.0f}/s" if r.get("knee_per_s") else "none"
        parts.append(f"<h3>idle {html.escape(str(r.get('idle')))}, {r.get('sessions')} sessions over "
                     f"{html.escape(str(r.get('transport')))}: knee {knee}</h3>"
                     '<table><tr><th>offered/s</th><th>achieved/s</th><th>answered</th><th>p50 us</th><th>p99 us</th>'
                     '<th>p99.9 us</th><th>max us</th><th>jitter us</th><th class="l">saturated</th></tr>'
                     + rows + "</table>")
    return "\n".join(parts)


def page(results: List[dict]) -> str:
    from . import page as report_page  # the report's CSS
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>nanotick loadtest</title>"
            f"<style>{report_page._CSS}</style><script type=\"text/javascript\">{plotly.offline.get_plotlyjs()}"
            "</script></head><body>\n<h1>nanotick: latency against offered load</h1>\n" + section(results)
            + "\n</body></html>\n")
