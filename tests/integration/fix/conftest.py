"""pytest fixtures of the FIX gateway tests (the harness is fix_harness.py; the
exchange side is tests/integration/exchange's, imported from there): start the
exchange, the gateway and QuickFIX/J clients, and kill whatever a test left
running, putting each process's log into the report of a failed test.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pytest


from tests.integration.exchange.exchange_harness import BINARY, ExchangeConfig, ExchangeProcess, make_config, shm_socket_paths
from tests.integration.fix.fix_harness import (FIX_DIR, GATEWAY, FixClient, GatewayProcess, compiled_client, free_port,
                         write_gateway_config)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


@pytest.fixture(scope="session")
def client_classes() -> pathlib.Path:
    # Not a skip: ./nanotick setup fetches these, and a suite that silently skips its FIX tests proves nothing.
    assert (FIX_DIR / "FIX44.xml").exists() and (FIX_DIR / "jars").is_dir(), \
        f"{FIX_DIR} lacks FIX44.xml or jars/: run ./nanotick setup"
    return compiled_client()


@dataclass
class FixVenue:
    """One test's venue: an exchange, a gateway in front of it, the FIX clients started."""
    tmp: pathlib.Path
    classes: pathlib.Path
    config: ExchangeConfig
    sessions: Dict[str, int]
    exchange: Optional[ExchangeProcess] = None
    gateway: Optional[GatewayProcess] = None
    gateway_config: Optional[pathlib.Path] = None
    port: int = 0
    clients: List[FixClient] = field(default_factory=list)
    gateways: List[GatewayProcess] = field(default_factory=list)
    exchanges: List[ExchangeProcess] = field(default_factory=list)

    def start_exchange(self) -> ExchangeProcess:
        self.config.write()
        self.exchange = ExchangeProcess(self.config)
        self.exchanges.append(self.exchange)
        self.exchange.wait_ready()
        return self.exchange

    def start_gateway(self, extra_args: Optional[List[str]] = None) -> GatewayProcess:
        assert self.exchange is not None
        if self.gateway_config is None:
            self.port = free_port()
            self.gateway_config = write_gateway_config(self.tmp, self.config, self.sessions, self.port)
        self.gateway = GatewayProcess(self.gateway_config, self.exchange, self.port, extra_args)
        self.gateways.append(self.gateway)
        self.gateway.wait_ready()
        return self.gateway

    def client(self, sender: str = "CLIENT1", logon: bool = True, password: Optional[str] = "",
               port: int = 0) -> FixClient:
        """password: "" = the session's own, None = none on the Logon; port: another than the gateway's (a proxy)."""
        c = FixClient(self.classes, port or self.port, sender, self.tmp / f"qfj-{sender}", password)
        self.clients.append(c)
        if logon:
            c.logged_on()
        return c


@pytest.fixture
def fix_venue_factory(tmp_path, client_classes, request):
    """fix_venue_factory(exchange_config) -> a FixVenue with its exchange and gateway started
    (CLIENT1 trades as client 1, CLIENT2 as client 2). Everything is killed at teardown."""
    for path, target in ((BINARY, "nanotick-exchange"), (GATEWAY, "nanotick-fix-gateway")):
        if not path.exists():
            pytest.skip(f"{path} is missing: build it with 'cmake --build build/release --target {target}'")
    venues: List[FixVenue] = []

    def make(config: ExchangeConfig, gateway_args: Optional[List[str]] = None) -> FixVenue:
        venue = FixVenue(tmp=tmp_path, classes=client_classes, config=config, sessions={"CLIENT1": 1, "CLIENT2": 2})
        venues.append(venue)
        venue.start_exchange()
        venue.start_gateway(gateway_args)
        return venue

    yield make
    call = getattr(request.node, "report_call", None)
    failed = call is not None and call.failed
    for venue in venues:
        for c in venue.clients:
            c.close()
            if failed:
                call.sections.append(("FIX client stderr", "\n".join(c.stderr[-60:])))
        for i, g in enumerate(venue.gateways):
            if g.alive():
                g.kill()
            if failed:
                call.sections.append((f"gateway {i + 1} log", g.stderr_text()[-20000:]))
        for i, e in enumerate(venue.exchanges):
            if e.alive():
                e.kill()
            if failed:
                call.sections.append((f"exchange {i + 1} log", e.stderr_text()[-20000:]))
            for path in shm_socket_paths(e.config):
                pathlib.Path(path).unlink(missing_ok=True)


@pytest.fixture
def fix_venue(tmp_path, fix_venue_factory) -> FixVenue:
    """The default venue: an exchange with 4 clients on an ephemeral port, and its gateway."""
    return fix_venue_factory(make_config(tmp_path))


@pytest.fixture
def start_exchange_for_cli(request):
    """start(tmp_path) -> a ready exchange (no gateway), killed at teardown."""
    started: List[ExchangeProcess] = []

    def start(tmp: pathlib.Path) -> ExchangeProcess:
        config = make_config(tmp)
        config.write()
        p = ExchangeProcess(config)
        started.append(p)
        p.wait_ready()
        return p

    yield start
    for p in started:
        if p.alive():
            p.kill()
        for path in shm_socket_paths(p.config):
            pathlib.Path(path).unlink(missing_ok=True)
