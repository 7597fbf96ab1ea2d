"""What the demo (tools/demo/demo.py) decides before it starts a process: its
options, the binaries it needs (and whether they take --telemetry), the run
directory, the configs it copies there and the thread layout. Any problem is a
DemoError with exit code 2: nothing was started.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import subprocess
from dataclasses import dataclass
from typing import Dict, List, Optional

from tools.demo.demo_config import (MD_SHM_SOCKET, TRANSPORTS, ExchangeSpec, TraderSpec, load_exchange, load_traders,
                                    shm_path_for, write_exchange_copy)
from tools.demo.demo_errors import EXIT_CANNOT_START, DemoError
from tools.demo.demo_process import describe_exit
from tools.doctor.layout import LAYOUTS, Layout, choose_layout
from tools.doctor.machine import Machine
from tools.doctor.roles import RolesUnavailable, roles_of

DEFAULT_TRADERS = "mm1,mm2,taker,random"


def repo_root() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parents[2]


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="./nanotick demo",
        description="Runs one exchange and a set of traders on loopback, shows their live status, stops them "
                    "cleanly and writes a run directory (configs, logs, counters, telemetry, report.html).",
        epilog="Exit codes: 0 success, 1 failure while running, 2 nothing started (bad option, config or build), "
               "130 Ctrl-C. Every process the demo starts is stopped on every exit path.")
    p.add_argument("--root", type=pathlib.Path, default=repo_root(),
                   help="the nanotick repository (default: the one this script is in)")
    p.add_argument("--duration", type=float, default=30.0, metavar="S",
                   help="seconds of trading once every trader is ready (default 30)")
    p.add_argument("--traders", default=DEFAULT_TRADERS, metavar="LIST",
                   help="comma-separated names of config/trader-<name>.toml, or paths to trader configs "
                        f"(default {DEFAULT_TRADERS})")
    p.add_argument("--config", type=pathlib.Path, default=None, metavar="EXCHANGE_TOML",
                   help="exchange config (default ROOT/config/exchange.toml); its clients and instruments must be "
                        "the traders'")
    p.add_argument("--run-dir", type=pathlib.Path, default=None, metavar="DIR",
                   help="where the run is written; must be new or empty (default ROOT/runs/<timestamp>)")
    p.add_argument("--build-dir", type=pathlib.Path, default=None, metavar="DIR",
                   help="the release build with bin/nanotick-exchange and bin/nanotick-trader "
                        "(default ROOT/build/release)")
    p.add_argument("--transport", choices=TRANSPORTS, default="tcp",
                   help="order entry between the traders and the exchange: loopback TCP (default) or the "
                        "exchange's shared-memory sessions (docs/EXCHANGE.md \"Shared-memory sessions\"); the "
                        "floor measures the same transport")
    p.add_argument("--layout", choices=LAYOUTS, default="auto",
                   help="threads of every process (docs/TUNING.md \"Layouts\"): compact (one thread per process, "
                        "blocking idle: what the configs say), pinned (each process's critical thread spinning on a "
                        "CPU of its own), dedicated (the exchange's four critical threads and each trader's spinning "
                        "on CPUs of their own); auto (default) picks the most dedicated one this machine has CPUs "
                        "for (isolated CPUs first) and says why")
    p.add_argument("--no-report", action="store_true", help="skip report.html")
    p.add_argument("--no-floor", action="store_true",
                   help="do not run nanotick-floor (the loopback floor measured beside the traders)")
    p.add_argument("--status-every", type=float, default=5.0, metavar="S",
                   help="when stdout is not a terminal, print the status block every S seconds (default 5)")
    args = p.parse_args(argv)
    if not 0 < args.duration <= 7 * 86400:
        p.error(f"--duration must be in (0, 604800] seconds, got {args.duration}")
    if not 0.5 <= args.status_every <= 3600:
        p.error(f"--status-every must be in [0.5, 3600] seconds, got {args.status_every}")
    return args


@dataclass
class Plan:
    """Everything decided before the first process starts."""

    root: pathlib.Path
    run_dir: pathlib.Path
    exchange_bin: pathlib.Path
    trader_bin: pathlib.Path
    exchange: ExchangeSpec
    exchange_copy: pathlib.Path
    traders: List[TraderSpec]
    floor_bin: Optional[pathlib.Path]  # None: --no-floor
    telemetry: Dict[str, bool]  # binary name -> its --help lists --telemetry
    duration: float
    report: bool
    status_every: float
    transport: str = "tcp"  # order entry: "tcp" or "shm"
    layout: Optional[Layout] = None  # None: the configs' own [threads]


def find_binary(bin_dir: pathlib.Path, name: str) -> pathlib.Path:
    path = bin_dir / name
    if not path.is_file() or not os.access(path, os.X_OK):
        raise DemoError(f"{path} is missing: run ./nanotick build (or point --build-dir at a release build "
                        f"directory holding bin/{name})", EXIT_CANNOT_START)
    return path


def offers_telemetry(binary: pathlib.Path) -> bool:
    """Whether the binary's --help lists --telemetry (the option comes with issue 6's instrumentation)."""
    try:
        done = subprocess.run([str(binary), "--help"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DemoError(f"cannot run {binary} --help ({e}): rebuild with ./nanotick build", EXIT_CANNOT_START) from e
    if done.returncode != 0:
        raise DemoError(f"{binary} --help {describe_exit(done.returncode)}: rebuild with ./nanotick build\n"
                        + done.stderr.decode("utf-8", errors="replace").strip(), EXIT_CANNOT_START)
    return "--telemetry" in done.stdout.decode("utf-8", errors="replace")


def make_run_dir(root: pathlib.Path, given: Optional[pathlib.Path]) -> pathlib.Path:
    if given is not None:
        run_dir = given.expanduser().resolve()
        if run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
            raise DemoError(f"--run-dir {run_dir} exists and is not an empty directory: choose another one "
                            f"(a journal left there would be recovered into the new run)", EXIT_CANNOT_START)
    else:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = root / "runs" / stamp
        n = 2
        while run_dir.exists():
            run_dir = root / "runs" / f"{stamp}-{n}"
            n += 1
    try:
        # Owner only: the run holds every client's order flow (journal, logs,
        # telemetry) and the traders' configs with their API keys.
        run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        run_dir.chmod(0o700)  # a --run-dir given empty keeps the mode it had otherwise
        for sub in ("configs", "logs", "counters", "telemetry", "journal"):
            (run_dir / sub).mkdir(mode=0o700, exist_ok=True)
    except OSError as e:
        raise DemoError(f"cannot create the run directory {run_dir}: {e}", EXIT_CANNOT_START) from e
    return run_dir


def prepare(args: argparse.Namespace) -> Plan:
    root = args.root.expanduser().resolve()
    bin_dir = (args.build_dir.expanduser().resolve() if args.build_dir else root / "build" / "release") / "bin"
    exchange_bin = find_binary(bin_dir, "nanotick-exchange")
    trader_bin = find_binary(bin_dir, "nanotick-trader")
    floor_bin = None if args.no_floor else find_binary(bin_dir, "nanotick-floor")
    config = args.config.expanduser().resolve() if args.config else root / "config" / "exchange.toml"
    exchange = load_exchange(config)
    traders = load_traders(root, [t.strip() for t in args.traders.split(",") if t.strip()], exchange, bin_dir.parent)
    telemetry = {b.name: offers_telemetry(b) for b in (exchange_bin, trader_bin)}
    try:
        build = bin_dir.parent
        layout = choose_layout(Machine("/").facts(), len(traders), roles_of("exchange", build),
                               roles_of("trader", build), args.layout)
    except RolesUnavailable as e:
        raise DemoError(f"--layout {args.layout}: {e}", EXIT_CANNOT_START) from e
    except ValueError as e:
        raise DemoError(f"--layout {args.layout}: {e}", EXIT_CANNOT_START) from e
    run_dir = make_run_dir(root, args.run_dir)
    shm_paths = (shm_path_for(run_dir), shm_path_for(run_dir, MD_SHM_SOCKET)) if args.transport == "shm" else None
    # The compact layout is what the configs say: they are left as they are.
    threads = layout.exchange if layout.name != "compact" else None
    exchange_copy = write_exchange_copy(exchange, run_dir / "configs", run_dir / "journal", shm_paths, threads)
    return Plan(root, run_dir, exchange_bin, trader_bin, exchange, exchange_copy, traders, floor_bin, telemetry,
                args.duration, not args.no_report, args.status_every, args.transport, layout)
