"""The command line of `python -m tools.benchdoc` (usage in __main__.py)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional

from . import record as record_mod
from . import render as render_mod

ROOT = record_mod.ROOT
DEFAULT_TARGETS = ROOT / "docs" / "benchmarks" / "targets.toml"


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when below it."""
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


def _record(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    bench = list(args.bench)
    if bench and bench[0] == "--":
        bench = bench[1:]
    if not bench:
        parser.error("record needs the bench to run after '--': record [options] -- BENCH_BINARY [ARGS...]")
    try:
        path = record_mod.record(bench, name=args.name, command=args.command, out_dir=args.out_dir)
    except record_mod.RecordError as e:
        print(f"benchdoc record: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("benchdoc record: interrupted: the bench was stopped, nothing recorded", file=sys.stderr)
        return 130
    print(f"benchdoc: recorded {_shown(path)}", file=sys.stderr)
    return 0


def _render(args: argparse.Namespace) -> int:
    path: Path = args.file
    label = _shown(path)
    try:
        old = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        print(f"benchdoc render: error: {label}: no such file", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as e:
        print(f"benchdoc render: error: cannot read {label}: {e}", file=sys.stderr)
        return 2
    results = args.results if args.results is not None else record_mod.DEFAULT_OUT_DIR
    targets = args.targets if args.targets is not None else DEFAULT_TARGETS
    try:
        new, blocks = render_mod.render_text(old, results, targets, label)
    except render_mod.RenderError as e:
        print(f"benchdoc render: error: {e}; {label} left unchanged", file=sys.stderr)
        return 2
    if args.check:
        if new == old:
            print(f"benchdoc: {label} is up to date ({blocks} generated blocks and inline markers)", file=sys.stderr)
            return 0
        sys.stdout.write(render_mod.unified_diff(old, new, label))
        print(f"benchdoc: {label} differs from what its results render to: run "
              f"'python -m tools.benchdoc render {label}' (and do not edit inside generated blocks or inline markers)",
              file=sys.stderr)
        return 1
    if new != old:
        try:
            record_mod.write_atomically(path, new)
        except OSError as e:
            print(f"benchdoc render: error: cannot write {label}: {e}", file=sys.stderr)
            return 2
        print(f"benchdoc: rendered {blocks} generated blocks and inline markers into {label}", file=sys.stderr)
    else:
        print(f"benchdoc: {label} already up to date ({blocks} generated blocks and inline markers)", file=sys.stderr)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchdoc",
                                     description="Benchmark results recorded as JSON, rendered into Markdown.",
                                     epilog="The block syntax, the JSON's fields and the exit statuses: the docstring "
                                            "of tools/benchdoc/__main__.py; the targets file's schema: targets.py.")
    sub = parser.add_subparsers(dest="command_name", required=True, metavar="{record,render}")
    rec = sub.add_parser("record", help="run a bench and record its tables as JSON",
                         usage="%(prog)s [--name NAME] [--command TEXT] [--out-dir DIR] -- BENCH_BINARY [ARGS...]")
    rec.add_argument("--name", help="results name (default: the binary's basename): writes DIR/NAME.json")
    rec.add_argument("--command", help="how a reader reproduces the run, shown on the page (default: argv joined)")
    rec.add_argument("--out-dir", type=Path, help="results directory (default docs/benchmarks/results)")
    rec.add_argument("bench", nargs=argparse.REMAINDER, help="-- BENCH_BINARY [ARGS...]")
    ren = sub.add_parser("render", help="rewrite a Markdown file's generated blocks from recorded results")
    ren.add_argument("file", type=Path, help="the Markdown file, rewritten in place")
    ren.add_argument("--results", type=Path, help="results directory (default docs/benchmarks/results)")
    ren.add_argument("--targets", type=Path, help="targets file (default docs/benchmarks/targets.toml)")
    ren.add_argument("--check", action="store_true",
                     help="change nothing; print a diff and exit 1 when rendering would change the file")
    args = parser.parse_args(argv)
    if args.command_name == "record":
        return _record(args, rec)
    return _render(args)
