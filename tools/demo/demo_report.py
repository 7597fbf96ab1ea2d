"""The last step of a demo run: the latency report. Runs the report generator
(`python -m tools.report RUN_DIR` from the repository root; a plain script
is run as `script RUN_DIR` in the run directory) when this
build has it, with its output in logs/report.log, and says where report.html
is; a tree without the generator gets "report: not available in this build".

The generator runs bounded in time, in its own session, and is killed on any
exit path (subprocess.run kills it when the wait is interrupted).
Not thread-safe: called once, from the demo's main thread.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass
from typing import Optional

from tools.demo.demo_process import child_setup, describe_exit

NOT_AVAILABLE = "report: not available in this build"
REPORT_TIMEOUT_S = 300.0


@dataclass
class ReportOutcome:
    ok: bool
    line: str  # what the demo prints: where the report is, or why there is none
    text: str = ""  # the generator's stdout (its plain-text summary), printed by the demo


def make_report(script: pathlib.Path, run_dir: pathlib.Path, python: Optional[str] = None,
                timeout_s: float = REPORT_TIMEOUT_S) -> ReportOutcome:
    if not script.is_file():
        return ReportOutcome(True, NOT_AVAILABLE)
    run_dir = run_dir.resolve()
    log = run_dir / "logs" / "report.log"
    # --table-only: the demo prints the floor block and the report's path itself.
    args = [python or sys.executable, str(script), str(run_dir), "--table-only"]
    cwd = run_dir
    if (script.parent / "__main__.py").is_file():
        # tools/report is a package: `python -m tools.report RUN_DIR` from the repository root.
        cwd = script.parent.parent.parent
        args = [python or sys.executable, "-m", f"{script.parent.parent.name}.{script.parent.name}", str(run_dir),
                "--table-only"]
    try:
        with open(log, "wb") as err:
            done = subprocess.run(args, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=err, timeout=timeout_s, start_new_session=True,
                                  preexec_fn=child_setup(os.getpid()))
    except subprocess.TimeoutExpired:
        return ReportOutcome(False, f"report: {script} did not finish within {timeout_s:.0f} s (killed); see {log}")
    except OSError as e:
        return ReportOutcome(False, f"report: cannot run {script}: {e}")
    text = done.stdout.decode("utf-8", errors="replace").rstrip()
    html = run_dir / "report.html"
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        detail = "\n".join(f"    {line}" for line in tail) or "    (nothing on stderr)"
        return ReportOutcome(False, f"report: {script} {describe_exit(done.returncode)}; last lines of {log}:\n{detail}",
                             text)
    if not html.is_file():
        return ReportOutcome(False, f"report: {script} exited 0 but wrote no {html}; see {log}", text)
    return ReportOutcome(True, f"report: {html}", text)
