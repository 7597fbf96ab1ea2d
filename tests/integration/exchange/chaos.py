"""The kill -9 / restart loop of the exchange's recovery test, reusable by its
soak (tests/integration/trader/test_soak.py): under load from two pipelining
clients the exchange is killed with SIGKILL at random points and restarted on
the same journal, and after every restart (see test_recovery.py's docstring
for the list) nothing acknowledged is lost, every number continues without a
gap or repeat, and the recovered books equal an independent replay of the
journal. `between` is called once per run while the exchange is up (the soak
kills and restarts traders there); the loop ends after `kills` kills or at
`deadline` (time.monotonic()), whichever is given; with a deadline it goes on
past it until `min_kills` kills, but never past `give_up` (a loaded machine
makes each kill slower, and a soak that killed too few times proves little).
`before_stop` is called once the loop ended, while the exchange still runs,
before the final cancels and the clean stop (the soak stops its traders
there). Returns the figures, with the final journal's replay.

Not thread-safe (one test thread).
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from tests.integration.exchange import engine_model as em
from tests.integration.exchange import journal_reader as jr
from tests.integration.exchange import md_books as mb
from tools import wire as w
from tests.integration.exchange.exchange_harness import InstrumentSpec, MdRecorder, make_config
from tests.integration.exchange.order_flow import OrderTracker, RandomFlow, TrackedOrder, check_reports_against_model

WINDOW = 32  # requests in flight per client


@dataclass
class ChaosFigures:
    kills: int = 0
    requests_journaled: int = 0
    orders_checked: int = 0       # acknowledged orders of the checking clients found in the replay, summed over checks
    reports_checked: int = 0
    final_model: Optional[em.EngineModel] = None  # the journal replayed after the final clean stop


def chaos_config(tmp_path, order_entry: str = "127.0.0.1:0"):
    config = make_config(tmp_path, journal={"snapshot_every": 500, "segment_bytes": 1 << 18})
    config.server["order_entry"] = order_entry
    config.instruments = [InstrumentSpec("T0", max_orders=65536), InstrumentSpec("T1", tick_size=5, min_price=5, max_price=100_000, max_order_qty=10_000, max_orders=65536)]
    for c in config.clients[:2]:
        c.cancel_on_disconnect = False  # the checking clients' resting orders must outlive the killed sessions
    return config


def run_until_killed(ex, trackers, flows, seconds: float) -> None:
    """Pipelined load from every client; a timer thread sends SIGKILL after `seconds`, wherever
    the exchange and the clients are. Then reads what the clients received before the close."""
    killer = threading.Timer(seconds, os.kill, (ex.pid, signal.SIGKILL))
    killer.start()
    try:
        give_up = time.monotonic() + seconds + 10.0
        while not all(t.session.closed for t in trackers):
            assert time.monotonic() < give_up, "the clients' sessions stayed open after the kill"
            for t, f in zip(trackers, flows):
                if t.session.closed:
                    continue
                try:
                    while len(t.pending) < WINDOW:
                        t.send(f.next())
                except (BrokenPipeError, ConnectionResetError):
                    t.session.closed = True
                t.pump()
    finally:
        killer.join()
    ex.kill()  # reaps
    assert ex.proc.returncode == -signal.SIGKILL, ex.proc.returncode
    for t in trackers:
        t.session.close()


def reconcile(t: OrderTracker, model: em.EngineModel) -> None:
    """After a restart the client learns its orders' state from the recovered exchange (here:
    the verified replay): requests whose answers the kill swallowed may have executed."""
    for (client, coid), o in model.orders.items():
        if client == t.client_id:
            t.orders[coid] = TrackedOrder(coid, o.order_id, o.instrument, o.side, o.order_type, o.price, o.qty, o.cum,
                                          0 if o.done else o.open, o.done)


def check_snapshots_against_journal(config, snaps, where: str) -> None:
    """Each snapshot's book and instrument_seq equal the journal's replay up to the snapshot's md seq."""
    model = em.EngineModel(config.instruments)
    requests = iter(jr.read_journal(config.journal_dir).requests)
    for ins, snap in sorted(snaps.items(), key=lambda kv: kv[1].last_seq):
        while model.next_md_seq - 1 < snap.last_seq:
            r = next(requests, None)
            assert r is not None, f"{where}: snapshot of {ins} reflects md seq {snap.last_seq}, beyond the journal"
            model.apply(r)
        assert model.next_md_seq - 1 == snap.last_seq, f"{where}: no request of the journal ends at md seq {snap.last_seq}"
        assert snap.instrument_seq == model.instrument_seqs()[ins], (where, ins, snap.instrument_seq, model.instrument_seqs())
        assert snap.priority_list() == model.books()[ins], f"{where}: recovered book of {ins} differs from the journal replay at md seq {snap.last_seq}"


def run_chaos(start_exchange, config, seed: int, kills: Optional[int] = None, deadline: Optional[float] = None,
              between: Optional[Callable[[random.Random, int], None]] = None, log: Callable[[str], None] = print,
              min_kills: int = 0, give_up: Optional[float] = None,
              before_stop: Optional[Callable[[], None]] = None) -> ChaosFigures:
    rng = random.Random(seed)
    figures = ChaosFigures()
    exact = between is None  # only the checking clients trade: every number is predicted exactly
    trackers = [OrderTracker(1), OrderTracker(2)]
    for t in trackers:
        t.resync = not exact
    flows = [RandomFlow(rng, t, mids=[1000, 500], ticks=[1, 5]) for t in trackers]
    model = em.EngineModel(config.instruments)
    max_acked_exec_seq = 0
    run = 0
    while True:
        # Alternate the fsync policy: with "every" an acknowledgement waits for its batch's
        # fdatasync, so a kill usually finds requests journaled but never acknowledged.
        config.journal["fsync"] = "every" if run % 2 else "batch"
        with MdRecorder(config) as md:
            ex = start_exchange(config)
            where = f"seed {seed}, run {run}"
            # The recovered books, as published, equal the replay of the journal.
            last_md = model.next_md_seq - 1
            start_iseqs = model.instrument_seqs()  # each instrument's last instrument_seq before this run
            assert sum(start_iseqs.values()) == last_md, (where, start_iseqs, last_md)
            snaps = md.wait_snapshots(len(config.instruments), 0)
            if exact:
                for ins, snap in snaps.items():
                    assert snap.last_seq == last_md, f"{where}: snapshot of {ins} reflects md seq {snap.last_seq}, the journal replay ends at {last_md}"
                    assert snap.instrument_seq == start_iseqs[ins], f"{where}: snapshot of {ins} says instrument_seq {snap.instrument_seq}, the journal replay {start_iseqs[ins]}"
                    assert snap.priority_list() == model.books()[ins], f"{where}: recovered book of {ins} differs from the journal replay"
                md.wait_incremental_heartbeat(model.next_md_seq)
            else:
                # Others trade from the moment it is up (and their orphaned orders were cancelled at
                # start-up): each snapshot is compared with the journal replayed to its md seq.
                check_snapshots_against_journal(config, snaps, where)
            for t in trackers:
                reconcile(t, model)
                t.attach(ex.logon(t.client_id))
            # Cancels of acknowledged resting orders: Cancelled, numbered where the replay ends.
            next_exec = model.next_exec_seq
            assert next_exec > max_acked_exec_seq
            cancelled = 0
            for t in trackers:
                for o in [o for o in t.live() if o.order_type == w.LIMIT][:5]:
                    s = t.send(w.CancelOrder(client_order_id=o.client_order_id, instrument=o.instrument))
                    if not exact:  # another client may fill it first: any answer the tracker accepts
                        t.wait_answers()
                        continue
                    r = t.session.expect(w.ExecutionReport, ref_seq=s)
                    t.on_message(r)
                    assert (r.exec_type, r.cancel_reason, r.order_id, r.exec_seq) == (w.EXEC_CANCELLED, w.CANCEL_USER, o.order_id, next_exec), (where, r, o)
                    next_exec += 1
                    cancelled += 1
            if cancelled and exact:
                first = md.wait_for(lambda: next((m for p in md.packets()[0] for m in p.messages if m.seq == model.next_md_seq), None), 3.0,
                                    f"the first market data message after the restart to carry seq {model.next_md_seq}")
                assert first.instrument_seq == start_iseqs[first.instrument] + 1, (where, first, start_iseqs)
            now = time.monotonic()
            last = ((kills is not None and run >= kills)
                    or (deadline is not None and now >= deadline and figures.kills >= min_kills)
                    or (give_up is not None and now >= give_up))
            if last:
                break
            if between is not None:
                between(rng, run)
            run_until_killed(ex, trackers, flows, seconds=rng.uniform(0.2, 0.8))
            md.check(mtu=1400)  # per instrument too: instrument_seq +1 per message within the run
            # Each instrument's numbering went on from where the recovered engine had it.
            incremental = md.packets()[0]
            for ins, first_iseq in mb.first_instrument_seqs(incremental).items():
                assert first_iseq == start_iseqs[ins] + 1, f"{where}: instrument {ins} restarted at instrument_seq {first_iseq}, expected {start_iseqs[ins] + 1}"
            heard = {}
            for p in incremental:
                for m in p.messages:
                    heard[m.instrument] = m.instrument_seq
        model, scan = jr.replay_journal(config.journal_dir, config.instruments)
        where = f"seed {seed}, after kill {run + 1}"
        # What was published before the kill was journaled first: the replay numbers it all.
        for ins, iseq in heard.items():
            assert iseq <= model.instrument_seqs()[ins], f"{where}: instrument {ins} published instrument_seq {iseq}, the journal replay ends at {model.instrument_seqs()[ins]}"
        resting = sum(len(b) for b in model.books().values())
        figures.kills += 1
        figures.requests_journaled = len(scan.requests)
        figures.reports_checked += sum(len(t.reports) for t in trackers)
        log(f"{where}: journal {len(scan.requests)} requests ({scan.stopped_because}), {len(model.reports)} reports, "
              f"{model.next_md_seq - 1} md messages, {resting} resting; clients received {sum(len(t.reports) for t in trackers)} "
              f"reports, {sum(len(t.pending) for t in trackers)} requests unanswered at the kill")
        for t in trackers:
            assert not t.errors, (where, t.errors[:3])
            assert not t.session_rejects, (where, t.session_rejects[:3])
        check_reports_against_model(trackers, model)
        for t in trackers:
            for coid, o in t.orders.items():
                got = model.orders.get((t.client_id, coid))
                assert got is not None and got.order_id == o.order_id, f"{where}: client {t.client_id} order {coid} ({o}) acknowledged, not recovered"
            figures.orders_checked += len(t.orders)
            acked = [r.exec_seq for r in t.reports]
            max_acked_exec_seq = max([max_acked_exec_seq] + acked)
        run += 1
    if before_stop is not None:
        before_stop()
    # Final: cancel everything still resting, shut down cleanly, replay once more.
    for t in trackers:
        for o in [o for o in t.live() if o.order_type == w.LIMIT]:
            t.send(w.CancelOrder(client_order_id=o.client_order_id, instrument=o.instrument))
        t.wait_answers()
        assert all(o.done for o in t.orders.values()), [o for o in t.orders.values() if not o.done][:3]
    sent = sum(t.session.next_out_seq - 2 for t in trackers)  # every message after the logon was an order message
    for t in trackers:
        t.session.close()
    counters = ex.stop()
    if between is None:  # else other clients (the soak's traders) were sequenced too
        assert counters.get("requests_sequenced") == sent, (sent, counters)
    model, scan = jr.replay_journal(config.journal_dir, config.instruments)
    assert scan.stopped_because == "end", scan.stopped_because
    check_reports_against_model(trackers, model)
    if between is None:  # the soak's traders may leave orders resting
        assert model.books() == {0: [], 1: []}
    figures.final_model = model
    return figures
