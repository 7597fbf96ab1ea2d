"""The report's numbers as pandas DataFrames, for a notebook or a script
(tools/report/example.ipynb shows one):

    from tools.report import load
    frames = load("runs/20261127-175536")
    frames["percentiles"]            # what the report's table shows
    frames["samples"].query("metric == 'order_round_trip'")["ns"].describe()

The numbers are the report's own (analysis.py, paths.py): the same joins,
the same nearest-rank percentiles. Reads the files once; the frames are
plain copies, safe to change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Union

import numpy as np
import pandas as pd

from . import analysis, ntt, page, paths


def load(run_dir: Union[str, Path]) -> Dict[str, pd.DataFrame]:
    """One run directory's telemetry (RUN_DIR/telemetry/*.ntt) as DataFrames:

    - "records": every record: file (index into the run's files), process, tsc, t_s (seconds since the run
      start), key, aux, point (name), kind (1 hop, 2 timer), cycles;
    - "samples": one row per latency sample of every metric: section, metric, t_s (when it started), ns;
    - "percentiles": one row per metric: section, metric, count, p50, p90, p99, p99.9, max, mean, jitter
      (p99 - p50), in ns;
    - "stages": the exchange's engine step by stage (pre-trade, matching, settlement, trade ledger): calls,
      mean_ns, p50_ns, p99_ns, per_step_ns, share; empty when the run has no stage timers;
    - "order_path": the median order's path: segment, median_order_ns, hop_median_ns;
    - "md_path": the exchange's market data path (order read -> the first trader's read of the packet carrying
      its effect), in the same columns.

    Raises ntt.NttError (a missing or malformed file) or analysis.ReportError (files that cannot be
    reported together), as ./nanotick report does."""
    run = analysis.build_run(ntt.read_run(Path(run_dir)))
    metrics = analysis.all_metrics(run)
    records = run.records.copy()
    records.insert(1, "process", [run.files[i].process_name for i in records["file"].to_numpy()])
    records.insert(3, "t_s", run.seconds(records["tsc"].to_numpy()))
    samples = pd.concat([pd.DataFrame({"section": m.section, "metric": m.name, "t_s": m.t_s, "ns": m.values_ns})
                         for m in metrics], ignore_index=True) if metrics else pd.DataFrame(
        columns=["section", "metric", "t_s", "ns"])
    rows = page.percentile_rows(metrics)
    percentiles = pd.DataFrame([{k: v for k, v in r.items() if k != "notes"} for r in rows])
    stages = pd.DataFrame([vars(s) for s in analysis.stage_split(metrics)],
                          columns=["name", "timer", "calls", "mean_ns", "p50_ns", "p99_ns", "per_step_ns", "share"])
    return {"records": records, "samples": samples, "percentiles": percentiles, "stages": stages,
            "order_path": _path_frame(paths.order_path(run)), "md_path": _path_frame(paths.md_path(run))}


def _path_frame(p: paths.PathBreakdown) -> pd.DataFrame:
    missing = np.full(len(p.segments), np.nan)
    return pd.DataFrame({"segment": p.segments, "median_order_ns": p.median_order_ns if p.complete else missing,
                         "hop_median_ns": p.segment_medians_ns if p.complete else missing})
