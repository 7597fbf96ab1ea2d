"""./nanotick format: the C++ sources in the house style (.clang-format)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import List

from ..context import ROOT, die, say
from ..options import CommandParser

CLANG_FORMAT = "clang-format-16"
MARKER = "# nanotick: format-enforced"
# clang-format takes many files at once; batches keep each command line well
# under the kernel's limit (what xargs did).
BATCH = 200

USAGE = f"""\
usage: ./nanotick format [--check] [FILE...]

Formats C++ sources in place with clang-format-16 and the repository's
.clang-format (docs/CONTRIBUTING.md "Style"): every tracked *.cpp, *.hpp, *.h
and *.cc file (git ls-files), or only the FILEs given.
  --check   change nothing: list the files that differ from the style and
            exit non-zero if any does
'./nanotick test' runs --check first once the first line of .clang-format is
'{MARKER}'."""

# --dry-run warns at every place that would change.
DIFFERS = re.compile(r"^(.*?):\d*:\d*: warning: code should be clang-formatted")


def enforced() -> bool:
    """True when the tree is held to .clang-format: the marker is its first line."""
    try:
        with open(ROOT / ".clang-format") as f:
            return f.readline().rstrip("\n") == MARKER
    except OSError:
        return False


def _clang_format(files: List[str], cwd: str, *flags: str) -> str:
    """Runs clang-format over files in batches; its output (the warnings of
    --dry-run). Fails the command when clang-format itself fails."""
    out = []
    for i in range(0, len(files), BATCH):
        done = subprocess.run([CLANG_FORMAT, f"--style=file:{ROOT / '.clang-format'}", *flags, *files[i:i + BATCH]],
                              cwd=cwd, capture_output=True, text=True, errors="replace")
        out.append(done.stdout + done.stderr)
        if done.returncode != 0:
            sys.stderr.write("".join(line + "\n" for line in "".join(out).splitlines()[-20:]))
            die(f"{CLANG_FORMAT} failed")
    return "".join(out)


def run(args: List[str]) -> int:
    parser = CommandParser("format", USAGE)
    parser.add("files", nargs="*")
    parser.add("--check", action="store_true")
    options = parser.parse(args)
    for f in options.files:
        if not os.path.isfile(f):
            die(f"no such file '{f}'")
    if not (ROOT / ".clang-format").is_file():
        die(f"no .clang-format in {ROOT}")
    if shutil.which(CLANG_FORMAT) is None:
        die(f"{CLANG_FORMAT} not found: ./nanotick setup installs it")
    files, cwd = list(options.files), os.getcwd()
    if not files:  # paths relative to the root, as git lists them
        cwd = str(ROOT)
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "*.cpp", "*.hpp", "*.h", "*.cc"],
                                capture_output=True, text=True)
        files = [f for f in listed.stdout.split("\0") if f]
        if not files:
            die(f"git ls-files found no C++ source in {ROOT}")
    if not options.check:
        _clang_format(files, cwd, "-i")
        say(f"formatted {len(files)} file(s)")
        return 0
    differ: List[str] = []
    for line in _clang_format(files, cwd, "--dry-run").splitlines():
        m = DIFFERS.match(line)
        if m and (not differ or differ[-1] != m.group(1)):
            differ.append(m.group(1))
    if differ:
        print("\n".join(differ), flush=True)
        die(f"{len(differ)} of {len(files)} file(s) differ from .clang-format (listed above): "
            "run ./nanotick format FILE... (or ./nanotick format for every file) and commit the result")
    say(f"{len(files)} file(s) match .clang-format")
    return 0
