"""The report as a person sees it: report.html opened in headless Chromium
(the Debian package `chromium`) must render every chart with no console
error, and its screenshot must show the charts (not a blank page).

Skipped, saying why, only when chromium is not installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import plotly.offline
import pytest
from PIL import Image

from . import paths, report, synthetic
from .conftest import write_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 1400, 3600
BAR_RGB = (0x4C, 0x78, 0xA8)   # page.py: distribution bars and samples
MEAN_RGB = (0xE4, 0x57, 0x56)  # page.py: rolling mean line

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian package 'chromium', installed by ./nanotick setup): "
           "the rendered report cannot be checked",
)


def chromium(tmp_path: Path, page: Path, *mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--enable-logging=stderr", "--v=0", f"--window-size={WIDTH},{HEIGHT}",
         "--virtual-time-budget=15000", *mode, page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )


LOAD_STEPS = 5


@pytest.fixture(scope="module")
def rendered(fixture_binary, tmp_path_factory):
    """One report for every test here (rendering it and starting Chromium are this file's cost)."""
    tmp_path = tmp_path_factory.mktemp("browser")
    run_dir = tmp_path / "run"
    scenario = synthetic.make(run_dir, packets=150)
    write_run(fixture_binary, run_dir, scenario)
    # A load test's result beside the telemetry: its curve joins the report.
    steps = [{"offered_per_s": 1000.0 * 2 ** i, "achieved_per_s": 1000.0 * 2 ** i, "scheduled": 1000, "answered": 1000,
              "p50_ns": 2e4 * (i + 1), "p99_ns": 9e4 * (i + 1), "p99_9_ns": 2e5 * (i + 1), "max_ns": 5e5 * (i + 1),
              "saturated": None} for i in range(LOAD_STEPS)]
    (run_dir / "loadtest.json").write_text(json.dumps({"idle": "backoff", "sessions": 4, "transport": "tcp",
                                                       "knee_per_s": 8000.0, "steps": steps}))
    out, _, _ = report.build(run_dir)
    return tmp_path, out


def console_messages(stderr: str):
    # Chromium logs every console message (log, warning, error, uncaught
    # exception) as 'INFO:CONSOLE(line)] "text", source: url (line)'.
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def points_in(dom: str, div_id: str) -> int:
    """Data points plotly drew in the figure `div_id` (bars and markers are each a class="point" element)."""
    start = dom.index(f'id="{div_id}"')
    end = dom.find('class="plotly-graph-div', dom.index('class="plotly-graph-div', start) + 1)
    return dom[start:end if end != -1 else len(dom)].count('class="point"')


def test_every_chart_renders_without_console_errors(rendered):
    tmp_path, page = rendered
    figures = page.read_text(encoding="utf-8").replace(plotly.offline.get_plotlyjs(), "").count("Plotly.newPlot")
    assert figures > 10
    done = chromium(tmp_path, page, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    # Plotly replaces each figure's empty div by a plot container with SVG.
    assert len(re.findall(r'class="[^"]*plot-container', done.stdout)) == figures
    assert done.stdout.count('class="main-svg"') >= figures
    # The new charts draw every point: the stacked paths one bar per segment in each of their two rows, the
    # load curve p50, p99, p99.9 and max at every offered rate.
    dom = done.stdout
    assert points_in(dom, "order-path") == 2 * len(paths.ORDER_HOPS[1:])
    assert points_in(dom, "market-data-path") == 2 * (len(paths.MD_HOPS[1:]) + 1)
    assert points_in(dom, "load-curve") == 4 * LOAD_STEPS


def test_screenshot_shows_the_charts(rendered):
    tmp_path, page = rendered
    shot = tmp_path / "report.png"
    done = chromium(tmp_path, page, f"--screenshot={shot}")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    pixels = np.asarray(image, dtype=np.int16).reshape(-1, 3)
    non_white = int((pixels.sum(axis=1) < 720).sum())
    assert non_white > 0.03 * len(pixels), f"only {non_white} non-white pixels: the page looks blank"

    def near(rgb):
        return int((np.abs(pixels - np.array(rgb, dtype=np.int16)) <= 12).all(axis=1).sum())

    assert near(BAR_RGB) > 2_000, "no distribution bars or samples drawn"
    assert near(MEAN_RGB) > 200, "no rolling-mean line drawn"
