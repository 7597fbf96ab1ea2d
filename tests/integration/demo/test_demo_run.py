"""The demo end to end (python -m tools.demo, issue 6): the real exchange and
the four demo traders on loopback, run by the demo as a user runs it, and
its failure paths:

- a short run (--duration 3) exits 0 and leaves the run directory complete:
  config copies pointing at each other and at the running exchange, a log and
  a summary per process, the journal inside; each trader's fills equal the
  exchange's client.<id>.fills, the traders logged out themselves before the
  exchange stopped, and no process of the run is left; the loopback floor
  (nanotick-floor) ran beside them, its summary counts samples of both floors
  and the summary shows the end-to-end figures beside it;
- a missing build and an unknown trader are refused before anything starts
  (exit 2, the message says what to do);
- a trader killed mid-run is named with its exit and log lines, and the demo
  stops everyone else cleanly (exit 1);
- Ctrl-C (SIGINT to the demo) stops everything in order and still prints the
  summary (exit 130);
- a busy order-entry port: the exchange's own error line is shown (exit 1).

Each test runs on an exchange config of its own: config/exchange.toml (the
traders' clients, keys and instruments) with an ephemeral order-entry port
and multicast groups no other test uses, so concurrent runs never meet. Every
wait is bounded; the `leftovers` fixture kills whatever a failed test left.
"""

from __future__ import annotations

import itertools
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time
import tomllib
from typing import Dict, List, Optional, Tuple

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DEMO = ["-m", "tools.demo"]  # run from the repository root (cwd=REPO), as the launcher does
BUILD = pathlib.Path(os.environ.get("NANOTICK_BUILD_DIR", REPO / "build" / "release"))
TRADERS = {"mm1": 1, "mm2": 2, "taker": 3, "random": 4}  # config/trader-<name>.toml -> client id

_configs = itertools.count()


@pytest.fixture
def binaries() -> None:
    for name in ("nanotick-exchange", "nanotick-trader", "nanotick-floor"):
        if not (BUILD / "bin" / name).exists():
            pytest.skip(f"{BUILD / 'bin' / name} is missing: build it with 'cmake --build build/release --target {name}'")


def processes_using(path: pathlib.Path) -> List[Tuple[int, str]]:
    """Live processes whose command line names `path` (every child of a demo run names its run dir)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if str(path) in cmd:
            found.append((int(entry.name), cmd))
    return found


@pytest.fixture
def leftovers(tmp_path):
    """Kills (after the test) any process still naming the test's tmp dir: a safety net only;
    the tests assert that the demo itself left none."""
    yield
    for pid, _ in processes_using(tmp_path):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def demo_exchange_config(tmp_path: pathlib.Path, order_entry: str = "127.0.0.1:0") -> pathlib.Path:
    """config/exchange.toml with this test's own port and multicast groups (239.255.92/93.N: no
    other suite uses them), and a faster snapshot cycle so the traders' books go live sooner."""
    n = (os.getpid() * 7 + next(_configs)) % 250 + 1
    port = 42000 + 2 * (os.getpid() % 4000)
    text = (REPO / "config" / "exchange.toml").read_text()
    for key, value in (("order_entry", order_entry), ("incremental", f"239.255.92.{n}:{port}"),
                       ("snapshot", f"239.255.93.{n}:{port + 1}")):
        text, count = re.subn(rf'(?m)^{key} = "[^"]*"', f'{key} = "{value}"', text)
        assert count == 1, key
    text, count = re.subn(r"(?m)^snapshot_interval_ms = \d+", "snapshot_interval_ms = 200", text)
    assert count == 1
    path = tmp_path / "exchange-under-test.toml"
    path.write_text(text)
    tomllib.loads(text)
    return path


def demo_args(run: pathlib.Path, config: pathlib.Path, *extra: str) -> List[str]:
    return [sys.executable, *DEMO, "--root", str(REPO), "--build-dir", str(BUILD), "--run-dir", str(run),
            "--config", str(config), *extra]


def run_demo(args: List[str], timeout: float = 90.0) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=REPO)


def describe(done) -> str:
    return f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


def counters(path: pathlib.Path) -> Dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.strip().rpartition(" ")
        if key and re.fullmatch(r"-?\d+(\.\d+)?", value):
            out[key] = value
    return out


class BackgroundDemo:
    """A demo running in the background, its output in files, for the tests that act mid-run."""

    def __init__(self, tmp_path: pathlib.Path, args: List[str]) -> None:
        self.out_path, self.err_path = tmp_path / "demo.out", tmp_path / "demo.err"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=REPO)

    def stdout(self) -> str:
        return self.out_path.read_text()

    def stderr(self) -> str:
        return self.err_path.read_text()

    def wait_running(self, timeout: float = 40.0) -> None:
        deadline = time.monotonic() + timeout
        while "running for" not in self.stdout():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError(f"the demo did not start its run: {self.describe()}")
            time.sleep(0.05)

    def wait_exit(self, timeout: float = 40.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"the demo did not exit within {timeout} s: {self.describe()}")

    def describe(self) -> str:
        return f"exit {self.proc.poll()}\nstdout:\n{self.stdout()}\nstderr:\n{self.stderr()}"


def state(run: pathlib.Path) -> dict:
    return json.loads((run / "demo.json").read_text())


def exit_codes(run: pathlib.Path) -> Dict[str, Optional[int]]:
    return {p["name"]: p["exit_code"] for p in state(run)["processes"]}


def check_summaries_agree(run: pathlib.Path) -> int:
    """Each trader's fills equal the exchange's for its client; returns the total fills."""
    ex = counters(run / "counters" / "exchange.txt")
    total = 0
    for name, client in TRADERS.items():
        summary = counters(run / "counters" / f"trader-{name}.txt")
        assert "fills" in summary, f"trader {name} printed no summary: {summary}"
        assert summary["fills"] == ex.get(f"client.{client}.fills", "0"), (
            f"trader {name} counted {summary['fills']} fills, the exchange {ex.get(f'client.{client}.fills', '0')}")
        assert summary["orders.open_at_end"] == "0", f"trader {name} logged out with open orders"
        total += int(summary["fills"])
    # Every trader logged out itself while the exchange still served: traders were stopped first.
    assert ex["logout.client request"] == str(len(TRADERS)), ex
    assert ex["logout.server shutdown"] == "0", ex
    return total


def test_demo_runs_every_process_and_their_summaries_agree(binaries, leftovers, tmp_path):
    run = tmp_path / "run"
    config = demo_exchange_config(tmp_path)
    done = run_demo(demo_args(run, config, "--duration", "3", "--no-report"))
    assert done.returncode == 0, describe(done)
    assert processes_using(run) == [], "the demo left processes running"

    processes = ["exchange"] + [f"trader-{n}" for n in TRADERS]
    for sub in ("configs", "logs", "counters", "telemetry", "journal"):
        assert (run / sub).is_dir(), sub
    for p in processes + ["floor"]:
        if p != "floor":  # the floor reads the exchange's copy
            assert (run / "configs" / f"{p}.toml").is_file(), p
        assert (run / "logs" / f"{p}.log").read_text().rstrip().endswith("stopped cleanly"), p
        assert (run / "counters" / f"{p}.txt").stat().st_size > 0, p
    assert any((run / "journal").iterdir()), "the exchange journaled nothing inside the run dir"
    assert (run / "summary.txt").is_file()

    st = state(run)
    assert st["result"] == "ok" and st["traders"] == list(TRADERS), st
    assert exit_codes(run) == {p: 0 for p in processes + ["floor"]}, st
    assert st["floor"] is True and next(p for p in st["processes"] if p["name"] == "floor")["role"] == "floor"
    address = st["exchange_address"]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", address) and not address.endswith(":0"), address

    ex_copy = tomllib.loads((run / "configs" / "exchange.toml").read_text())
    original = tomllib.loads(config.read_text())
    assert ex_copy["journal"]["dir"] == str(run / "journal")
    assert ex_copy["market_data"] == original["market_data"]
    assert ex_copy["clients"] == original["clients"]
    for name, client in TRADERS.items():
        copy = tomllib.loads((run / "configs" / f"trader-{name}.toml").read_text())
        assert copy["trader"]["exchange_config"] == "exchange.toml", name
        assert copy["session"]["exchange"] == address, name
        assert copy["session"]["client_id"] == client, name
        assert f"market data {original['market_data']['incremental']}" in (run / "logs" / f"trader-{name}.log").read_text()

    total = check_summaries_agree(run)
    assert total > 0, "nobody traded in 3 s"

    # The floor measured both hops on the run's own group while the traders traded.
    floor = counters(run / "counters" / "floor.txt")
    assert int(floor["tick_to_trade_floor.count"]) > 0, floor
    assert int(floor["round_trip_floor.count"]) > 0, floor
    assert floor["tick_to_trade_floor.write_errors"] == "0" and floor["round_trip_floor.client_errors"] == "0", floor
    assert f"tick-to-trade floor on {original['market_data']['incremental']}" in (run / "logs" / "floor.log").read_text()
    summary = (run / "summary.txt").read_text()
    assert "Beside the loopback floor" in summary and "Beside the loopback floor" in done.stdout, summary
    block = summary[summary.index("Beside the loopback floor"):]
    floor_rows = [line.split() for line in block.splitlines() if line.strip().startswith("floor:")]
    assert len(floor_rows) == 2, block
    assert floor_rows[0][-5] == floor["tick_to_trade_floor.count"], block
    assert floor_rows[1][-5] == floor["round_trip_floor.count"], block
    ratios = [line.split()[-4:] for line in block.splitlines() if line.strip().startswith("ratio")]
    assert len(ratios) == 2 and all(re.fullmatch(r"\d+\.\dx", r) for r in ratios[0] + ratios[1]), block

    out = done.stdout
    rows = {line.split()[0] for line in out.splitlines() if line.split()}
    assert set(TRADERS) <= rows, out
    assert "req/s" in out and "orders/s" in out, f"no live status lines: {out}"
    assert "exchange fills per client: 1 (mm1)" in out
    assert "report: skipped (--no-report)" in out
    assert out.rstrip().endswith(f"run dir: {run}"), out


def test_missing_build_is_a_clear_error(leftovers, tmp_path):
    run = tmp_path / "run"
    nowhere = tmp_path / "nowhere"
    done = run_demo([sys.executable, *DEMO, "--root", str(REPO), "--build-dir", str(nowhere),
                     "--run-dir", str(run), "--duration", "1"], timeout=30)
    assert done.returncode == 2, describe(done)
    assert str(nowhere / "bin" / "nanotick-exchange") in done.stderr, describe(done)
    assert "run ./nanotick build" in done.stderr, describe(done)
    assert not run.exists(), "the run dir was created although nothing could start"


def test_unknown_trader_is_refused_before_anything_starts(binaries, leftovers, tmp_path):
    run = tmp_path / "run"
    done = run_demo(demo_args(run, demo_exchange_config(tmp_path), "--traders", "mm1,nope", "--duration", "1"),
                    timeout=30)
    assert done.returncode == 2, describe(done)
    assert "trader 'nope'" in done.stderr and str(REPO / "config" / "trader-nope.toml") in done.stderr, describe(done)
    assert not run.exists()


def test_a_trader_killed_mid_run_is_named_and_everything_else_stops(binaries, leftovers, tmp_path):
    run = tmp_path / "run"
    demo = BackgroundDemo(tmp_path, demo_args(run, demo_exchange_config(tmp_path), "--duration", "60"))
    demo.wait_running()
    taker = next(p for p in state(run)["processes"] if p["name"] == "trader-taker")
    os.kill(taker["pid"], signal.SIGKILL)
    rc = demo.wait_exit()
    err = demo.stderr()
    assert rc == 1, demo.describe()
    assert "error: trader taker was killed by SIGKILL during the run" in err, demo.describe()
    assert f"lines of {run / 'logs' / 'trader-taker.log'}:" in err, demo.describe()
    assert "nanotick-trader[taker]: ready" in err, "the log's last lines are not shown"
    assert processes_using(run) == [], "the demo left processes running"
    codes = exit_codes(run)
    assert codes.pop("trader-taker") == -signal.SIGKILL
    assert codes == {"exchange": 0, "floor": 0, "trader-mm1": 0, "trader-mm2": 0, "trader-random": 0}, demo.describe()
    assert state(run)["result"] == "failed"


def test_ctrl_c_stops_everything_in_order_and_still_summarises(binaries, leftovers, tmp_path):
    run = tmp_path / "run"
    demo = BackgroundDemo(tmp_path, demo_args(run, demo_exchange_config(tmp_path), "--duration", "60"))
    demo.wait_running()
    time.sleep(1.5)
    demo.proc.send_signal(signal.SIGINT)
    rc = demo.wait_exit()
    assert rc == 128 + signal.SIGINT, demo.describe()
    assert processes_using(run) == [], "the demo left processes running"
    assert set(exit_codes(run).values()) == {0}, demo.describe()
    check_summaries_agree(run)
    out = demo.stdout()
    assert "interrupted (SIGINT)" in out and "trader  client  fills" in out, demo.describe()
    assert state(run)["result"] == "interrupted"


def test_busy_port_shows_the_exchanges_error(binaries, leftovers, tmp_path):
    run = tmp_path / "run"
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_demo(demo_args(run, demo_exchange_config(tmp_path, f"127.0.0.1:{port}"), "--duration", "3"),
                        timeout=60)
    assert done.returncode == 1, describe(done)
    assert "the exchange exited with code 1 before it was ready" in done.stderr, describe(done)
    assert f"already listening on port {port}" in done.stderr, describe(done)
    assert processes_using(run) == []
    assert not (run / "logs" / "trader-mm1.log").exists(), "a trader was started without an exchange"
