"""pytest fixtures of the trader integration tests (the harness itself is
trader_harness.py; the exchange side is tests/integration/exchange's, imported
from there): skip when a binary is missing, start the exchange and the
traders, and kill whatever a test left running. Not thread-safe (one test at
a time).
"""

from __future__ import annotations

import pathlib
from typing import List, Optional, Union

import pytest


from tests.integration.exchange.exchange_harness import BINARY, ExchangeConfig, ExchangeProcess, make_config, shm_socket_paths
from tests.integration.trader.trader_harness import TRADER_BINARY, TraderProcess


@pytest.fixture
def binaries() -> None:
    for path, target in ((BINARY, "nanotick-exchange"), (TRADER_BINARY, "nanotick-trader")):
        if not path.exists():
            pytest.skip(f"{path} is missing: build it with 'cmake --build build/release --target {target}'")


@pytest.fixture
def processes(binaries):
    """A list every test appends the processes it starts to; all are killed at teardown."""
    started: List[Union[ExchangeProcess, TraderProcess]] = []
    yield started
    for p in reversed(started):
        if p.alive():
            p.kill()
        if isinstance(p, ExchangeProcess):  # a killed exchange leaves its socket files behind
            for path in shm_socket_paths(p.config):
                pathlib.Path(path).unlink(missing_ok=True)


@pytest.fixture
def start_exchange(processes):
    """start_exchange(config) -> a ready ExchangeProcess (its port known)."""

    def start(config: ExchangeConfig, prefix: Optional[List[str]] = None) -> ExchangeProcess:
        config.write()
        p = ExchangeProcess(config, prefix=prefix)
        processes.append(p)
        p.wait_ready()
        return p

    return start


@pytest.fixture
def start_trader(processes):
    """start_trader(config_path, duration_s=None, book_dump=None, wait=True, prefix=None, extra_args=None)
    -> a TraderProcess, by default once it logged 'ready'."""

    def start(config_path: pathlib.Path, duration_s: Optional[float] = None,
              book_dump: Optional[pathlib.Path] = None, wait: bool = True,
              prefix: Optional[List[str]] = None, extra_args: Optional[List[str]] = None) -> TraderProcess:
        p = TraderProcess(config_path, duration_s, book_dump, prefix, extra_args)
        processes.append(p)
        if wait:
            p.wait_ready()
        return p

    return start


@pytest.fixture
def config(tmp_path) -> ExchangeConfig:
    """The exchange suite's small config (T0 tick 1, T1 tick 5; clients 1-4), written on start."""
    return make_config(tmp_path)
