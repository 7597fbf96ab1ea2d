"""A child process of the tests (nanotick-exchange, nanotick-trader) whose stdout and
stderr are read line by line by two daemon threads, so a test can wait for a log line,
read what it printed, and never blocks on a full pipe. The one spawn/read/reap helper of
the integration tests: the exchange and trader harnesses build on it.

Subclasses recognise their own log lines in `on_stderr_line` (readiness, a port) and
call `mark_ready()`; end of stderr also wakes a waiter, who then sees the exit."""

from __future__ import annotations

import pathlib
import subprocess
import threading
from typing import List


class LoggedProcess:
    def __init__(self, args: List[str], cwd: pathlib.Path, what: str) -> None:
        """Starts `args` in `cwd`; `what` names it in failure messages ("the exchange")."""
        self.args = args
        self.what = what
        self.stdout_lines: List[str] = []
        self.stderr_lines: List[str] = []
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(cwd))
        self._threads = [
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr_lines, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout_lines, False), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def on_stderr_line(self, line: str) -> None:
        """Called on the reader thread for each stderr line (without its newline)."""

    def mark_ready(self) -> None:
        self._ready.set()

    def _read(self, stream, sink: List[str], is_stderr: bool) -> None:
        for line in stream:
            line = line.rstrip("\n")
            with self._lock:
                sink.append(line)
            if is_stderr:
                self.on_stderr_line(line)
        self._ready.set()  # EOF: wake a waiter; it then sees the exit

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        with self._lock:
            return "\n".join(self.stderr_lines)

    def stdout_text(self) -> str:
        with self._lock:
            return "\n".join(self.stdout_lines)

    def lines(self, stdout: bool = True) -> List[str]:
        """A copy of the lines read so far from stdout (or stderr)."""
        with self._lock:
            return list(self.stdout_lines if stdout else self.stderr_lines)

    def wait_exit(self, timeout: float, detail: str = "") -> int:
        """Waits for the exit (killing it after `timeout` s and failing, `detail` saying what
        it was told) and returns the exit code once its output is read to the end."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"{self.what} did not exit within {timeout} s{detail}; stderr:\n{self.stderr_text()}")
        self._join(5)
        return rc

    def kill(self) -> None:
        """SIGKILL and reap (idempotent)."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._join(2)

    def _join(self, timeout: float) -> None:
        for t in self._threads:
            t.join(timeout=timeout)
