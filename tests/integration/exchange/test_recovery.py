"""Recovery: under load from two pipelining clients, the exchange is killed with
SIGKILL at a random point, several times, and restarted on the same journal.
After each restart:

- the journal the killed process left is replayed through the independent
  model (engine_model.py); every report the clients received before the kill
  is in that replay with the same exec_seq and fields, and every order they saw
  acknowledged was accepted with the same order id (nothing acknowledged lost);
- the restarted exchange's books, as its snapshot channel publishes them,
  equal the replay's books order by order, and reflect exactly the replay's
  last market data seq and each instrument's last instrument_seq; the
  incremental channel continues at the next seq, and each instrument's
  messages at its next instrument_seq (gap-free within the run, and nothing
  published before a kill is missing from the replay's numbering);
- a cancel of an acknowledged order the replay has resting is answered
  Cancelled (not UnknownOrder), with the replay's next exec_seq, above every
  exec_seq acknowledged before the kill.

The kill points come from a seeded RNG (NANOTICK_TEST_SEED; printed on failure);
the timing of the load still varies from run to run.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import engine_model as em
import md_books as mb
import nanotick_wire as w
from exchange_harness import InstrumentSpec, MdRecorder, make_config
from order_flow import OrderTracker, RandomFlow, TrackedOrder, check_reports_against_model

KILLS = 5
WINDOW = 32  # requests in flight per client


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


def test_kill_9_under_load_then_restart_recovers_everything_acknowledged(start_exchange, tmp_path):
    seed = int(os.environ.get("NANOTICK_TEST_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    config = make_config(tmp_path, journal={"snapshot_every": 500, "segment_bytes": 1 << 18})
    config.instruments = [InstrumentSpec("T0", max_orders=65536), InstrumentSpec("T1", tick_size=5, min_price=5, max_price=100_000, max_order_qty=10_000, max_orders=65536)]
    for c in config.clients:
        c.cancel_on_disconnect = False  # resting orders must outlive the killed sessions
    trackers = [OrderTracker(1), OrderTracker(2)]
    flows = [RandomFlow(rng, t, mids=[1000, 500], ticks=[1, 5]) for t in trackers]
    model = em.EngineModel(config.instruments)
    max_acked_exec_seq = 0
    for run in range(KILLS + 1):
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
            for ins, snap in snaps.items():
                assert snap.last_seq == last_md, f"{where}: snapshot of {ins} reflects md seq {snap.last_seq}, the journal replay ends at {last_md}"
                assert snap.instrument_seq == start_iseqs[ins], f"{where}: snapshot of {ins} says instrument_seq {snap.instrument_seq}, the journal replay {start_iseqs[ins]}"
                assert snap.priority_list() == model.books()[ins], f"{where}: recovered book of {ins} differs from the journal replay"
            md.wait_incremental_heartbeat(model.next_md_seq)
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
                    r = t.session.expect(w.ExecutionReport, ref_seq=s)
                    t.on_message(r)
                    assert (r.exec_type, r.cancel_reason, r.order_id, r.exec_seq) == (w.EXEC_CANCELLED, w.CANCEL_USER, o.order_id, next_exec), (where, r, o)
                    next_exec += 1
                    cancelled += 1
            if cancelled:
                first = md.wait_for(lambda: next((m for p in md.packets()[0] for m in p.messages if m.seq == model.next_md_seq), None), 3.0,
                                    f"the first market data message after the restart to carry seq {model.next_md_seq}")
                assert first.instrument_seq == start_iseqs[first.instrument] + 1, (where, first, start_iseqs)
            if run == KILLS:
                break
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
        model, scan = em.replay_journal(config.journal_dir, config.instruments)
        where = f"seed {seed}, after kill {run + 1}"
        # What was published before the kill was journaled first: the replay numbers it all.
        for ins, iseq in heard.items():
            assert iseq <= model.instrument_seqs()[ins], f"{where}: instrument {ins} published instrument_seq {iseq}, the journal replay ends at {model.instrument_seqs()[ins]}"
        resting = sum(len(b) for b in model.books().values())
        print(f"{where}: journal {len(scan.requests)} requests ({scan.stopped_because}), {len(model.reports)} reports, "
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
            acked = [r.exec_seq for r in t.reports]
            max_acked_exec_seq = max([max_acked_exec_seq] + acked)
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
    assert counters.get("requests_sequenced") == sent, (sent, counters)
    model, scan = em.replay_journal(config.journal_dir, config.instruments)
    assert scan.stopped_because == "end", scan.stopped_because
    check_reports_against_model(trackers, model)
    assert model.books() == {0: [], 1: []}
