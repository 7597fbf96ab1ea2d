"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/) from real
artefacts: one short run of the real nanotick-exchange (with telemetry) gives
journal segments, an engine snapshot, market data datagrams and a telemetry
file; the order-entry stream is encoded by the independent wire module (tools.wire);
the configs are the shipped ones; a workload comes from nanotick-gen.

Run once after a format changes (the seeds are committed), from the root:
    build/venv/bin/python -m tests.integration.exchange.make_seeds
Needs build/release (./nanotick build). Not part of any test run; it lives
beside the exchange tests because it starts the exchange with their harness.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import tempfile
import time

from tests.integration.exchange.exchange_harness import BINARY, REPO, ExchangeProcess, MdRecorder, make_config
from tools import wire as w

CORPUS = REPO / "fuzz" / "corpus"
RECORD = 64


def put(target: str, name: str, data: bytes) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def order_entry_seeds() -> None:
    def stream(*msgs):
        return b"".join(m.encode(seq=i + 1) for i, m in enumerate(msgs))

    put("order_entry", "logon_orders_logout", stream(
        w.Logon(client_id=1, heartbeat_ms=1000, credential=b"k" * 24),
        w.NewOrder(client_order_id=1, instrument=0, side=w.BUY, order_type=w.LIMIT, price=1000, qty=5),
        w.ModifyOrder(client_order_id=1, instrument=0, price=1001, qty=7),
        w.CancelOrder(client_order_id=1, instrument=0),
        w.Heartbeat(),
        w.Logout()))
    put("order_entry", "bad_length", b"\x03\x00" + b"\x00" * 30)
    # The whole-session target logs on as client 1 with this same key.
    for name in ("logon_orders_logout",):
        put("session_stream", name, (CORPUS / "order_entry" / name).read_bytes())
    put("session_stream", "logon_only", stream(w.Logon(client_id=1, heartbeat_ms=1000, credential=b"k" * 24)))
    put("order_entry", "partial", stream(w.NewOrder(client_order_id=2, instrument=1, side=w.SELL, order_type=w.IOC, price=5, qty=1))[:20])


def exchange_seeds() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = pathlib.Path(tmp)
        config = make_config(tmp_path, journal={"snapshot_every": 10, "segment_bytes": 1 << 16})
        config.write()
        telemetry = tmp_path / "telemetry"
        telemetry.mkdir()
        with MdRecorder(config) as md:
            ex = ExchangeProcess(config, ["--telemetry", str(telemetry)])
            ex.wait_ready()
            with ex.logon(1) as a, ex.logon(2) as b:
                for i in range(1, 21):
                    a.send(w.NewOrder(client_order_id=i, instrument=0, side=w.BUY, order_type=w.LIMIT, price=990 + i, qty=3))
                    a.recv()
                for i in range(1, 6):
                    b.send(w.NewOrder(client_order_id=i, instrument=0, side=w.SELL, order_type=w.IOC, price=1000, qty=4))
                a.send(w.CancelOrder(client_order_id=1, instrument=0))
                time.sleep(0.5)
            ex.stop()
            time.sleep(0.3)
            incremental, snapshot = md.packets()
            for i, p in enumerate([p for p in incremental if p.messages][:10] + snapshot[:4]):
                put("md_packet", f"packet_{i:02d}", p.encode())
        journal = config.journal_dir
        segment = sorted(journal.glob("journal-*.log"))[0].read_bytes()
        used = RECORD
        while used + RECORD <= len(segment) and any(segment[used:used + RECORD]):
            used += RECORD
        put("journal_segment", "records", segment[:used])
        put("journal_segment", "records_then_zeros", segment[:used + 4 * RECORD])
        snaps = sorted(journal.glob("snapshot-*.snap"))
        if snaps:
            put("engine_snapshot", "shutdown", snaps[-1].read_bytes())
        put("telemetry_file", "exchange", (telemetry / "exchange.ntt").read_bytes()[:60000])


def config_seeds() -> None:
    put("exchange_config", "exchange", (REPO / "config" / "exchange.toml").read_bytes())
    for f in sorted((REPO / "config").glob("trader-*.toml")):
        put("trader_config", f.stem, f.read_bytes())


def shm_byte_ring_seeds() -> None:
    """Scripts for fuzz/shm_byte_ring_fuzz.cpp (its header lists the steps): honest traffic
    around the wrap, and each hostile word a peer can publish."""
    def word(step: int, value: int) -> bytes:
        return bytes([step]) + value.to_bytes(8, "little")
    put("shm_byte_ring", "write_read", bytes([0, 100, 1, 200, 0, 128, 1, 255, 4]))
    put("shm_byte_ring", "wrap", bytes([0, 100, 1, 100] * 3 + [0, 127, 1, 127]))
    put("shm_byte_ring", "hostile_tail", bytes([0, 10]) + word(2, 1 << 40) + bytes([1, 50, 0, 5]))
    put("shm_byte_ring", "hostile_head", bytes([0, 10]) + word(3, 5000) + bytes([0, 100, 1, 10]))
    put("shm_byte_ring", "tail_backwards", bytes([0, 50, 1, 50]) + word(2, 3) + bytes([1, 10, 4]))


def workload_seeds() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "w.bin"
        for kind in ("mixed", "cancel-heavy"):
            subprocess.run([str(BINARY.parent / "nanotick-gen"), "--workload", kind, "--seed", "7", "--scale", "0.002",
                            "--out", str(out), "--quiet"], check=True)
            put("workload_file", kind, out.read_bytes()[:60000])


if __name__ == "__main__":
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    order_entry_seeds()
    config_seeds()
    shm_byte_ring_seeds()
    workload_seeds()
    exchange_seeds()
    for d in sorted(CORPUS.iterdir()):
        print(d.name, len(list(d.iterdir())), "seed(s)")
