"""./nanotick stat: the counters of running (or ended) nanotick processes, read
from their counters files (docs/TELEMETRY.md "The counters file"), once or
live with --watch, as a table (label, value and, when watching, the change
per second) or as JSON.

Exit status: 0 when every file was read, 1 when one could not be (the others
are still shown), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Dict, List, Optional, Sequence, TextIO

from .counters_file import CountersFile, CountersFileError, Value, find, read

ROOT = pathlib.Path(__file__).resolve().parents[2]


def default_paths() -> List[pathlib.Path]:
    """The newest demo run's counters directory, if there is one."""
    runs = sorted((p for p in (ROOT / "runs").glob("*/counters") if p.is_dir()), key=lambda p: p.parent.name)
    return runs[-1:] if runs else []


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="nanotick stat",
        description="Shows the counters of nanotick processes from their counters files (the exchange's and the "
                    "traders' --counters FILE; the demo writes RUN_DIR/counters/*.counters).")
    p.add_argument("paths", nargs="*", type=pathlib.Path, metavar="PATH",
                   help="a counters file, or a directory of *.counters files (default: the newest runs/*/counters)")
    p.add_argument("--watch", nargs="?", const=1.0, type=float, metavar="SECONDS",
                   help="redraw every SECONDS (default 1) until Ctrl-C, with each counter's change per second")
    p.add_argument("--count", type=int, default=0, metavar="N", help="with --watch: stop after N redraws (0: never)")
    p.add_argument("--filter", default="", metavar="TEXT", help="only counters whose label contains TEXT")
    p.add_argument("--nonzero", action="store_true", help="hide counters that are 0")
    p.add_argument("--json", action="store_true", help="print one JSON object per read instead of a table")
    args = p.parse_args(argv)
    if args.watch is not None and not 0.1 <= args.watch <= 3600:
        p.error(f"--watch must be 0.1..3600 seconds, got {args.watch}")
    if args.count < 0:
        p.error(f"--count must be >= 0, got {args.count}")
    if not args.paths:
        args.paths = default_paths()
        if not args.paths:
            p.error("no PATH given and no demo run directory with counters under runs/")
    return args


def _fmt(v: Value) -> str:
    return f"{v:.6f}" if isinstance(v, float) else str(v)


def table(f: CountersFile, args: argparse.Namespace, before: Optional[Dict[str, Value]], seconds: float) -> str:
    lines = [f"{f.process} (pid {f.pid}, {f.status}) {f.path}"]
    rows = []
    for c in f.counters:
        if args.filter and args.filter not in c.label:
            continue
        if args.nonzero and c.value == 0:
            continue
        rate = ""
        if before is not None and c.kind == "count" and c.label in before and seconds > 0:
            rate = f"{(c.value - before[c.label]) / seconds:,.0f}/s"
        rows.append((c.label, _fmt(c.value), rate))
    width = max((len(r[0]) for r in rows), default=0)
    vwidth = max((len(r[1]) for r in rows), default=0)
    lines += [f"  {label:<{width}}  {value:>{vwidth}}  {rate}".rstrip() for label, value, rate in rows]
    return "\n".join(lines)


def as_json(f: CountersFile, args: argparse.Namespace) -> str:
    return json.dumps({"process": f.process, "pid": f.pid, "status": f.status, "path": str(f.path),
                       "counters": {c.label: c.value for c in f.counters
                                    if (not args.filter or args.filter in c.label)
                                    and not (args.nonzero and c.value == 0)}})


def show(args: argparse.Namespace, out: TextIO, err: TextIO, before: Dict[pathlib.Path, Dict[str, Value]],
         seconds: float) -> int:
    rc = 0
    files = find(args.paths)
    if not files:
        err.write(f"nanotick stat: no counters files in {', '.join(map(str, args.paths))}\n")
        return 1
    blocks = []
    for path in files:
        try:
            f = read(path)
        except CountersFileError as e:
            err.write(f"nanotick stat: {e}\n")
            rc = 1
            continue
        blocks.append(as_json(f, args) if args.json else table(f, args, before.get(path), seconds))
        before[path] = f.values()
    out.write(("\n" if args.json else "\n\n").join(blocks) + "\n")
    out.flush()
    return rc


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    args = parse_args(argv)
    before: Dict[pathlib.Path, Dict[str, Value]] = {}
    if args.watch is None:
        return show(args, out, err, before, 0.0)
    rc = 0
    shown = 0
    last = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            if out.isatty() and not args.json:
                out.write("\x1b[H\x1b[2J")
            rc = max(rc, show(args, out, err, before, now - last))
            last = now
            shown += 1
            if args.count and shown >= args.count:
                return rc
            time.sleep(args.watch)
    except KeyboardInterrupt:
        return rc


if __name__ == "__main__":
    sys.exit(main())
