"""Order-entry session rules against the real exchange (docs/PROTOCOL.md 1.4-1.6):
logon and its rejects, every malformed form of 1.5 (short, long, bad length,
oversized, unknown type, wrong version, sequence gap and repeat, message before
logon, logon twice), garbage and mid-message disconnects, another client's
order, heartbeats, logout, shutdown and config errors. After each abuse the
exchange must keep serving the other sessions (assert_serving).
"""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import time

import pytest

from tools import wire as w
from tests.integration.exchange.exchange_harness import assert_serving, make_config

R = w.SessionRejectReason


def raw(type_: int, seq: int, body: bytes = b"", length=None, version: int = 1) -> bytes:
    """A hand-made message: header (with `length`, default the real size) and body."""
    n = 8 + len(body) if length is None else length
    return w.encode_header(n, type_, seq, version) + body


def new_order(coid: int, price: int = 1000, qty: int = 1, side: int = w.BUY, instrument: int = 0, order_type: int = w.LIMIT, **kw):
    return w.NewOrder(client_order_id=coid, instrument=instrument, side=side, order_type=order_type, price=price, qty=qty, **kw)


def test_logon_ack_and_heartbeat_interval(start_exchange, config):
    ex = start_exchange(config)
    with ex.client() as a, ex.client() as b:
        a.send(w.Logon(client_id=1, heartbeat_ms=0, credential=config.client(1).key.encode()))
        ack_a = a.expect(w.LogonAck, client_id=1, heartbeat_ms=1000, seq=1)  # 0 = the server's default
        b.send(w.Logon(client_id=2, heartbeat_ms=250, credential=config.client(2).key.encode()))
        ack_b = b.expect(w.LogonAck, client_id=2, heartbeat_ms=250, seq=1)
        assert ack_a.session_id != ack_b.session_id
        for hb in (100, 60000):  # the configured bounds are inclusive
            with ex.client() as c:
                c.send(w.Logon(client_id=3, heartbeat_ms=hb, credential=config.client(3).key.encode()))
                c.expect(w.LogonAck, heartbeat_ms=hb)
    ex.stop()


def test_logon_rejects_and_the_connection_closes(start_exchange, config):
    ex = start_exchange(config)
    key1 = config.client(1).key.encode()
    cases = [
        (w.Logon(client_id=1, credential=b"not-the-key-of-client-1"), w.LogonRejectReason.BAD_CREDENTIALS),
        (w.Logon(client_id=1, credential=key1[:-1]), w.LogonRejectReason.BAD_CREDENTIALS),
        (w.Logon(client_id=1, credential=key1 + b"\0x"), w.LogonRejectReason.BAD_CREDENTIALS),  # bytes after the zero
        (w.Logon(client_id=1, credential=config.client(2).key.encode()), w.LogonRejectReason.BAD_CREDENTIALS),
        (w.Logon(client_id=77, credential=key1), w.LogonRejectReason.UNKNOWN_CLIENT),
        (w.Logon(client_id=1, heartbeat_ms=99, credential=key1), w.LogonRejectReason.BAD_HEARTBEAT),
        (w.Logon(client_id=1, heartbeat_ms=60001, credential=key1), w.LogonRejectReason.BAD_HEARTBEAT),
    ]
    for logon, reason in cases:
        with ex.client() as c:
            c.send(logon)
            assert c.wait_closed() == [w.LogonReject(reason=reason, seq=1)], (logon, reason)
    with ex.logon(2) as live:  # a second logon of a live client id
        with ex.client() as c:
            c.send(w.Logon(client_id=2, credential=config.client(2).key.encode()))
            assert c.wait_closed() == [w.LogonReject(reason=w.LogonRejectReason.ALREADY_LOGGED_ON, seq=1)]
        assert_serving(ex, 1)
        live.send(w.Heartbeat())
        assert live.poll() == [] and not live.closed
    counters = ex.stop()
    assert counters.get("logon_reject.bad credentials") == 4, counters


def test_max_sessions(start_exchange, tmp_path):
    config = make_config(tmp_path, server={"max_sessions": 2})
    ex = start_exchange(config)
    a, b = ex.logon(1), ex.logon(2)
    with ex.client() as c:
        c.send(w.Logon(client_id=3, credential=config.client(3).key.encode()))
        assert c.wait_closed() == [w.LogonReject(reason=w.LogonRejectReason.MAX_SESSIONS, seq=1)]
    a.send(w.Logout())
    a.expect(w.ServerLogout, reason=w.LogoutReason.CLIENT_REQUEST)
    a.wait_closed()
    a.close()
    assert_serving(ex, 3)  # the freed slot is usable again
    b.close()
    ex.stop()


def test_message_before_logon_is_rejected_and_closes(start_exchange, config):
    ex = start_exchange(config)
    for msg in (new_order(1), w.Heartbeat(), w.CancelOrder(client_order_id=1)):
        with ex.client() as c:
            c.send(msg)
            got = c.wait_closed()
            assert got == [
                w.SessionReject(ref_seq=1, expected_seq=1, ref_type=msg.TYPE, reason=R.NOT_LOGGED_ON, seq=1),
                w.ServerLogout(reason=w.LogoutReason.NOT_LOGGED_ON, seq=2),
            ], msg
    assert_serving(ex, 1)
    ex.stop()


def test_logon_whose_seq_is_not_1_is_refused(start_exchange, config):
    # PROTOCOL.md 1.4 step 2: the first message must be a well-formed Logon with seq 1,
    # else SessionReject + Logout NotLoggedOn and the connection closes.
    ex = start_exchange(config)
    with ex.client() as c:
        c.send(w.Logon(client_id=1, credential=config.client(1).key.encode()), seq=2)
        got = c.wait_closed()
        assert [type(m) for m in got] == [w.SessionReject, w.ServerLogout], got
        assert got[1].reason == w.LogoutReason.NOT_LOGGED_ON
    assert_serving(ex, 1)
    ex.stop()


def test_header_rules_reject_skip_and_consume_the_seq(start_exchange, config):
    ex = start_exchange(config)
    with ex.logon(1) as c:
        s = c.next_out_seq
        order = new_order(5).encode(seq=s)
        cases = [
            # (bytes, ref_type, reason): every one is skipped, the session stays and seq s is consumed
            (order[:3] + b"\x02" + order[4:], w.NewOrder.TYPE, R.UNSUPPORTED_VERSION),
            (raw(99, 0), 99, R.UNKNOWN_TYPE),
            (raw(w.ExecutionReport.TYPE, 0, bytes(88)), w.ExecutionReport.TYPE, R.UNKNOWN_TYPE),  # an exchange -> client type
            (raw(w.LogonAck.TYPE, 0, bytes(16)), w.LogonAck.TYPE, R.UNKNOWN_TYPE),
            (raw(w.NewOrder.TYPE, 0, order[8:32]), w.NewOrder.TYPE, R.BAD_LENGTH),  # short: 32 of 40 bytes
            (raw(w.NewOrder.TYPE, 0, order[8:] + bytes(8)), w.NewOrder.TYPE, R.BAD_LENGTH),  # long: 48
            (raw(w.Heartbeat.TYPE, 0, bytes(8)), w.Heartbeat.TYPE, R.BAD_LENGTH),
            (raw(w.CancelOrder.TYPE, 0, bytes(8)), w.CancelOrder.TYPE, R.BAD_LENGTH),
            (w.Logon(client_id=1, credential=config.client(1).key.encode()).encode(seq=0), w.Logon.TYPE, R.ALREADY_LOGGED_ON),
        ]
        for data, ref_type, reason in cases:
            seq = c.next_out_seq
            data = data[:4] + seq.to_bytes(4, "little") + data[8:]
            c.send_raw(data, consumes_seq=True)
            got = c.recv()
            # expected_seq is checked by test_session_reject_names_the_next_expected_seq.
            assert got == w.SessionReject(ref_seq=seq, expected_seq=got.expected_seq, ref_type=ref_type, reason=reason, seq=got.seq), (data.hex(), got)
        # The session still works and none of the rejected orders was executed: the next
        # order is the first thing that reaches the engine (exec_seq 1 on this fresh server).
        s = c.send(new_order(6))
        ack = c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s, client_order_id=6)
        assert ack.exec_seq == 1 and ack.order_id == 1
        assert c.poll() == [] and not c.in_seq_errors
    assert_serving(ex, 2)
    counters = ex.stop()
    # order 6, the mass cancel of it on disconnect (client 1 has cancel_on_disconnect), assert_serving's
    # order and cancel, and the mass cancel at the end of its session (it sent a limit order)
    assert counters.get("requests_sequenced") == 5, counters


def test_session_reject_names_the_next_expected_seq(start_exchange, config):
    # PROTOCOL.md 1.3: expected_seq is "what the exchange expects next"; 1.5: a message
    # rejected by rules 2-4 or 8-9 consumes its seq, "the next expected is seq + 1".
    ex = start_exchange(config)
    with ex.logon(1) as c:
        s = c.send(w.Heartbeat(), seq=None) + 1
        c.send_raw(raw(99, s), consumes_seq=True)
        rej = c.expect(w.SessionReject, ref_seq=s, reason=R.UNKNOWN_TYPE)
        nxt = c.send(new_order(1))
        c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=nxt)  # the exchange did expect s + 1
        assert rej.expected_seq == nxt == s + 1, rej
    ex.stop()


def test_sequence_gap_and_repeat_are_not_processed(start_exchange, config):
    ex = start_exchange(config)
    with ex.logon(1) as c:
        s = c.next_out_seq  # 2
        c.send(new_order(10), seq=s + 3)
        c.expect(w.SessionReject, ref_seq=s + 3, expected_seq=s, ref_type=w.NewOrder.TYPE, reason=R.SEQ_GAP)
        s1 = c.send(new_order(11))
        assert s1 == s
        c.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s1, client_order_id=11)
        c.send(new_order(12), seq=s1)  # repeat of an executed seq, other content: never executed
        c.expect(w.SessionReject, ref_seq=s1, expected_seq=s1 + 1, reason=R.SEQ_REPEAT)
        c.send(new_order(13), seq=1)
        c.expect(w.SessionReject, ref_seq=1, expected_seq=s1 + 1, reason=R.SEQ_REPEAT)
        s2 = c.send(w.CancelOrder(client_order_id=12))
        c.expect(w.CancelReject, ref_seq=s2, client_order_id=12, reason=w.EngineReject.UNKNOWN_ORDER)
        s3 = c.send(w.CancelOrder(client_order_id=11))
        c.expect(w.ExecutionReport, ref_seq=s3, exec_type=w.EXEC_CANCELLED, client_order_id=11)
        assert not c.in_seq_errors
    ex.stop()


@pytest.mark.parametrize("length", [0, 4, 7, 257, 300, 65535])
def test_bad_length_and_oversized_close_only_that_session(start_exchange, config, length):
    ex = start_exchange(config)
    with ex.logon(2) as other, ex.logon(1) as c:
        s = other.send(new_order(1, side=w.SELL, price=1000, qty=5))
        other.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
        c.send_raw(raw(w.NewOrder.TYPE, c.next_out_seq, bytes(max(0, min(length, 300) - 8)), length=length))
        got = c.wait_closed()
        # 1.5 rule 1: ref_seq 0; the spec does not say what ref_type is once framing is lost
        # (the header's type or 0 are both reasonable).
        assert got == [
            w.SessionReject(ref_seq=0, expected_seq=2, ref_type=w.NewOrder.TYPE, reason=R.BAD_LENGTH, seq=2),
            w.ServerLogout(reason=w.LogoutReason.PROTOCOL_ERROR, seq=3),
        ] or got == [
            w.SessionReject(ref_seq=0, expected_seq=2, ref_type=0, reason=R.BAD_LENGTH, seq=2),
            w.ServerLogout(reason=w.LogoutReason.PROTOCOL_ERROR, seq=3),
        ], got
        # The other session was not disturbed: its resting order trades.
        with ex.logon(3) as t:
            s = t.send(new_order(7, side=w.BUY, price=1000, qty=2))
            t.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
            t.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, last_qty=2, last_price=1000)
        other.expect(w.ExecutionReport, exec_type=w.EXEC_FILL, is_maker=1, last_qty=2, leaves_qty=3, ref_seq=0)
    ex.stop()


# timing: a connection that never logs on is closed within 2.5 s (logon_timeout_ms 300).
@pytest.mark.timing
def test_garbage_and_mid_message_disconnects_leave_others_serving(start_exchange, tmp_path):
    config = make_config(tmp_path, server={"logon_timeout_ms": 300})
    ex = start_exchange(config)
    rng = random.Random(1234)
    with ex.logon(2) as other:
        s = other.send(new_order(1, side=w.SELL, price=1000, qty=5))
        other.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
        # Garbage: whatever the exchange answers must be well-formed, and it must close.
        for _ in range(5):
            with ex.client() as g:
                g.send_raw(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))))
                for m in g.wait_closed(timeout=3.0):  # decoding is strict: a malformed answer raises
                    assert isinstance(m, (w.SessionReject, w.ServerLogout, w.LogonReject)), m
        # Half a header, half a logon, then disconnect.
        logon = w.Logon(client_id=1, credential=config.client(1).key.encode()).encode(seq=1)
        for cut in (3, 20):
            sock = socket.create_connection(("127.0.0.1", ex.port), timeout=2)
            sock.sendall(logon[:cut])
            sock.close()
        # A logged-on client sends half an order and disconnects: that order never executes.
        with ex.logon(1) as c:
            c.send_raw(new_order(50, side=w.BUY, price=1000, qty=5).encode(seq=c.next_out_seq)[:25])
        # A connection that never logs on is closed after logon_timeout_ms.
        with ex.client() as idle:
            t0 = time.monotonic()
            got = idle.wait_closed(timeout=3.0)
            assert time.monotonic() - t0 < 2.5
            assert got in ([], [w.ServerLogout(reason=w.LogoutReason.LOGON_TIMEOUT, seq=1)]), got
        with ex.logon(1, retry_already_logged_on=True) as c:
            s = c.send(w.CancelOrder(client_order_id=50))
            c.expect(w.CancelReject, ref_seq=s, reason=w.EngineReject.UNKNOWN_ORDER)
        assert other.poll() == []  # the half order did not trade with the resting sell
        assert_serving(ex, 3)
        s = other.send(w.CancelOrder(client_order_id=1))
        other.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, leaves_qty=0, cum_qty=0)
    ex.stop()


def test_cancel_or_modify_of_another_clients_order_is_unknown(start_exchange, config):
    ex = start_exchange(config)
    with ex.logon(1) as a, ex.logon(2) as b:
        s = a.send(new_order(42, side=w.SELL, price=1000, qty=5))
        ack = a.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
        s = b.send(w.CancelOrder(client_order_id=42, instrument=0))
        rej = b.expect(w.CancelReject, ref_seq=s, client_order_id=42, instrument=0, reason=w.EngineReject.UNKNOWN_ORDER)
        assert rej.exec_seq == ack.exec_seq + 1
        s = b.send(w.ModifyOrder(client_order_id=42, instrument=0, price=1001, qty=5))
        b.expect(w.ModifyReject, ref_seq=s, client_order_id=42, reason=w.EngineReject.UNKNOWN_ORDER)
        assert a.poll() == []
        s = a.send(w.CancelOrder(client_order_id=42, instrument=0))
        a.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, order_id=ack.order_id, cancel_reason=w.CANCEL_USER)
    ex.stop()


def test_order_messages_round_trip_through_the_engine(start_exchange, config):
    ex = start_exchange(config)
    with ex.logon(1) as a, ex.logon(2) as b:
        s = a.send(new_order(7, side=w.BUY, price=990, qty=30, instrument=1))
        ack = a.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED)
        assert ack == w.ExecutionReport(exec_seq=1, client_order_id=7, order_id=1, price=990, order_qty=30, leaves_qty=30,
                                        instrument=1, ref_seq=s, exec_type=w.EXEC_ACCEPTED, side=w.BUY, order_type=w.LIMIT, seq=ack.seq)
        s = a.send(w.ModifyOrder(client_order_id=7, instrument=1, price=995, qty=40))
        mod = a.expect(w.ExecutionReport, exec_type=w.EXEC_MODIFIED)
        assert mod == w.ExecutionReport(exec_seq=2, client_order_id=7, order_id=1, price=995, order_qty=40, leaves_qty=40,
                                        instrument=1, ref_seq=s, exec_type=w.EXEC_MODIFIED, side=w.BUY, order_type=w.LIMIT, seq=mod.seq)
        s = b.send(new_order(9, side=w.SELL, price=990, qty=15, instrument=1, order_type=w.IOC))
        got = [b.recv(), b.recv()]  # filled completely: no IOC residual cancel
        assert [m.exec_type for m in got] == [w.EXEC_ACCEPTED, w.EXEC_FILL], got
        taker_fill = got[1]
        assert (taker_fill.last_price, taker_fill.last_qty, taker_fill.cum_qty, taker_fill.leaves_qty, taker_fill.is_maker) == (995, 15, 15, 0, 0)
        assert taker_fill.ref_seq == s and taker_fill.exec_seq == 4 and taker_fill.order_id == 2
        maker = a.expect(w.ExecutionReport, exec_type=w.EXEC_FILL)
        assert (maker.exec_seq, maker.ref_seq, maker.is_maker, maker.last_price, maker.last_qty, maker.cum_qty, maker.leaves_qty) == (5, 0, 1, 995, 15, 15, 25)
        # Engine rejects: the session layer passes the fields through, the engine names the reason.
        rejects = [
            (new_order(20, price=7, instrument=1), w.EngineReject.PRICE_OFF_TICK),
            (new_order(21, price=1000, instrument=9), w.EngineReject.UNKNOWN_INSTRUMENT),
            (new_order(22, qty=0), w.EngineReject.ZERO_QUANTITY),
            (new_order(23, qty=10_001, instrument=1, price=1000), w.EngineReject.QUANTITY_TOO_LARGE),
            (new_order(24, side=3), w.EngineReject.INVALID_SIDE),
            (new_order(25, price=2_000_000), w.EngineReject.PRICE_OUT_OF_BAND),
            (new_order(7, instrument=1, price=990), w.EngineReject.DUPLICATE_CLIENT_ORDER_ID),
        ]
        exec_seq = 6
        for msg, reason in rejects:
            s = a.send(msg)
            r = a.expect(w.ExecutionReport, exec_type=w.EXEC_REJECTED, ref_seq=s, client_order_id=msg.client_order_id)
            assert (r.reject_reason, r.order_id, r.exec_seq, r.instrument, r.side, r.price, r.order_qty) == (
                reason, 0, exec_seq, msg.instrument, msg.side, msg.price, msg.qty), r
            exec_seq += 1
        s = a.send(w.CancelOrder(client_order_id=7, instrument=0))  # live, but on instrument 1
        a.expect(w.CancelReject, ref_seq=s, reason=w.EngineReject.UNKNOWN_ORDER, exec_seq=exec_seq)
        s = a.send(w.CancelOrder(client_order_id=7, instrument=1))
        a.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, cum_qty=15, leaves_qty=0, order_qty=40)
        s = a.send(w.CancelOrder(client_order_id=7, instrument=1))
        a.expect(w.CancelReject, ref_seq=s, reason=w.EngineReject.TOO_LATE_TO_CANCEL)
        assert not a.in_seq_errors and not b.in_seq_errors
    ex.stop()


# timing: the silent session is closed 0.25-1.5 s in (3 heartbeats of 100 ms, plus the pass that sees it).
@pytest.mark.timing
def test_heartbeats_and_heartbeat_timeout(start_exchange, config):
    ex = start_exchange(config)
    with ex.logon(1, heartbeat_ms=100) as quiet, ex.logon(2, heartbeat_ms=100) as chatty:
        t0 = time.monotonic()
        closed_at = None
        while time.monotonic() - t0 < 3.0 and closed_at is None:
            chatty.send(w.Heartbeat())
            time.sleep(0.05)
            chatty.poll()
            if not quiet.closed:
                quiet.poll()
                if quiet.closed:
                    closed_at = time.monotonic() - t0
        assert closed_at is not None, "a silent session with heartbeat_ms 100 was not closed within 3 s"
        assert 0.25 <= closed_at <= 1.5, closed_at
        beats = [m for m in quiet.received if isinstance(m, w.ServerHeartbeat)]
        assert len(beats) >= 2, quiet.received
        assert quiet.received[-1] == w.ServerLogout(reason=w.LogoutReason.HEARTBEAT_TIMEOUT, seq=quiet.received[-1].seq)
        assert not chatty.closed and not quiet.in_seq_errors
        s = chatty.send(new_order(1))
        chatty.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    ex.stop()


def test_shutdown_logs_out_every_session_and_prints_counters(start_exchange, config):
    ex = start_exchange(config)
    a, b = ex.logon(1), ex.logon(2)
    for i in range(5):
        s = a.send(new_order(100 + i, price=900 + i))
        a.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    ex.proc.send_signal(signal.SIGTERM)
    assert a.wait_closed() == [w.ServerLogout(reason=w.LogoutReason.SERVER_SHUTDOWN, seq=7)]
    assert b.wait_closed() == [w.ServerLogout(reason=w.LogoutReason.SERVER_SHUTDOWN, seq=2)]
    counters = ex.stop(sig=None)
    # 5 orders, and the one mass cancel that cancelled all 5 when the shutdown closed the
    # session (cancel_on_disconnect); b had nothing open: no request for it
    assert counters.get("requests_sequenced") == 6 and counters.get("journal_records") == 6, counters
    assert counters.get("disconnect_mass_cancels") == 1 and counters.get("disconnect_cancels") == 5, counters
    a.close()
    b.close()


def test_config_errors_exit_2_naming_the_key(exchange_binary, tmp_path):
    cases = [
        ("clients", "rate_limit_per_s", lambda c: setattr(c.clients[1], "rate_limit_per_s", -5), "clients[1].rate_limit_per_s"),
        ("server", "max_sessions", lambda c: c.server.update(max_sessions=0), "server.max_sessions"),
        ("market_data", "no_such_key", lambda c: c.market_data.update(no_such_key=1), "market_data.no_such_key"),
    ]
    for i, (_, _, mutate, key) in enumerate(cases):
        d = tmp_path / f"case{i}"
        d.mkdir()
        config = make_config(d)
        mutate(config)
        path = config.write()
        p = subprocess.run([str(exchange_binary), "--config", str(path)], capture_output=True, text=True, timeout=10)
        assert p.returncode == 2, (key, p.returncode, p.stderr)
        assert f"config error: {path}: {key}: " in p.stderr, (key, p.stderr)


def test_missing_required_config_keys_exit_2_naming_them(exchange_binary, tmp_path):
    # docs/EXCHANGE.md "Config": a key that decides where orders, market data or the journal
    # go has no default; its absence (or its table's) is a config error naming it.
    def drop_table(config, table):
        text = config.path.read_text()
        start = text.index(f"[{table}]\n")
        end = text.index("\n\n", start) + 2
        config.path.write_text(text[:start] + text[end:])

    cases = [
        (lambda c: c.server.pop("order_entry"), None, "server.order_entry"),
        (lambda c: c.market_data.pop("incremental"), None, "market_data.incremental"),
        (lambda c: c.journal.pop("dir"), None, "journal.dir"),
        (lambda c: delattr(c.instruments[1], "tick_size"), None, "instruments[1].tick_size"),
        (lambda c: delattr(c.instruments[0], "max_price"), None, "instruments[0].max_price"),
        (lambda c: None, "journal", "journal"),
        (lambda c: None, "market_data", "market_data"),
    ]
    for i, (mutate, table, key) in enumerate(cases):
        d = tmp_path / f"case{i}"
        d.mkdir()
        config = make_config(d)
        mutate(config)
        path = config.write()
        if table is not None:
            drop_table(config, table)
        p = subprocess.run([str(exchange_binary), "--config", str(path)], capture_output=True, text=True, timeout=10,
                           cwd=str(d))
        assert p.returncode == 2, (key, p.returncode, p.stderr)
        assert f"config error: {path}: {key}: missing (required)" in p.stderr, (key, p.stderr)
        assert "listening" not in p.stderr, (key, p.stderr)


def test_reserved_bytes_of_order_messages_reach_the_engine(start_exchange, config):
    # PROTOCOL.md 1.5, last paragraph: reserved bytes inside a well-formed order message are
    # not checked by the session layer; the engine rejects them (ReservedNotZero, 112).
    # (The general convention of the spec says reserved fields are "ignored on receipt": the
    # specific rule wins for order messages.)
    ex = start_exchange(config)
    with ex.logon(1) as c:
        s = c.send(new_order(5, reserved=1))
        c.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=112, order_id=0)
        s = c.send(new_order(6))
        c.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        s = c.send(w.CancelOrder(client_order_id=6, reserved=7))
        c.expect(w.CancelReject, ref_seq=s, reason=112)
        s = c.send(w.ModifyOrder(client_order_id=6, reserved=7, price=1000, qty=3))
        c.expect(w.ModifyReject, ref_seq=s, reason=112)
        logout = bytearray(w.Logout().encode(seq=c.next_out_seq))
        logout[10:16] = b"\xff" * 6  # a session message's reserved bytes are ignored
        c.send_raw(bytes(logout), consumes_seq=True)
        c.expect(w.ServerLogout, reason=w.LogoutReason.CLIENT_REQUEST)
        c.wait_closed()
    ex.stop()


def send_ioc_orders(sock: socket.socket, first_seq: int, n: int) -> None:
    """n IOC buys at the band's lowest price (accepted, then cancelled: 2 reports each)."""
    data = b"".join(new_order(i + 1, price=1, order_type=w.IOC).encode(seq=first_seq + i) for i in range(n))
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass  # closed as a slow consumer while we were still sending: what the test expects


@pytest.mark.parametrize("rcvbuf", [None, 2048, 4096, 65536], ids=["default-rcvbuf", "rcvbuf-2k", "rcvbuf-4k", "rcvbuf-64k"])
def test_client_that_does_not_read_is_closed_as_slow_consumer(start_exchange, tmp_path, rcvbuf):
    # A small read budget keeps one gateway pass's reports (102 orders x 192 bytes) well
    # inside the output buffer: only a client that stops reading can fill it.
    # PROTOCOL.md 1.5: what the client can read afterwards is whole messages, gap-free,
    # ending in Logout SlowConsumer and then the end of the stream.
    config = make_config(tmp_path, server={"output_buffer_bytes": 65536, "read_budget_bytes": 4096})
    ex = start_exchange(config)
    with ex.logon(1, rcvbuf=rcvbuf) as c:
        t0 = time.monotonic()
        send_ioc_orders(c.sock, c.next_out_seq, 60_000)  # ~11 MB of reports: more than the kernel's buffers hold
        time.sleep(max(0.0, 5.0 - (time.monotonic() - t0)))  # closed after 3 heartbeats (3 s) + 1 s of linger
        got = c.wait_closed(timeout=10.0)  # only now do we read
        assert time.monotonic() - t0 < 15.0
        assert c.framer.pending == 0, f"the stream ended inside a message ({c.framer.pending} bytes of it)"
        assert not c.in_seq_errors, c.in_seq_errors[:3]
        assert all(isinstance(m, w.ExecutionReport) for m in got[:-1]), got[-3:]
        assert len(got) < 2 * 60_000
        assert isinstance(got[-1], w.ServerLogout) and got[-1].reason == w.LogoutReason.SLOW_CONSUMER, got[-2:]
    with ex.logon(2) as other:  # nobody else paid for it
        s = other.send(new_order(1))
        other.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s)
    counters = ex.stop()
    assert counters.get("logout.slow consumer") == 1, counters


def test_pipelining_client_that_reads_promptly_is_not_a_slow_consumer(start_exchange, tmp_path):
    # 2000 IOC orders (80 KB, more than one 64 KiB read budget) -> 4000 reports (384 KB). The
    # client reads as soon as it has sent; its socket is empty the whole time.
    config = make_config(tmp_path, server={"output_buffer_bytes": 4096})
    ex = start_exchange(config)
    with ex.logon(1) as c:
        send_ioc_orders(c.sock, c.next_out_seq, 2000)
        c.next_out_seq += 2000
        received = [c.recv(timeout=5.0) for _ in range(4000)]
        assert all(isinstance(m, w.ExecutionReport) for m in received)
    ex.stop()
