"""One log per command run, and what the screen shows of it.

What apt, pip, Maven, CMake and ninja print goes to
build/logs/<command>-<time>-<pid>.log (named on the screen); the screen gets
a line per stage, and a build's warnings and errors in full
(docs/COMMANDS.md "What each command installs").
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time
from typing import Callable, IO, List, Optional, Sequence

from .context import BUILD_ROOT, ROOT, die, jobs, rel, say

_command = "nanotick"  # names this run's log: the command given
_path: Optional[pathlib.Path] = None

# A week of logs is kept: older ones go when a new one starts (as `find
# -mtime +7`: whole days of age, rounded down, above 7).
KEEP_DAYS = 7


def name_after(command: str) -> None:
    global _command
    _command = command


def ensure_log() -> pathlib.Path:
    """This run's log, created on first use."""
    global _path
    if _path is not None:
        return _path
    logs = BUILD_ROOT / "logs"
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError:
        die(f"cannot create {logs}")
    now = time.time()
    for old in logs.glob("*.log"):
        try:
            if int((now - old.stat().st_mtime) // 86400) > KEEP_DAYS:
                old.unlink()
        except OSError:
            pass  # another run removed it first, or it is not ours to remove
    path = logs / f"{_command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        path.write_text("")
    except OSError:
        die(f"cannot write {path}")
    _path = path
    return path


def run_logged(log: IO[str], argv: Sequence[str], cwd: Optional[pathlib.Path] = None,
               env: Optional[dict] = None) -> bool:
    """Runs argv with its output appended to the open log; True when it exits 0."""
    log.flush()
    try:
        done = subprocess.run([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    except OSError as e:
        log.write(f"cannot run {argv[0]}: {e.strerror}\n")
        return False
    return done.returncode == 0


def _tail(path: pathlib.Path, lines: int) -> List[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()[-lines:]


def stage(label: str, action: Callable[[IO[str]], bool], what: str = "") -> bool:
    """Runs action (which writes into the log it is given) as one stage: a
    line on the screen when it starts, one when it ends, the log's last
    lines when it fails. what: the command line, for the log's header."""
    path = ensure_log()
    t0 = time.monotonic()
    say(f"{label} ... (log: {rel(path)})")
    with open(path, "a", encoding="utf-8", errors="replace") as log:
        log.write(f"=== {label}: {what}\n")
        ok = action(log)
    seconds = int(time.monotonic() - t0)
    if ok:
        say(f"{label}: done in {seconds} s")
        return True
    sys.stderr.write("".join(line + "\n" for line in _tail(path, 30)))
    say(f"{label}: FAILED after {seconds} s (full log: {path})")
    return False


def stage_command(label: str, argv: Sequence[str], cwd: Optional[pathlib.Path] = None) -> bool:
    """stage() of one program."""
    return stage(label, lambda log: run_logged(log, argv, cwd), " ".join(map(str, argv)))


PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")
WARNING = re.compile(r"(^|[^A-Za-z_])warning:")


class Progress:
    """ninja's "[N/M]" lines as "nanotick: build PRESET: N/M": redrawn in
    place on a terminal, a line per tenth otherwise (a CI log)."""

    def __init__(self, label: str, tty: bool, out: IO[str]) -> None:
        self.label, self.tty, self.out = label, tty, out
        self.last_tenth = 0
        self.shown = False

    def line(self, text: str) -> None:
        m = PROGRESS.match(text)
        if not m:
            return
        n, total = int(m.group(1)), int(m.group(2))
        if self.tty:
            self.out.write(f"\r{self.label}: {n}/{total}")
            self.out.flush()
            self.shown = True
        elif total > 0 and 10 * n // total > self.last_tenth:
            self.last_tenth = 10 * n // total
            self.out.write(f"{self.label}: {n}/{total}\n")
            self.out.flush()

    def end(self) -> None:
        if self.shown:
            self.out.write("\n")
            self.out.flush()


def build_report(preset: str, lines: List[str], ok: bool) -> None:
    """After a build: its warnings in full (the first 40), and on failure the
    failed steps' output (ninja's FAILED: onwards) or else its last lines."""
    warnings = [line for line in lines if WARNING.search(line)]
    if warnings:
        say(f"build {preset}: {len(warnings)} warning(s):")
        sys.stderr.write("".join(w + "\n" for w in warnings[:40]))
    if not ok:
        failed = next((i for i, line in enumerate(lines) if line.startswith("FAILED:")), None)
        shown = lines[failed:failed + 80] if failed is not None else lines[-40:]
        sys.stderr.write("".join(line + "\n" for line in shown))
    sys.stderr.flush()


def build_with_progress(preset: str, args: Sequence[str] = ()) -> bool:
    """cmake --build --preset PRESET -j JOBS [args]: ninja's lines to the log,
    the progress, warnings and failures on the screen (build_report)."""
    path = ensure_log()
    t0 = time.monotonic()
    argv = ["cmake", "--build", "--preset", preset, "-j", str(jobs()), *args]
    progress = Progress(f"nanotick: build {preset}", sys.stderr.isatty(), sys.stderr)
    lines: List[str] = []
    with open(path, "a", encoding="utf-8", errors="replace") as log:
        log.write(f"=== build {preset}: {' '.join(argv)}\n")
        log.flush()
        try:
            proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
        except OSError as e:
            log.write(f"cannot run cmake: {e.strerror}\n")
            lines.append(f"cannot run cmake: {e.strerror}")
            proc = None
        if proc is not None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                log.write(raw)
                line = raw.rstrip("\n")
                lines.append(line)
                progress.line(line)
            ok = proc.wait() == 0
        else:
            ok = False
    progress.end()
    build_report(preset, lines, ok)
    seconds = int(time.monotonic() - t0)
    if not ok:
        say(f"build {preset}: FAILED after {seconds} s (full log: {path})")
        return False
    say(f"build {preset}: done in {seconds} s")
    return True
