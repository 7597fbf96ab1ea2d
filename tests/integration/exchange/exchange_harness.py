"""Harness of the exchange integration tests: a config written per test and
the real nanotick-exchange process started on loopback (fixtures in conftest.py).

Each test gets its own config in its tmp dir (journal inside it), an ephemeral
order-entry port (read back from the "order entry listening on" log line) and
its own multicast groups 239.255.90.N / 239.255.91.N with ports from a
per-process counter, so tests never hear each other's market data. Client API
keys are random per test; the config stores their salted SHA-256 hashes
(src/venue/credential.hpp). Every wait has a timeout; conftest.py's fixture kills
every process a test left running.

Not thread-safe (pytest runs one test at a time; the reader threads only append
to their own process's line lists under its lock).
"""

from __future__ import annotations

import functools
import itertools
import os
import pathlib
import re
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from tests.integration.exchange import md_books as mb
from tests.integration.exchange.logged_process import LoggedProcess
from tools import wire as w
from tools.credential import stored_credential

REPO = pathlib.Path(__file__).resolve().parents[3]
BINARY = pathlib.Path(os.environ.get("NANOTICK_EXCHANGE", REPO / "build" / "release" / "bin" / "nanotick-exchange"))

LOG_PREFIX = "nanotick-exchange: "
_LISTEN_RE = re.compile(r"order entry listening on [0-9.]+:(\d+)")

# Multicast group octet and port base: per process, so two concurrent pytest runs
# on one machine (other helpers' CI) do not share groups either.
_group_counter = itertools.count(1)
_PORT_BASE = 30000 + (os.getpid() % 1500) * 20
_port_counter = itertools.count(0)


def next_multicast_pair():
    """((group, port), (group, port)) for the incremental and snapshot channels of one test."""
    n = next(_group_counter) % 250 + 1
    p = _PORT_BASE + 2 * (next(_port_counter) % 10)
    return (f"239.255.90.{n}", p), (f"239.255.91.{n}", p + 1)


@functools.lru_cache(maxsize=None)
def _stored_credential(key: str) -> str:
    """The stored form of `key`, computed by nanotick-credential once per key: a
    test's configs are written several times, each run of the binary costs a fork."""
    return stored_credential(key)


@dataclass
class ClientSpec:
    id: int
    name: str
    key: str = field(default_factory=lambda: secrets.token_hex(12))  # 24 printable characters
    rate_limit_per_s: int = 1_000_000
    rate_burst: int = 100_000
    cancel_on_disconnect: bool = True
    role: str = "trader"  # "admin": may send admin requests (docs/CONTROLS.md "Admin")
    # [clients.account] (docs/CONTROLS.md): cash, positions {symbol: qty}, limits; None: no account.
    account: Optional[Dict[str, object]] = None

    def credential(self) -> str:
        return _stored_credential(self.key)


@dataclass
class InstrumentSpec:
    symbol: str
    tick_size: int = 1
    min_price: int = 1
    max_price: int = 1_000_000
    collar: int = 0
    max_order_qty: int = 1_000_000
    max_orders: int = 8192
    max_levels: int = 1024


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class ExchangeConfig:
    """One test's exchange config; write() renders it as TOML (docs/EXCHANGE.md "Config")."""

    dir: pathlib.Path
    clients: List[ClientSpec]
    instruments: List[InstrumentSpec]
    server: Dict[str, object] = field(default_factory=dict)
    market_data: Dict[str, object] = field(default_factory=dict)
    journal: Dict[str, object] = field(default_factory=dict)
    threads: Dict[str, object] = field(default_factory=dict)
    accounts: Dict[str, object] = field(default_factory=dict)  # [accounts] (required = ...), when not empty
    transport: str = "tcp"  # what ExchangeProcess.client() connects over: "tcp" or "shm"

    @property
    def path(self) -> pathlib.Path:
        return self.dir / "exchange.toml"

    @property
    def journal_dir(self) -> pathlib.Path:
        return pathlib.Path(str(self.journal["dir"]))

    @property
    def incremental(self):
        g, p = str(self.market_data["incremental"]).split(":")
        return g, int(p)

    @property
    def snapshot(self):
        g, p = str(self.market_data["snapshot"]).split(":")
        return g, int(p)

    def client(self, client_id: int) -> ClientSpec:
        return next(c for c in self.clients if c.id == client_id)

    def write(self) -> pathlib.Path:
        lines = ["# written by tests/integration/exchange/conftest.py"]
        for name, table in (("server", self.server), ("market_data", self.market_data), ("journal", self.journal), ("threads", self.threads)):
            lines.append(f"[{name}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
            lines.append("")
        if self.accounts:
            lines.append("[accounts]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in self.accounts.items()]
            lines.append("")
        for ins in self.instruments:
            lines.append("[[instruments]]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in vars(ins).items()]
            lines.append("")
        for c in self.clients:
            lines.append("[[clients]]")
            lines += [
                f"id = {c.id}",
                f"name = {_toml_value(c.name)}",
                f"credential = {_toml_value(c.credential())}",
                f"rate_limit_per_s = {c.rate_limit_per_s}",
                f"rate_burst = {c.rate_burst}",
                f"cancel_on_disconnect = {_toml_value(c.cancel_on_disconnect)}",
                f"role = {_toml_value(c.role)}",
                "",
            ]
            if c.account is not None:
                lines.append("[clients.account]")
                lines += [f"{k} = {_toml_value(v)}" for k, v in c.account.items()]
                lines.append("")
        self.path.write_text("\n".join(lines))
        return self.path


_shm_serial = itertools.count(1)


def next_shm_path() -> str:
    return f"/tmp/ntx-{os.getpid()}-{next(_shm_serial)}.sock"


def shm_socket_paths(config: "ExchangeConfig") -> List[str]:
    """The UNIX socket files an exchange of `config` makes (order entry, market data ring):
    a killed exchange leaves them behind for the next one to replace."""
    return [str(p) for p in (config.server.get("shm_path"), config.market_data.get("shm_path")) if p]


def make_config(tmp_path: pathlib.Path, n_clients: int = 4, transport: str = "tcp", **overrides) -> ExchangeConfig:
    """A small config for one test: two instruments (tick 1 and tick 5), `n_clients` clients."""
    incr, snap = next_multicast_pair()
    cfg = ExchangeConfig(
        dir=tmp_path,
        clients=[ClientSpec(id=i, name=f"c{i}") for i in range(1, n_clients + 1)],
        instruments=[InstrumentSpec("T0"), InstrumentSpec("T1", tick_size=5, min_price=5, max_price=100_000, max_order_qty=10_000)],
        server={
            "order_entry": "127.0.0.1:0",
            "max_sessions": 16,
            "logon_timeout_ms": 2000,
            "heartbeat_ms": 1000,
            "min_heartbeat_ms": 100,
            "max_heartbeat_ms": 60000,
            "output_buffer_bytes": 1 << 20,
            "read_budget_bytes": 65536,
            # Every test exchange offers shared-memory sessions too; a short
            # path (a UNIX socket path has at most 107 bytes; tmp_path may be longer).
            "shm_path": next_shm_path(),
            "shm_ring_bytes": 65536,
        },
        market_data={
            "interface": "127.0.0.1",
            "incremental": f"{incr[0]}:{incr[1]}",
            "snapshot": f"{snap[0]}:{snap[1]}",
            "ttl": 0,
            "mtu": 1400,
            "heartbeat_ms": 100,
            "snapshot_interval_ms": 200,
            # ... and the incremental channel in shared memory too (the
            # traders on transport "shm" read it from there).
            "shm_path": next_shm_path(),
            "shm_ring_packets": 4096,
        },
        journal={
            "dir": str(tmp_path / "journal"),
            "fsync": "batch",
            "batch_window_us": 1000,
            "segment_bytes": 1 << 20,
            "snapshot_every": 0,
        },
        threads={"mode": "compact", "idle": "backoff", "cpus": []},
        transport=transport,
    )
    for section, values in overrides.items():
        getattr(cfg, section).update(values)
    return cfg


class ExchangeProcess(LoggedProcess):
    """A running nanotick-exchange; its stderr is read by a thread (the port, "ready")."""

    def __init__(self, config: ExchangeConfig, extra_args: Optional[List[str]] = None,
                 prefix: Optional[List[str]] = None) -> None:
        """`prefix` runs the binary through another command (`ip netns exec NS`), which must exec it."""
        self.config = config
        self.port: Optional[int] = None
        config.journal_dir.mkdir(parents=True, exist_ok=True)
        args = (prefix or []) + [str(BINARY), "--config", str(config.path), "--journal-dir", str(config.journal_dir)] + (extra_args or [])
        super().__init__(args, config.dir, "the exchange")

    def on_stderr_line(self, line: str) -> None:
        if line.startswith(LOG_PREFIX):
            m = _LISTEN_RE.search(line)
            if m:
                self.port = int(m.group(1))
            if line[len(LOG_PREFIX):].strip() == "ready":
                self.mark_ready()

    def wait_ready(self, timeout: float = 10.0) -> int:
        if not self._ready.wait(timeout):
            self.kill()
            raise AssertionError(f"the exchange did not log 'ready' within {timeout} s; stderr:\n{self.stderr_text()}")
        if self.proc.poll() is not None or self.port is None:
            self.proc.wait(timeout=5)
            self._join(2)
            raise AssertionError(f"the exchange exited ({self.proc.returncode}) or logged no port before 'ready'; stderr:\n{self.stderr_text()}")
        return self.port

    def stop(self, sig: Optional[int] = signal.SIGTERM, timeout: float = 10.0) -> Dict[str, int]:
        """Signals (unless `sig` is None: already sent), waits for the exit, asserts it is 0
        and returns the counters printed on stdout."""
        if sig is not None:
            self.proc.send_signal(sig)
        rc = self.wait_exit(timeout, f" of signal {sig}")
        assert rc == 0, f"exit code {rc} after signal {sig}; stderr:\n{self.stderr_text()}"
        return self.counters()

    def counters(self) -> Dict[str, int]:
        """The "name value" lines of stdout (names may contain spaces)."""
        out: Dict[str, int] = {}
        for line in self.lines():
            name, _, value = line.strip().rpartition(" ")
            if name and re.fullmatch(r"-?\d+", value):
                out[name] = int(value)
        return out

    def client(self, timeout: float = 5.0, rcvbuf: Optional[int] = None) -> w.OrderEntryClient:
        """A new connection over the config's transport (`rcvbuf`: TCP only)."""
        if self.config.transport == "shm":
            assert rcvbuf is None, "rcvbuf is a TCP setting"
            return w.ShmOrderEntryClient(str(self.config.server["shm_path"]), timeout=timeout)
        assert self.port is not None
        return w.OrderEntryClient(self.port, timeout=timeout, rcvbuf=rcvbuf)

    def logon(self, client_id: int, heartbeat_ms: int = 0, timeout: float = 5.0, retry_already_logged_on: bool = False,
              rcvbuf: Optional[int] = None) -> w.OrderEntryClient:
        """A logged-on session of `client_id`. With `retry_already_logged_on`, a LogonReject
        AlreadyLoggedOn (the exchange has not yet seen this client's previous connection
        close) is retried for up to 3 s."""
        deadline = time.monotonic() + 3.0
        while True:
            c = self.client(timeout, rcvbuf)
            c.send(w.Logon(client_id=client_id, heartbeat_ms=heartbeat_ms, credential=self.config.client(client_id).key.encode("ascii")))
            msg = c.recv()
            if isinstance(msg, w.LogonAck):
                return c
            c.close()
            if not (retry_already_logged_on and msg == w.LogonReject(reason=w.LogonRejectReason.ALREADY_LOGGED_ON, seq=1)
                    and time.monotonic() < deadline):
                raise AssertionError(f"logon of client {client_id} answered with {msg}")
            time.sleep(0.02)


def assert_serving(ex: ExchangeProcess, client_id: int, instrument: int = 0, price: int = 1) -> None:
    """A fresh session of `client_id` logs on, gets an order acknowledged and cancelled, logs out.
    The default price, the band's lowest, never trades with the tests' orders."""
    with ex.logon(client_id) as c:
        coid = 900_000 + secrets.randbelow(100_000)
        s = c.send(w.NewOrder(client_order_id=coid, instrument=instrument, side=w.BUY, order_type=w.LIMIT, price=price, qty=1))
        c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s, client_order_id=coid)
        s = c.send(w.CancelOrder(client_order_id=coid, instrument=instrument))
        c.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, client_order_id=coid, cancel_reason=w.CANCEL_USER)
        c.send(w.Logout())
        c.expect(w.ServerLogout, reason=w.LogoutReason.CLIENT_REQUEST)
        c.wait_closed()
        assert not c.in_seq_errors, c.in_seq_errors


class MdRecorder:
    """Records both market data channels of a config from background threads (so the
    kernel's socket buffers never overflow while a test thread is busy)."""

    def __init__(self, config: ExchangeConfig) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.incremental: List[w.Packet] = []
        self.snapshot: List[w.Packet] = []
        self.errors: List[str] = []
        self._receivers = [w.MulticastReceiver(*config.incremental), w.MulticastReceiver(*config.snapshot)]
        self._threads = [
            threading.Thread(target=self._run, args=(self._receivers[0], self.incremental), daemon=True),
            threading.Thread(target=self._run, args=(self._receivers[1], self.snapshot), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _run(self, receiver: w.MulticastReceiver, sink: List[w.Packet]) -> None:
        while not self._stop.is_set():
            try:
                pkt = receiver.recv(0.05)
            except w.WireError as e:  # a malformed packet is a test failure, reported by check()
                with self._lock:
                    self.errors.append(str(e))
                continue
            if pkt is not None:
                with self._lock:
                    sink.append(pkt)

    def packets(self):
        """(incremental, snapshot) packets so far (copies)."""
        with self._lock:
            return list(self.incremental), list(self.snapshot)

    def check(self, mtu: Optional[int] = None, from_start: bool = False) -> None:
        """No malformed packet, none above `mtu`, no gap or repeat in either channel (and, with
        `from_start`, both channels began at seq 1: the recorder ran before the exchange)."""
        assert not self.errors, f"malformed market data packets: {self.errors[:5]}"
        incremental, snapshot = self.packets()
        for packets in (incremental, snapshot):
            problems = mb.sequence_problems(packets, 1 if from_start else None)
            assert not problems, problems[:5]
            if mtu is not None:
                big = [p.size for p in packets if p.size > mtu]
                assert not big, f"packets above the mtu {mtu}: {big[:5]}"

    def books(self) -> mb.IncrementalBooks:
        """The incremental channel applied from its first packet (asserts no gap)."""
        books = mb.IncrementalBooks()
        for pkt in self.packets()[0]:
            books.apply_packet(pkt)
        return books

    def snapshots(self) -> List[mb.Snapshot]:
        a = mb.SnapshotAssembler()
        for pkt in self.packets()[1]:
            a.apply_packet(pkt)
        return a.complete

    def wait_for(self, predicate, timeout: float, what: str):
        """Polls predicate() until it returns a truthy value; AssertionError naming `what` on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"market data: {what} not seen within {timeout} s")
            time.sleep(0.02)

    def wait_incremental_heartbeat(self, next_seq: int, timeout: float = 3.0) -> None:
        """Waits for an incremental heartbeat saying `next_seq` (the channel is quiet at that point)."""
        self.wait_for(lambda: any(p.is_heartbeat and p.first_seq == next_seq for p in self.packets()[0]), timeout,
                      f"an incremental heartbeat with next seq {next_seq}")

    def wait_snapshots(self, instruments: int, min_last_seq: int, timeout: float = 3.0) -> Dict[int, mb.Snapshot]:
        """The latest complete snapshot of each instrument, once every one has last_seq >= `min_last_seq`."""

        def latest():
            out: Dict[int, mb.Snapshot] = {}
            for s in self.snapshots():
                out[s.instrument] = s
            if len(out) == instruments and all(s.last_seq >= min_last_seq for s in out.values()):
                return out
            return None

        return self.wait_for(latest, timeout, f"snapshots of {instruments} instruments with last_seq >= {min_last_seq}")

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        for r in self._receivers:
            r.close()

    def __enter__(self) -> "MdRecorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
