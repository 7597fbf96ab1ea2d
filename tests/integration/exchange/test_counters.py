"""The exchange's counters file (docs/TELEMETRY.md "The counters file") read
from outside while the exchange runs, as `./nanotick stat` reads it: values
move as sessions log on and orders flow, a second exchange cannot take the
file, a clean stop leaves the final values (equal to what the exchange
prints) marked stopped, and a kill -9 leaves a file that reads as died and a
path the next exchange takes over."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from tools import wire as w
from tests.integration.exchange.exchange_harness import REPO, make_config
from tools.counters.counters_file import read


def wait_value(path, label, predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        value = read(path).values().get(label)
        if value is not None and predicate(value):
            return value
        assert time.monotonic() < deadline, f"{label} = {value} in {path} after {timeout} s"
        time.sleep(0.02)


def test_counters_are_live_outside_the_process_and_final_after_a_clean_stop(start_exchange, config, tmp_path):
    path = tmp_path / "exchange.counters"
    ex = start_exchange(config, ["--counters", str(path)])
    f = read(path)
    assert (f.process, f.status, f.pid) == ("exchange", "running", ex.proc.pid)
    assert f.values()["sessions_live"] == 0 and f.values()["messages_in"] == 0
    with ex.logon(1) as c:
        wait_value(path, "sessions_live", lambda v: v == 1)
        s = c.send(w.NewOrder(client_order_id=1, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1, qty=1))
        c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s, client_order_id=1)
        wait_value(path, "requests_sequenced", lambda v: v >= 1)
        wait_value(path, "messages_in", lambda v: v >= 2)  # logon + order
        # ./nanotick stat's own reading, as JSON.
        out = subprocess.run([sys.executable, "-m", "tools.counters", str(path), "--json", "--filter", "sessions_"],
                             cwd=REPO, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        shown = json.loads(out.stdout)
        assert shown["status"] == "running" and shown["counters"]["sessions_live"] == 1
        assert set(shown["counters"]) == {"sessions_logged_on", "sessions_closed", "sessions_live"}
        c.send(w.Logout())
        c.expect(w.ServerLogout, reason=w.LogoutReason.CLIENT_REQUEST)
    printed = ex.stop()
    final = read(path)
    assert final.status == "stopped"
    values = final.values()
    assert values["sessions_logged_on"] == 1 and values["sessions_live"] == 0
    assert values["ack_latency_ns.count"] >= 1  # the summaries are published once more at the stop
    # What the exchange printed at exit is the file's contents.
    assert {k: v for k, v in printed.items() if k in values} == values
    assert set(values) <= set(printed)


def test_a_second_exchange_cannot_take_a_live_file_and_a_killed_ones_is_taken_over(start_exchange, config, tmp_path):
    path = tmp_path / "exchange.counters"
    ex = start_exchange(config, ["--counters", str(path)])
    (tmp_path / "other").mkdir()
    other = make_config(tmp_path / "other")
    second = start_exchange(other, ["--counters", str(path)], wait=False)
    rc = second.wait_exit(10, " (a second exchange on a live counters file)")
    assert rc == 1, second.stderr_text()
    assert "counters file" in second.stderr_text() and "in use by another live process" in second.stderr_text()
    assert read(path).pid == ex.proc.pid  # untouched by the refused one
    ex.proc.send_signal(signal.SIGKILL)
    ex.proc.wait(timeout=10)
    assert read(path).status == "died"
    again = start_exchange(config, ["--counters", str(path)])
    f = read(path)
    assert (f.status, f.pid) == ("running", again.proc.pid)
    again.stop()
