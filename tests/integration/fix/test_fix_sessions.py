"""The FIX session layer under a third-party client (QuickFIX/J): a connection
dropped mid-stream, a resend request answered from the gateway's store, gap
fills and sequence resets; and restarts -- of the gateway (killed: its order
map and FIX sequence numbers survive, a fill it never read is replayed by the
venue at its next logon, the orders it had open are reported cancelled) and of the exchange (the gateway reconnects; its orders are
reported cancelled when the venue session ends). docs/FIX.md "Sessions",
"Restarts".
"""

from __future__ import annotations

import pathlib
import re
import signal
import subprocess
import time

from tools import wire as w
from tests.integration.exchange.exchange_harness import make_config
from tests.integration.fix.fix_harness import FIX_DIR, GATEWAY, free_port
from tests.integration.fix.test_fix_orders import T, new_order


def test_disconnect_resend_request_and_sequence_reset(fix_venue):
    fix = fix_venue.client()
    fix.send(new_order("P1", "1", 1, 100))
    p1 = fix.report("P1", "0")

    # Dropped mid-stream: an order sent, the connection cut before its answer can
    # be read. QuickFIX/J reconnects; the answer arrives, resent from the gateway's
    # store if it was written while the client was away.
    mark = fix.mark()
    fix.command("send " + new_order("P2", "1", 1, 101))
    fix.command("disconnect")
    fix.logged_on(start=mark)
    p2 = fix.report("P2", "0", start=mark)
    assert p2["37"] != "NONE"
    # The reconnect's own resend (P2's answer, then a gap fill of the Logon) can still be
    # in flight here, and QuickFIX/J counts a message only after handing it over: a
    # rewind now races with that count, and the client then asks from P2 on (the
    # gateway's log showed "ResendRequest FROM: 3" in the runs that failed, answered
    # correctly). So the client first settles: nothing from the gateway left unprocessed.
    fix.settle()

    # Resend request: the client rewinds its expected number to P1's answer; the
    # next message it gets is too high, so it asks for the rest again. The gateway
    # resends its application messages (PossDupFlag, OrigSendingTime) and gap-fills the rest.
    mark = fix.mark()
    fix.command(f"next-target {p1['34']}")
    fix.send(new_order("P3", "1", 1, 102))
    again = fix.app(lambda f: f.get("11") == "P1" and f.get("43") == "Y", what="P1's answer resent", start=mark)
    assert again["34"] == p1["34"] and again["150"] == "0" and "122" in again
    fix.report("P3", "0", start=mark)

    # A gap from the client: it skips 5 numbers; the gateway asks for them (ResendRequest)
    # and QuickFIX/J fills the gap (SequenceReset-GapFill); the order after it is handled.
    mark = fix.mark()
    fix.command("skip-sender 5")
    skipped = fix.wait_for(lambda e: e.get("event") == "sent", 10, "skip-sender", mark)
    fix.send(new_order("P4", "1", 1, 103))
    resend = fix.admin(lambda f: f.get("35") == "2", what="the gateway's ResendRequest", start=mark)
    assert int(resend["7"]) == skipped["from"]
    fix.report("P4", "0", start=mark)

    # A SequenceReset-Reset from the client moves the gateway's expected number
    # forward without a resend request.
    mark = fix.mark()
    fix.command("reset-sender 20")
    fix.wait_for(lambda e: e.get("event") == "sent", 10, "reset-sender", mark)
    fix.send(new_order("P5", "1", 1, 104))
    fix.report("P5", "0", start=mark)
    assert not [e for e in fix.events[mark:] if e.get("in") == "admin" and e["fields"].get("35") == "2"]

    # Every order is still the venue's: all four rest, answering to their names.
    for cl in ("P1", "P2", "P3", "P4", "P5"):
        fix.send(f"35=F|11=X{cl}|41={cl}|55=T0|54=1|{T}")
        fix.report(f"X{cl}", "4")


def test_gateway_killed_and_restarted(fix_venue):
    fix = fix_venue.client()
    trader = fix_venue.exchange.logon(3, heartbeat_ms=60000)
    fix.send(new_order("G1", "1", 5, 90))
    fix.report("G1", "0")
    fix.send(new_order("G2", "1", 10, 95))
    fix.report("G2", "0")
    trader.send(w.NewOrder(client_order_id=1, instrument=0, side=w.SELL, order_type=w.IOC, price=95, qty=3))
    fix.report("G2", "F")
    before = int(fix.report("G2", "F")["34"])

    # Frozen (SIGSTOP), the gateway cannot read the venue's report of a second
    # fill of G2; then kill -9: no Logout on either side. The exchange cancels
    # the gateway client's orders (cancel_on_disconnect). The restarted gateway
    # asks the venue at logon for the fills since its oldest open order
    # (ReportsRequest), reports the one it never read, then the cancels. It is
    # given no file of the exchange's, and the restart does not wait for the
    # venue's ledger writer: the venue serves the request after every trade its
    # engine made (PROTOCOL.md §1.8).
    fix_venue.gateway.proc.send_signal(signal.SIGSTOP)
    # Every thread stopped for sure before the fill is made (the gateway's runner
    # thread reads the venue): otherwise it could still read the fill live.
    tasks = pathlib.Path(f"/proc/{fix_venue.gateway.proc.pid}/task")
    deadline = time.monotonic() + 10
    while any((t / "stat").read_text().rsplit(")", 1)[1].split()[0] != "T" for t in tasks.iterdir()):
        assert time.monotonic() < deadline, "the gateway did not stop on SIGSTOP"
        time.sleep(0.005)
    trader.send(w.NewOrder(client_order_id=3, instrument=0, side=w.SELL, order_type=w.IOC, price=95, qty=2))
    while True:
        r = trader.recv()
        if isinstance(r, w.ExecutionReport) and r.client_order_id == 3 and r.exec_type == 3:
            missed_exec_seq = r.exec_seq
            break
    fix_venue.gateway.proc.send_signal(signal.SIGKILL)
    fix_venue.gateway.wait_exit(5)
    assert "trade_ledger" not in fix_venue.gateway_config.read_text()
    # First a start that fails after its venue logon and replay: QuickFIX cannot
    # start (no data dictionary), exit 1. It must record nothing of the replay in
    # the order map, or the next start would think the fill and the cancels reported.
    broken = fix_venue.tmp / "broken-gateway.toml"
    broken.write_text(fix_venue.gateway_config.read_text().replace(str(FIX_DIR / "FIX44.xml"),
                                                                  str(fix_venue.tmp / "missing" / "FIX44.xml")))
    r = subprocess.run([str(GATEWAY), "--config", str(broken), "--exchange", f"127.0.0.1:{fix_venue.exchange.port}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "FIX44.xml" in r.stderr and "logged on" in r.stderr, r.stderr
    mark = fix.mark()
    restarted = fix_venue.start_gateway()
    fix.logged_on(timeout=20, start=mark)
    missed = fix.report("G2", "F", start=mark)
    assert (missed["32"], missed["31"], missed["14"]) == ("2", "95", "5") and "replayed by the venue" in missed["58"]
    # The fill the venue replayed, under the ExecID its live report would have had
    # (each trade reports the taker's fill, then the maker's: docs/MATCHING.md).
    assert missed["17"] == f"E{missed_exec_seq + 1}", (missed["17"], missed_exec_seq)
    g1 = fix.report("G1", "4", start=mark)
    g2 = fix.report("G2", "4", start=mark)
    assert (g2["14"], g2["151"], g2["39"]) == ("5", "0", "4") and "restarted" in g2["58"]
    assert g1["14"] == "0"
    # The missed fill before the Canceled of its order; the first fill (reported by
    # the killed gateway) not again.
    apps = [e["fields"] for e in fix.events[mark:] if e.get("in") == "app"]
    assert [(f["11"], f["150"]) for f in apps if f.get("11") in ("G1", "G2")][:3] == [("G2", "F"), ("G1", "4"), ("G2", "4")]
    # The gateway's own account (its stderr is read by another thread: waited for).
    deadline = time.monotonic() + 10
    while not re.search(r"the venue replayed \d+ fill\(s\) through exec_seq \d+ \(1 never reported before",
                        restarted.stderr_text()):
        assert time.monotonic() < deadline, restarted.stderr_text()
        time.sleep(0.01)
    # The FIX session resumed: no sequence reset, numbers went on.
    logons = [e["fields"] for e in fix.events[mark:] if e.get("in") == "admin" and e["fields"].get("35") == "A"]
    assert logons and all(f.get("141") != "Y" for f in logons) and int(logons[0]["34"]) > before

    # The exchange agrees: nothing rests at 90 or 95 any more.
    trader.send(w.NewOrder(client_order_id=2, instrument=0, side=w.SELL, order_type=w.IOC, price=90, qty=20))
    while True:
        r = trader.recv()
        if isinstance(r, w.ExecutionReport) and r.client_order_id == 2 and r.exec_type in (3, 4):
            assert r.exec_type == 4, f"traded with an order the gateway reported cancelled: {r}"
            break

    # The order map survived: an old ClOrdID is still taken; a new one trades.
    fix.send(new_order("G1", "1", 1, 90))
    assert fix.report("G1", "8", start=mark)["103"] == "6"
    fix.send(new_order("G3", "1", 1, 90))
    fix.report("G3", "0", start=mark)

    # Stopped cleanly (SIGTERM): the venue session logs out first, so the client
    # hears of G3's cancel before the gateway logs it out.
    mark = fix.mark()
    log = fix_venue.gateway.stop()
    g3 = fix.report("G3", "4", start=mark)
    assert "cancel on disconnect" in g3["58"] and g3["17"].endswith("-C")
    assert re.search(r"client 1: .* cancelled at session end 3,", log), log  # G1 and G2 at its start, G3 now


def test_exchange_killed_and_restarted(tmp_path, fix_venue_factory):
    venue = fix_venue_factory(make_config(tmp_path, server={"order_entry": f"127.0.0.1:{free_port()}"}))
    fix = venue.client()
    fix.send(new_order("E1", "1", 5, 90))
    fix.report("E1", "0")

    venue.exchange.proc.send_signal(signal.SIGKILL)
    venue.exchange.wait_exit(5)
    cancelled = fix.report("E1", "4")
    assert "venue session ended" in cancelled["58"]
    # While the venue is away, orders are refused, the FIX session stays up.
    fix.send(new_order("E2", "1", 1, 90))
    assert "not logged on" in fix.report("E2", "8")["58"]

    mark = fix.mark()
    venue.start_exchange()  # same journal, same port
    for attempt in range(100):
        fix.send(new_order(f"E3-{attempt}", "1", 1, 90))
        r = fix.app(lambda f: f.get("11") == f"E3-{attempt}" and f.get("150") in ("0", "8"), start=mark)
        if r["150"] == "0":
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the gateway did not get back to the restarted exchange")
