"""The launcher's command line: help, unknown commands and bad options, with
nothing installed or built (tools/launcher; ./nanotick runs it)."""

from __future__ import annotations

import re
from typing import List

import pytest

from tools.launcher import cli, presets, provision
from tools.launcher.commands import fuzz


@pytest.fixture(autouse=True)
def nothing_installed_or_built(monkeypatch):
    """A test here that reached apt, pip or cmake is a bug: argument errors
    come first."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"reached setup or a build with {args} {kwargs}")

    for module, name in ((provision, "setup_for"), (provision, "venv_only"), (presets, "build_preset")):
        monkeypatch.setattr(module, name, refuse)


def run(capsys, *argv: str):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_command_prints_the_usage_and_exits_2(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and out.startswith("usage: ./nanotick <command>")


@pytest.mark.parametrize("flag", ["--help", "-h", "help"])
def test_help_lists_every_command_on_one_line(capsys, flag):
    code, out, _ = run(capsys, flag)
    assert code == 0
    body = out.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [re.match(r"  ([a-z-]+)  +\S", line).group(1) for line in body] == [c.name for c in cli.COMMANDS]


def test_every_command_is_listed_once():
    names = [c.name for c in cli.COMMANDS]
    assert len(names) == len(set(names))
    assert all(c.summary and "\n" not in c.summary for c in cli.COMMANDS)


def test_unknown_command_exits_2_with_the_usage_on_stderr(capsys):
    code, out, err = run(capsys, "frobnicate")
    assert code == 2 and out == ""
    assert err.startswith("nanotick: unknown command 'frobnicate'\nusage: ./nanotick <command>")


# Commands whose --help is the launcher's own text (the Python tools' is their own).
OWN_HELP = ["setup", "build", "build-pgo", "test", "bench", "gen", "replay", "credential", "exchange",
            "fix-gateway", "journal", "ledger", "admin", "trader", "fuzz", "soak", "format"]


@pytest.mark.parametrize("command", OWN_HELP)
def test_command_help(capsys, command):
    code, out, err = run(capsys, command, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: ./nanotick {command}")
    assert out.endswith("\n") and not out.endswith("\n\n")


def test_every_command_with_options_has_its_own_help():
    assert set(OWN_HELP) | {"demo", "report", "stat", "loadtest", "fix-bench", "doctor"} == set(cli.BY_NAME)


@pytest.mark.parametrize("argv, message", [
    (["setup", "extra"], "unknown setup option 'extra' (see ./nanotick setup --help)"),
    (["setup", "--for", "everything"], "--for needs run, fix or full (see ./nanotick setup --help)"),
    (["setup", "--for"], "--for needs run, fix or full"),
    (["test", "--bogus"], "unknown test option '--bogus' (see ./nanotick test --help)"),
    (["test", "--stress"], "--stress needs a whole number of items from 1"),
    (["test", "--stress", "12abc"], "--stress needs a whole number"),
    (["test", "--stress", "0"], "--stress needs a whole number"),
    (["test", "--stress", "-3"], "--stress needs a whole number"),
    (["test", "--stress", "1" * 20], "--stress needs a whole number"),
    (["test", "--quick=yes"], "--quick takes no value"),
    (["test", "--qu"], "unknown test option '--qu'"),  # no abbreviations
    (["bench", "--bogus"], "unknown bench option '--bogus'"),
    (["bench", "--filter"], "--filter needs a regex"),
    (["bench", "--filter", "("], "--filter '(' is not a valid regex"),
    (["bench", "--quick", "--record"], "--record keeps real runs only: drop --quick"),
    (["build", "release", "debug"], "build takes at most one preset (got: release debug)"),
    (["build", "bogus"], "unknown preset 'bogus' (choose release, debug, asan, tsan, pgo-train or pgo)"),
    (["build", "--bogus"], "unknown build option '--bogus'"),
    (["build-pgo", "--bogus"], "unknown build-pgo option '--bogus' (see ./nanotick build-pgo --help)"),
    (["gen"], "gen needs at least --out FILE"),
    (["replay"], "replay needs a workload file"),
    (["journal"], "journal needs verify, dump or repair"),
    (["ledger"], "ledger needs list, balances, verify or repair"),
    (["admin"], "admin needs --config, --admin-id and an action"),
    (["trader"], "trader needs --config FILE"),
    (["trader", "--duration", "5"], "trader needs --config FILE"),
    (["report"], "report needs RUN_DIR (a directory written by ./nanotick demo)"),
    (["fuzz", "bogus"], "unknown fuzz target 'bogus' (targets: "),
    (["fuzz", "--bogus"], "unknown fuzz option '--bogus'"),
    (["fuzz", "--seconds", "0"], "--seconds needs a whole number of seconds from 1"),
    (["fuzz", "--seconds"], "--seconds needs a whole number"),
    (["soak", "--minutes", "x"], "--minutes needs a whole number from 1"),
    (["soak", "--seed", "-1"], "--seed needs a whole number"),
    (["soak", "--bin-dir"], "--bin-dir needs a directory"),
    (["soak", "--bin-dir", ""], "--bin-dir needs a directory"),
    (["soak", "--bogus"], "unknown soak option '--bogus'"),
    (["format", "--bogus"], "unknown format option '--bogus'"),
    (["format", "--check", "no/such/file.cpp"], "no such file 'no/such/file.cpp'"),
])
def test_bad_input_exits_1_with_a_clear_error(capsys, argv: List[str], message: str):
    code, out, err = run(capsys, *argv)
    assert code == 1, (out, err)
    assert err.startswith("nanotick: error: ") and message in err, err


def test_fuzz_list_prints_the_fuzz_directory(capsys):
    code, out, _ = run(capsys, "fuzz", "--list")
    assert code == 0 and out.split() == fuzz.targets() and len(fuzz.targets()) > 0


def test_an_unknown_fuzz_target_names_the_known_ones(capsys):
    _, _, err = run(capsys, "fuzz", "bogus")
    assert " ".join(fuzz.targets()) + ")" in err
