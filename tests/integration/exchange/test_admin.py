"""The venue's admin session in the real exchange (docs/CONTROLS.md "Admin"),
over the wire, written as an operator and an attacker would use it:

- an admin halts an instrument: its new orders and modifies are refused
  (409), cancels pass, the feed carries the state (InstrumentState, and
  every later snapshot's trading_state) and the resume undoes it;
- an admin blocks a client (408 on every instrument) and unblocks it;
- cancel-all cancels every working order of the target (cancel_reason 7),
  the target hears each cancel, the admin hears how many;
- a non-admin's request, an unknown target client and an unknown action are
  refused by the gateway, never sequenced (exec_seq 0), counted; an unknown
  instrument is refused by the controls, sequenced;
- halts and blocks survive kill -9 and a restart (engine snapshot + journal);
- nanotick-admin, the command line: each action, its exit codes, a wrong key.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import time

from tools import wire as w
from tests.integration.exchange.exchange_harness import MdRecorder, make_config

T0, T1 = 0, 1
ADMIN, TRADER, OTHER = 1, 2, 3
ADMIN_BIN = pathlib.Path(__file__).resolve().parents[3] / "build" / "release" / "bin" / "nanotick-admin"


def admin_config(tmp_path, **overrides):
    config = make_config(tmp_path, n_clients=3, **overrides)
    config.client(ADMIN).role = "admin"
    return config


def ask(admin, request_id, action, instrument=0, target=0, **expect):
    s = admin.send(w.AdminRequest(request_id=request_id, action=action, instrument=instrument, target_client=target))
    return admin.expect(w.AdminResponse, ref_seq=s, request_id=request_id, action=action, **expect)


def buy(c, coid, instrument=T0, price=100, qty=5):
    return c.send(w.NewOrder(client_order_id=coid, instrument=instrument, side=w.BUY, order_type=w.LIMIT, price=price,
                             qty=qty))


def test_halt_block_and_cancel_all_over_the_wire(start_exchange, tmp_path):
    config = admin_config(tmp_path)
    with MdRecorder(config) as md:
        ex = start_exchange(config)
        with ex.logon(ADMIN) as admin, ex.logon(TRADER) as trader, ex.logon(OTHER) as other:
            s = buy(trader, 1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
            s = buy(trader, 2, instrument=T1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)

            done = ask(admin, 10, w.ADMIN_HALT, instrument=T0, reason=0)
            assert done.exec_seq > 0, "sequenced: numbered in the engine's report stream"
            s = buy(trader, 3)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=409)
            s = trader.send(w.ModifyOrder(client_order_id=1, instrument=T0, price=99, qty=5))
            trader.expect(w.ModifyReject, ref_seq=s, reason=409)
            s = buy(trader, 4, instrument=T1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)  # only T0 is halted
            s = trader.send(w.CancelOrder(client_order_id=1, instrument=T0))
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_CANCELLED)  # cancels pass a halt
            md.wait_for(lambda: md.books().halted.get(T0) is True, 5, "InstrumentState halted for T0")
            md.wait_for(lambda: any(sn.instrument == T0 and sn.trading_state == 1 for sn in md.snapshots()), 5,
                        "a snapshot of T0 saying halted")
            ask(admin, 11, w.ADMIN_RESUME, instrument=T0, reason=0)
            s = buy(trader, 5)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
            md.wait_for(lambda: md.books().halted.get(T0) is False, 5, "InstrumentState open for T0")

            ask(admin, 12, w.ADMIN_BLOCK, target=TRADER, reason=0)
            s = buy(trader, 6, instrument=T1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=408)
            s = buy(other, 1)
            other.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)  # only the blocked client

            # The kill switch's second half: every working order of the target goes (2, 4 and 5).
            done = ask(admin, 13, w.ADMIN_CANCEL_ALL, instrument=w.ALL_INSTRUMENTS, target=TRADER, reason=0,
                       orders_cancelled=3)
            cancelled = sorted(trader.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, cancel_reason=7).client_order_id
                               for _ in range(3))
            assert cancelled == [2, 4, 5]
            ask(admin, 14, w.ADMIN_UNBLOCK, target=TRADER, reason=0)
            s = buy(trader, 7)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)

            # Refused by the gateway: never sequenced.
            s = other.send(w.AdminRequest(request_id=1, action=w.ADMIN_HALT, instrument=T0))
            other.expect(w.AdminResponse, ref_seq=s, exec_seq=0, reason=411)
            ask(admin, 15, w.ADMIN_BLOCK, target=99, reason=410, exec_seq=0)
            ask(admin, 16, 9, reason=101, exec_seq=0)
            # Refused by the controls: sequenced, nothing changed.
            refused = ask(admin, 17, w.ADMIN_HALT, instrument=7, reason=100)
            assert refused.exec_seq > done.exec_seq
            s = admin.send(w.AdminRequest(request_id=18, action=w.ADMIN_HALT, instrument=T1, reserved=1))
            admin.expect(w.AdminResponse, ref_seq=s, reason=112)
            s = buy(trader, 8, instrument=T1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
            for c in (admin, trader, other):
                assert not c.in_seq_errors, c.in_seq_errors
        counters = ex.stop()
        md.check(from_start=True)
    assert counters["admin.requests"] == 7, counters
    assert counters["admin.refused"] == 3, counters
    assert counters["admin.cancels"] == 3, counters
    assert counters["engine_reject.409"] == 2 and counters["engine_reject.408"] == 1, counters
    # The gateway's refusals under names of their own (issue 30): the engine never saw them.
    assert counters["admin.refused.411"] == 1 and counters["admin.refused.410"] == 1, counters
    assert counters["admin.refused.101"] == 1, counters
    assert counters.get("engine_reject.411", 0) == 0 and counters.get("engine_reject.410", 0) == 0, counters
    assert counters.get("engine_reject.101", 0) == 0, counters


def test_halts_and_blocks_survive_kill_9_and_a_restart(start_exchange, tmp_path):
    config = admin_config(tmp_path, journal={"snapshot_every": 5, "fsync": "every"})
    ex = start_exchange(config)
    with ex.logon(ADMIN) as admin, ex.logon(TRADER) as trader:
        ask(admin, 1, w.ADMIN_HALT, instrument=T1, reason=0)
        ask(admin, 2, w.ADMIN_BLOCK, target=OTHER, reason=0)
        for coid in range(1, 12):  # past a snapshot or two
            s = buy(trader, coid, price=100 + coid)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        ask(admin, 3, w.ADMIN_HALT, instrument=T0, reason=0)  # in the journal after the last snapshot
        ask(admin, 4, w.ADMIN_RESUME, instrument=T0, reason=0)
        ask(admin, 5, w.ADMIN_HALT, instrument=T0, reason=0)
    # The snapshotter writes in the background, after the answers: on a busy
    # machine the kill could come first (3 in 10 runs beside two CPU hogs).
    # The test is of recovery from a snapshot, so it kills once one is on disk.
    deadline = time.monotonic() + 15
    while not list(config.journal_dir.glob("snapshot-*.snap")) and time.monotonic() < deadline:
        time.sleep(0.02)
    ex.kill()
    assert list(config.journal_dir.glob("snapshot-*.snap")), "no engine snapshot: recovery would only replay"
    with MdRecorder(config) as md:
        ex2 = start_exchange(config)
        with ex2.logon(TRADER) as trader, ex2.logon(OTHER) as other:
            s = buy(trader, 100, instrument=T1)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=409)
            s = buy(trader, 101, instrument=T0)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=409)
            s = buy(other, 1, instrument=T0)
            other.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=408)
        # A late joiner learns the halts from the snapshot channel.
        md.wait_for(lambda: {sn.instrument for sn in md.snapshots() if sn.trading_state == 1} == {T0, T1}, 5,
                    "snapshots of T0 and T1 saying halted")
        ex2.stop()


def run_admin(ex, config, *args, key=None, timeout=30, mode=0o600):
    key_file = config.path.parent / "admin.key"
    key_file.write_text((key if key is not None else config.client(ADMIN).key) + "\n")
    key_file.chmod(mode)
    return subprocess.run([str(ADMIN_BIN), "--config", str(config.path), "--exchange", f"127.0.0.1:{ex.port}",
                           "--admin-id", str(ADMIN), "--key-file",
                           str(key_file), "--timeout-ms", "5000", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def test_the_admin_command_line(start_exchange, tmp_path):
    config = admin_config(tmp_path)
    ex = start_exchange(config)
    with ex.logon(TRADER) as trader:
        for coid in (1, 2):
            s = buy(trader, coid)
            trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        done = run_admin(ex, config, "halt", "T1")
        assert done.returncode == 0 and done.stdout.startswith("halt T1: done"), (done.stdout, done.stderr)
        s = buy(trader, 3, instrument=T1)
        trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=409)
        done = run_admin(ex, config, "kill", config.client(TRADER).name)
        assert done.returncode == 0, (done.stdout, done.stderr)
        lines = done.stdout.splitlines()
        assert len(lines) == 2, done.stdout
        assert re.fullmatch(rf"block client {TRADER}: done \(exec_seq \d+\)", lines[0]), lines
        assert re.fullmatch(rf"cancel-all client {TRADER}: done, 2 order\(s\) cancelled \(exec_seq \d+\)", lines[1]), lines
        for _ in range(2):
            trader.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, cancel_reason=7)
        s = buy(trader, 4)
        trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=408)
        assert run_admin(ex, config, "unblock", str(TRADER)).returncode == 0
        s = buy(trader, 5)
        trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)

    wrong = run_admin(ex, config, "halt", "T0", key="x" * 24)
    assert wrong.returncode == 3 and "no logon" in wrong.stderr, (wrong.returncode, wrong.stderr)
    unknown = run_admin(ex, config, "halt", "NOPE")
    assert unknown.returncode == 2 and "no instrument 'NOPE'" in unknown.stderr, unknown.stderr
    nobody = run_admin(ex, config, "block", "no-such-client")
    assert nobody.returncode == 2 and "no client" in nobody.stderr, nobody.stderr
    usage = run_admin(ex, config, "explode")
    assert usage.returncode == 2, usage.stderr
    # A key file other users may read is refused before any logon (issue 30), naming the file, its mode, the fix.
    key_file = config.path.parent / "admin.key"
    for mode in (0o644, 0o640, 0o604):
        shared = run_admin(ex, config, "halt", "T0", mode=mode)
        assert shared.returncode == 2 and f"{key_file}: mode {mode:04o}" in shared.stderr, (oct(mode), shared.stderr)
        assert f"chmod 600 {key_file}" in shared.stderr and "halt T0" not in shared.stdout, shared.stderr
    # A client that is not an admin gets the venue's own refusal, and exit 1.
    not_admin = subprocess.run([str(ADMIN_BIN), "--config", str(config.path), "--exchange", f"127.0.0.1:{ex.port}",
                                "--admin-id", str(OTHER), "--timeout-ms",
                                "5000", "halt", "T0"], env={"NANOTICK_ADMIN_KEY": config.client(OTHER).key},
                               capture_output=True, text=True, timeout=30)
    assert not_admin.returncode == 1 and "only an admin session" in not_admin.stdout, (not_admin.stdout, not_admin.stderr)
    counters = ex.stop()
    assert counters["admin.requests"] == 4 and counters["admin.refused"] == 1, counters


def test_an_adjustment_changes_what_the_client_may_trade_and_survives_a_restart(start_exchange, tmp_path):
    config = admin_config(tmp_path)
    config.client(TRADER).account = {"cash": 1_000, "positions": {"T0": 5}}
    ex = start_exchange(config)
    with ex.logon(ADMIN) as admin, ex.logon(TRADER) as trader:
        s = buy(trader, 1, price=100, qty=20)
        trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_REJECTED, reject_reason=406)
        s = admin.send(w.AdminRequest(request_id=1, action=w.ADMIN_ADJUST, instrument=w.ALL_INSTRUMENTS,
                                      target_client=TRADER, amount=1_000))
        admin.expect(w.AdminResponse, ref_seq=s, reason=0)
        s = buy(trader, 2, price=100, qty=20)  # holds all 2,000 now
        trader.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        s = admin.send(w.AdminRequest(request_id=2, action=w.ADMIN_ADJUST, instrument=w.ALL_INSTRUMENTS,
                                      target_client=TRADER, amount=-1))
        admin.expect(w.AdminResponse, ref_seq=s, reason=406)  # below what the working buy holds
        s = admin.send(w.AdminRequest(request_id=3, action=w.ADMIN_ADJUST, instrument=T1, target_client=TRADER,
                                      amount=12))
        admin.expect(w.AdminResponse, ref_seq=s, reason=0)
        s = admin.send(w.AdminRequest(request_id=4, action=w.ADMIN_ADJUST, instrument=T0, target_client=OTHER,
                                      amount=1))
        admin.expect(w.AdminResponse, ref_seq=s, reason=400)  # no account
        s = admin.send(w.AdminRequest(request_id=5, action=w.ADMIN_HALT, instrument=T0, amount=3))
        admin.expect(w.AdminResponse, ref_seq=s, reason=112)  # an amount only adjustments have
        # Cash past INT64_MAX (2,000 + INT64_MAX): refused with its own reason, nothing changed (issue 30).
        s = admin.send(w.AdminRequest(request_id=6, action=w.ADMIN_ADJUST, instrument=w.ALL_INSTRUMENTS,
                                      target_client=TRADER, amount=2**63 - 1))
        admin.expect(w.AdminResponse, ref_seq=s, reason=412)
    done = run_admin(ex, config, "adjust", config.client(TRADER).name, "--instrument", "T0", "--", "-5")
    assert done.returncode == 0 and done.stdout.startswith(f"adjust client {TRADER} T0 by -5: done"), (done.stdout,
                                                                                                      done.stderr)
    ex.kill()
    counters = start_exchange(config).stop()
    assert (counters[f"account.{TRADER}.cash"], counters[f"account.{TRADER}.position.T0"],
            counters[f"account.{TRADER}.position.T1"]) == (2_000, 0, 12), counters
