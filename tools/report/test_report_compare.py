"""./nanotick report --compare RUN_A RUN_B: every metric of both runs paired
with B/A, on two synthetic runs written by the project's own Writer."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys

from . import compare, report
from .conftest import ROOT


def test_a_run_beside_itself_changes_nothing(synthetic_run):
    run_dir, _ = synthetic_run
    a = compare.read_side(run_dir)
    rows = compare.paired(a, a)
    assert rows and len(rows) == sum(1 for r in a.rows if r["count"])
    for r in rows:
        for c in compare.COLUMNS:
            assert r[f"{c}_a"] == r[f"{c}_b"]
            assert math.isnan(r[f"{c}_ratio"]) or r[f"{c}_ratio"] == 1.0 or r[f"{c}_a"] == 0
    assert "only in" not in compare.text(a, a)


def test_the_command_writes_the_page_and_names_what_only_one_run_has(synthetic_run, fixture_binary, tmp_path):
    run_dir, scenario = synthetic_run
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    # B without the trader files: its end-to-end and trader metrics are gone.
    for f in (other / "telemetry").glob("*.ntt"):
        if f.name != "exchange.ntt":
            f.unlink()
    done = subprocess.run([sys.executable, "-m", "tools.report", "--compare", str(run_dir), str(other)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "only in A:" in done.stdout and "tick_to_trade" in done.stdout.split("only in A:")[1]
    page = (other / "compare.html").read_text()
    assert page.count('class="plotly-graph-div"') >= 1 and "B/A" in page


def test_bad_comparisons_are_refused(synthetic_run, tmp_path):
    run_dir, _ = synthetic_run
    assert report.main(["--compare", str(run_dir), str(tmp_path / "missing")]) == 2
    done = subprocess.run([sys.executable, "-m", "tools.report", str(run_dir), "--compare", str(run_dir),
                           str(run_dir)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not both" in done.stderr
