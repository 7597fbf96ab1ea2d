"""Tests of demo_report.py with stand-in report generators written by the
test: no generator means "not available in this build"; a generator that
writes report.html succeeds and its stdout is kept; one that fails, writes
nothing or hangs is a failure that says so (the hanging one is killed).
"""

from __future__ import annotations

import pathlib
import sys

from tools.demo import demo_report as dr


def run_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    d = tmp_path / "run"
    (d / "logs").mkdir(parents=True)
    return d


def script(tmp_path: pathlib.Path, body: str) -> pathlib.Path:
    p = tmp_path / "report.py"
    p.write_text("import pathlib, sys, time\nrun = pathlib.Path(sys.argv[1])\n" + body)
    return p


def test_missing_generator_is_not_available(tmp_path):
    outcome = dr.make_report(tmp_path / "nope" / "report.py", run_dir(tmp_path))
    assert outcome.ok and outcome.line == dr.NOT_AVAILABLE == "report: not available in this build"


def test_generator_that_writes_the_report_succeeds(tmp_path):
    d = run_dir(tmp_path)
    s = script(tmp_path, "(run / 'report.html').write_text('<html></html>')\nprint('p50 1 us')\n"
                         "print('to stderr', file=sys.stderr)\n")
    outcome = dr.make_report(s, d, sys.executable)
    assert outcome.ok, outcome.line
    assert outcome.line == f"report: {d / 'report.html'}"
    assert outcome.text == "p50 1 us"
    assert (d / "logs" / "report.log").read_text().strip() == "to stderr"


def test_failing_generator_is_a_failure_with_its_last_lines(tmp_path):
    s = script(tmp_path, "print('no telemetry in', run, file=sys.stderr)\nsys.exit(3)\n")
    outcome = dr.make_report(s, run_dir(tmp_path), sys.executable)
    assert not outcome.ok
    assert "exited with code 3" in outcome.line and "no telemetry in" in outcome.line


def test_generator_that_writes_no_report_is_a_failure(tmp_path):
    outcome = dr.make_report(script(tmp_path, "pass\n"), run_dir(tmp_path), sys.executable)
    assert not outcome.ok and "wrote no" in outcome.line


def test_hanging_generator_is_killed_after_the_timeout(tmp_path):
    outcome = dr.make_report(script(tmp_path, "time.sleep(60)\n"), run_dir(tmp_path), sys.executable, timeout_s=0.5)
    assert not outcome.ok and "did not finish within" in outcome.line
