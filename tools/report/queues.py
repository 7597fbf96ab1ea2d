"""Queue depths over time (RUN_DIR/counters/queue_depths.csv, written by the
demo from every process's `queue.*` gauges: tools/demo/demo_queues.py): one
step line per queue, and each queue's largest depth sampled. Pure functions.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Optional

import pandas as pd
import plotly.graph_objects as go

COLUMNS = ["t_s", "process", "queue", "depth"]


def read(run_dir) -> Optional[pd.DataFrame]:
    """The samples, or None when the run has none (or the file is not the demo's)."""
    path = Path(run_dir) / "counters" / "queue_depths.csv"
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError):
        return None
    if list(frame.columns) != COLUMNS or frame.empty:
        return None
    return frame


def figure(frame: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for (process, queue), g in frame.groupby(["process", "queue"], sort=True):
        fig.add_trace(go.Scatter(x=g["t_s"], y=g["depth"], mode="lines", line_shape="hv", name=f"{process} {queue}"))
    fig.update_layout(height=360, template="plotly_white", margin=dict(l=50, r=20, t=20, b=40),
                      xaxis_title="s since the demo's traders started", yaxis_title="depth (entries)")
    return fig


def section(frame: Optional[pd.DataFrame]) -> str:
    if frame is None:
        return ""
    peaks = frame.groupby(["process", "queue"], sort=True)["depth"].agg(["max", "mean", "count"]).reset_index()
    rows = "".join(f'<tr><td class="l">{html.escape(str(r.process))}</td><td class="l">{html.escape(str(r.queue))}'
                   f"</td><td>{int(r['count']):,}</td><td>{r['mean']:,.2f}</td><td>{int(r['max']):,}</td></tr>"
                   for _, r in peaks.iterrows())
    return ("<h2>Queue depths over time</h2>"
            "<p class=\"note\">Every process's queue gauges, sampled by the demo 10 times a second. A gauge is the "
            "depth when read: in the compact layout the exchange drains the rings between its stages within each "
            "pass, so they mostly read 0 there.</p>"
            + figure(frame).to_html(full_html=False, include_plotlyjs=False, div_id="queue-depths",
                                    config={"displaylogo": False})
            + '<table><tr><th class="l">process</th><th class="l">queue</th><th>samples</th><th>mean</th>'
            "<th>max</th></tr>" + rows + "</table>")
