"""nanotick-floor (apps/floor.cpp) as a user runs it: bad options exit 2
with a message naming the option; a short run on a group of its own answers
exactly the datagrams this test sends (a Python multicast sender, after the
"ready" line), runs the ping-pong at about the asked rate, and prints the
same "key value" summary on stdout and in --summary FILE; SIGINT stops it
cleanly. Groups 239.255.97.N: no other suite uses them. Bounded waits.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import socket
import subprocess
import time
from typing import Dict

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("NANOTICK_BUILD_DIR", REPO / "build" / "release"))
FLOOR = BUILD / "bin" / "nanotick-floor"


@pytest.fixture
def floor_binary() -> pathlib.Path:
    if not FLOOR.exists():
        pytest.skip(f"{FLOOR} is missing: build it with 'cmake --build build/release --target nanotick-floor'")
    return FLOOR


def counters(text: str) -> Dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, _, value = line.strip().rpartition(" ")
        if key and re.fullmatch(r"-?\d+(\.\d+)?", value):
            out[key] = value
    return out


@pytest.mark.parametrize("args, message", [
    (["--group", "239.255.97.1"], "--group requires --port"),
    (["--port", "9000"], "--port requires --group"),
    (["--group", "10.0.0.1", "--port", "9000"], "'10.0.0.1' is not a multicast group"),
    (["--group", "239.255.97.1", "--port", "70000"], "--port"),
    (["--group", "239.255.97.1", "--port", "9000", "--rate", "0"], "--rate"),
    (["--group", "239.255.97.1", "--port", "9000", "--idle", "sometimes"], "--idle"),
    (["--group", "239.255.97.1", "--port", "9000", "--duration", "-1"], "--duration"),
    (["--config", "/nonexistent/exchange.toml"], "--config"),
    (["--config", str(REPO / "config" / "exchange.toml"), "--group", "239.255.97.1", "--port", "9000"],
     "excludes"),
    ([], "give --config EXCHANGE_TOML, or --group and --port"),
    (["--bogus"], "--bogus"),
])
def test_bad_options_exit_2_naming_the_option(floor_binary, args, message):
    done = subprocess.run([str(floor_binary), *args], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert message in done.stderr, f"{args}: {done.stderr}"


def test_a_bad_exchange_config_is_a_config_error(floor_binary, tmp_path):
    bad = tmp_path / "exchange.toml"
    bad.write_text('[market_data]\nincremental = "not-an-address"\n')
    done = subprocess.run([str(floor_binary), "--config", str(bad)], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2, done.stderr
    assert "config error:" in done.stderr and str(bad) in done.stderr, done.stderr


def test_a_short_run_answers_every_datagram_and_prints_its_summary(floor_binary, tmp_path):
    n = os.getpid() % 250 + 1
    group, port = f"239.255.97.{n}", 43000 + os.getpid() % 2000
    summary = tmp_path / "floor.txt"
    proc = subprocess.Popen([str(floor_binary), "--group", group, "--port", str(port), "--rate", "500",
                             "--status", "0.2", "--summary", str(summary)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 15
        while not any(line.endswith(": ready") for line in seen):
            line = proc.stderr.readline()
            assert line or proc.poll() is None, f"exited before ready: {''.join(seen)}"
            seen.append(line.rstrip("\n"))
            assert time.monotonic() < deadline, f"no ready line: {seen}"
        sent = 200
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
            for i in range(sent):
                s.sendto(bytes([i % 256]) * 120, (group, port))
                if i % 50 == 49:
                    time.sleep(0.005)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    log = "\n".join(seen) + "\n" + err
    assert proc.returncode == 0, log
    assert "received SIGINT" in log and log.rstrip().endswith("stopped cleanly"), log
    assert re.search(r"floor: tick-to-trade floor p50 [\d.]+ us p99 [\d.]+ us \(\d+\), round trip floor", log), log
    c = counters(out)
    assert summary.read_text() == out, "--summary FILE holds what stdout got"
    assert c["tick_to_trade_floor.count"] == str(sent), c
    assert c["tick_to_trade_floor.datagrams"] == str(sent), c
    assert c["tick_to_trade_floor.bytes_sunk"] == str(sent * 64), c
    for k in ("short_writes", "write_errors", "recv_errors", "sink_errors", "truncated"):
        assert c[f"tick_to_trade_floor.{k}"] == "0", k
    assert 0 < int(c["tick_to_trade_floor.p50_ns"]) <= int(c["tick_to_trade_floor.p99_ns"]) \
        <= int(c["tick_to_trade_floor.max_ns"]), c
    seconds = float(c["round_trip_floor.seconds"])
    pings = int(c["round_trip_floor.pings"])
    assert 0 < pings <= seconds * 500 + 1, c
    assert int(c["round_trip_floor.count"]) >= pings - 1 and int(c["round_trip_floor.count"]) > 0, c
    assert c["round_trip_floor.client_errors"] == "0" and c["round_trip_floor.echo_errors"] == "0", c
    assert float(c["round_trip_floor.pings_per_s"]) == 500.0
