"""`record`: runs one bench, passes its stdout through live, and writes what it printed as JSON.

The JSON (SCHEMA_VERSION) holds how to reproduce the run (argv, command), what was measured (git commit and
whether the tree had uncommitted changes, UTC time, the machine header, /proc/loadavg before and after, wall
seconds) and what the bench printed (tables and notes, parse.py). Nothing is written when the bench fails or
its output does not parse: a results file always holds one whole, successful run.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .parse import ParseError, parse_output

SCHEMA_VERSION = 1
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT_DIR = ROOT / "docs" / "benchmarks" / "results"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class RecordError(Exception):
    """The run is refused: nothing was written. exit_code 1 = the bench or its output, 2 = how it was asked."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def check_name(name: str) -> str:
    """A results name is a file name stem, never a path (it is joined to the results directory)."""
    if not NAME.match(name) or name.endswith(".json") or ".." in name:
        raise RecordError(f"bad name {name!r}: use letters, digits, '_', '-', '.' (e.g. ring_bench)", 2)
    return name


def _loadavg() -> Optional[str]:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return None


def _git(root: Path) -> Dict[str, object]:
    """The short commit and whether tracked files differ from it (untracked files do not make a tree dirty)."""
    def run(*args: str) -> Optional[str]:
        try:
            p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return p.stdout.strip() if p.returncode == 0 else None

    commit = run("rev-parse", "--short=7", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def _display_path(binary: str, root: Path) -> str:
    """The binary as a reader types it: relative to the repo root when inside it, else as given."""
    if os.sep not in binary:
        return binary  # found on PATH: the reader types the same name
    for path, base in ((Path(os.path.abspath(binary)), Path(os.path.abspath(root))),
                       (Path(binary).resolve(), root.resolve())):  # as typed first, then through symlinks
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return binary


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to a temporary file beside `path`, syncs it and renames it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600; results and docs are for everyone to read
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def run_bench(argv: List[str], out=None) -> Tuple[int, str, float]:
    """Runs argv with stdout piped, copying each line to `out` as it comes; stderr is inherited."""
    out = out or sys.stdout
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise RecordError(f"cannot run {argv[0]}: {e.strerror or e}", 2) from None
    chunks: List[bytes] = []
    assert proc.stdout is not None
    echo = True
    try:
        for line in iter(proc.stdout.readline, b""):
            chunks.append(line)
            if echo:
                try:
                    out.write(line.decode("utf-8", errors="replace"))
                    out.flush()
                except BrokenPipeError:
                    # `record ... | head`: the reader left, the run goes on being recorded. Our stdout now
                    # points at /dev/null so that the interpreter's last flush does not fail again.
                    echo = False
                    if out is sys.stdout:
                        devnull = os.open(os.devnull, os.O_WRONLY)
                        os.dup2(devnull, sys.stdout.fileno())
                        os.close(devnull)
        rc = proc.wait()
    except BaseException:
        proc.kill()  # Ctrl-C or a broken pipe: do not leave the bench running behind us
        proc.wait()
        raise
    return rc, b"".join(chunks).decode("utf-8", errors="replace"), time.monotonic() - start


def record(argv: List[str], name: Optional[str] = None, command: Optional[str] = None,
           out_dir: Optional[Path] = None, root: Path = ROOT, out=None) -> Path:
    """Runs the bench and writes OUT_DIR/NAME.json; returns its path or raises RecordError."""
    if not argv:
        raise RecordError("no bench given: record [options] -- BENCH_BINARY [ARGS...]", 2)
    binary = argv[0]
    if os.sep not in binary and shutil.which(binary) is None:
        raise RecordError(f"{binary}: not found on PATH (give a path, e.g. build/release/bench/{binary})", 2)
    if os.sep in binary and not Path(binary).is_file():
        raise RecordError(f"{binary}: no such file (build it first: ./nanotick build release)", 2)
    name = check_name(name if name is not None else Path(binary).name)
    shown_argv = [_display_path(binary, root)] + list(argv[1:])
    command = command if command is not None else shlex.join(shown_argv)
    if not command.strip():
        raise RecordError("--command is empty: say how a reader reproduces this run", 2)
    out_dir = Path(out_dir) if out_dir is not None else DEFAULT_OUT_DIR

    git = _git(root)
    date = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    load_before = _loadavg()
    rc, text, seconds = run_bench(list(argv), out)
    load_after = _loadavg()
    if rc != 0:
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        raise RecordError(f"{shlex.join(argv)} {how}: nothing recorded")
    try:
        parsed = parse_output(text)
    except ParseError as e:
        raise RecordError(f"{shlex.join(argv)}: cannot record its output: {e}; nothing recorded") from None

    result = {
        "schema": SCHEMA_VERSION,
        "name": name,
        "bench": parsed["bench"],
        "title": parsed["title"],
        "argv": shown_argv,
        "command": command,
        "git": git,
        "date": date.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": parsed["machine"],
        "loadavg": {"before": load_before, "after": load_after},
        "wall_seconds": round(seconds, 3),
        "tables": parsed["tables"],
        "notes": parsed["notes"],
    }
    path = out_dir / f"{name}.json"
    try:
        write_atomically(path, json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    except OSError as e:
        raise RecordError(f"cannot write {path}: {e.strerror or e}", 2) from None
    return path
