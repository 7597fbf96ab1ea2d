"""The soak's loss check (soak_loss.py) and its relay (wire_tap.py) on a small
real venue: two clients trade through the relay, the exchange stops cleanly,
and the check must find nothing lost -- then, on copies of the journal
directory, it must find each kind of loss an attacker (or a bug) could cause:
a trade cut from the ledger's end, a report the journal cannot reproduce, a
request gone from the journal. A check that found nothing in those cases
would make the soak's "lost 0" as empty as the constant it replaced.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

from tests.integration.exchange import journal_reader as jr
from tools import wire as w
from tests.integration.exchange.exchange_harness import BINARY, make_config
from tests.integration.trader.soak_loss import check_loss, read_tap
from tests.integration.trader.wire_tap import WireTapProcess

JOURNAL_TOOL = BINARY.parent / "nanotick-journal"
LEDGER_TOOL = BINARY.parent / "nanotick-ledger"
TRADES = 5
RECORD_BYTES = 128  # one trades.ledger record (docs/CONTROLS.md "Trade ledger")


def test_loss_check_finds_each_kind_of_loss(start_exchange, processes, tmp_path):
    config = make_config(tmp_path)
    ex = start_exchange(config)
    tap = WireTapProcess(ex.port, tmp_path / "reports.csv")
    processes.append(tap)
    port = tap.wait_ready()
    buyer, seller = w.OrderEntryClient(port), w.OrderEntryClient(port)
    buyer.logon(1, config.client(1).key)
    seller.logon(2, config.client(2).key)
    for coid in range(1, TRADES + 1):
        buyer.send(w.NewOrder(client_order_id=coid, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1000, qty=2))
        buyer.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, client_order_id=coid)
    seller.send(w.NewOrder(client_order_id=1, instrument=0, side=w.SELL, order_type=w.LIMIT, price=1000, qty=2 * TRADES + 1))
    got = [seller.expect(w.ExecutionReport) for _ in range(TRADES + 1)]  # accepted, then one fill per buy order
    assert [r.exec_type for r in got] == [w.EXEC_ACCEPTED] + [w.EXEC_FILL] * TRADES, got
    for coid in range(1, TRADES + 1):
        buyer.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, client_order_id=coid)
    buyer.close()
    seller.close()
    tap.stop()
    ex.stop()

    reports = read_tap(tap.out)
    model, _ = jr.replay_journal(config.journal_dir, config.instruments)
    clean = check_loss(reports, model, JOURNAL_TOOL, LEDGER_TOOL, config.journal_dir)
    assert (clean.acks_checked, clean.fills_checked, clean.replay_fills) == (TRADES + 1, 2 * TRADES, 2 * TRADES), clean
    assert clean.problems() == 0, clean.examples

    # The ledger lost its last trade (cut at a record boundary: nothing for its reader to see).
    cut = tmp_path / "ledger-cut"
    shutil.copytree(config.journal_dir, cut)
    ledger = cut / "trades.ledger"
    ledger.write_bytes(ledger.read_bytes()[:-RECORD_BYTES])
    loss = check_loss(reports, model, JOURNAL_TOOL, LEDGER_TOOL, cut)
    assert (loss.lost_fills, loss.replay_fills_missing_from_ledger, loss.lost_acks) == (2, 2, 0), loss

    # The exchange acknowledged an order the journal does not hold (here: the ack's client
    # order id altered, as a gateway mixing up two sessions' ids would).
    ack = next(i for i, t in enumerate(reports) if t.r.exec_type == w.EXEC_ACCEPTED)
    forged = list(reports)
    forged[ack] = dataclasses.replace(reports[ack], r=dataclasses.replace(reports[ack].r, client_order_id=77))
    loss = check_loss(forged, model, JOURNAL_TOOL, LEDGER_TOOL, config.journal_dir)
    assert (loss.lost_acks, loss.reports_differing, loss.lost_fills) == (1, 1, 0), loss

    # The journal lost its tail from the seller's order on (its ack and every fill), as a
    # shorter journal the replay and the dump both read to its end.
    short = tmp_path / "journal-short"
    shutil.copytree(config.journal_dir, short)
    done = subprocess.run([str(JOURNAL_TOOL), "dump", str(short)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in done.stdout.splitlines()[1:]]  # seq,status,segment,offset,type,instrument,client,...
    sell = next(r for r in rows if r[4] == "new" and r[6] == "2")
    assert sell[2] == rows[-1][2], "the test expects one journal segment"
    segment = short / sell[2]
    data = segment.read_bytes()
    segment.write_bytes(data[:int(sell[3])] + bytes(len(data) - int(sell[3])))  # zeroed from that record on
    short_model, _ = jr.replay_journal(short, config.instruments)
    loss = check_loss(reports, short_model, JOURNAL_TOOL, LEDGER_TOOL, short)
    assert loss.lost_acks == 1, loss  # the seller's ack
    assert loss.reports_differing == 1 + 2 * TRADES, loss  # its ack and both sides of every fill
    assert loss.replay_fills == 0 and loss.lost_fills == 0, loss  # the ledger still has the trades

