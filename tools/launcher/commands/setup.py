"""./nanotick setup: installs ahead what the commands install themselves."""

from __future__ import annotations

from typing import List

from .. import provision
from ..options import CommandParser, matching

USAGE = """\
usage: ./nanotick setup [--for run|fix|full]

Installs what is missing (runs 'apt-get update' and 'apt-get install' when
root; prints the exact command and fails otherwise), then the Python venv in
build/venv. Each command installs what it needs itself; this one is for
doing it ahead:
  --for run    building and running the venue, the traders and the tools
               (what ./nanotick demo, exchange, trader, loadtest, report...
               install): a compiler, CMake, five libraries, Python
  --for fix    run, plus the FIX gateway: QuickFIX, Maven and a JDK for
               FIX44.xml and the FIX tests' client (fix-gateway, fix-bench)
  --for full   everything (the default; test, bench, build, fuzz, soak):
               GoogleTest, Google Benchmark and the peers the benchmarks
               measure, clang-16 and libFuzzer, clang-format-16, Chromium,
               iproute2 and nftables, pytest
Idempotent: does nothing when all is in place. What apt, pip and Maven print
goes to build/logs/, named on the screen."""


def run(args: List[str]) -> int:
    parser = CommandParser("setup", USAGE)
    parser.add("--for", dest="profile", default="full", type=matching("run|fix|full"), needs="run, fix or full")
    options = parser.parse(args)
    provision.setup_for(options.profile)
    return 0
