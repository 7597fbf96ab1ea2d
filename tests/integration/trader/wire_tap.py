"""A recording TCP relay between the soak's traders and the exchange
(tests/integration/trader/test_soak.py): every execution report the exchange
writes to a trader's session is recorded, so that the soak can check, after
its last restart, that every order the exchange acknowledged to a trader is in
the journal and every fill it reported is in the trade ledger.

Why a relay and not the traders themselves: a trader keeps no record of its
answers (a killed one starts fresh), and recording them inside it would put a
file write on its hot path. The relay records what the exchange sent, which
is what a trader was told -- a report the relay saw but a killed trader never
read was still promised by the exchange, so the relay's record is the stricter
one. It runs in its own process (its own interpreter lock: the soak's checking
clients run in the test's) and is transparent to both ends:

- a trader connects to the relay's port; the relay connects to the exchange
  (1 s timeout) and, if that fails, closes the trader's connection at once,
  as a refused connect would (a down exchange looks down);
- bytes are copied unchanged in both directions, one thread per direction
  (neither waits on the other), TCP_NODELAY on every socket;
- when either end closes or resets, both connections are closed, so a killed
  trader is a disconnect to the exchange (its cancel on disconnect runs) and
  a killed exchange is a disconnect to the trader.

The exchange -> trader stream is framed and decoded with the test suite's
independent codec (tests/integration/exchange/nanotick_wire.py, strict: a
message it cannot decode is counted as an error and ends the session). The
trader -> exchange stream is framed only to read the Logon's client id.

WireTapProcess (below) runs it for a test.

Usage: python -m tests.integration.trader.wire_tap --listen HOST:PORT --upstream HOST:PORT --out FILE
Prints "wire_tap: ready HOST:PORT" on stderr once listening. SIGTERM or
SIGINT: closes every session, writes FILE's last lines and exits 0 after
printing "sessions N reports N errors N" on stdout.

FILE is CSV: a header, then one line per ExecutionReport, in the order the
exchange wrote them to that session: session number (1 per accepted trader
connection), the client id of the session's Logon (0 if none was seen before
the report), then the report's wire fields (HEADER below).
"""

from __future__ import annotations

import argparse
import pathlib
import signal
import socket
import sys
import threading
from typing import List, Optional, Tuple

from tools import wire as w
from tools.binaries import REPO
from tests.integration.exchange.logged_process import LoggedProcess

REPORT_FIELDS = ("exec_seq", "client_order_id", "order_id", "price", "order_qty", "last_price", "last_qty", "cum_qty",
                 "leaves_qty", "instrument", "ref_seq", "exec_type", "side", "order_type", "is_maker", "reject_reason",
                 "cancel_reason")
HEADER = "session,client," + ",".join(REPORT_FIELDS)


def address(text: str, lowest_port: int = 1) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not lowest_port <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"'{text}' is not HOST:PORT with a port {lowest_port}..65535")
    return host, int(port)


class Tap:
    def __init__(self, upstream: Tuple[str, int], out) -> None:
        self.upstream = upstream
        self.out = out
        self.lock = threading.Lock()  # guards out, the counters and sockets
        self.sessions = 0
        self.reports = 0
        self.errors: List[str] = []
        self.open: List[socket.socket] = []
        self.stopping = False

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)
        print(f"wire_tap: {text}", file=sys.stderr, flush=True)

    def serve(self, client: socket.socket) -> None:
        with self.lock:
            self.sessions += 1
            number = self.sessions
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            exchange = socket.create_connection(self.upstream, timeout=1.0)
        except OSError:
            client.close()  # the exchange is down: the trader sees its connection end and retries
            return
        exchange.settimeout(None)
        exchange.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            if self.stopping:
                client.close()
                exchange.close()
                return
            self.open += [client, exchange]
        session = {"client": 0}
        up = threading.Thread(target=self.copy, args=(client, exchange, number, session, False), daemon=True)
        up.start()
        self.copy(exchange, client, number, session, True)
        up.join()
        with self.lock:
            for s in (client, exchange):
                if s in self.open:
                    self.open.remove(s)
                s.close()

    def copy(self, src: socket.socket, dst: socket.socket, number: int, session: dict, from_exchange: bool) -> None:
        """Copies src to dst until either ends; frames what passes (see the module docstring)."""
        framer = w.StreamFramer()
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                # Recorded before it is passed on: a report the exchange sent counts even if the
                # trader is gone by the time the relay writes it.
                framer.feed(data)
                while (frame := framer.next_frame()) is not None:
                    self.on_frame(frame, number, session, from_exchange)
                dst.sendall(data)
        except OSError:
            pass  # a reset or the other direction's close: the session is over either way
        except w.WireError as e:
            self.error(f"session {number}: {'exchange' if from_exchange else 'trader'} stream: {e}")
        finally:
            for s in (src, dst):  # wakes the other direction's recv
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def on_frame(self, frame: bytes, number: int, session: dict, from_exchange: bool) -> None:
        _, type_, _, _ = w.decode_header(frame)
        if not from_exchange:
            if type_ == w.Logon.TYPE:
                session["client"] = w.decode_client_message(frame).client_id
            return
        msg = w.decode_exchange_message(frame)  # validates every exchange message, not only reports
        if isinstance(msg, w.ExecutionReport):
            line = f"{number},{session['client']}," + ",".join(str(getattr(msg, f)) for f in REPORT_FIELDS) + "\n"
            with self.lock:
                self.out.write(line)
                self.reports += 1

    def close_all(self) -> None:
        with self.lock:
            self.stopping = True
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class WireTapProcess(LoggedProcess):
    """wire_tap.py relaying 127.0.0.1:<ephemeral> to the exchange's port, recording into `out`."""

    def __init__(self, exchange_port: int, out: pathlib.Path) -> None:
        self.port = None
        self.out = out
        # Run as a module from the repository root: it imports tools.wire.
        super().__init__([sys.executable, "-m", "tests.integration.trader.wire_tap", "--listen", "127.0.0.1:0", "--upstream",
                          f"127.0.0.1:{exchange_port}", "--out", str(out.resolve())], REPO, "the wire tap")

    def on_stderr_line(self, line: str) -> None:
        if line.startswith("wire_tap: ready 127.0.0.1:"):
            self.port = int(line.rsplit(":", 1)[1])
            self.mark_ready()

    def wait_ready(self, timeout: float = 10.0) -> int:
        if not self._ready.wait(timeout) or self.port is None:
            self.kill()
            raise AssertionError(f"the wire tap did not get ready within {timeout} s: {self.stderr_text()}")
        return self.port

    def stop(self) -> dict:
        """SIGTERM; asserts exit 0 and no stream error; returns its "sessions N reports N errors N"."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit(15.0, " of SIGTERM")
        words = " ".join(self.lines()).split()
        figures = {k: int(v) for k, v in zip(words[::2], words[1::2])}
        assert rc == 0 and figures.get("errors") == 0, f"the wire tap: exit {rc}, {figures}; stderr:\n{self.stderr_text()}"
        return figures


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="recording relay of the soak (see the module docstring)")
    parser.add_argument("--listen", type=lambda t: address(t, lowest_port=0), required=True, help="port 0: any free one")
    parser.add_argument("--upstream", type=address, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with open(args.out, "w") as out:
        out.write(HEADER + "\n")
        tap = Tap(args.upstream, out)
        listener = socket.create_server(args.listen, reuse_port=False)
        listener.settimeout(0.1)
        print(f"wire_tap: ready {args.listen[0]}:{listener.getsockname()[1]}", file=sys.stderr, flush=True)
        threads: List[threading.Thread] = []
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except socket.timeout:
                continue
            client.settimeout(None)
            t = threading.Thread(target=tap.serve, args=(client,), daemon=True)
            t.start()
            threads = [x for x in threads if x.is_alive()] + [t]
        listener.close()
        tap.close_all()
        for t in threads:
            t.join(timeout=5.0)
        with tap.lock:
            out.flush()
            print(f"sessions {tap.sessions} reports {tap.reports} errors {len(tap.errors)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
