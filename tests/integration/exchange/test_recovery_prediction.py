"""`nanotick journal verify` predicts exactly what the exchange's start-up does
with a journal directory (issue 30; docs/EXCHANGE.md "When the journal is
damaged"): for every kind of damage the journal and ledger tests make, the
verdict (exit 0: starts and changes nothing; 3: cuts a torn tail and starts;
4: refuses) and the seq it says appending continues at are compared with what
the real exchange then does, and a refused start must leave every byte of the
directory as it was (it used to cut the journal before refusing).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

from tools import wire as w
from tests.integration.exchange.exchange_harness import BINARY, InstrumentSpec, make_config

JOURNAL_TOOL = BINARY.parent / "nanotick-journal"
SEGMENT = "journal-00000000000000000001.log"
RECORD = 64
N = 300  # resting orders acknowledged: journal records 1..N


def build_journal(start_exchange, base, snapshot: bool):
    """A journal of N acknowledged resting orders plus one trade (records 1..N+1), left by a
    kill -9 (or, with `snapshot`, by a clean stop that writes an engine snapshot at seq N + 1)."""
    base.mkdir(parents=True, exist_ok=True)
    config = make_config(base, n_clients=2, journal={"snapshot_every": 1_000_000 if snapshot else 0})
    for c in (1, 2):
        config.client(c).cancel_on_disconnect = False
    ex = start_exchange(config)
    with ex.logon(1) as c1, ex.logon(2) as c2:
        for coid in range(1, N + 1):
            c1.send(w.NewOrder(client_order_id=coid, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1 + coid % 50,
                               qty=1))
        for coid in range(1, N + 1):
            c1.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, client_order_id=coid)
        s = c2.send(w.NewOrder(client_order_id=1, instrument=0, side=w.SELL, order_type=w.IOC, price=50, qty=1))
        c2.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        c2.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_FILL)
    if snapshot:
        ex.stop()
    else:
        # The ledger's writer drains its ring every pass of the aux thread: the trade is in the
        # file well before this (the ledger cases damage it).
        deadline = time.monotonic() + 10
        while (config.journal_dir / "trades.ledger").stat().st_size < 64 + 128 and time.monotonic() < deadline:
            time.sleep(0.01)
        ex.kill()
    return config


def flip(path, offset, mask=0x01):
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def zero(path, offset, n):
    data = bytearray(path.read_bytes())
    data[offset:offset + n] = bytes(n)
    path.write_bytes(bytes(data))


def truncate(path, size):
    path.write_bytes(path.read_bytes()[:size])


# name -> (uses a snapshot, damage(journal_dir, config))
CASES = {
    "clean": (False, lambda d, c: None),
    "flipped byte mid-journal": (False, lambda d, c: flip(d / SEGMENT, RECORD + 99 * RECORD + 40)),
    "torn last record": (False, lambda d, c: zero(d / SEGMENT, RECORD + N * RECORD + 32, 32)),
    "garbage after the end": (False, lambda d, c: flip(d / SEGMENT, RECORD + (N + 20) * RECORD + 13, 0x55)),
    "cut inside a record": (False, lambda d, c: truncate(d / SEGMENT, RECORD + 199 * RECORD + 30)),
    "cut at a record": (False, lambda d, c: truncate(d / SEGMENT, RECORD + 199 * RECORD)),
    "cut to nothing": (False, lambda d, c: truncate(d / SEGMENT, 0)),
    "torn record the snapshot holds": (True, lambda d, c: zero(d / SEGMENT, RECORD + N * RECORD + 32, 32)),
    "journal gone, snapshot kept": (True, lambda d, c: (d / SEGMENT).unlink()),
    "ledger flipped mid-file": (False, lambda d, c: flip(d / "trades.ledger", 64 + 40)),
    "ledger torn tail": (False, lambda d, c: truncate(d / "trades.ledger", 64 + 100)),
    "another instrument table": (False, lambda d, c: c.instruments.append(InstrumentSpec("T9"))),
}


def directory_bytes(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != "LOCK"}


def test_verify_predicts_what_start_up_does(start_exchange, tmp_path):
    templates = {snap: build_journal(start_exchange, tmp_path / f"template-{snap}", snap) for snap in (False, True)}
    seen = set()
    for i, (name, (snap, damage)) in enumerate(CASES.items()):
        template = templates[snap]
        (tmp_path / f"case-{i}").mkdir()
        config = make_config(tmp_path / f"case-{i}", n_clients=2,
                             journal={"snapshot_every": template.journal["snapshot_every"]})
        for c in (1, 2):
            config.client(c).cancel_on_disconnect = False
        shutil.copytree(template.journal_dir, config.journal_dir)
        damage(config.journal_dir, config)
        config.write()
        v = subprocess.run(
            [str(JOURNAL_TOOL), "verify", str(config.journal_dir), "--config", str(config.path)],
            capture_output=True, text=True, timeout=60)
        assert v.returncode in (0, 3, 4), (name, v)
        seen.add(v.returncode)
        before = directory_bytes(config.journal_dir)
        ex = start_exchange(config, wait=False)
        if v.returncode == 4:
            rc = ex.proc.wait(timeout=30)
            ex._join(5)
            assert rc == 1, (name, "verify said it refuses; it started", v.stdout, ex.stderr_text())
            assert directory_bytes(config.journal_dir) == before, (name, "a refused start changed the directory")
            continue
        ex.wait_ready()
        log = ex.stderr_text()
        predicted = int(re.search(r"continues at seq (\d+)", v.stdout).group(1))
        actual = int(re.search(r"next seq (\d+)", log).group(1))
        assert predicted == actual, (name, v.stdout, log)
        cut = "cut a torn tail" in log
        assert cut == (v.returncode == 3), (name, v.stdout, log)
        ex.stop()
    assert seen == {0, 3, 4}, f"the cases did not cover every verdict: {seen}"
