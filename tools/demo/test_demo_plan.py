"""Tests of what the demo decides (demo_plan.py) before it starts a process: options checked,
binaries found (or the user told to build), --telemetry passed only to a
binary whose --help offers it, and a run directory that is new or empty.
Stand-in binaries are small shell scripts written by the test.
"""

from __future__ import annotations

import pathlib

import pytest

from tools.demo import demo_plan
from tools.demo.demo_errors import EXIT_CANNOT_START, DemoError


def fake_binary(path: pathlib.Path, help_text: str, code: int = 0) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{help_text}\nEOF\nexit {code}\n")
    path.chmod(0o755)
    return path


def test_options_are_checked():
    args = demo_plan.parse_args(["--duration", "3", "--traders", "mm1"])
    assert args.duration == 3.0 and args.traders == "mm1" and not args.no_report
    for bad in (["--duration", "0"], ["--duration", "-1"], ["--status-every", "0.1"]):
        with pytest.raises(SystemExit) as e:
            demo_plan.parse_args(bad)
        assert e.value.code == 2


def test_missing_binary_says_to_build(tmp_path):
    with pytest.raises(DemoError) as e:
        demo_plan.find_binary(tmp_path / "bin", "nanotick-exchange")
    assert e.value.exit_code == EXIT_CANNOT_START
    assert str(tmp_path / "bin" / "nanotick-exchange") in str(e.value) and "./nanotick build" in str(e.value)
    not_executable = tmp_path / "bin" / "nanotick-trader"
    not_executable.parent.mkdir(parents=True, exist_ok=True)
    not_executable.write_text("")
    with pytest.raises(DemoError):
        demo_plan.find_binary(tmp_path / "bin", "nanotick-trader")


def test_telemetry_is_passed_only_when_the_help_lists_it(tmp_path):
    with_it = fake_binary(tmp_path / "a", "Options:\n  --config TEXT\n  --telemetry DIR   write telemetry")
    without = fake_binary(tmp_path / "b", "Options:\n  --config TEXT\n  --status FLOAT")
    assert demo_plan.offers_telemetry(with_it) is True
    assert demo_plan.offers_telemetry(without) is False


def test_a_binary_that_cannot_show_its_help_is_a_broken_build(tmp_path):
    broken = fake_binary(tmp_path / "c", "error while loading shared libraries", code=127)
    with pytest.raises(DemoError) as e:
        demo_plan.offers_telemetry(broken)
    assert "exited with code 127" in str(e.value) and "./nanotick build" in str(e.value)


def test_run_dir_must_be_new_or_empty(tmp_path):
    fresh = demo_plan.make_run_dir(tmp_path, tmp_path / "new")
    assert sorted(p.name for p in fresh.iterdir()) == ["configs", "counters", "journal", "logs", "telemetry"]
    with pytest.raises(DemoError) as e:
        demo_plan.make_run_dir(tmp_path, fresh)  # not empty any more: a journal there would be recovered
    assert e.value.exit_code == EXIT_CANNOT_START and "not an empty directory" in str(e.value)
    (tmp_path / "empty").mkdir()
    assert demo_plan.make_run_dir(tmp_path, tmp_path / "empty") == tmp_path / "empty"


def test_run_dir_and_its_subdirectories_are_the_owners_alone(tmp_path):
    # Issue 30: the run holds the clients' order flow and the traders' keys.
    for run in (demo_plan.make_run_dir(tmp_path, None), demo_plan.make_run_dir(tmp_path, tmp_path / "given")):
        assert run.stat().st_mode & 0o777 == 0o700, oct(run.stat().st_mode)
        for sub in ("configs", "logs", "counters", "telemetry", "journal"):
            assert (run / sub).stat().st_mode & 0o777 == 0o700, (sub, oct((run / sub).stat().st_mode))
    empty = tmp_path / "empty-0755"
    empty.mkdir(mode=0o755)
    assert demo_plan.make_run_dir(tmp_path, empty).stat().st_mode & 0o777 == 0o700


def test_a_childs_log_and_counters_files_are_created_0600(tmp_path):
    from tools.demo import demo_process
    child = demo_process.Child("echo", ["/bin/sh", "-c", "echo order-flow >&2; echo k 1"], tmp_path,
                               tmp_path / "echo.log", tmp_path / "echo.txt")
    assert child.wait(10) == 0
    for path in (tmp_path / "echo.log", tmp_path / "echo.txt"):
        assert path.stat().st_mode & 0o777 == 0o600, (path, oct(path.stat().st_mode))
    assert (tmp_path / "echo.log").read_text() == "order-flow\n"


def test_default_run_dirs_never_collide(tmp_path):
    first = demo_plan.make_run_dir(tmp_path, None)
    second = demo_plan.make_run_dir(tmp_path, None)
    assert first.parent == second.parent == tmp_path / "runs"
    assert first != second
