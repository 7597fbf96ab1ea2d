"""The launcher's parts below the commands: build scopes, apt's refusal when
not root, the log and the progress lines, the venv's stamps (tools/launcher)."""

from __future__ import annotations

import io
import subprocess

import pytest

from tools.launcher import logs, packages, presets, venv
from tools.launcher.context import Fail


@pytest.fixture
def build_root(monkeypatch, tmp_path):
    monkeypatch.setattr(presets, "BUILD_ROOT", tmp_path)
    monkeypatch.delenv("NANOTICK_WERROR", raising=False)
    monkeypatch.delenv("CI", raising=False)
    return tmp_path


def configured(build_root, preset, *lines):
    (build_root / preset).mkdir()
    (build_root / preset / "CMakeCache.txt").write_text("\n".join(lines) + "\n")


def test_a_scope_is_read_from_the_cache(build_root):
    assert presets.configured_scope("release") == "none"
    configured(build_root, "release", "NANOTICK_BUILD_TESTS:BOOL=OFF", "NANOTICK_WITH_FIX:BOOL=OFF")
    assert presets.configured_scope("release") == "run"
    configured(build_root, "debug", "NANOTICK_BUILD_TESTS:BOOL=ON")
    assert presets.configured_scope("debug") == "full"


def test_a_scope_only_widens(build_root):
    configured(build_root, "release", "NANOTICK_BUILD_TESTS:BOOL=ON")
    args = presets.configure_args("release", scope="run")
    assert "-DNANOTICK_BUILD_TESTS=ON" in args and "-DNANOTICK_WITH_FIX=ON" in args
    args = presets.configure_args("debug", scope="fix")
    assert "-DNANOTICK_BUILD_TESTS=OFF" in args and "-DNANOTICK_WITH_FIX=ON" in args


def test_sanitizer_presets_take_no_scope(build_root):
    args = presets.configure_args("asan", sets="unit", bench_lto="OFF")
    assert args == ["cmake", "--preset", "asan", "-DNANOTICK_WERROR=OFF", "-DNANOTICK_TEST_SETS=unit",
                    "-DNANOTICK_BENCH_LTO=OFF"]


@pytest.mark.parametrize("env, want", [({}, "OFF"), ({"CI": "true"}, "ON"), ({"CI": "1"}, "OFF"),
                                       ({"CI": "true", "NANOTICK_WERROR": "OFF"}, "OFF"),
                                       ({"NANOTICK_WERROR": "ON"}, "ON")])
def test_warnings_are_errors_in_ci(build_root, monkeypatch, env, want):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert f"-DNANOTICK_WERROR={want}" in presets.configure_args("tsan")


def test_an_unknown_preset_is_refused():
    with pytest.raises(Fail, match="unknown preset 'bogus'"):
        presets.build_preset("bogus")


def test_missing_packages_not_as_root_names_the_command(monkeypatch):
    monkeypatch.setattr(packages, "missing", lambda names: ["libfoo-dev", "cmake"])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 1000)
    with pytest.raises(Fail) as failed:
        packages.install(["cmake", "libfoo-dev"])
    assert "sudo apt-get update && sudo apt-get install -y libfoo-dev cmake" in failed.value.message


def test_the_groups_widen():
    run, fix, full = (packages.for_profile(p) for p in packages.PROFILES)
    assert set(run) < set(fix) < set(full) and "python3-venv" in run and "clang-format-16" in full


def test_progress_without_a_terminal_is_a_line_per_tenth():
    out = io.StringIO()
    progress = logs.Progress("nanotick: build release", False, out)
    for n in range(1, 41):
        progress.line(f"[{n}/40] Building CXX object x.o")
    progress.line("not a progress line")
    progress.end()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[0] == "nanotick: build release: 4/40" and lines[-1].endswith("40/40")


def test_progress_on_a_terminal_redraws_one_line():
    out = io.StringIO()
    progress = logs.Progress("nanotick: build asan", True, out)
    progress.line("[1/2] a")
    progress.line("[2/2] b")
    progress.end()
    assert out.getvalue() == "\rnanotick: build asan: 1/2\rnanotick: build asan: 2/2\n"


def test_a_failed_build_shows_its_warnings_and_failed_steps(capsys):
    lines = ["[1/3] ok", "x.cpp:1:2: warning: unused [-Wunused]", "[2/3] y", "FAILED: y.o", "y.cpp:3: error: no",
             "ninja: build stopped"]
    logs.build_report("release", lines, ok=False)
    err = capsys.readouterr().err
    assert "build release: 1 warning(s):\nx.cpp:1:2: warning: unused" in err
    assert err.endswith("FAILED: y.o\ny.cpp:3: error: no\nninja: build stopped\n")


def test_a_stage_logs_its_output_and_shows_the_tail_when_it_fails(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(logs, "BUILD_ROOT", tmp_path)
    monkeypatch.setattr(logs, "_path", None)
    monkeypatch.setattr(logs, "_command", "setup")
    assert logs.stage_command("say hello", ["sh", "-c", "echo hello"])
    assert not logs.stage_command("fail", ["sh", "-c", "echo broken; exit 3"])
    log = logs.ensure_log()
    assert log.parent == tmp_path / "logs" and log.name.startswith("setup-")
    text = log.read_text()
    assert "=== say hello: sh -c echo hello\nhello\n" in text and "broken" in text
    err = capsys.readouterr().err
    assert "nanotick: say hello: done in" in err
    assert "broken\nnanotick: fail: FAILED after" in err and f"(full log: {log})" in err


def test_the_venv_stamp_is_sha256sum_of_the_requirements():
    done = subprocess.run(f"cat {venv.REQUIREMENTS} {venv.REQUIREMENTS_TEST} | sha256sum", shell=True,
                          capture_output=True, text=True)
    assert venv._sha256(venv.REQUIREMENTS, venv.REQUIREMENTS_TEST) == done.stdout.split()[0]
