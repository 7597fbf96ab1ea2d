"""The trade ledger and the start-up's other recovery paths under damage and
kill -9 (issue 30; docs/CONTROLS.md "Trade ledger", docs/EXCHANGE.md
"Snapshots and recovery"), with the real nanotick-exchange, nanotick-ledger
and nanotick-journal binaries:

- one flipped byte in the middle of trades.ledger stops the start-up with an
  error that names the damage and changes no byte (it used to cut every later
  trade as a "torn tail"); `ledger verify` and `journal verify` both say so;
  `ledger repair` keeps a copy and cuts, and the next start puts the trades
  back from the journal;
- a deleted ledger is named in the log with what it lacks (nothing, when the
  journal holds every request; the range before the engine snapshot when not);
- after kill -9 in the middle of traffic, the restarted venue's ledger is
  exactly the ledger a replay of the whole journal makes;
- a resting order of a cancel-on-disconnect client that outlived its session
  in a kill -9 is gone after the restart (the start-up's mass cancel): a
  crossing IOC gets no fill, where it does fill the same order of a client
  without cancel on disconnect.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess

from tools import wire as w
from tests.integration.exchange.exchange_harness import BINARY, make_config

LEDGER_TOOL = BINARY.parent / "nanotick-ledger"
JOURNAL_TOOL = BINARY.parent / "nanotick-journal"
T0 = 0
HEADER, RECORD = 64, 128


def tool(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=60)


def ledger_rows(journal_dir, drop_time: bool = True):
    done = tool(LEDGER_TOOL, "list", journal_dir)
    assert done.returncode == 0, done
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    return [{k: v for k, v in r.items() if k != "time_utc"} for r in rows] if drop_time else rows


def trading_config(tmp_path, snapshot_every: int = 0, name: str = "venue"):
    (tmp_path / name).mkdir(parents=True, exist_ok=True)
    config = make_config(tmp_path / name, n_clients=2, journal={"snapshot_every": snapshot_every})
    for c in (1, 2):
        config.client(c).cancel_on_disconnect = False
    return config


def trade(ex, n: int) -> None:
    """n trades: client 2 rests a sell of 1, client 1 takes it with an IOC buy, each answered."""
    with ex.logon(1) as buyer, ex.logon(2) as seller:
        for i in range(1, n + 1):
            s = seller.send(w.NewOrder(client_order_id=i, instrument=T0, side=w.SELL, order_type=w.LIMIT, price=100 + i,
                                       qty=1))
            seller.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
            s = buyer.send(w.NewOrder(client_order_id=i, instrument=T0, side=w.BUY, order_type=w.IOC, price=100 + i,
                                      qty=1))
            buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
            buyer.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_FILL)
            seller.expect(w.ExecutionReport, exec_type=w.EXEC_FILL)


def start_refused(start_exchange, config) -> str:
    ex = start_exchange(config, wait=False)
    rc = ex.proc.wait(timeout=30)
    ex._join(5)
    assert rc == 1, f"exit code {rc}; stderr:\n{ex.stderr_text()}"
    return ex.stderr_text()


def directory_bytes(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != "LOCK"}


def test_flipped_byte_mid_ledger_refuses_start_then_verify_and_repair(start_exchange, tmp_path):
    config = trading_config(tmp_path)
    ex = start_exchange(config)
    trade(ex, 7)
    ex.stop()
    before = ledger_rows(config.journal_dir)
    assert len(before) == 7
    ledger_file = config.journal_dir / "trades.ledger"
    data = bytearray(ledger_file.read_bytes())
    data[360] ^= 0xFF  # inside the 3rd record: the repro
    ledger_file.write_bytes(bytes(data))
    on_disk = directory_bytes(config.journal_dir)

    v = tool(LEDGER_TOOL, "verify", config.journal_dir)
    assert v.returncode == 4 and "corrupt" in v.stdout and "trade_seq 4..7" in v.stdout, v
    jv = tool(JOURNAL_TOOL, "verify", config.journal_dir, "--config", config.path)
    assert jv.returncode == 4 and "refuses to start" in jv.stdout and "trades.ledger" in jv.stdout, jv
    text = start_refused(start_exchange, config)
    assert "damaged in the middle" in text and "trade_seq 4..7" in text and "ledger repair" in text, text
    assert directory_bytes(config.journal_dir) == on_disk, "the refused start-up changed the directory"
    assert tool(LEDGER_TOOL, "list", config.journal_dir).returncode == 4

    dry = tool(LEDGER_TOOL, "repair", config.journal_dir, "--dry-run")
    assert dry.returncode == 0 and "REMOVED: 4 record(s)" in dry.stdout, dry
    assert directory_bytes(config.journal_dir) == on_disk
    r = tool(LEDGER_TOOL, "repair", config.journal_dir)
    assert r.returncode == 0, r
    backups = sorted(config.journal_dir.glob("repair-*"))
    assert len(backups) == 1 and (backups[0] / "trades.ledger").read_bytes() == bytes(data)
    assert tool(LEDGER_TOOL, "verify", config.journal_dir).returncode == 0
    # No engine snapshot: the journal holds every request, so the restart puts every trade back.
    ex2 = start_exchange(config)
    assert "put back 5 trade(s)" in ex2.stderr_text(), ex2.stderr_text()
    ex2.stop()
    assert ledger_rows(config.journal_dir) == before


def test_deleted_ledger_is_named_in_the_log(start_exchange, tmp_path):
    # Without a snapshot the journal holds every request: every trade comes back.
    config = trading_config(tmp_path, name="no-snapshot")
    ex = start_exchange(config)
    trade(ex, 5)
    ex.stop()
    before = ledger_rows(config.journal_dir)
    (config.journal_dir / "trades.ledger").unlink()
    assert tool(JOURNAL_TOOL, "verify", config.journal_dir).returncode == 0
    ex = start_exchange(config)
    log = ex.stderr_text()
    assert "trades.ledger was missing" in log and "none lost" in log, log
    ex.stop()
    assert ledger_rows(config.journal_dir) == before

    # With an engine snapshot (a clean stop writes one), the trades before it are lost: the log names them.
    config = trading_config(tmp_path, snapshot_every=1_000_000, name="snapshot")
    ex = start_exchange(config)
    trade(ex, 5)
    ex.stop()
    assert list(config.journal_dir.glob("snapshot-*.snap")), "no final snapshot"
    (config.journal_dir / "trades.ledger").unlink()
    ex = start_exchange(config)
    log = ex.stderr_text()
    assert "trades.ledger was missing" in log and "are NOT in it" in log and "execution reports up to seq" in log, log
    ex.stop()
    assert ledger_rows(config.journal_dir) == []


def test_ledger_is_complete_after_kill_9_mid_traffic(start_exchange, tmp_path):
    config = trading_config(tmp_path, snapshot_every=300)
    ex = start_exchange(config)
    buyer, seller = ex.logon(1), ex.logon(2)
    # Crossing flow, never waiting for answers, so the kill lands with trades in flight.
    for i in range(1, 3001):
        seller.send(w.NewOrder(client_order_id=i, instrument=T0, side=w.SELL, order_type=w.LIMIT, price=100, qty=1))
        buyer.send(w.NewOrder(client_order_id=i, instrument=T0, side=w.BUY, order_type=w.IOC, price=100, qty=1))
        if i == 2000:
            ex.kill()
            break
    for c in (buyer, seller):
        c.close()
    ex2 = start_exchange(config)
    ex2.stop()
    got = ledger_rows(config.journal_dir)
    assert got, "no trade reached the journal before the kill: the test would not test the ledger"
    assert [int(t["trade_seq"]) for t in got] == list(range(1, len(got) + 1))

    # The reference: the same journal, replayed whole into a fresh ledger (no snapshot, no ledger file).
    ref = trading_config(tmp_path, snapshot_every=300, name="reference")
    ref.journal_dir.mkdir(parents=True, exist_ok=True)
    for seg in config.journal_dir.glob("journal-*.log"):
        shutil.copyfile(seg, ref.journal_dir / seg.name)
    ex3 = start_exchange(ref)
    assert "none lost" in ex3.stderr_text(), ex3.stderr_text()
    ex3.stop()
    want = ledger_rows(ref.journal_dir)
    assert got == want, f"ledger after kill -9 differs from the journal's replay: {len(got)} vs {len(want)} trades"


def rest_then_kill_then_cross(start_exchange, tmp_path, name: str, cancel_on_disconnect: bool):
    """Client 1 rests a sell and is acknowledged; the exchange is killed -9; after the restart
    client 2 sends a crossing IOC buy. Returns the IOC's reports and the restart's log."""
    config = trading_config(tmp_path, snapshot_every=0, name=name)
    config.client(1).cancel_on_disconnect = cancel_on_disconnect
    ex = start_exchange(config)
    with ex.logon(1) as seller:
        s = seller.send(w.NewOrder(client_order_id=1, instrument=T0, side=w.SELL, order_type=w.LIMIT, price=100,
                                   qty=5))
        seller.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        ex.kill()  # the session dies with the exchange: no disconnect cancel could run
    ex2 = start_exchange(config)
    with ex2.logon(2) as buyer:
        s = buyer.send(w.NewOrder(client_order_id=1, instrument=T0, side=w.BUY, order_type=w.IOC, price=100, qty=5))
        first = buyer.recv()
        reports = [first]
        while not (isinstance(reports[-1], w.ExecutionReport) and reports[-1].exec_type in (w.EXEC_CANCELLED,
                                                                                             w.EXEC_REJECTED)
                   or (isinstance(reports[-1], w.ExecutionReport) and reports[-1].exec_type == w.EXEC_FILL
                       and reports[-1].leaves_qty == 0)):
            reports.append(buyer.recv())
    log = ex2.stderr_text()
    ex2.stop()
    return reports, log


def test_recovered_cancel_on_disconnect_order_is_gone_after_restart(start_exchange, tmp_path):
    reports, log = rest_then_kill_then_cross(start_exchange, tmp_path, "cod", cancel_on_disconnect=True)
    assert "cancel on disconnect: a mass cancel" in log, log
    assert not [r for r in reports if getattr(r, "exec_type", None) == w.EXEC_FILL], reports
    assert reports[-1].exec_type == w.EXEC_CANCELLED and reports[-1].cancel_reason == w.CANCEL_IOC_RESIDUAL, reports
    # The control: the same order of a client without cancel on disconnect survives the restart and fills.
    reports, _ = rest_then_kill_then_cross(start_exchange, tmp_path, "keep", cancel_on_disconnect=False)
    assert [r.last_qty for r in reports if getattr(r, "exec_type", None) == w.EXEC_FILL] == [5], reports
