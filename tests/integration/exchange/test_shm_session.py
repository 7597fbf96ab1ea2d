"""Shared-memory order entry against the real exchange, written as the attacker
would (docs/EXCHANGE.md "Shared-memory sessions", "Threat model"): a client
that publishes impossible ring positions, one killed with SIGKILL while its
orders rest, more connections than slots, and an exchange killed with SIGKILL
under a connected client. The protocol rules themselves run over both
transports in test_session.py (its `config` fixture is parametrized).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tools import wire as w
from tests.integration.exchange.exchange_harness import REPO, assert_serving, make_config


def new_order(coid: int, price: int = 1000, qty: int = 1, side: int = w.BUY):
    return w.NewOrder(client_order_id=coid, instrument=0, side=side, order_type=w.LIMIT, price=price, qty=qty)


def shm_config(tmp_path, **server):
    cfg = make_config(tmp_path, transport="shm")
    cfg.server.update(server)
    return cfg


def test_shm_impossible_ring_positions_close_only_that_session(start_exchange, tmp_path):
    ex = start_exchange(shm_config(tmp_path))
    with ex.logon(2) as other:
        s = other.send(new_order(1, side=w.SELL, price=1000, qty=5))
        other.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
        attacks = [
            ("tail past the buffer", lambda c: c.set_word(c.TO_EXCHANGE_TAIL, c.out_pos + c.ring + 1)),
            ("tail backwards", lambda c: c.set_word(c.TO_EXCHANGE_TAIL, 0)),
            ("tail near 2^64", lambda c: c.set_word(c.TO_EXCHANGE_TAIL, (1 << 64) - 1)),
            ("head past what was written", lambda c: c.set_word(c.TO_CLIENT_HEAD, c.in_pos + 4096)),
        ]
        for what, attack in attacks:
            c = ex.logon(1, retry_already_logged_on=True)
            s = c.send(new_order(10, price=900))
            c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
            attack(c)
            if what.startswith("head"):
                c.send(new_order(11, price=901))  # the exchange sees the head when it writes the answer
            try:
                c.wait_closed(timeout=3.0)
            except TimeoutError:
                pytest.fail(f"{what}: the session was not closed")
            c.close()
        # The other session never noticed; its order still rests and trades.
        assert other.poll() == []
        assert_serving(ex, 3)
        with ex.logon(1, retry_already_logged_on=True) as c:
            s = c.send(new_order(20, price=1000, qty=5))
            c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
            c.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, ref_seq=s, last_qty=5, leaves_qty=0)
        other.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, client_order_id=1, last_qty=5)
    counters = ex.stop()
    assert counters.get("shm.broken_rings") == len(attacks), counters


_KILLED_CLIENT = textwrap.dedent("""
    import sys, time
    from tools import wire as w
    c = w.ShmOrderEntryClient(sys.argv[1])
    c.logon(int(sys.argv[2]), sys.argv[3], heartbeat_ms=int(sys.argv[4]))
    s = c.send(w.NewOrder(client_order_id=77, instrument=0, side=w.BUY, order_type=w.LIMIT, price=950, qty=3))
    c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    print("resting", flush=True)
    time.sleep(60)
""")


def test_shm_client_killed_with_sigkill_is_detected_and_its_orders_cancelled(start_exchange, tmp_path):
    cfg = shm_config(tmp_path)
    ex = start_exchange(cfg)
    # A heartbeat interval far beyond how long the test runs: the session can only
    # end through the control socket's EOF (the gateway sees the process gone), never
    # through a heartbeat timeout (3 x 60 s). The bound below is a wide one for that
    # reason, not a speed check: a busy machine cannot make it fail.
    heartbeat_ms = 60_000
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_CLIENT, str(cfg.server["shm_path"]), "1", cfg.client(1).key, str(heartbeat_ms)],
        stdout=subprocess.PIPE, text=True, cwd=REPO)  # from the root: it imports tools.wire
    try:
        assert child.stdout.readline().strip() == "resting"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=5)
    finally:
        if child.poll() is None:
            child.kill()
    # The same client logs on again: refused (AlreadyLoggedOn) until the exchange has
    # ended the dead session.
    deadline = time.monotonic() + 30
    while True:
        c = ex.client()
        c.send(w.Logon(client_id=1, credential=cfg.client(1).key.encode()))
        msg = c.recv()
        if isinstance(msg, w.LogonAck):
            break
        c.close()
        assert msg == w.LogonReject(reason=w.LogonRejectReason.ALREADY_LOGGED_ON, seq=1), msg
        assert time.monotonic() < deadline, "the killed client's session was not ended within 30 s"
        time.sleep(0.005)
    # Its resting order was cancelled (cancel_on_disconnect): the engine knows it as
    # finished. The mass cancel was queued when the old session ended, before this
    # logon, so it is sequenced before this cancel; its report goes to this session
    # if the engine executes it after the logon, and is dropped if before
    # (docs/PROTOCOL.md 1.4): either way it comes first, and at most once.
    s = c.send(w.CancelOrder(client_order_id=77))
    msg = c.recv()
    if isinstance(msg, w.ExecutionReport):
        assert (msg.exec_type, msg.client_order_id, msg.cancel_reason, msg.cum_qty, msg.leaves_qty) == (
            w.EXEC_CANCELLED, 77, w.CANCEL_MASS, 0, 0), msg
        msg = c.recv()
    assert isinstance(msg, w.CancelReject) and (msg.ref_seq, msg.client_order_id, msg.reason) == (
        s, 77, w.EngineReject.TOO_LATE_TO_CANCEL), msg
    assert c.poll() == []
    c.close()
    counters = ex.stop()
    assert counters.get("shm.peer_process_gone", 0) >= 1, counters
    assert counters.get("disconnect_cancels") == 1, counters
    assert counters.get("logout.heartbeat timeout", 0) == 0, counters


def test_shm_connections_beyond_the_slots_are_refused_and_slots_come_back(start_exchange, tmp_path):
    ex = start_exchange(shm_config(tmp_path, shm_slots=2))
    a, b = ex.logon(1), ex.logon(2)
    with pytest.raises(w.ConnectionClosed):
        ex.client()  # closed before a segment is made
    a.close()  # a clean close frees a slot
    deadline = time.monotonic() + 3
    while True:
        try:
            c = ex.logon(3)
            break
        except w.ConnectionClosed:
            assert time.monotonic() < deadline, "the freed slot was not reused"
            time.sleep(0.01)
    c.close()
    b.close()
    counters = ex.stop()
    assert counters.get("shm.connections_refused", 0) >= 1, counters
    assert counters.get("shm.connections_accepted", 0) >= 3, counters


def test_shm_exchange_killed_leaves_nothing_that_blocks_its_restart(start_exchange, tmp_path):
    cfg = shm_config(tmp_path)
    ex = start_exchange(cfg)
    c = ex.logon(1)
    s = c.send(new_order(5, price=900))
    c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    ex.kill()  # SIGKILL: no Logout, no closed word, the socket file left behind
    assert os.path.exists(str(cfg.server["shm_path"]))
    assert c.wait_closed(timeout=2.0) == []  # the control socket's EOF ends the session
    c.close()
    ex2 = start_exchange(cfg)  # replaces the stale socket file
    with ex2.logon(1) as c2:
        # A new session on a new segment; the recovered order rests (cancel-on-disconnect
        # runs at start-up for recovered orders: docs/EXCHANGE.md "Shutdown").
        s = c2.send(new_order(6, price=901))
        c2.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    ex2.stop()
    assert not os.path.exists(str(cfg.server["shm_path"])), "a clean shutdown removes the socket file"
