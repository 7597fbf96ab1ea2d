"""Errors and exit codes of the demo (tools/demo/demo.py).

A DemoError carries the message the user sees (what went wrong and how to fix
it) and the exit code the demo ends with; Interrupted is raised by the demo's
signal handlers (Ctrl-C, SIGTERM, SIGHUP) so that every exit path unwinds
through the code that stops the child processes. Plain data: thread-safe.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILED = 1  # something went wrong while the processes ran (or when stopping them)
EXIT_CANNOT_START = 2  # nothing was started: bad option, config, missing build, run dir in use


class DemoError(Exception):
    """A failure with the message to print and the exit code to end with."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Interrupted(Exception):
    """The user (or the system) asked the demo to stop: Ctrl-C, SIGTERM or SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum

    @property
    def exit_code(self) -> int:
        # The shell convention for "ended by signal N".
        return 128 + self.signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
