"""Who may trade through the FIX gateway (docs/FIX.md "Sessions and
credentials", "Listening"), tried as an attacker would against the real
gateway and exchange: a Logon without the session's password, with a wrong
one, from an unknown CompID, the exact bytes of an earlier good Logon sent
again, a Logon asking to reset the session's numbers; a connection to an
address the gateway was not told to listen on. And what the gateway writes
holding order flow: its user's alone.
"""

from __future__ import annotations

import re
import socket
import stat
import threading
import time

from tests.integration.exchange.exchange_harness import make_config
from tests.integration.fix.fix_harness import GatewayProcess, fix_password, free_port, write_gateway_config
from tests.integration.fix.test_fix_orders import new_order

SOH = b"\x01"


def wait_log(gateway, pattern: str, timeout: float = 15) -> re.Match:
    deadline = time.monotonic() + timeout
    while True:
        m = re.search(pattern, gateway.stderr_text())
        if m:
            return m
        assert time.monotonic() < deadline, f"no /{pattern}/ in the gateway's log within {timeout} s:\n" + \
            gateway.stderr_text()[-4000:]
        time.sleep(0.05)


def logon_counters(log: str) -> dict:
    m = re.search(r"FIX logons: (.*)", log)
    assert m, log
    return {name.strip(): int(count) for name, count in re.findall(r"([A-Za-z=0-9 ]+?) (\d+)", m.group(1))}


def fix_message(fields: list) -> bytes:
    """A FIX 4.4 message from (tag, value) pairs after BodyLength, with BodyLength and CheckSum."""
    body = b"".join(f"{t}={v}".encode() + SOH for t, v in fields)
    head = b"8=FIX.4.4" + SOH + f"9={len(body)}".encode() + SOH
    return head + body + f"10={sum(head + body) % 256:03d}".encode() + SOH


def exchange_raw(port: int, data: bytes, timeout: float = 10) -> bytes:
    """Sends `data` on a new connection and reads until the gateway closes it (or `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
            if b"35=A" + SOH in out:  # a session: the caller logs it out
                s.sendall(fix_message([(35, "5"), (34, int(re.search(rb"\x0134=(\d+)", data).group(1)) + 1),
                                       (49, "CLIENT1"), (56, "NANOTICK"), (52, "20261128-00:00:00.000")]))
                time.sleep(0.2)
                break
        return out


class Proxy:
    """A TCP relay in front of the gateway that keeps every byte the client sent (what a wire tap sees)."""

    def __init__(self, target_port: int) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.target_port = target_port
        self.sent = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if record:
                    with self._lock:
                        self.sent += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


def test_a_logon_needs_the_sessions_password(fix_venue):
    # No Password (554): a Logout naming why, and no session.
    bare = fix_venue.client("CLIENT1", logon=False, password=None)
    out = bare.admin(lambda f: f.get("35") == "5", what="the Logout of a Logon without a password")
    assert "no Password (554)" in out.get("58", ""), out
    bare.close()
    # A wrong one (the other session's): the same.
    wrong = fix_venue.client("CLIENT2", logon=False, password=fix_password("CLIENT1"))
    out = wrong.admin(lambda f: f.get("35") == "5", what="the Logout of a Logon with a wrong password")
    assert "wrong Password (554) for session CLIENT2" in out.get("58", ""), out
    wrong.close()
    assert not [e for e in bare.events + wrong.events if e.get("event") == "logon"]

    # The right one logs on and trades, on the same session numbers as the refused Logons.
    good = fix_venue.client("CLIENT1")
    good.send(new_order("A1", "1", 1, 100))
    good.report("A1", "0")
    log = fix_venue.gateway.stop()
    assert "wrong Password (554) for session CLIENT2" in log and "no Password (554) on the Logon" in log
    counts = logon_counters(log)
    assert counts["accepted"] == 1 and counts["no password"] >= 1 and counts["wrong password"] >= 1, counts


def test_an_unknown_comp_id_is_dropped_unanswered_and_counted(fix_venue):
    stranger = fix_venue.client("STRANGER", logon=False)
    wait_log(fix_venue.gateway, r"FIX connection dropped: no session STRANGER -> NANOTICK")
    stranger.close()
    assert not [e for e in stranger.events if e.get("in") or e.get("event") == "logon"], stranger.events
    counts = logon_counters(fix_venue.gateway.stop())
    assert counts["unknown CompID"] >= 1 and counts["accepted"] == 0, counts


def test_a_replayed_logon_gets_no_session(fix_venue):
    # A wire tap between a real client and the gateway keeps the client's Logon.
    proxy = Proxy(fix_venue.port)
    client = fix_venue.client("CLIENT1", port=proxy.port)
    client.send(new_order("R1", "1", 1, 100))
    client.report("R1", "0")
    client.close()  # logs out: the session is free for whoever comes next
    wait_log(fix_venue.gateway, r"FIX session CLIENT1 logged out")
    proxy.close()
    logon = proxy.sent[:proxy.sent.index(SOH + b"10=") + 8]
    assert b"35=A" + SOH in logon and b"554=" + fix_password("CLIENT1").encode() in logon

    # The same bytes on a new connection: refused by their sequence number, no session.
    answer = exchange_raw(fix_venue.port, logon)
    assert b"35=A" + SOH not in answer, answer
    m = re.search(rb"58=MsgSeqNum too low, expecting (\d+) but received (\d+)", answer)
    assert m and int(m.group(2)) < int(m.group(1)), answer

    # What refused them is the number alone: the same Logon numbered as expected gets a session.
    fields = [(int(t), v.decode()) for t, v in re.findall(rb"(\d+)=([^\x01]*)\x01", logon)][2:-1]
    fresh = fix_message([(t, m.group(1).decode() if t == 34 else v) for t, v in fields])
    assert b"35=A" + SOH in exchange_raw(fix_venue.port, fresh)
    counts = logon_counters(fix_venue.gateway.stop())
    assert counts["MsgSeqNum too low"] >= 1 and counts["accepted"] == 2, counts


def test_a_logon_resetting_the_numbers_is_dropped_before_it_resets_them(fix_venue):
    client = fix_venue.client("CLIENT1")
    client.send(new_order("S1", "1", 1, 100))
    client.report("S1", "0")
    first = [e["fields"] for e in client.events if e.get("in") == "admin" and e["fields"].get("35") == "A"][0]
    client.close()
    wait_log(fix_venue.gateway, r"FIX session CLIENT1 logged out")

    # QuickFIX resets a session's numbers and store on ResetSeqNumFlag=Y before it
    # checks anything else; the gateway drops such a Logon unanswered.
    attack = fix_message([(35, "A"), (34, 1), (49, "CLIENT1"), (56, "NANOTICK"), (52, "20261128-00:00:00.000"),
                          (98, 0), (108, 30), (141, "Y"), (554, "not-the-password-0000")])
    assert exchange_raw(fix_venue.port, attack) == b""
    wait_log(fix_venue.gateway, r"FIX connection dropped: Logon from CLIENT1 with ResetSeqNumFlag=Y")

    # The real client comes back: the numbers went on, nothing was reset.
    again = fix_venue.client("CLIENT1")
    logons = [e["fields"] for e in again.events if e.get("in") == "admin" and e["fields"].get("35") == "A"]
    assert int(logons[-1]["34"]) > int(first["34"]) and logons[-1].get("141") != "Y", logons
    again.send(new_order("S2", "1", 1, 100))
    again.report("S2", "0")
    counts = logon_counters(fix_venue.gateway.stop())
    assert counts["ResetSeqNumFlag=Y"] == 1, counts


def refused(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=5).close()
        return False
    except ConnectionRefusedError:
        return True


def host_address() -> str:
    """This host's address on its default route ("" when it has none but loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
        except OSError:
            return ""
    return "" if ip.startswith("127.") else ip


def test_the_gateway_listens_on_loopback_only_unless_told_otherwise(tmp_path, fix_venue_factory):
    venue = fix_venue_factory(make_config(tmp_path))
    port = venue.port
    assert not refused("127.0.0.1", port)
    others = ["127.0.0.2"] + ([host_address()] if host_address() else [])
    for ip in others:
        assert refused(ip, port), f"{ip}:{port} reached a gateway told to listen on 127.0.0.1"
    venue.gateway.stop()

    # allow_remote = true and 0.0.0.0: every interface, as QuickFIX binds it.
    wide_port = free_port()
    wide = write_gateway_config(tmp_path / "wide", venue.config, venue.sessions, wide_port, listen_ip="0.0.0.0",
                                extra="allow_remote = true")
    gateway = GatewayProcess(wide, venue.exchange, wide_port)
    venue.gateways.append(gateway)
    gateway.wait_ready()
    assert f"ready: FIX 4.4 on 0.0.0.0:{wide_port} (every interface)" in gateway.stderr_text()
    for ip in ["127.0.0.1"] + others:
        assert not refused(ip, wide_port), f"{ip}:{wide_port}"


def test_files_holding_order_flow_are_the_owners_alone(tmp_path, fix_venue_factory):
    # An order map an older gateway left readable by all.
    store = tmp_path / "fix-store"
    store.mkdir()
    old = store / "CLIENT1-NANOTICK.orders"
    old.write_bytes(b"")
    old.chmod(0o644)
    logs = tmp_path / "message-log"
    venue = fix_venue_factory(make_config(tmp_path), ["--message-log", str(logs)])
    client = venue.client("CLIENT1")
    client.send(new_order("M1", "1", 1, 100))
    client.report("M1", "0")
    files = [p for d in (store, logs) for p in d.iterdir() if p.is_file()]
    assert old in files and len(files) >= 6, files  # the order maps, QuickFIX's stores and logs
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
    assert all(m & 0o077 == 0 for m in modes.values()), modes
    assert all(stat.S_IMODE(d.stat().st_mode) & 0o077 == 0 for d in (store, logs))
    # The message log keeps no password.
    text = b"".join(p.read_bytes() for p in logs.iterdir() if p.is_file())
    assert b"35=A" + SOH in text and fix_password("CLIENT1").encode() not in text and b"554=*" + SOH in text
