"""`./nanotick <command>`: the command table, the top-level help, dispatch."""

from __future__ import annotations

import os
import sys
from typing import Callable, List, NamedTuple, Optional

from . import logs
from .commands import apps, bench, build, format as format_cmd, fuzz, pytools, setup, soak, testing
from .context import Fail, Finished


class Command(NamedTuple):
    name: str
    summary: str  # its one line in ./nanotick --help
    run: Callable[[List[str]], Optional[int]]


COMMANDS = (
    Command("setup", "install missing Debian packages (apt-get, as root) and the Python venv", setup.run),
    Command("build", "configure and build one CMake preset (default: release)", build.run_build),
    Command("build-pgo", "build release with profile-guided optimisation: instrumented build, training, optimised build",
            build.run_build_pgo),
    Command("test", "build and run every test: format, release + ctest, ASan+UBSan, TSan, fuzz, pytest", testing.run),
    Command("bench", "build release and run the benchmarks, printing each table with its peers", bench.run),
    Command("gen", "build release and generate a seeded matching-engine workload file", apps.run_gen),
    Command("replay", "build release and replay a workload file through the matching engine", apps.run_replay),
    Command("credential", "build release and make a client API key with the hash the exchange config stores",
            apps.run_credential),
    Command("exchange", "build release and run the exchange server (config/exchange.toml by default)",
            apps.run_exchange),
    Command("fix-gateway", "build release and run the FIX 4.4 gateway in front of a running exchange "
            "(config/fix-gateway.toml)", apps.run_fix_gateway),
    Command("journal", "build release and verify, dump or repair an exchange journal directory", apps.run_journal),
    Command("ledger", "build release and list, filter, sum, verify or repair the venue's trade ledger",
            apps.run_ledger),
    Command("admin", "build release and act as the venue's admin: halt/resume, block/unblock, cancel-all, kill",
            apps.run_admin),
    Command("trader", "build release and run a trading client (--config config/trader-mm1.toml, ...)",
            apps.run_trader),
    Command("demo", "build release, run one exchange and four traders for 30 s, write a run directory",
            pytools.run_demo),
    Command("report", "write RUN_DIR/report.html (latency report) from a run directory's telemetry",
            pytools.run_report),
    Command("stat", "show the live counters of running processes from their counters files (--watch to follow)",
            pytools.run_stat),
    Command("loadtest", "build release and sweep the venue's latency against offered load, open-loop "
            "(docs/BENCHMARKS.md)", pytools.run_loadtest),
    Command("fix-bench", "build release and measure the FIX order round trip beside the binary one, same run "
            "(docs/BENCHMARKS.md)", pytools.run_fix_bench),
    Command("doctor", "check this machine and the configured thread pinning for low latency (docs/TUNING.md)",
            pytools.run_doctor),
    Command("fuzz", "build the libFuzzer targets (clang-16, ASan+UBSan) and fuzz every decoder of outside input",
            fuzz.run),
    Command("soak", "build release and run the chaos soak: the venue under load, exchange and traders killed at random",
            soak.run),
    Command("format", "format the C++ sources with clang-format-16 and .clang-format (--check to only list what "
            "differs)", format_cmd.run),
)
BY_NAME = {c.name: c for c in COMMANDS}


def usage() -> str:
    width = max(len(c.name) for c in COMMANDS) + 2
    lines = ["usage: ./nanotick <command> [options]", "", "commands:"]
    lines += [f"  {c.name.ljust(width)}{c.summary}" for c in COMMANDS]
    lines += ["", "Run './nanotick <command> --help' for the options of one command."]
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    # The bootstrap starts Python in the repository root (where `-m
    # tools.launcher` is found); the commands work in the caller's directory,
    # where the paths they are given are relative to.
    caller = os.environ.pop("NANOTICK_CALLER_DIR", "")
    if caller:
        try:
            os.chdir(caller)
        except OSError as e:
            print(f"nanotick: error: cannot return to {caller}: {e.strerror}", file=sys.stderr)
            return 1
    if not argv:
        sys.stdout.write(usage())
        return 2
    name, args = argv[0], argv[1:]
    if name in ("-h", "--help", "help"):
        sys.stdout.write(usage())
        return 0
    command = BY_NAME.get(name)
    if command is None:
        print(f"nanotick: unknown command '{name}'", file=sys.stderr)
        sys.stderr.write(usage())
        return 2
    logs.name_after(name)
    try:
        return command.run(args) or 0
    except Finished as e:
        return e.code
    except Fail as e:
        sys.stdout.flush()
        print(f"nanotick: error: {e.message}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("\nnanotick: interrupted", file=sys.stderr)
        return 130
