"""The report beside the loopback floor (floor.py): with RUN_DIR/counters/
floor.txt the printed table and report.html get the "beside the loopback
floor" block, whose figures are checked here against values computed
independently -- ours from the synthetic run's chosen ticks over the rate in
the files' headers (nearest rank, as test_report_numbers.py), the floor's
from the file the test wrote, the ratios from both. Without the file (an
older run dir) there is no block; a floor file missing a floor's keys shows
"n/a" for it. The demo's block (block_for_run) is the same text.
"""

from __future__ import annotations

import re

from . import floor, report
from .test_report_numbers import nearest_rank, run_rate

FLOOR_T2T = {"count": 5000, "p50": 2100, "p99": 7700, "p99.9": 15000, "max": 42000}
FLOOR_RT = {"count": 900, "p50": 11000, "p99": 33000, "p99.9": 61000, "max": 250000}


def write_floor(run_dir, t2t=FLOOR_T2T, rt=FLOOR_RT, shm=None) -> None:
    lines = [] if shm is None else [f"floor.order_entry_shm {int(shm)}"]
    for prefix, f in (("tick_to_trade_floor", t2t), ("round_trip_floor", rt)):
        if f is None:
            continue
        lines.append(f"{prefix}.count {f['count']}")
        lines += [f"{prefix}.{c}_ns {f[c]}" for c in ("p50", "p99", "p99.9", "max")]
        lines.append(f"{prefix}.p90_ns {f['p50']}")
    (run_dir / "counters").mkdir(exist_ok=True)
    (run_dir / "counters" / "floor.txt").write_text("\n".join(lines) + "\n")


def block_rows(table: str):
    """The block's rows: label -> cells (count, p50, p99, p99.9, max)."""
    start = table.index(floor.TITLE)
    rows = {}
    for line in table[start:].splitlines()[2:]:
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) > 1:
            rows.setdefault(parts[0], []).append(parts[1:])
    return rows


def test_the_block_puts_our_figures_beside_the_floor_with_ratios(synthetic_run):
    run_dir, scenario = synthetic_run
    write_floor(run_dir)
    rate = run_rate(scenario)
    out, _, block = report.build(run_dir)
    rows = block_rows(block)
    for metric, label, f_label, fl in (("tick_to_trade", "tick-to-trade (all traders)",
                                        "floor: multicast recv -> 64 B TCP write", FLOOR_T2T),
                                       ("order_round_trip", "order round trip (all traders)",
                                        "floor: TCP ping-pong, 40 B -> 96 B", FLOOR_RT)):
        ns = [t / rate for t in scenario.expected_ticks[metric]]
        want = {"p50": nearest_rank(ns, 50), "p99": nearest_rank(ns, 99), "p99.9": nearest_rank(ns, 99.9),
                "max": max(ns)}
        assert rows[label][0] == [str(len(ns))] + [f"{want[c] / 1000:.2f}" for c in ("p50", "p99", "p99.9", "max")]
        assert rows[f_label][0] == [str(fl["count"])] + [f"{fl[c] / 1000:.2f}" for c in ("p50", "p99", "p99.9", "max")]
    ratios = rows["ratio (ours / floor)"]
    assert len(ratios) == 2
    for cells, metric, fl in ((ratios[0], "tick_to_trade", FLOOR_T2T), (ratios[1], "order_round_trip", FLOOR_RT)):
        ns = [t / rate for t in scenario.expected_ticks[metric]]
        assert cells[0] == f"{nearest_rank(ns, 50) / fl['p50']:.1f}x"
        assert cells[1] == f"{nearest_rank(ns, 99) / fl['p99']:.1f}x"
    html = out.read_text(encoding="utf-8")
    assert "<h2>Beside the loopback floor (same run)</h2>" in html
    t2t_ns = [t / rate for t in scenario.expected_ticks["tick_to_trade"]]
    assert f"<td>{nearest_rank(t2t_ns, 50) / FLOOR_T2T['p50']:.1f}x</td>" in html
    # The demo's summary block: the same text, computed from the run directory alone.
    assert floor.block_for_run(run_dir) == block


def test_without_a_floor_file_there_is_no_block(synthetic_run):
    run_dir, _ = synthetic_run
    out, table, block = report.build(run_dir)
    assert block == "" and floor.TITLE not in table
    assert "Beside the loopback floor" not in out.read_text(encoding="utf-8")
    assert floor.block_for_run(run_dir) is None


def test_the_block_names_the_floors_transport(synthetic_run):
    run_dir, _ = synthetic_run
    write_floor(run_dir, shm=True)
    _, _, block = report.build(run_dir)
    rows = block_rows(block)
    assert "floor: shm ping-pong, 40 B -> 96 B" in rows and "floor: multicast recv -> 64 B shm write" in rows, rows.keys()
    write_floor(run_dir, shm=False)
    _, _, block = report.build(run_dir)
    assert "floor: TCP ping-pong, 40 B -> 96 B" in block_rows(block)


def test_a_floor_that_printed_half_its_summary_is_na(synthetic_run):
    run_dir, _ = synthetic_run
    write_floor(run_dir, rt=None)
    _, _, block = report.build(run_dir)
    rows = block_rows(block)
    assert rows["floor: TCP ping-pong, 40 B -> 96 B"][0] == ["n/a"] * 5
    assert rows["ratio (ours / floor)"][1] == ["n/a"] * 4
    assert rows["floor: multicast recv -> 64 B TCP write"][0][0] == str(FLOOR_T2T["count"])


def test_printed_output_has_the_block_and_the_path_but_table_only_has_neither(synthetic_run, capsys):
    # The demo runs the report with --table-only: it prints the floor block and the path itself.
    run_dir, _ = synthetic_run
    write_floor(run_dir)
    assert report.main([str(run_dir)]) == 0
    full = capsys.readouterr().out
    assert floor.TITLE in full and f"report: {run_dir / 'report.html'}" in full
    assert report.main([str(run_dir), "--table-only"]) == 0
    table = capsys.readouterr().out
    assert "TSC rate used" in table and floor.TITLE not in table and "report: " not in table
