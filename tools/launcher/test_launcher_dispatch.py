"""What each command does, with apt, pip, cmake and the programs replaced by
recorders: which setup group, which preset and targets, which program with
which arguments and environment (tools/launcher)."""

from __future__ import annotations

import os
import pathlib
import subprocess
from typing import List

import pytest

from tools.launcher import cli, presets, provision
from tools.launcher.commands import apps, bench, format as format_cmd, fuzz, pytools, testing
from tools.launcher.context import ROOT, VENV_PYTHON


class Exec(Exception):
    """Stands for exec: the launcher would be gone, replaced by program."""

    def __init__(self, program, args, cwd) -> None:
        super().__init__(program)
        self.program, self.argv, self.cwd = str(program), [str(a) for a in args], cwd


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Records setup, builds, exec and subprocess.run; subprocess.run exits 0."""
    log: List[tuple] = []
    monkeypatch.setattr(provision, "setup_for", lambda profile: log.append(("setup", profile)))
    monkeypatch.setattr(provision, "venv_only", lambda: log.append(("venv",)))

    def build(preset, targets=(), scope="full", sets=None, bench_lto=None):
        log.append(("build", preset, list(targets), scope, sets, bench_lto))

    monkeypatch.setattr(presets, "build_preset", build)

    def exec_program(program, args, cwd=None):
        raise Exec(program, args, cwd)

    monkeypatch.setattr(apps, "exec_program", exec_program)
    monkeypatch.setattr(pytools, "exec_program", exec_program)

    def run(argv, **kwargs):
        log.append(("run", [str(a) for a in argv], kwargs.get("cwd"), kwargs.get("env")))
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(subprocess, "run", run)
    bin_dir = tmp_path / "release" / "bin"
    bin_dir.mkdir(parents=True)
    for app in ("trader", "fix-gateway", "exchange"):
        (bin_dir / f"nanotick-{app}").write_text("")
    monkeypatch.setattr(apps, "BUILD_ROOT", tmp_path)
    for var in ("NANOTICK_STRESS_ITEMS", "NANOTICK_FUZZ_SECONDS", "NANOTICK_CALLER_DIR", "PYTHONPATH"):
        monkeypatch.delenv(var, raising=False)
    return log


def of(log, kind):
    return [c for c in log if c[0] == kind]


def test_build_sets_up_everything_and_builds_all_of_release(calls):
    assert cli.main(["build"]) == 0
    assert calls == [("setup", "full"), ("build", "release", [], "full", "unit;concurrency", None)]


def test_build_of_a_sanitizer_preset(calls):
    assert cli.main(["build", "asan"]) == 0
    assert calls == [("setup", "full"), ("build", "asan", [], "full", None, None)]


def test_test_quick_builds_release_runs_ctest_and_pytest(calls, monkeypatch):
    monkeypatch.setattr(format_cmd, "enforced", lambda: False)
    assert cli.main(["test", "--quick", "--stress", "5000"]) == 0
    assert os.environ["NANOTICK_STRESS_ITEMS"] == "5000"
    assert of(calls, "build") == [("build", "release", [], "full", "unit;concurrency", "OFF")]
    runs = [c[1] for c in of(calls, "run")]
    assert runs[0][:3] == ["ctest", "--preset", "release"]
    assert runs[1][:4] == [str(VENV_PYTHON), "-m", "pytest", "-q"] and "not timing" in runs[1]
    assert runs[2][-3:] == ["--durations=12", "tools", "tests/integration"] and "timing" in runs[2]
    assert len(runs) == 3


def test_test_runs_format_sanitizers_and_fuzzing(calls, monkeypatch):
    checked, fuzzed = [], []
    monkeypatch.setattr(format_cmd, "enforced", lambda: True)
    monkeypatch.setattr(format_cmd, "run", lambda args: checked.append(args))
    monkeypatch.setattr(fuzz, "run", lambda args: fuzzed.append(args))
    monkeypatch.setenv("NANOTICK_FUZZ_SECONDS", "7")
    assert cli.main(["test"]) == 0
    assert checked == [["--check"]] and fuzzed == [["--seconds", "7"]]
    assert [c[1:3] for c in of(calls, "build")] == [("release", []), ("asan", []),
                                                    ("tsan", ["nanotick-tests-concurrency"])]
    ctest = [c[1][:3] + c[1][5:] for c in of(calls, "run") if c[1][0] == "ctest"]
    assert ctest == [["ctest", "--preset", "release"], ["ctest", "--preset", "asan", "-L", "unit"],
                     ["ctest", "--preset", "tsan", "-L", "concurrency"]]


def test_test_fuzzes_for_the_default_seconds_when_the_variable_is_empty(calls, monkeypatch):
    fuzzed = []
    monkeypatch.setattr(format_cmd, "enforced", lambda: False)
    monkeypatch.setattr(fuzz, "run", lambda args: fuzzed.append(args))
    monkeypatch.setenv("NANOTICK_FUZZ_SECONDS", "")
    assert cli.main(["test"]) == 0
    assert fuzzed == [["--seconds", str(testing.FUZZ_SECONDS)]]


def test_a_failing_ctest_fails_the_test_command(calls, monkeypatch, capsys):
    monkeypatch.setattr(format_cmd, "enforced", lambda: False)
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(argv, 8))
    assert cli.main(["test", "--quick"]) == 1
    assert "nanotick: error: tests failed in preset 'release'" in capsys.readouterr().err


def test_trader_builds_its_program_and_becomes_it(calls):
    with pytest.raises(Exec) as done:
        cli.main(["trader", "--config", "config/trader-mm1.toml", "--duration", "5"])
    assert calls == [("setup", "run"), ("build", "release", ["nanotick-trader"], "run", None, None)]
    assert done.value.program.endswith("release/bin/nanotick-trader")
    assert done.value.argv == ["--config", "config/trader-mm1.toml", "--duration", "5"]  # the caller's paths, as given
    assert done.value.cwd is None


@pytest.mark.parametrize("config", [["--config=x.toml"], ["-c", "x.toml"]])
def test_trader_takes_every_form_of_config(calls, config):
    with pytest.raises(Exec):
        cli.main(["trader", *config])


def test_trader_help_after_its_config_is_the_programs(calls):
    with pytest.raises(Exec) as done:
        cli.main(["trader", "--config", "x.toml", "--help"])
    assert done.value.argv[-1] == "--help"


def test_fix_gateway_gets_the_default_config_and_the_fix_packages(calls):
    with pytest.raises(Exec) as done:
        cli.main(["fix-gateway", "--idle", "spin"])
    assert calls == [("setup", "fix"), ("build", "release", ["nanotick-fix-gateway"], "fix", None, None)]
    assert done.value.argv == ["--config", str(ROOT / "config" / "fix-gateway.toml"), "--idle", "spin"]


def test_a_program_that_was_not_built_is_an_error(calls, capsys):
    assert cli.main(["gen", "--out", "x.bin"]) == 1
    assert "nanotick-gen was not built" in capsys.readouterr().err


def test_report_makes_the_callers_paths_absolute_and_runs_from_the_root(calls, tmp_path, monkeypatch):
    (tmp_path / "run1").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exec) as done:
        cli.main(["report", "run1", "--compare", "missing-dir"])
    assert calls == [("venv",)]
    assert done.value.program == str(VENV_PYTHON) and done.value.cwd == ROOT
    assert done.value.argv == ["-m", "tools.report", str(tmp_path / "run1"), "--compare", "missing-dir"]


@pytest.mark.parametrize("command, module", [("stat", "counters"), ("doctor", "doctor")])
def test_python_tools_need_only_the_venv(calls, command, module):
    with pytest.raises(Exec) as done:
        cli.main([command, "--json"])
    assert calls == [("venv",)] and done.value.argv == ["-m", f"tools.{module}", "--json"]


def test_loadtest_builds_the_programs_and_its_help_does_not(calls):
    with pytest.raises(Exec):
        cli.main(["loadtest", "--quick"])
    assert calls == [("setup", "run"), ("build", "release", ["nanotick-apps"], "run", None, None)]
    calls.clear()
    with pytest.raises(Exec) as done:
        cli.main(["loadtest", "--help"])
    assert calls == [("setup", "run")] and done.value.argv == ["-m", "tools.loadtest", "--help"]


def test_fix_bench_builds_with_the_fix_gateway(calls):
    with pytest.raises(Exec) as done:
        cli.main(["fix-bench", "--quick"])
    assert calls == [("setup", "fix"), ("build", "release", ["nanotick-apps"], "fix", None, None)]
    assert done.value.argv == ["-m", "tools.fixbench", "--quick"]


def test_demo_builds_its_programs_and_runs_in_the_callers_directory(calls):
    with pytest.raises(Exec) as done:
        cli.main(["demo", "--duration", "5"])
    assert calls == [("setup", "run"), ("build", "release", pytools.DEMO_PROGRAMS, "run", None, None)]
    assert done.value.cwd is None and str(ROOT) in os.environ["PYTHONPATH"].split(os.pathsep)
    args = done.value.argv
    assert args[args.index("-m"):] == ["-m", "tools.demo", "--root", str(ROOT), "--duration", "5"]


def test_soak_sets_its_length_seed_and_report(calls):
    assert cli.main(["soak", "--minutes", "2", "--seed", "0042"]) == 0
    assert of(calls, "build") == [("build", "release", ["nanotick-apps"], "run", None, None)]
    (_, argv, cwd, env), = of(calls, "run")
    assert argv[-1] == "tests/integration/trader/test_soak.py" and cwd == ROOT
    assert env["NANOTICK_SOAK_SECONDS"] == "120" and env["NANOTICK_TEST_SEED"] == "0042"


def test_soak_with_a_bin_dir_builds_nothing(calls, tmp_path, capsys):
    assert cli.main(["soak", "--bin-dir", str(tmp_path)]) == 1
    assert "nanotick-exchange missing" in capsys.readouterr().err
    for program in ("exchange", "trader", "journal", "ledger"):
        path = tmp_path / f"nanotick-{program}"
        path.write_text("")
        path.chmod(0o755)
    assert cli.main(["soak", "--bin-dir", str(tmp_path)]) == 0
    assert of(calls, "build") == []
    assert of(calls, "run")[0][3]["NANOTICK_EXCHANGE"] == str(tmp_path / "nanotick-exchange")


def test_bench_runs_the_matching_benchmarks(calls, tmp_path, monkeypatch):
    bench_dir = tmp_path / "release" / "bench"
    bench_dir.mkdir(parents=True)
    for name in ("ring_bench", "hash_map_bench"):
        (bench_dir / name).write_text("")
        (bench_dir / name).chmod(0o755)
    (bench_dir / "notes.txt").write_text("")
    monkeypatch.setattr(bench, "BUILD_ROOT", tmp_path)
    assert cli.main(["bench", "--quick", "--filter", "^ring"]) == 0
    assert of(calls, "build") == [("build", "release", [], "full", None, "ON")]
    assert [c[1] for c in of(calls, "run")] == [[str(bench_dir / "ring_bench"), "--quick"]]
    assert cli.main(["bench", "--filter", "nothing-matches"]) == 1


def test_bench_record_goes_through_benchdoc(calls, tmp_path, monkeypatch):
    bench_dir = tmp_path / "release" / "bench"
    bench_dir.mkdir(parents=True)
    (bench_dir / "ring_bench").write_text("")
    (bench_dir / "ring_bench").chmod(0o755)
    monkeypatch.setattr(bench, "BUILD_ROOT", tmp_path)
    assert cli.main(["bench", "--record"]) == 0
    runs = [c[1] for c in of(calls, "run")]
    assert runs[0][1:4] == ["-m", "tools.benchdoc", "record"]
    assert "./nanotick bench --filter '^ring_bench$' --record" in runs[0]
    assert [r[-1] for r in runs[1:]] == ["docs/BENCHMARKS.md", "README.md"]


def test_the_commands_work_in_the_callers_directory(calls, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NANOTICK_CALLER_DIR", str(tmp_path))
    assert cli.main(["build", "debug"]) == 0
    assert pathlib.Path.cwd() == tmp_path and "NANOTICK_CALLER_DIR" not in os.environ
