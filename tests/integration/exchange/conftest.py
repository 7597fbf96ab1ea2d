"""pytest fixtures of the exchange integration tests (the harness itself is
exchange_harness.py): skip when the server binary is missing, start processes
and kill whatever a test left running. Not thread-safe (one test at a time).
"""

from __future__ import annotations

import pathlib
from typing import List, Optional

import pytest

from tests.integration.exchange.exchange_harness import BINARY, ExchangeConfig, ExchangeProcess, make_config, shm_socket_paths


@pytest.fixture
def exchange_binary() -> pathlib.Path:
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is missing: build it with 'cmake --build build/release --target nanotick-exchange'")
    return BINARY


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test item (start_exchange reads it)."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


@pytest.fixture
def start_exchange(exchange_binary, request):
    """start_exchange(config) -> a ready ExchangeProcess; every process started is killed at teardown.
    When the test failed, each exchange's log goes into the report (why a session closed, a crash)."""
    started: List[ExchangeProcess] = []

    def start(config: ExchangeConfig, extra_args: Optional[List[str]] = None, wait: bool = True) -> ExchangeProcess:
        config.write()
        p = ExchangeProcess(config, extra_args)
        started.append(p)
        if wait:
            p.wait_ready()
        return p

    yield start
    call = getattr(request.node, "report_call", None)
    for i, p in enumerate(started):
        alive = p.alive()
        if alive:
            p.kill()
        if call is not None and call.failed:
            call.sections.append((f"exchange {i + 1} log ({'running' if alive else 'exited'} at teardown)",
                                  p.stderr_text()[-20000:]))
        # A killed exchange leaves its shared-memory socket files (the next one
        # would replace them); a test run leaves nothing behind in /tmp.
        for path in shm_socket_paths(p.config):
            pathlib.Path(path).unlink(missing_ok=True)


@pytest.fixture(params=["tcp", "shm"])
def transport(request) -> str:
    """The order-entry transport a test's sessions use: every test that takes
    `config` runs over both (the gateway's session code is one for both)."""
    return request.param


@pytest.fixture
def config(tmp_path, transport) -> ExchangeConfig:
    return make_config(tmp_path, transport=transport)
