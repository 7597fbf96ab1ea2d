"""`python -m tools.benchdoc`: benchmark results recorded as JSON and rendered into Markdown tables.

Run from the repo root with the venv's Python:

    build/venv/bin/python -m tools.benchdoc record [--name NAME] [--command TEXT] [--out-dir DIR] \\
        -- BENCH_BINARY [ARGS...]
        Runs the bench, copies its stdout to ours as it comes, and writes DIR/NAME.json (default
        docs/benchmarks/results/<binary's basename>.json): argv, the command a reader reruns (default argv
        joined), git commit and dirty flag, UTC time, the machine header, /proc/loadavg before and after, wall
        seconds, every table with its heading (and caption), and the prose lines as notes. Refused, with
        nothing written, when the bench exits non-zero, prints no table, or prints a ragged table.

    build/venv/bin/python -m tools.benchdoc render FILE.md [--results DIR] [--targets FILE] [--check]
        Rewrites FILE.md's generated blocks in place from DIR (default docs/benchmarks/results):
            <!-- bench: NAME [tables: REGEX] --> ... <!-- /bench -->
                "Measured <date> at commit `abc1234` on <CPU>, <n> CPUs; load <1-min before> → <after>;
                `<command>` (<s> s)." then the tables of NAME.json whose heading matches REGEX (all by
                default), each under its heading in bold.
            <!-- targets: NAME [NAME...] --> ... <!-- /targets -->
                "target | measured | met?" for the entries of docs/benchmarks/targets.toml (or --targets)
                whose bench is one of the NAMEs; schema in targets.py. A range is checked at its worst end.
        and its inline markers, anywhere in a line (a README table row), several to a line, each pair on one line:
            <!-- figure: ID -->...<!-- /figure -->
                the cell picked by the targets file's [[figure]] entry ID (selected as a target's cell), as
                recorded: trimmed, '|' escaped, through the entry's optional format ("{cell} ns").
            <!-- measured: NAME -->...<!-- /measured -->
                "2026-11-29, `abc1234`" when and at which commit NAME.json was recorded, "+dirty" appended
                when the tree had uncommitted changes.
            <!-- target: ID -->...<!-- /target -->
                "met" or "**missed**" for the [[target]] entry with id = "ID".
        Markers inside ``` or ~~~ fences, and inline markers inside `code spans`, are text and left alone.
        --check changes nothing: prints a unified diff and exits 1 when rendering would change the file.

Exit status: 0 done (render --check: up to date); 1 record refused the run (the bench failed or its output
does not parse) or render --check found a difference; 2 a bad option, a bench that cannot be started, or a
block or inline marker that cannot be rendered (the file is left unchanged; the message names the file, line
and marker and what is missing or wrong).
"""

import sys

from .cli import main

sys.exit(main())
