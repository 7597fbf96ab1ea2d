"""tools.report.load: the report's numbers as DataFrames, equal to what the
report itself computes; and example.ipynb, whose code cells run in order
against a synthetic run (as Jupyter would run them, without a kernel: the
venv has no Jupyter)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from . import analysis, load, ntt, page

NOTEBOOK = Path(__file__).with_name("example.ipynb")


def test_load_gives_the_reports_own_numbers(synthetic_run):
    run_dir, _ = synthetic_run
    frames = load(run_dir)
    assert set(frames) == {"records", "samples", "percentiles", "stages", "order_path", "md_path"}
    run = analysis.build_run(ntt.read_run(run_dir))
    metrics = analysis.all_metrics(run)
    assert len(frames["records"]) == len(run.records)
    assert set(frames["records"]["process"]) == {f.process_name for f in run.files}
    want = page.percentile_rows(metrics)
    got = frames["percentiles"]
    assert list(got["metric"]) == [r["metric"] for r in want]
    for r, (_, g) in zip(want, got.iterrows()):
        for col in ("count", "p50", "p99", "max", "jitter"):
            assert (np.isnan(r[col]) and np.isnan(g[col])) or r[col] == g[col], (r["metric"], col)
        assert r["jitter"] != r["jitter"] or r["jitter"] == r["p99"] - r["p50"]
    for m in metrics:
        s = frames["samples"][frames["samples"]["metric"] == m.name]
        np.testing.assert_array_equal(s["ns"].to_numpy(), m.values_ns)


def test_the_example_notebook_runs(synthetic_run, monkeypatch):
    run_dir, _ = synthetic_run
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), "commit the notebook cleared"
    monkeypatch.setenv("NANOTICK_RUN_DIR", str(run_dir))
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    namespace: dict = {}
    for c in code:
        exec(compile("".join(c["source"]), f"example.ipynb cell {c['id']}", "exec"), namespace)  # noqa: S102
    assert Path(namespace["run_dir"]) == Path(os.environ["NANOTICK_RUN_DIR"])
    assert isinstance(namespace["percentiles"], pd.DataFrame) and len(namespace["percentiles"]) > 0
    assert isinstance(namespace["per_second"], pd.Series)
