"""The report's numbers against values computed independently: a synthetic
run (synthetic.py) is written by the project's C++ telemetry Writer, the
report reads it back, and every transit, timer, end-to-end figure and
percentile must equal what the chosen ticks give divided by the rate in the
files' headers (read here with struct, not with the report's reader).
"""

from __future__ import annotations

import math
import statistics
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import plotly.offline
import pytest

from . import analysis, ntt, report, stats, synthetic
from .conftest import ROOT, write_run


def header_rate(path: str) -> float:
    data = Path(path).read_bytes()
    assert data[:8] == b"NTTELEM1"
    return struct.unpack_from("<d", data, 24)[0]


def run_rate(scenario: synthetic.Scenario) -> float:
    return statistics.median(header_rate(p) for p in scenario.files)


def nearest_rank(values, p):
    """Independent nearest-rank percentile: rank ceil(p/100 * n), exact."""
    v = sorted(values)
    rank = math.ceil(Fraction(str(p)) * len(v) / 100)
    return v[max(rank, 1) - 1]


@pytest.fixture
def built(synthetic_run):
    run_dir, scenario = synthetic_run
    run = analysis.build_run(ntt.read_run(run_dir))
    return run_dir, scenario, run, {m.name: m for m in analysis.all_metrics(run)}


def test_rate_is_the_calibrated_one_from_the_files(built):
    _, scenario, run, _ = built
    rate = run_rate(scenario)
    assert 0.05 < rate < 20.0, "the fixture's clock must be the calibrated TSC (or steady ns = 1.0)"
    assert run.ticks_per_ns == pytest.approx(rate, rel=0, abs=0)


def test_every_transit_and_end_to_end_figure_matches_the_chosen_ticks(built):
    _, scenario, run, metrics = built
    rate = run_rate(scenario)
    # Every transit of the table and both end-to-end figures are in the scenario.
    assert set(scenario.expected_ticks) == {t.name for t in analysis.TRANSITS} | {"tick_to_trade", "venue_tick_to_trade", "order_round_trip",
                                                                                   "exchange_reaction_time"}
    for name, ticks in scenario.expected_ticks.items():
        got = np.sort(metrics[name].values_ns)
        want = np.sort(np.array(ticks, dtype=np.float64) / rate)
        assert got.size == want.size, f"{name}: {got.size} samples, expected {want.size}"
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)


def test_function_timers_are_cycles_over_the_rate(built):
    _, scenario, run, metrics = built
    rate = run_rate(scenario)
    assert set(scenario.timer_ticks) <= {m.name for m in metrics.values() if m.section == "function"}
    for name, cycles in scenario.timer_ticks.items():
        np.testing.assert_allclose(np.sort(metrics[name].values_ns), np.sort(np.array(cycles) / rate), rtol=1e-12)


def test_percentiles_are_nearest_rank_of_the_samples(built):
    _, scenario, _, metrics = built
    rate = run_rate(scenario)
    for name, ticks in list(scenario.expected_ticks.items()) + list(scenario.timer_ticks.items()):
        ns = [t / rate for t in ticks]
        s = stats.summarize(metrics[name].values_ns)
        assert s["count"] == len(ns)
        for p in (50, 90, 99, 99.9):
            assert s[stats.label(p)] == pytest.approx(nearest_rank(ns, p), rel=1e-12), (name, p)
        assert s["max"] == pytest.approx(max(ns), rel=1e-12)


def test_notes_count_unmatched_records_and_nothing_else(built):
    _, scenario, _, metrics = built
    for name, m in metrics.items():
        assert m.notes == scenario.expected_notes.get(name, {}), name


def test_throughput_counts_every_hop_record(built):
    _, scenario, run, _ = built
    tp = analysis.throughput(run)
    assert set(tp.per_second) == set(scenario.hop_counts)
    for point, count in scenario.hop_counts.items():
        assert round(float(tp.per_second[point].sum() * tp.bin_s)) == count, point


def test_cli_writes_the_html_and_prints_the_table(synthetic_run):
    run_dir, scenario = synthetic_run
    rate = run_rate(scenario)
    done = subprocess.run([sys.executable, "-m", "tools.report", str(run_dir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"TSC rate used: {rate:.6f} ticks/ns" in done.stdout
    for name in ("tick_to_trade", "venue_tick_to_trade", "order_round_trip", "fn_book_add"):
        ticks = scenario.expected_ticks.get(name) or scenario.timer_ticks[name]
        ns = [t / rate for t in ticks]
        row = next(line for line in done.stdout.splitlines() if f" {name} " in f" {line} ")
        fields = row.split()
        idx = fields.index(name)
        count, p50, p90, p99, p999, mx = fields[idx + 1 : idx + 7]
        assert int(count) == len(ns)
        assert p50 == f"{nearest_rank(ns, 50):.1f}" and p99 == f"{nearest_rank(ns, 99):.1f}"
        assert p90 == f"{nearest_rank(ns, 90):.1f}" and p999 == f"{nearest_rank(ns, 99.9):.1f}"
        assert mx == f"{max(ns):.1f}"
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert f"{rate:.6f} ticks per ns" in html
    bundle = plotly.offline.get_plotlyjs()
    assert html.count(bundle) == 1, "plotly.js is inlined once"
    ours = html.replace(bundle, "")
    assert "src=" not in ours and "<link" not in ours and "http" not in ours, "the page must load nothing"
    assert ours.count("Plotly.newPlot") >= len([t for t in scenario.expected_ticks.values() if t])
    for name in scenario.expected_ticks:
        assert name.replace(">", "&gt;") in html, name


def test_a_file_cut_short_is_reported_with_a_warning(fixture_binary, tmp_path):
    run_dir = tmp_path / "run"
    scenario = synthetic.make(run_dir, packets=60)
    write_run(fixture_binary, run_dir, scenario)
    trader = Path(scenario.files[1])
    data = trader.read_bytes()
    trader.write_bytes(data[: len(data) - 200])  # footer and trailer gone, a record torn
    out, table, _ = report.build(run_dir)
    assert out.exists()
    assert f"warning: {trader.name}: no trailer" in table
    f = ntt.read_file(trader)
    assert f.trailer is None
    assert f.records.size == (len(data) - 200 - (128 + 32 * len(f.points))) // 32


def test_unreportable_runs_exit_2_with_the_reason(tmp_path, fixture_binary):
    def cli(run_dir):
        return subprocess.run([sys.executable, "-m", "tools.report", str(run_dir)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)

    missing = cli(tmp_path / "nope")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    (tmp_path / "empty" / "telemetry").mkdir(parents=True)
    empty = cli(tmp_path / "empty")
    assert empty.returncode == 2 and "no telemetry files" in empty.stderr
    run_dir = tmp_path / "bad"
    scenario = synthetic.make(run_dir, packets=5)
    write_run(fixture_binary, run_dir, scenario)
    bad = Path(scenario.files[0])
    bad.write_bytes(b"XXXXXXXX" + bad.read_bytes()[8:])
    broken = cli(run_dir)
    assert broken.returncode == 2 and bad.name in broken.stderr and "bad magic" in broken.stderr


def test_stage_split_sums_each_stage_over_the_engine_steps():
    def timer(name, values):
        v = np.array(values, dtype=np.float64)
        return analysis.Metric("function", name, "", v, np.zeros(v.size))

    # Four engine steps: two new orders (checked), two cancels; one trade.
    metrics = [timer("fn_pre_trade", [10, 30]), timer("fn_matching", [100, 200, 50, 50]),
               timer("fn_settlement", [5, 15, 5, 5]), timer("fn_ledger", [40]), timer("fn_sequencer", [999])]
    got = {s.name: s for s in analysis.stage_split(metrics)}
    assert list(got) == ["pre-trade", "matching", "settlement", "trade ledger"]
    whole = 40 + 400 + 30 + 40
    for name, total, calls in (("pre-trade", 40, 2), ("matching", 400, 4), ("settlement", 30, 4), ("trade ledger", 40, 1)):
        assert got[name].calls == calls
        assert got[name].per_step_ns == pytest.approx(total / 4)
        assert got[name].share == pytest.approx(total / whole)
        assert got[name].mean_ns == pytest.approx(total / calls)
    # A run without the stage timers (no exchange file, or an older exchange) has no split.
    assert analysis.stage_split([timer("fn_sequencer", [1])]) == []
    # Without a ledger the stage is there, empty.
    no_ledger = {s.name: s for s in analysis.stage_split(metrics[:3])}
    assert no_ledger["trade ledger"].calls == 0 and no_ledger["trade ledger"].share == 0


def test_the_paths_take_every_complete_message_and_the_median_one(built):
    from . import paths
    _, scenario, run, _ = built
    rate = run_rate(scenario)
    order = paths.order_path(run)
    assert order.complete == len(scenario.expected_ticks["order_round_trip"]) and order.incomplete == 0
    md = paths.md_path(run)
    assert md.complete == len(scenario.expected_ticks["exchange_reaction_time"])
    # The median market data path's first five segments are the exchange's reaction time of one order.
    reaction = sorted(np.array(scenario.expected_ticks["exchange_reaction_time"]) / rate)
    assert any(abs(md.median_order_ns[:5].sum() - r) < 1e-6 for r in reaction)
    assert order.total_ns == pytest.approx(float(order.median_order_ns.sum()))
