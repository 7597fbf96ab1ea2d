"""pytest fixtures of the report's tests: the fixture writer binary and a
synthetic run written through it (synthetic.py). Each test gets its own
temporary run directory. Not thread-safe (one test at a time).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from . import synthetic

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_BINARY = ROOT / "build" / "release" / "bin" / "nanotick-telemetry-fixture"


@pytest.fixture(scope="session")
def fixture_binary() -> Path:
    if not FIXTURE_BINARY.exists():
        message = (f"{FIXTURE_BINARY} is missing: build it with "
                   "'cmake --build build/release --target nanotick-telemetry-fixture'")
        if os.environ.get("CI") == "true":
            pytest.fail(message)  # CI builds everything first: missing is a failure there
        pytest.skip(message)
    return FIXTURE_BINARY


def write_run(binary: Path, run_dir: Path, scenario: synthetic.Scenario) -> None:
    (run_dir / "telemetry").mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(binary)], input=scenario.script, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, f"fixture writer failed: {done.stderr}"


@pytest.fixture
def synthetic_run(fixture_binary, tmp_path):
    """(run_dir, scenario): a run written by the project's own telemetry Writer."""
    run_dir = tmp_path / "run"
    scenario = synthetic.make(run_dir)
    write_run(fixture_binary, run_dir, scenario)
    return run_dir, scenario
