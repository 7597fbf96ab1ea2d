"""./nanotick doctor: checks this machine for low-latency work and the
configured thread pinning against it (docs/TUNING.md).

    python -m tools.doctor [--config EXCHANGE_TOML] [--trader TRADER_TOML]... [--json] [--root DIR] [--build-dir DIR]

Prints one line per topic: its status (ok / info / change / problem), what
was found and what to change. Exit status: 0 when the configured pinning
fits the machine (whatever the machine's own findings), 1 when it does not,
2 for a bad option or a config that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tomllib
from dataclasses import asdict
from typing import List, Optional

from .findings import Finding, machine_findings
from .layout import LAYOUTS, Layout, Runner, choose_layout, pinning_findings, runners_of
from .machine import Machine
from .roles import RolesUnavailable, roles_of

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEMO_TRADERS = ("mm1", "mm2", "taker", "random")


def _load(path: pathlib.Path, what: str) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(_usage_error(f"{what} {path} does not exist"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise SystemExit(_usage_error(f"{what} {path} cannot be read: {e}"))


def _usage_error(message: str) -> int:
    print(f"nanotick doctor: error: {message}", file=sys.stderr)
    return 2


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="./nanotick doctor",
                                description="Checks this machine for low-latency work (isolated cores, nohz_full, "
                                            "IRQ affinity, governor, C-states, SMT, huge pages, NUMA, clock source "
                                            "and TSC) and the configured thread pinning against it; docs/TUNING.md "
                                            "explains each finding.",
                                epilog="Exit codes: 0 the configured pinning fits, 1 it does not, 2 bad option or "
                                       "config.")
    p.add_argument("--config", type=pathlib.Path, default=ROOT / "config" / "exchange.toml",
                   help="the exchange config whose [threads] to check (default config/exchange.toml)")
    p.add_argument("--trader", type=pathlib.Path, action="append", default=None, metavar="TRADER_TOML",
                   help="a trader config whose [threads] to check (repeatable; default the demo's four)")
    p.add_argument("--root", type=pathlib.Path, default=pathlib.Path("/"),
                   help="filesystem root to read /sys and /proc under (default /; the tests use a made-up tree)")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--build-dir", type=pathlib.Path, default=None,
                   help="the build whose nanotick-exchange and nanotick-trader describe their runners "
                        "(default build/release)")
    args = p.parse_args(argv)

    facts = Machine(args.root).facts()
    found: List[Finding] = machine_findings(facts)
    exchange = _load(args.config, "exchange config")
    traders = args.trader or [ROOT / "config" / f"trader-{n}.toml" for n in DEMO_TRADERS]
    trader_data = [(t, _load(t, "trader config")) for t in traders]
    layout: Optional[Layout] = None
    try:  # the runner roles are the binaries' (--describe)
        ex_roles, tr_roles = roles_of("exchange", args.build_dir), roles_of("trader", args.build_dir)
        runners: List[Runner] = runners_of("exchange", ex_roles, exchange)
        for t, data in trader_data:
            name = data.get("trader", {}).get("name", t.stem) if isinstance(data.get("trader"), dict) else t.stem
            runners += runners_of(f"trader {name}", tr_roles, data)
        pinning = pinning_findings(runners, facts)
        layout = choose_layout(facts, len(traders), ex_roles, tr_roles)
    except RolesUnavailable as e:
        pinning = []
        found.append(Finding("configured pinning", "info", f"the configured [threads] were not checked: {e}",
                             "build the programs (./nanotick build), which describe their runners"))
    found += pinning

    if args.json:
        print(json.dumps({"findings": [asdict(f) for f in found],
                          "demo_layout": layout and {"name": layout.name, "reason": layout.reason}}, indent=2))
    else:
        width = max(len(f.topic) for f in found)
        for f in found:
            print(f"[{f.status:^7}] {f.topic:<{width}}  {f.found}")
            if f.advice:
                print(f"{'':>{width + 12}}-> {f.advice}")
        chosen = f"{layout.name}: {layout.reason}" if layout else "not computed (the binaries describe their runners)"
        print(f"\nThe demo's layout here (choices {', '.join(LAYOUTS)}; ./nanotick demo --layout): {chosen}")
    return 1 if any(f.status == "problem" for f in pinning) else 0


if __name__ == "__main__":
    sys.exit(main())
