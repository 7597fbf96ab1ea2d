"""The journal under operator error and disk damage (issue 14, defects 1, 2 and 4;
docs/EXCHANGE.md "Journal", "When the journal is damaged"), with the real
nanotick-exchange and nanotick-journal binaries:

- a second exchange on a journal directory in use refuses to start and names the
  holder; the first keeps serving; after a kill -9 the restart is not blocked and
  every order the first acknowledged is there;
- one flipped byte in the middle of the journal stops the start-up with an error
  that names the damage and changes no byte; `journal verify` says corrupt,
  `journal repair` cuts it after keeping a byte-exact copy, and the exchange starts
  on what is left;
- a segment file cut short (inside a record, at a record, to nothing) is damage:
  start-up refuses and changes nothing.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import time

from tests.integration.exchange import journal_reader as jr
from tools import wire as w
from tests.integration.exchange.exchange_harness import BINARY, make_config

JOURNAL_TOOL = BINARY.parent / "nanotick-journal"
SEGMENT = "journal-00000000000000000001.log"
RECORD = 64


def journal_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(JOURNAL_TOOL), *args], capture_output=True, text=True, timeout=60)


def quiet_config(tmp_path):
    """Client 1's orders outlive its session (no cancel on disconnect) and nothing takes
    snapshots: the journal alone holds the state."""
    config = make_config(tmp_path, journal={"snapshot_every": 0})
    config.client(1).cancel_on_disconnect = False
    return config


def rest_orders(ex, n: int) -> None:
    """n resting buys of client 1 (client order ids 1..n), each acknowledged: journal records 1..n."""
    with ex.logon(1) as c:
        for coid in range(1, n + 1):
            c.send(w.NewOrder(client_order_id=coid, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1 + coid % 50, qty=1))
        for coid in range(1, n + 1):
            c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, client_order_id=coid)


def resting(ex, n: int) -> list:
    """For client order ids 1..n: True where a cancel finds the order resting, False where it is unknown."""
    out = []
    with ex.logon(1, retry_already_logged_on=True) as c:
        for coid in range(1, n + 1):
            c.send(w.CancelOrder(client_order_id=coid, instrument=0))
        for coid in range(1, n + 1):
            m = c.recv()
            assert m.client_order_id == coid, m
            if isinstance(m, w.ExecutionReport):
                assert m.exec_type == w.EXEC_CANCELLED, m
                out.append(True)
            else:
                assert isinstance(m, w.CancelReject) and m.reason == w.EngineReject.UNKNOWN_ORDER, m
                out.append(False)
    return out


def journal_of_killed_exchange(start_exchange, tmp_path, n: int):
    """An exchange that acknowledged n resting orders (journal records 1..n), then was killed -9:
    (its config, its first journal segment)."""
    config = quiet_config(tmp_path)
    ex = start_exchange(config)
    rest_orders(ex, n)
    # The files (not only the staging ring) hold all n: these tests damage the files.
    segment = config.journal_dir / SEGMENT
    deadline = time.monotonic() + 30
    while len(jr.read_journal(config.journal_dir, with_staging=False).requests) < n:
        assert time.monotonic() < deadline, "the journal thread did not write the acknowledged records to the files"
        time.sleep(0.01)
    ex.kill()
    return config, segment


def start_refused(start_exchange, config) -> str:
    ex = start_exchange(config, wait=False)
    rc = ex.proc.wait(timeout=30)
    for t in ex._threads:
        t.join(timeout=5)
    assert rc == 1, f"exit code {rc}; stderr:\n{ex.stderr_text()}"
    return ex.stderr_text()


def test_second_exchange_on_a_journal_in_use_refuses_and_the_first_loses_nothing(start_exchange, tmp_path):
    config = quiet_config(tmp_path)
    first = start_exchange(config)
    text = start_refused(start_exchange, config)  # same journal directory, another port (0)
    assert "is in use by another process" in text, text
    assert f"nanotick-exchange pid {first.pid}" in text, text
    rest_orders(first, 500)
    first.kill()  # kill -9: the kernel releases the lock
    restarted = start_exchange(config)
    assert resting(restarted, 500) == [True] * 500
    restarted.stop()


def test_flipped_byte_mid_journal_refuses_start_then_verify_and_repair(start_exchange, tmp_path):
    config, segment = journal_of_killed_exchange(start_exchange, tmp_path, 1000)
    data = bytearray(segment.read_bytes())
    data[RECORD + 499 * RECORD + 40] ^= 0x01  # record 500: one bit of its request
    segment.write_bytes(bytes(data))

    text = start_refused(start_exchange, config)
    assert "CRC mismatch" in text and "seq 500 expected" in text, text
    assert "500 record(s) after it pass their CRC (seq 501..1000)" in text, text
    assert "journal repair" in text, text
    assert segment.read_bytes() == bytes(data), "the refused start-up changed the journal"

    v = journal_tool("verify", str(config.journal_dir), "--config", str(config.path))
    assert v.returncode == 4, v
    assert "verdict: corrupt" in v.stdout and "seq 1..499 (499)" in v.stdout, v.stdout
    d = journal_tool("dump", str(config.journal_dir), "--problems")
    assert d.returncode == 0, d
    rows = [line.split(",") for line in d.stdout.splitlines()[1:]]
    assert rows[0][:2] == ["500", "bad"] and len(rows) == 501, rows[:3]
    assert all(r[1] == "after-break" for r in rows[1:]), rows[1:3]
    dry = journal_tool("repair", str(config.journal_dir), "--dry-run")
    assert dry.returncode == 0 and "would cut the journal at seq 500" in dry.stdout, dry
    assert segment.read_bytes() == bytes(data)

    r = journal_tool("repair", str(config.journal_dir))
    assert r.returncode == 0, r
    assert "LOST TO THE VENUE: 500 record(s) that pass their CRC (seq 501..1000)" in r.stdout, r.stdout
    backups = sorted(config.journal_dir.glob("repair-*"))
    assert len(backups) == 1
    assert (backups[0] / SEGMENT).read_bytes() == bytes(data), "the repair's copy is not the damaged segment"
    assert journal_tool("verify", str(config.journal_dir)).returncode == 0

    ex = start_exchange(config)
    assert resting(ex, 1000) == [True] * 499 + [False] * 501
    ex.stop()


def test_repair_refuses_while_an_exchange_runs(start_exchange, tmp_path):
    config = quiet_config(tmp_path)
    ex = start_exchange(config)
    r = journal_tool("repair", str(config.journal_dir))
    assert r.returncode == 1 and f"pid {ex.pid}" in r.stderr, r
    ex.stop()


def test_segment_cut_short_is_refused_not_cut(start_exchange, tmp_path):
    """A segment cut after record 599 of 1,000 acknowledged (a disk or an operator: the writer
    preallocates segments whole) used to start with 401 acknowledged orders gone; cut to 0 bytes,
    with all 1,000 gone. Both are damage: start-up refuses and changes nothing."""
    config, segment = journal_of_killed_exchange(start_exchange, tmp_path, 1000)
    whole = segment.read_bytes()
    for size in (RECORD + 599 * RECORD + 30, RECORD + 599 * RECORD, 0):
        segment.write_bytes(whole[:size])
        v = journal_tool("verify", str(config.journal_dir))
        assert v.returncode == 4 and "refuses to start" in v.stdout, v
        text = start_refused(start_exchange, config)
        assert ("cut short" in text) if size else ("had its header once" in text), text
        assert segment.read_bytes() == whole[:size], "the refused start-up changed the journal"
    segment.write_bytes(whole)
    ex = start_exchange(config)
    assert resting(ex, 1000) == [True] * 1000
    ex.stop()
