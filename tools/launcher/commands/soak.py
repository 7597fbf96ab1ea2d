"""./nanotick soak: the chaos soak (tests/integration/trader/test_soak.py)."""

from __future__ import annotations

import os
import subprocess
from typing import List

from .. import presets, provision
from ..context import BUILD_ROOT, ROOT, VENV_PYTHON, die
from ..options import CommandParser, matching, whole_number

DEFAULT_MINUTES = 10
SOAK_PROGRAMS = ("nanotick-exchange", "nanotick-trader", "nanotick-journal", "nanotick-ledger")

USAGE = f"""\
usage: ./nanotick soak [--minutes N] [--seed S] [--bin-dir DIR]

Builds the release preset and runs the chaos soak (tests/integration/trader/
test_soak.py) for N minutes (default {DEFAULT_MINUTES}) and at least 3 exchange kills: the
exchange under load from two checking clients and two traders, the exchange
and the traders killed with SIGKILL at random moments and restarted; after
every exchange restart nothing acknowledged may be lost, every sequence
continues without gap or repeat and the recovered books equal a replay of the
journal; at the end every ack and fill the exchange sent the traders is
checked against the final journal and trade ledger (docs/RELIABILITY.md
"Chaos soak"). Prints every kill's figures and a summary, also written to
build/soak-report.json; the last run's journal, ledger and recorded reports
stay in build/soak/. './nanotick test' runs it for 30 s.
--seed S repeats a run's kill schedule (the load's timing still varies).
--bin-dir DIR runs the programs in DIR (nanotick-exchange, -trader, -journal,
-ledger) instead of building: a copy of build/release/bin keeps a long soak's
binaries fixed while the tree is rebuilt."""


def run(args: List[str]) -> int:
    parser = CommandParser("soak", USAGE)
    parser.add("--minutes", type=whole_number(5), default=DEFAULT_MINUTES, needs="a whole number from 1")
    parser.add("--seed", type=matching("[0-9]{1,18}"), needs="a whole number")  # kept as typed
    parser.add("--bin-dir", type=matching(".+"), needs="a directory")
    options = parser.parse(args)
    provision.setup_for("full")  # pytest drives the soak
    env = dict(os.environ)
    if options.bin_dir is not None:
        bin_dir = os.path.abspath(options.bin_dir)
        if not os.path.isdir(bin_dir):
            die("--bin-dir: no such directory")
        for program in SOAK_PROGRAMS:
            if not os.access(os.path.join(bin_dir, program), os.X_OK):
                die(f"--bin-dir {bin_dir}: {program} missing (copy build/release/bin there)")
        env["NANOTICK_EXCHANGE"] = os.path.join(bin_dir, "nanotick-exchange")
        env["NANOTICK_TRADER"] = os.path.join(bin_dir, "nanotick-trader")
    else:
        presets.build_preset("release", ["nanotick-apps"], scope="run")
    if options.seed is not None:
        env["NANOTICK_TEST_SEED"] = str(options.seed)
    env["NANOTICK_SOAK_SECONDS"] = str(options.minutes * 60)
    env["NANOTICK_SOAK_REPORT"] = str(BUILD_ROOT / "soak-report.json")
    argv = [str(VENV_PYTHON), "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--basetemp",
            str(BUILD_ROOT / "soak"), "tests/integration/trader/test_soak.py"]
    if subprocess.run(argv, cwd=ROOT, env=env).returncode != 0:
        die("the soak failed (its journal, ledger and the traders' reports are in build/soak/)")
    return 0
