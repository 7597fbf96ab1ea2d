"""What the Python tools know of the exchange, held to what the binary itself
does: the runner roles it describes (--describe, which tools/doctor reads)
are the threads it starts (it names each runner's thread "nt-<role>"), and the counter
labels the tools read by name (tools/counters/labels.py) are in the counters
file it writes (which carries every label it placed). A role or label renamed
in C++ fails here instead of leaving the doctor or a summary wrong."""

from __future__ import annotations

import os
import pathlib
import time

import pytest

from tests.integration.exchange.exchange_harness import BINARY, make_config
from tools.counters import labels
from tools.counters.counters_file import read
from tools.doctor.roles import roles_of

LOGGER_THREAD = "nt-log"  # the process logger's back end (apps/app_main.hpp): not a runner


def runner_threads(pid: int, expected: int, timeout: float = 10.0) -> set:
    """The "nt-*" thread names of process `pid` but the logger's, once `expected` of them exist."""
    deadline = time.monotonic() + timeout
    while True:
        names = set()
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                names.add(pathlib.Path(f"/proc/{pid}/task/{task}/comm").read_text().strip())
            except FileNotFoundError:  # a thread that ended meanwhile
                pass
        runners = {n[len("nt-"):] for n in names if n.startswith("nt-") and n != LOGGER_THREAD}
        if len(runners) >= expected or time.monotonic() >= deadline:
            return runners
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["compact", "dedicated"])
def test_the_described_runner_roles_are_the_threads_the_exchange_starts(start_exchange, tmp_path, mode):
    described = roles_of("exchange", BINARY.parent.parent).runners[mode]
    config = make_config(tmp_path)
    config.threads = {"mode": mode, "idle": "backoff", "cpus": []}
    ex = start_exchange(config)
    assert runner_threads(ex.proc.pid, len(described)) == set(described)


def test_the_exchange_counters_file_has_every_label_the_tools_read(start_exchange, tmp_path):
    path = tmp_path / "exchange.counters"
    start_exchange(make_config(tmp_path), ["--counters", str(path)])
    have = [c.label for c in read(path).counters]
    assert not labels.missing(have, labels.EXCHANGE, labels.EXCHANGE_PREFIXES), have
