"""One child process of the demo (the exchange or a trader): started with its
stderr going to logs/<name>.log and its stdout (the "key value" summary it
prints at exit) to counters/<name>.txt, both plain files the demo reads as
they grow; no reader threads, so the demo stays single-threaded and the
child set-up hook below is safe.

No child outlives the demo: each runs in its own session (the terminal's
Ctrl-C reaches only the demo, which then stops the children in order:
traders first, so they cancel and log out while the exchange still serves),
and asks the kernel for SIGTERM when the demo dies, even by SIGKILL
(PR_SET_PDEATHSIG). The demo itself stops every child on every exit path.

Not thread-safe: one thread (the demo's main thread) owns each Child.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import signal
import subprocess
import time
from collections import deque
from typing import Callable, Dict, List, Optional

from tools.demo.demo_errors import signal_name

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def private_file(path: pathlib.Path):
    """`path` created (or truncated) for writing, mode 0600: a process's log holds its clients' order flow."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600), "wb")


def child_setup(parent_pid: int) -> Callable[[], None]:
    """Runs in the child between fork and exec: SIGTERM when the demo dies; exit at once
    if it already died (the parent changed before the request took effect)."""

    def setup() -> None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return setup


def describe_exit(code: int) -> str:
    if code < 0:
        return f"was killed by {signal_name(-code)}"
    return f"exited with code {code}"


class Child:
    """A started process, its log read line by line (`read_lines`), its exit and its stop."""

    def __init__(self, name: str, args: List[str], cwd: pathlib.Path, log_path: pathlib.Path,
                 counters_path: pathlib.Path) -> None:
        self.name = name
        self.args = args
        self.log_path = log_path
        self.counters_path = counters_path
        self._log_offset = 0
        self._partial = b""
        with private_file(log_path) as err, private_file(counters_path) as out:
            # The child keeps its own copies of the descriptors; ours close here.
            self.proc = subprocess.Popen(args, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         start_new_session=True, preexec_fn=child_setup(os.getpid()))

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> Optional[int]:
        return self.proc.poll()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def read_lines(self) -> List[str]:
        """The complete log lines written since the last call."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                data = f.read()
        except OSError:
            return []
        self._log_offset += len(data)
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]

    def tail(self, n: int = 20) -> List[str]:
        """The last `n` lines of the log (read again from the file: what the user will find there)."""
        try:
            with open(self.log_path, "r", encoding="utf-8", errors="replace") as f:
                return list(deque((line.rstrip("\n") for line in f), maxlen=n))
        except OSError:
            return []

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:  # exited between the poll and the signal
                pass

    def wait(self, timeout: float, hurry: Callable[[], bool] = lambda: False) -> Optional[int]:
        """The exit code once the process exited, or None after `timeout` s (or as soon as
        `hurry()` turns true: the user pressed Ctrl-C again)."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.proc.poll()
            if code is not None or time.monotonic() >= deadline or hurry():
                return code
            time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL and reap (idempotent)."""
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a process stuck in the kernel: nothing more can be done
            pass

    def state(self, run: pathlib.Path, role: str, trader: Optional[str], client_id: Optional[int],
              config: pathlib.Path, counters_file: Optional[pathlib.Path]) -> Dict[str, object]:
        """This process's entry in demo.json (paths relative to the run directory `run`)."""
        return {"name": self.name, "role": role, "trader": trader, "client_id": client_id, "pid": self.pid,
                "args": self.args, "config": str(config.relative_to(run)), "log": str(self.log_path.relative_to(run)),
                "counters": str(self.counters_path.relative_to(run)),
                "counters_file": None if counters_file is None else str(counters_file.relative_to(run)),
                "telemetry": "--telemetry" in self.args, "exit_code": self.returncode}

    def describe(self, lines: int = 20) -> str:
        """How it ended (or that it still runs) and the last lines of its log."""
        code = self.proc.poll()
        state = "is still running" if code is None else describe_exit(code)
        tail = self.tail(lines)
        body = "\n".join(f"    {line}" for line in tail) if tail else "    (the log is empty)"
        return f"{self.name} (pid {self.pid}) {state}; last {len(tail)} lines of {self.log_path}:\n{body}"
