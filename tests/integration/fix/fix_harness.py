"""Harness of the FIX gateway tests: the gateway's config written per test,
the real nanotick-fix-gateway process, and the third-party FIX client --
QuickFIX/J in a JVM (client/NanotickFixClient.java), driven line by line on
its stdin, every message it receives read back from its stdout as JSON.

The exchange side is tests/integration/exchange's harness. Every wait has a
timeout; the fixtures (conftest.py) kill what a test left running.
Not thread-safe, except FixClient's reader thread, which only appends to its
own list under its condition.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import signal
import subprocess
import threading
import time
from typing import Callable, Dict, List, Optional

from tools.credential import stored_credential
from tests.integration.exchange.exchange_harness import ExchangeConfig, ExchangeProcess
from tests.integration.exchange.logged_process import LoggedProcess

REPO = pathlib.Path(__file__).resolve().parents[3]
from tools.fixbench.fixbench import compile_client, free_port  # noqa: F401 (free_port: for the tests)
GATEWAY = pathlib.Path(os.environ.get("NANOTICK_FIX_GATEWAY", REPO / "build" / "release" / "bin" / "nanotick-fix-gateway"))
FIX_DIR = REPO / "build" / "fix"  # ./nanotick setup: jars/ and FIX44.xml
GATEWAY_COMP_ID = "NANOTICK"
LOG_PREFIX = "nanotick-fix-gateway: "


def compiled_client() -> pathlib.Path:
    """The Java client, compiled once per source version (./nanotick fix-bench's, shared)."""
    return compile_client()


def fix_password(comp_id: str) -> str:
    """The FIX password of the tests' session `comp_id` (16..32 printable characters, as a key)."""
    return f"pw-{comp_id}-{hashlib.sha256(comp_id.encode()).hexdigest()[:12]}"


def write_gateway_config(directory: pathlib.Path, exchange: ExchangeConfig, sessions: Dict[str, int],
                         port: int, listen_ip: str = "127.0.0.1", extra: str = "") -> pathlib.Path:
    """sessions: the client's SenderCompID -> its nanotick client id. Keys go into secrets/; each session's
    password is fix_password(comp_id), stored as its hash (computed by nanotick-credential: tools.credential)."""
    secrets = directory / "secrets"
    secrets.mkdir(parents=True, exist_ok=True)
    lines = [
        "[gateway]",
        f'exchange_config = "{exchange.path}"',
        f'listen = "{listen_ip}:{port}"',
        *([extra] if extra else []),
        f'store_dir = "{directory / "fix-store"}"',
        f'data_dictionary = "{FIX_DIR / "FIX44.xml"}"',
    ]
    for comp_id, client_id in sessions.items():
        key_file = secrets / f"{comp_id}.key"
        key_file.touch(mode=0o600)  # the gateway reads a key file only when it is its owner's alone
        key_file.write_text(exchange.client(client_id).key + "\n")
        lines += ["", "[[sessions]]", f'sender_comp_id = "{comp_id}"', f'target_comp_id = "{GATEWAY_COMP_ID}"',
                  f"client_id = {client_id}", f'key_file = "{key_file}"',
                  f'password_hash = "{stored_credential(fix_password(comp_id))}"']
    path = directory / "fix-gateway.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class GatewayProcess(LoggedProcess):
    """A running nanotick-fix-gateway; "ready:" on stderr once QuickFIX listens."""

    def __init__(self, config_path: pathlib.Path, exchange: ExchangeProcess, port: int,
                 extra_args: Optional[List[str]] = None) -> None:
        self.port = port
        args = [str(GATEWAY), "--config", str(config_path), "--exchange", f"127.0.0.1:{exchange.port}"] + (extra_args or [])
        super().__init__(args, config_path.parent, "the FIX gateway")

    def on_stderr_line(self, line: str) -> None:
        if line.startswith(LOG_PREFIX) and line[len(LOG_PREFIX):].startswith("ready:"):
            self.mark_ready()

    def wait_ready(self, timeout: float = 15.0) -> None:
        if not self._ready.wait(timeout) or self.proc.poll() is not None:
            self.kill()
            raise AssertionError(f"the FIX gateway did not log 'ready' within {timeout} s; stderr:\n{self.stderr_text()}")

    def stop(self, timeout: float = 10.0) -> str:
        self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit(timeout, " of SIGTERM")
        assert rc == 0, f"exit code {rc}; stderr:\n{self.stderr_text()}"
        return self.stderr_text()


class FixClient:
    """QuickFIX/J's initiator in a JVM, for one session (SENDER -> NANOTICK)."""

    def __init__(self, classes: pathlib.Path, port: int, sender: str, store: pathlib.Path,
                 password: Optional[str] = "") -> None:
        """password: "" = the session's own (fix_password), None = no Password on the Logon."""
        store.mkdir(parents=True, exist_ok=True)
        classpath = f"{FIX_DIR / 'jars' / '*'}:{classes}"
        if password == "":
            password = fix_password(sender)
        self.proc = subprocess.Popen(
            ["java", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", classpath, "NanotickFixClient", "127.0.0.1",
             str(port), sender, GATEWAY_COMP_ID, str(store)] + ([password] if password is not None else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events: List[dict] = []
        self.stderr: List[str] = []
        self._settles = 0
        self._cv = threading.Condition()
        self._threads = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()
        self.wait_for(lambda e: e.get("event") == "ready", 30, "the client to start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                e = json.loads(line)
            except ValueError:
                e = {"event": "unparsed", "text": line}
            with self._cv:
                self.events.append(e)
                self._cv.notify_all()
        with self._cv:
            self.events.append({"event": "exit"})
            self._cv.notify_all()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def command(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float, what: str, start: int = 0) -> dict:
        """The first event from index `start` on that `predicate` accepts."""
        deadline = time.monotonic() + timeout
        with self._cv:
            i = start
            while True:
                while i < len(self.events):
                    if predicate(self.events[i]):
                        return self.events[i]
                    if self.events[i].get("event") == "exit":
                        raise AssertionError(f"the FIX client exited waiting for {what}; stderr:\n" + "\n".join(self.stderr[-40:]))
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} within {timeout} s; received:\n" +
                                         "\n".join(json.dumps(e) for e in self.events[-30:]))
                self._cv.wait(left)

    def mark(self) -> int:
        """The index of the next event (wait_for(start=mark()) sees only what comes after)."""
        with self._cv:
            return len(self.events)

    def send(self, fields: str) -> None:
        start = self.mark()
        self.command("send " + fields)
        sent = self.wait_for(lambda e: e.get("event") in ("sent", "error"), 10, "the send's acknowledgement", start)
        assert sent.get("event") == "sent" and sent.get("ok"), f"send {fields}: {sent}"

    def app(self, predicate: Callable[[Dict[str, str]], bool], timeout: float = 10, what: str = "message",
            start: int = 0) -> Dict[str, str]:
        """The fields of the first application message from `start` on that `predicate` accepts."""
        return self.wait_for(lambda e: e.get("in") == "app" and predicate(e["fields"]), timeout, what, start)["fields"]

    def admin(self, predicate: Callable[[Dict[str, str]], bool], timeout: float = 10, what: str = "admin message",
              start: int = 0) -> Dict[str, str]:
        return self.wait_for(lambda e: e.get("in") == "admin" and predicate(e["fields"]), timeout, what, start)["fields"]

    def report(self, cl_ord_id: str, exec_type: str, timeout: float = 10, start: int = 0) -> Dict[str, str]:
        """The ExecutionReport of `cl_ord_id` with ExecType `exec_type`."""
        return self.app(lambda f: f.get("35") == "8" and f.get("11") == cl_ord_id and f.get("150") == exec_type,
                        timeout, f"ExecutionReport {cl_ord_id} 150={exec_type}", start)

    def settle(self, timeout: float = 10) -> int:
        """Waits until the client has processed everything the gateway sent before now: a TestRequest's
        Heartbeat came back and the client's expected number moved past it (QuickFIX/J hands a message
        over, then counts it: the printed Heartbeat alone does not say the count moved). Returns the
        client's next expected number. Only for a session where the gateway sends nothing unasked."""
        self._settles += 1
        test_req_id = f"SETTLE-{self._settles}"
        start = self.mark()
        self.send(f"35=1|112={test_req_id}")
        hb = self.admin(lambda f: f.get("35") == "0" and f.get("112") == test_req_id, timeout,
                        f"the Heartbeat answering TestRequest {test_req_id}", start)
        deadline = time.monotonic() + timeout
        while True:
            mark = self.mark()
            self.command("state")
            state = self.wait_for(lambda e: e.get("event") == "state", timeout, "the client's state", mark)
            if state["next_target"] > int(hb["34"]):
                return state["next_target"]
            assert time.monotonic() < deadline, f"the client did not count Heartbeat {hb['34']} within {timeout} s"
            time.sleep(0.005)

    def logged_on(self, timeout: float = 15, start: int = 0) -> None:
        self.wait_for(lambda e: e.get("event") == "logon", timeout, "logon", start)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.command("quit")
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=5)
