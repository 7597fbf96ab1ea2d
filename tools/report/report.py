"""nanotick latency report: reads RUN_DIR/telemetry/*.ntt, writes
RUN_DIR/report.html (self-contained) and prints the percentile table; when
the run measured the loopback floor (RUN_DIR/counters/floor.txt), both also
show the end-to-end figures beside it (floor.py).

    build/venv/bin/python -m tools.report RUN_DIR [--output FILE] [--quiet]

(run from the repository root; ./nanotick report RUN_DIR does this). Exit
status: 0 written, 2 when the run cannot be reported (no telemetry files, a
malformed file, files that do not share a clock), with one line saying why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from . import analysis, compare, floor, loadcurve, ntt, page, queues, stats


def text_table(run: analysis.Run, metrics: Sequence[analysis.Metric]) -> str:
    """The plain-text percentile table (ns) the demo prints."""
    cols = ["count"] + [stats.label(p) for p in stats.PERCENTILES] + ["max", "jitter"]
    name_w = max([len("metric")] + [len(m.name) for m in metrics])
    sec_w = max([len("section")] + [len(m.section) for m in metrics])
    lines = [
        f"TSC rate used: {run.ticks_per_ns:.6f} ticks/ns ({run.clock_source}; median of {len(run.files)} file(s))",
        f"{'section':<{sec_w}}  {'metric':<{name_w}}  " + "  ".join(f"{c:>10}" for c in cols)
        + "  (ns; jitter = p99 - p50)",
    ]
    for row in page.percentile_rows(metrics):
        cells = [f"{row['count']:>10}"] + [f"{_num(row[c]):>10}" for c in cols[1:]]
        notes = ", ".join(f"{v} {k}" for k, v in row["notes"].items())
        lines.append(f"{row['section']:<{sec_w}}  {row['metric']:<{name_w}}  " + "  ".join(cells)
                     + (f"  {notes}" if notes else ""))
    dropped = [f for f in run.files if f.trailer is not None and f.trailer.dropped]
    for f in dropped:
        lines.append(f"warning: {f.path.name}: {f.trailer.dropped} records dropped (rings full)")
    for f in run.files:
        if f.trailer is None:
            lines.append(f"warning: {f.path.name}: no trailer (the process did not stop cleanly); drops unknown")
    return "\n".join(lines)


def _num(v: float) -> str:
    if v != v:
        return "-"
    return f"{v:.1f}"


def build(run_dir: Path, output: Optional[Path] = None) -> tuple[Path, str, str]:
    """Writes the report; returns its path, the text table and the text of the block beside
    the loopback floor ("" when the run has none)."""
    out = output or Path(run_dir) / "report.html"
    load = loadcurve.read(run_dir)
    if load is not None and not list((Path(run_dir) / "telemetry").glob("*.ntt")):
        # A ./nanotick loadtest run: its curve is the whole report.
        out.write_text(loadcurve.page([load]), encoding="utf-8")
        return out, "", ""
    run = analysis.build_run(ntt.read_run(run_dir))
    metrics = analysis.all_metrics(run)
    beside = floor.block_for_metrics(Path(run_dir), metrics)
    out.write_text(page.render(str(run_dir), run, metrics, analysis.throughput(run),
                               floor.html_block(beside) if beside is not None else "",
                               loadcurve.section([load]) if load is not None else "",
                               queues.section(queues.read(run_dir))), encoding="utf-8")
    return out, text_table(run, metrics), floor.text_block(beside) if beside is not None else ""


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="./nanotick report", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, nargs="?", help="run directory holding telemetry/*.ntt")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("RUN_A", "RUN_B"),
                        help="put two runs side by side instead: every metric both have with B/A, and each one's "
                             "median order path; prints the table and writes RUN_B/compare.html (or --output)")
    parser.add_argument("--output", type=Path, help="HTML file to write (default RUN_DIR/report.html)")
    parser.add_argument("--quiet", action="store_true", help="do not print the percentile table")
    parser.add_argument("--table-only", action="store_true",
                        help="print the percentile table alone (the demo prints the floor block and the path itself)")
    args = parser.parse_args(argv)
    if args.compare is not None:
        if args.run_dir is not None:
            parser.error("give RUN_DIR or --compare RUN_A RUN_B, not both")
        return _compare(args.compare[0], args.compare[1], args.output)
    if args.run_dir is None:
        parser.error("RUN_DIR is required (or --compare RUN_A RUN_B)")
    try:
        out, table, beside = build(args.run_dir, args.output)
    except (ntt.NttError, analysis.ReportError) as e:
        print(f"nanotick report: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"nanotick report: error: cannot write the report: {e}", file=sys.stderr)
        return 2
    if args.table_only:
        print(table)
        return 0
    if not args.quiet:
        print(table + ("\n\n" + beside if beside else ""))
    print(f"report: {out}")
    return 0


def _compare(run_a: Path, run_b: Path, output: Optional[Path]) -> int:
    try:
        a, b = compare.read_side(run_a), compare.read_side(run_b)
    except (ntt.NttError, analysis.ReportError) as e:
        print(f"nanotick report: error: {e}", file=sys.stderr)
        return 2
    out = output or Path(run_b) / "compare.html"
    try:
        out.write_text(compare.render(a, b), encoding="utf-8")
    except OSError as e:
        print(f"nanotick report: error: cannot write the comparison: {e}", file=sys.stderr)
        return 2
    print(compare.text(a, b))
    print(f"comparison: {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover - `python -m tools.report` is the entry point
    sys.exit(main())
