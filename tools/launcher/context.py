"""What every part of the launcher shares: the tree's paths, the build's
parallelism, and how a command fails or speaks."""

from __future__ import annotations

import os
import pathlib
import sys
from typing import NoReturn, Union

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_ROOT = ROOT / "build"
VENV = BUILD_ROOT / "venv"
VENV_PYTHON = VENV / "bin" / "python"


class Fail(Exception):
    """A command that cannot go on: main() prints 'nanotick: error: MESSAGE'
    and exits with code (1 unless said otherwise)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Finished(Exception):
    """A command that is done early (its --help shown): main() exits with code."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.code = code


def die(message: str) -> NoReturn:
    raise Fail(message)


def say(message: str) -> None:
    """One line of progress. On stderr, so that a command's own output on
    stdout (a CSV, a table, a file list) stays clean for a pipe."""
    print(f"nanotick: {message}", file=sys.stderr, flush=True)


def rel(path: Union[str, pathlib.Path]) -> str:
    """path relative to the repository root when it is inside it, as the
    screen names files (build/logs/..., build/venv)."""
    p = pathlib.Path(path)
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def jobs() -> int:
    """The build's and the tests' parallelism: NANOTICK_JOBS, else the CPUs
    this process may run on (what nproc says)."""
    value = os.environ.get("NANOTICK_JOBS", "")
    if value:
        if not value.isdigit() or int(value) < 1:
            die(f"NANOTICK_JOBS must be a whole number from 1 (it is '{value}')")
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def exec_program(program: Union[str, pathlib.Path], args: list, cwd: Union[str, pathlib.Path, None] = None) -> NoReturn:
    """Replaces the launcher with program (a build's binary, the venv's
    Python): its signals, exit code and terminal are then the program's own,
    as they were with bash's exec."""
    sys.stdout.flush()
    sys.stderr.flush()
    if cwd is not None:
        os.chdir(cwd)
    try:
        os.execv(str(program), [str(program), *map(str, args)])
    except OSError as e:
        die(f"cannot run {program}: {e.strerror}")
