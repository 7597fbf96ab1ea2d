"""The trader's incremental market data over shared memory, against the real
exchange ([trader] transport = "shm"; docs/TRADER.md "Transport",
docs/EXCHANGE.md "Market data in shared memory"), written as the failures
would come:

- a reader lapped by a tiny ring (16 packets): the market maker is stopped
  (SIGSTOP) while a random trader keeps the feed busy, so the exchange
  overwrites packets it never read. Resumed, it counts what it lost, the
  consumer sees the gap and recovers the instruments through the snapshot
  channel exactly as after lost datagrams, and at exit its books equal, order
  by order, the books rebuilt from the multicast channel recorded beside it
  (sent by the publisher itself: an aux forwarder reading the same tiny ring
  may be lapped too, and its lost datagrams are never sent);
- the exchange killed with kill -9: its socket files stay behind, the trader
  sees its ring's control socket close, the next exchange on the same config
  replaces the files, and the trader reconnects its ring (and its session)
  and trades on the new exchange;
- the exchange's own end: a file at market_data.shm_path that is not a
  socket, or a live exchange's, stops a second exchange with an error naming
  the key and the path; the file is kept.

The trading agreement over shm (fills and positions equal to the exchange's)
is test_trader.py's, parametrized over both transports. Every process is
bounded (--duration, SIGINT, or conftest.py's kill).
"""

from __future__ import annotations

import os
import pathlib
import signal
import time

from tests.integration.exchange.exchange_harness import MdRecorder, make_config, shm_socket_paths
from tests.integration.trader.trader_harness import (TraderSpec, assert_books_equal_multicast, market_maker_instruments, parse_book_dump,
                            random_instruments)

SYMBOLS = ("T0", "T1")  # make_config()'s instruments, in InstrumentId order


def counter(summary, key: str) -> int:
    return int(summary.get(key, "0"))


def recoveries_completed(summary) -> int:
    """Recoveries completed for any reason but the late join (every instrument's first)."""
    return sum(int(v) for k, v in summary.items()
               if k.startswith("md.recoveries.") and k.endswith(".completed") and "late join" not in k)


def recorded_through(md, dump):
    """The incremental channel the recorder captured, once it reaches the
    market maker's book dump (waited for), checked complete from seq 1."""
    def through_dump():
        incr = md.packets()[0]
        return incr if incr and incr[-1].first_seq + len(incr[-1].messages) >= dump.next_seq else None

    incremental = md.wait_for(through_dump, 3.0, f"incremental seq {dump.next_seq}")
    md.check(from_start=True)
    return incremental


def test_a_reader_lapped_by_a_tiny_ring_recovers_through_snapshots(start_exchange, start_trader, tmp_path):
    # The multicast recording is the reference, so it must be complete: the
    # publisher sends the datagrams itself. With udp_sender = "aux" (the
    # default once shm_path is set) the aux thread's forwarder reads this same
    # 16-slot ring, and a forwarder lapped there -- 16 packets published while
    # the aux thread sits in one of its journal or ledger fdatasyncs (5-20 ms
    # each here) -- never sends what it lost (EXCHANGE.md "UDP from the ring"):
    # the reference would have holes. A lapped forwarder's count is held to
    # that promise in tests/unit/exchange/md_udp_forwarder_test.cpp.
    config = make_config(tmp_path, n_clients=2, market_data={"shm_ring_packets": 16, "udp_sender": "publisher"})
    with MdRecorder(config) as md:  # the whole incremental channel from seq 1: the reference books
        ex = start_exchange(config)
        # Every action of the random trader is an engine batch of its own: a packet each.
        rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=250.0, weight_ioc=20),
                         exchange_port=ex.port, seed=31)
        mm = TraderSpec("mm", "market_maker", config.client(1), market_maker_instruments(quote_qty=4),
                        exchange_port=ex.port, seed=32, transport="shm")
        rnd_proc = start_trader(rnd.write(tmp_path))
        dump_path = tmp_path / "book.dump"
        mm_proc = start_trader(mm.write(tmp_path), duration_s=4.5, book_dump=dump_path)
        time.sleep(1.2)  # live (snapshots every 200 ms) and reading the ring
        os.kill(mm_proc.pid, signal.SIGSTOP)
        try:
            time.sleep(0.6)  # ~300 actions: far more packets than the ring's 16 slots
        finally:
            os.kill(mm_proc.pid, signal.SIGCONT)
        mm_rc = mm_proc.wait_exit(15.0)
        rnd_rc = rnd_proc.stop(signal.SIGINT)
        assert (mm_rc, rnd_rc) == (0, 0), "\n".join(p.describe() for p in (mm_proc, rnd_proc))
        assert dump_path.exists(), mm_proc.describe()
        dump = parse_book_dump(dump_path.read_text())
        counters = ex.stop()
        # What the exchange sent first, so that a hole in the recording says whose it is.
        assert "md.udp_forward.packets" not in counters, f"the aux thread sent the datagrams: {counters}"
        assert counters.get("md.incremental.send_drops") == 0, f"the kernel refused datagrams: {counters}"

        incremental = recorded_through(md, dump)
    summary = mm_proc.summary()
    what = f"{mm_proc.describe()}\nexchange counters {counters}"
    assert counter(summary, "md.shm.laps") >= 1, f"the market maker was never lapped: {what}"
    assert counter(summary, "md.shm.lost_packets") >= 1, what
    assert counter(summary, "md.gaps") >= 1, f"the consumer saw no gap: {what}"
    assert counter(summary, "md.messages_lost") >= 1, what
    assert recoveries_completed(summary) >= 1, f"no instrument recovered through a snapshot: {what}"
    assert counter(summary, "md.shm.exchange_gone") == 0, what
    assert counter(summary, "md.datagrams.incremental") == 0, f"it read the multicast group: {what}"
    assert counters.get("md.shm.connections_accepted") == 1, counters
    assert_books_equal_multicast(dump, incremental, len(SYMBOLS))


def test_trader_reconnects_its_ring_to_the_next_exchange_after_a_kill_9(start_exchange, start_trader, tmp_path):
    config = make_config(tmp_path, n_clients=2)
    ex = start_exchange(config)
    mm = TraderSpec("mm", "market_maker", config.client(1), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                    exchange_port=ex.port, seed=41, transport="shm")
    # The random trader in the dedicated layout: its ring is read on the engine thread there too,
    # the snapshot socket on the receiver thread.
    rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=100.0, weight_ioc=50),
                     transport="shm", seed=42, extra={"threads": {"mode": "dedicated"}})
    dump_path = tmp_path / "book.dump"
    mm_proc = start_trader(mm.write(tmp_path), duration_s=7.0, book_dump=dump_path)
    rnd_proc = start_trader(rnd.write(tmp_path))
    time.sleep(1.5)
    ex.kill()
    paths = shm_socket_paths(config)
    assert len(paths) == 2
    for path in paths:
        assert pathlib.Path(path).is_socket(), f"kill -9 left no socket file at {path}"
    time.sleep(0.5)  # the traders find nobody there and back off
    ex2 = start_exchange(config)  # same journal, same paths: the stale files are replaced
    mm_rc = mm_proc.wait_exit(20.0)
    rnd_rc = rnd_proc.stop(signal.SIGINT)
    counters = ex2.stop()
    assert (mm_rc, rnd_rc) == (0, 0), "\n".join(p.describe() for p in (mm_proc, rnd_proc))
    summary = mm_proc.summary()
    what = f"{mm_proc.describe()}\nsecond exchange's counters {counters}"
    assert counter(summary, "md.shm.exchange_gone") == 1, f"the ring's EOF was not seen: {what}"
    assert counter(summary, "md.shm.connects") == 2, f"no reconnect to the second exchange's ring: {what}"
    assert counter(summary, "md.shm.connected") == 1, what
    assert counter(summary, "md.shm.connect_failures") >= 1, f"it never found the exchange gone: {what}"
    assert counter(summary, "md.datagrams.incremental") == 0, what
    rnd_summary = rnd_proc.summary()
    assert counter(rnd_summary, "md.shm.connects") == 2, f"the dedicated trader did not reconnect: {rnd_proc.describe()}"
    assert counter(rnd_summary, "md.datagrams.snapshot") > 0, rnd_proc.describe()
    assert counters.get("md.shm.connections_accepted") == 2, counters  # both traders' rings
    assert counters.get("md.shm.readers_gone") == 2, counters  # both left at the end
    # Trading resumed on the second exchange: the market maker's books went (or stayed) live
    # on its feed, it quoted, and the random trader hit its quotes there.
    assert counters.get("client.1.fills", 0) > 0, f"no fills after the restart: {what}"
    dump = parse_book_dump(dump_path.read_text())
    assert dump.states == {i: "live" for i in range(len(SYMBOLS))}, f"books not live at exit: {dump.states}\n{what}"
    for path in paths:
        assert not pathlib.Path(path).exists(), f"the second exchange's clean stop left {path}"


def test_exchange_refuses_a_market_data_path_it_must_not_take(binaries, start_exchange, tmp_path):
    from tests.integration.exchange.exchange_harness import ExchangeProcess

    def refused(config, *needles: str) -> None:
        config.write()
        p = ExchangeProcess(config)
        rc = p.wait_exit(10.0)
        err = p.stderr_text()
        assert rc != 0 and "ready" not in err, f"exit {rc}: {err}"
        assert all(n in err for n in needles), f"no error naming {needles}: {err}"

    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    config = make_config(tmp_path / "a")
    md_path = pathlib.Path(str(config.market_data["shm_path"]))
    md_path.write_text("not a socket")
    try:
        refused(config, "market_data.shm_path", str(md_path), "is not a socket")
        assert md_path.read_text() == "not a socket", "the file was replaced"
    finally:
        md_path.unlink(missing_ok=True)
    live = start_exchange(config)
    second = make_config(tmp_path / "b", market_data={"shm_path": str(md_path)})
    refused(second, "market_data.shm_path", str(md_path), "in use by a running exchange")
    live.stop()


def test_aux_thread_forwards_the_whole_feed_to_multicast(start_exchange, start_trader, tmp_path):
    """market_data.udp_sender = "aux": the critical thread writes only the ring and
    the auxiliary thread sends the datagrams from it. A multicast trader and
    the recorder see the complete feed (no gap from seq 1), a shm trader's
    books equal the ones rebuilt from multicast, and the exchange forwarded
    every packet it published, none lost."""
    config = make_config(tmp_path, n_clients=2, market_data={"udp_sender": "aux"})
    with MdRecorder(config) as md:
        ex = start_exchange(config)
        rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=200.0, weight_ioc=20),
                         exchange_port=ex.port, seed=41)
        mm = TraderSpec("mm", "market_maker", config.client(1), market_maker_instruments(quote_qty=4),
                        exchange_port=ex.port, seed=42, transport="shm")
        rnd_proc = start_trader(rnd.write(tmp_path))
        dump_path = tmp_path / "book.dump"
        mm_proc = start_trader(mm.write(tmp_path), duration_s=2.5, book_dump=dump_path)
        mm_rc = mm_proc.wait_exit(15.0)
        rnd_rc = rnd_proc.stop(signal.SIGINT)
        assert (mm_rc, rnd_rc) == (0, 0), "\n".join(p.describe() for p in (mm_proc, rnd_proc))
        dump = parse_book_dump(dump_path.read_text())
        counters = ex.stop()

        incremental = recorded_through(md, dump)
    what = f"{rnd_proc.describe()}\nexchange counters {counters}"
    assert counters.get("md.udp_forward.packets", 0) > 0, what
    assert counters["md.udp_forward.packets"] == counters["md.incremental.packets"], what
    assert counters.get("md.udp_forward.lost_packets") == 0, what
    assert counters.get("md.udp_forward.send_drops") == 0, what
    rnd_summary = rnd_proc.summary()
    assert counter(rnd_summary, "md.datagrams.incremental") > 0, what
    assert counter(rnd_summary, "md.gaps") == 0, f"the multicast trader saw a gap: {what}"
    assert counter(mm_proc.summary(), "md.datagrams.incremental") == 0, mm_proc.describe()
    assert_books_equal_multicast(dump, incremental, len(SYMBOLS))
