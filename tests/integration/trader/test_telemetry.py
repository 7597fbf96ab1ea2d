"""Telemetry from the real processes (docs/TELEMETRY.md, issue 6): the exchange,
a market maker and a random trader run on loopback with --telemetry for about
3 s; the .ntt files they leave are read with the report's own reader
(tools/report/ntt.py) and checked against the key conventions:

- one complete file per process (trailer present, nothing dropped), named by
  the process ("exchange", the traders' config names), with the recorders of
  the thread layout in use (compact and dedicated);
- every hop point of both paths appears;
- keys join across processes: every order the market maker wrote
  (tr_tcp_write) was read by the exchange (ex_tcp_read) under the same order
  key, and nothing else of its client was; every answer the exchange wrote to
  it (ex_tcp_write) was read back (tr_response_read), key for key; every
  market data packet a trader read (tr_udp_read) is one the exchange sent
  (ex_md_write); the wire is crossed forwards in time (allowing only for the
  stamp taken after the sending system call returned);
- inside the exchange each order key goes tcp read -> sequencer in -> out ->
  engine in -> out in time order, and every answer's aux names an engine step;
- inside a trader every decision's order (tr_decision aux) was written
  (tr_tcp_write key), and a decision's md key is a packet it read;
- function timers of both sides are present with sane cycle counts;
- the report's analysis (tools/report/analysis.py) computes tick-to-trade from
  these files.

Also: --telemetry needs an existing directory, and a trader name that cannot
name a file is refused. Bounded like the other trader tests: traders run with
--duration or get SIGINT, conftest.py kills whatever is left.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pytest

from tests.integration.exchange.exchange_harness import ExchangeProcess, make_config
from tests.integration.trader.trader_harness import TRADER_BINARY, TraderProcess, TraderSpec, market_maker_instruments, random_instruments
from tools.report import analysis, ntt

EXCHANGE_HOPS = ("ex_tcp_read", "ex_sequencer_in", "ex_sequencer_out", "ex_engine_in", "ex_engine_out", "ex_tcp_write",
                 "ex_md_write", "ex_md_effect")
TRADER_HOPS = ("tr_udp_read", "tr_engine_dequeue", "tr_decision", "tr_tcp_write", "tr_response_read")
EXCHANGE_TIMERS = ("fn_book_add", "fn_book_cancel", "fn_book_match", "fn_engine_process", "fn_sequencer",
                   "fn_md_publish", "fn_pre_trade", "fn_matching", "fn_settlement", "fn_ledger")
STEP_TIMERS = ("fn_book_add", "fn_book_cancel", "fn_book_match", "fn_engine_process")
STAGE_TIMERS = ("fn_pre_trade", "fn_matching", "fn_settlement", "fn_ledger")
TRADER_TIMERS = ("fn_feature_update", "fn_position_update", "fn_risk_check", "fn_order_manager")
# How far a stamp taken after a sending system call returned may come after the
# receiver's stamp of the same bytes (the receiver can run while the sender is
# between the call and its clock reading, or preempted there).
WIRE_SLACK_NS = 20_000_000


class TelemetryTrader(TraderProcess):
    """A nanotick-trader started with --telemetry DIR."""

    def __init__(self, config_path: Path, telemetry_dir: Path, duration_s: Optional[float] = None) -> None:
        super().__init__(config_path, duration_s, extra_args=["--telemetry", str(telemetry_dir)])


class Records:
    """One file's records of one point, as numpy arrays (tsc, key, aux, cycles)."""

    def __init__(self, f: ntt.TelemetryFile, point: str) -> None:
        ids = [pid for pid, p in f.points.items() if p.name == point]
        assert ids, f"{f.path.name}: the point table has no '{point}'"
        r = f.records[f.records["point"] == ids[0]]
        self.tsc = r["tsc"].astype(np.int64)
        self.key = r["key"]
        self.aux = r["aux"]
        self.cycles = r["cycles"]

    def __len__(self) -> int:
        return int(self.key.size)

    def first_tsc(self) -> Dict[int, int]:
        """key -> the earliest tsc recorded with it."""
        out: Dict[int, int] = {}
        for k, t in zip(self.key.tolist(), self.tsc.tolist()):
            if k not in out or t < out[k]:
                out[k] = t
        return out

    def counts(self) -> Dict[int, int]:
        keys, n = np.unique(self.key, return_counts=True)
        return dict(zip(keys.tolist(), n.tolist()))


def run_venue(tmp_path: Path, processes, exchange_mode: str, trader_mode: str, seconds: float = 3.0):
    """Exchange + market maker (client 1) + random trader (client 2), all with --telemetry, for
    about `seconds`; returns the telemetry dir and the processes (all exited with 0)."""
    tdir = tmp_path / "telemetry"
    tdir.mkdir()
    config = make_config(tmp_path, threads={"mode": exchange_mode, "idle": "backoff", "cpus": []})
    config.write()
    ex = ExchangeProcess(config, ["--telemetry", str(tdir)])
    processes.append(ex)
    ex.wait_ready()
    mm = TraderSpec("mm1", "market_maker", config.client(1), market_maker_instruments(quote_qty=5, half_spread_ticks=1),
                    exchange_port=ex.port, seed=31, extra={"threads": {"mode": trader_mode, "idle": "backoff"}})
    rnd = TraderSpec("rnd", "random", config.client(2), random_instruments(orders_per_second=150.0, weight_ioc=50),
                     exchange_port=ex.port, seed=32)
    mm_proc = TelemetryTrader(mm.write(tmp_path), tdir)
    processes.append(mm_proc)
    mm_proc.wait_ready()
    rnd_proc = TelemetryTrader(rnd.write(tmp_path), tdir, duration_s=seconds)
    processes.append(rnd_proc)
    rnd_proc.wait_ready()
    rnd_rc = rnd_proc.wait_exit(seconds + 15.0)
    mm_rc = mm_proc.stop(signal.SIGINT)
    counters = ex.stop()
    assert rnd_rc == 0, rnd_proc.describe()
    assert mm_rc == 0, mm_proc.describe()
    for p in (mm_proc, rnd_proc):
        assert "telemetry: " in p.stderr_text() and " dropped (ring full)" in p.stderr_text(), p.describe()
    assert "telemetry: " in ex.stderr_text(), ex.stderr_text()
    assert counters.get("telemetry.answers_unstamped") == 0, counters
    return tdir, mm_proc, rnd_proc, counters


def read_files(tdir: Path) -> Dict[str, ntt.TelemetryFile]:
    files = {p.name: ntt.read_file(p) for p in sorted(tdir.glob("*.ntt"))}
    assert sorted(files) == ["exchange.ntt", "mm1.ntt", "rnd.ntt"], sorted(files)
    for name, f in files.items():
        assert f.process_name == name[:-len(".ntt")], (name, f.process_name)
        assert f.complete, f"{name} has no trailer: the writer was not stopped"
        assert f.trailer.dropped == 0, f"{name}: {f.trailer.dropped} records dropped ({f.trailer.recorders})"
        assert f.trailer.records == f.records.size, name
    return files


def recorder_names(f: ntt.TelemetryFile) -> List[str]:
    return [r.name for r in f.trailer.recorders]


def check_hops_present(files: Dict[str, ntt.TelemetryFile]) -> None:
    for point in EXCHANGE_HOPS:
        assert len(Records(files["exchange.ntt"], point)) > 0, f"the exchange recorded no {point}"
    for point in TRADER_HOPS:
        assert len(Records(files["mm1.ntt"], point)) > 0, f"the market maker recorded no {point}"
    for point in ("tr_udp_read", "tr_engine_dequeue", "tr_decision", "tr_tcp_write", "tr_response_read"):
        assert len(Records(files["rnd.ntt"], point)) > 0, f"the random trader recorded no {point}"


def check_order_keys_join(ex: ntt.TelemetryFile, trader: ntt.TelemetryFile, client_id: int, ns_per_tick: float) -> None:
    """What the trader wrote is what the exchange read for its client, and the answers back."""
    written = Records(trader, "tr_tcp_write")
    read = Records(ex, "ex_tcp_read")
    mine = read.key >> 32 == client_id
    assert set(written.key.tolist()) == set(read.key[mine].tolist()), (
        f"client {client_id}: orders written but not read by the exchange "
        f"{sorted(set(written.key.tolist()) - set(read.key[mine].tolist()))[:10]}, read but never written "
        f"{sorted(set(read.key[mine].tolist()) - set(written.key.tolist()))[:10]}")
    assert (written.key >> 32 == client_id).all()
    w_first, r_first = written.first_tsc(), read.first_tsc()
    late = [k for k, t in w_first.items() if (t - r_first[k]) * ns_per_tick > WIRE_SLACK_NS]
    assert not late, f"client {client_id}: exchange read {len(late)} orders long before they were written: {late[:5]}"
    forwards = sum(1 for k, t in w_first.items() if r_first[k] >= t)
    assert forwards >= 0.5 * len(w_first), f"client {client_id}: only {forwards}/{len(w_first)} reads after the write"

    answers = Records(ex, "ex_tcp_write")
    to_me = answers.key >> 32 == client_id
    got = Records(trader, "tr_response_read")
    sent_counts = dict(zip(*[a.tolist() for a in np.unique(answers.key[to_me], return_counts=True)]))
    assert sent_counts == got.counts(), (
        f"client {client_id}: answers written {len(answers.key[to_me])} vs read {len(got)}; keys differing: "
        f"{sorted(k for k in set(sent_counts) | set(got.counts()) if sent_counts.get(k) != got.counts().get(k))[:10]}")


def check_exchange_path(ex: ntt.TelemetryFile) -> None:
    """Each order key through the exchange's steps in time order; answers name an engine step."""
    steps = [Records(ex, p).first_tsc() for p in ("ex_tcp_read", "ex_sequencer_in", "ex_sequencer_out", "ex_engine_in",
                                                  "ex_engine_out")]
    sequenced = set(steps[1])
    assert sequenced, "nothing was sequenced"
    # Key 0: a request the exchange made itself (a session's end: its mass cancel), never read.
    assert sequenced - {0} <= set(steps[0]), "a sequenced key the gateway never read"
    for later in steps[2:]:
        assert set(later) == sequenced, "the sequencer and the engine saw other keys"
    for k in sequenced - {0}:
        times = [s[k] for s in steps]
        assert times == sorted(times), f"key {k:#x}: steps out of order {times}"
    answers = Records(ex, "ex_tcp_write")
    causes = set(answers.aux.tolist()) - {0}
    assert causes and causes <= sequenced, f"answers caused by unknown requests: {sorted(causes - sequenced)[:5]}"
    own = answers.key == answers.aux
    assert own.any(), "no answer to its own request"


def check_market_data_join(ex: ntt.TelemetryFile, trader: ntt.TelemetryFile, ns_per_tick: float) -> None:
    sent = Records(ex, "ex_md_write").first_tsc()
    read = Records(trader, "tr_udp_read")
    assert len(read) > 0
    unknown = set(read.key.tolist()) - set(sent)
    assert not unknown, f"{trader.process_name} read packets the exchange never sent: {sorted(unknown)[:5]}"
    early = [k for k, t in read.first_tsc().items() if (sent[k] - t) * ns_per_tick > WIRE_SLACK_NS]
    assert not early, f"{trader.process_name} read {len(early)} packets long before they were sent"
    dequeued = Records(trader, "tr_engine_dequeue")
    assert set(dequeued.key.tolist()) <= set(read.key.tolist())


def check_decisions(trader: ntt.TelemetryFile, client_id: int, packet_driven: bool) -> None:
    decisions = Records(trader, "tr_decision")
    written = set(Records(trader, "tr_tcp_write").key.tolist())
    assert (decisions.aux >> 32 == client_id).all()
    unwritten = set(decisions.aux.tolist()) - written
    assert not unwritten, f"{trader.process_name}: decided orders never written: {sorted(unwritten)[:5]}"
    md_keys = set(decisions.key.tolist()) - {0}
    if packet_driven:
        assert md_keys, f"{trader.process_name}: no decision was caused by a market data packet"
    assert md_keys <= set(Records(trader, "tr_udp_read").key.tolist())


def check_timers(f: ntt.TelemetryFile, timers, ticks_per_ns: float) -> None:
    for point in timers:
        r = Records(f, point)
        assert len(r) > 0, f"{f.process_name} recorded no {point}"
        cycles = r.cycles.astype(np.float64)
        median_ns = float(np.median(cycles)) / ticks_per_ns
        assert 0 < median_ns < 1_000_000, f"{f.process_name} {point}: median {median_ns:.0f} ns"
        assert (r.cycles < 0xFFFFFFFF).all(), f"{f.process_name} {point}: a saturated timer"
        assert (r.tsc > 0).all()


def check_md_effects(ex: ntt.TelemetryFile) -> None:
    """Each ex_md_effect names a sequenced request (key) and the packet it went out in (aux: an ex_md_write key,
    stamped at the same reading); a packet names each request once."""
    effects = Records(ex, "ex_md_effect")
    assert len(effects) > 0, "no order's effect on the feed was stamped"
    written = dict(zip(Records(ex, "ex_md_write").key.tolist(), Records(ex, "ex_md_write").tsc.tolist()))
    sequenced = set(Records(ex, "ex_sequencer_in").key.tolist())
    pairs = list(zip(effects.key.tolist(), effects.aux.tolist(), effects.tsc.tolist()))
    for key, md_key, tsc in pairs:
        assert written.get(md_key) == tsc, f"effect of {key:#x} in packet {md_key}, which was not written then"
        assert key in sequenced, f"effect of a request never sequenced: {key:#x}"
    assert len(set((k, m) for k, m, _ in pairs)) == len(pairs), "a packet names a request twice"
    # The report joins them: the exchange's reaction time, order read to its effect written, is positive.
    reads = Records(ex, "ex_tcp_read").first_tsc()
    firsts = Records(ex, "ex_md_effect").first_tsc()
    joined = [firsts[k] - reads[k] for k in firsts if k in reads]
    assert joined and min(joined) > 0


def check_stages(ex: ntt.TelemetryFile) -> None:
    """Every engine step's stage timers are stamped at the step's start with its key, and add up to no more than
    the step's own timer (they are timed inside it)."""
    steps: Dict[tuple, int] = {}
    for point in STEP_TIMERS:
        r = Records(ex, point)
        for t, k, c in zip(r.tsc.tolist(), r.key.tolist(), r.cycles.tolist()):
            steps[(t, k)] = c
    summed: Dict[tuple, int] = {}
    for point in STAGE_TIMERS:
        r = Records(ex, point)
        for t, k, c in zip(r.tsc.tolist(), r.key.tolist(), r.cycles.tolist()):
            assert (t, k) in steps, f"{point} at {t} key {k:#x} belongs to no engine step"
            summed[(t, k)] = summed.get((t, k), 0) + c
    matching = Records(ex, "fn_matching")
    assert len(matching) == len(steps), "an engine step without its fn_matching"
    over = [(tk, c, steps[tk]) for tk, c in summed.items() if c > steps[tk]]
    assert not over, f"stages longer than their step: {over[:5]}"
    # Checked: every new order, and modifies (timed as fn_engine_process, with the session's mass cancels).
    new_orders = len(Records(ex, "fn_book_add")) + len(Records(ex, "fn_book_match"))
    assert new_orders <= len(Records(ex, "fn_pre_trade")) <= new_orders + len(Records(ex, "fn_engine_process"))


def test_compact_processes_write_joinable_telemetry(tmp_path, processes, binaries):
    tdir, _, _, _ = run_venue(tmp_path, processes, "compact", "compact")
    files = read_files(tdir)
    ex, mm, rnd = files["exchange.ntt"], files["mm1.ntt"], files["rnd.ntt"]
    assert recorder_names(ex) == ["critical"]
    assert recorder_names(mm) == ["engine"] and recorder_names(rnd) == ["engine"]
    ticks_per_ns = ex.ticks_per_ns
    check_hops_present(files)
    check_order_keys_join(ex, mm, 1, 1 / ticks_per_ns)
    check_order_keys_join(ex, rnd, 2, 1 / ticks_per_ns)
    check_exchange_path(ex)
    check_market_data_join(ex, mm, 1 / ticks_per_ns)
    check_market_data_join(ex, rnd, 1 / ticks_per_ns)
    check_decisions(mm, 1, packet_driven=True)
    check_decisions(rnd, 2, packet_driven=False)
    check_timers(ex, EXCHANGE_TIMERS, ticks_per_ns)
    check_stages(ex)
    check_md_effects(ex)
    check_timers(mm, TRADER_TIMERS, ticks_per_ns)

    # The report joins them: the market maker's tick-to-trade has samples, every one positive.
    run = analysis.build_run(list(files.values()))
    t2t = analysis.tick_to_trade(run)
    assert t2t.values_ns.size > 0, t2t.notes
    assert (t2t.values_ns > 0).all()


def test_dedicated_threads_each_record_into_their_own_recorder(tmp_path, processes, binaries):
    tdir, _, _, _ = run_venue(tmp_path, processes, "dedicated", "dedicated", seconds=2.0)
    files = read_files(tdir)
    ex, mm = files["exchange.ntt"], files["mm1.ntt"]
    assert recorder_names(ex) == ["gateway", "sequencer", "engine", "md"]
    assert recorder_names(mm) == ["engine", "receiver"]
    by_recorder = {r.name: r.records for r in ex.trailer.recorders}
    assert all(n > 0 for n in by_recorder.values()), by_recorder
    assert by_recorder["md"] == (len(Records(ex, "ex_md_write")) + len(Records(ex, "ex_md_effect"))
                                 + len(Records(ex, "fn_md_publish"))), by_recorder
    receiver = {r.name: r.records for r in mm.trailer.recorders}["receiver"]
    assert receiver == len(Records(mm, "tr_udp_read")), "the receiver thread records the reads, and only them"
    check_hops_present(files)
    check_order_keys_join(ex, mm, 1, 1 / ex.ticks_per_ns)
    check_exchange_path(ex)
    check_stages(ex)
    check_md_effects(ex)
    check_market_data_join(ex, mm, 1 / ex.ticks_per_ns)
    check_decisions(mm, 1, packet_driven=True)


def test_telemetry_option_is_checked(tmp_path, processes, binaries):
    config = make_config(tmp_path)
    config.write()
    missing = tmp_path / "no-such-dir"
    done = subprocess.run([str(TRADER_BINARY), "--config", str(tmp_path / "x.toml"), "--telemetry", str(missing)],
                          capture_output=True, text=True, timeout=10)
    assert done.returncode != 0 and "no-such-dir" in done.stderr, done.stderr

    tdir = tmp_path / "telemetry"
    tdir.mkdir()
    bad = TraderSpec("bad name", "market_maker", config.client(1), market_maker_instruments(), exchange_port=1)
    done = subprocess.run([str(TRADER_BINARY), "--config", str(bad.write(tmp_path)), "--telemetry", str(tdir),
                           "--duration", "1"], capture_output=True, text=True, timeout=10, cwd=str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "cannot name its telemetry file" in done.stderr and "'bad name'" in done.stderr, done.stderr
    assert not list(tdir.iterdir()), "a refused trader left a file"

    named_exchange = TraderSpec("exchange", "market_maker", config.client(1), market_maker_instruments(), exchange_port=1)
    done = subprocess.run([str(TRADER_BINARY), "--config", str(named_exchange.write(tmp_path)), "--telemetry",
                           str(tdir), "--duration", "1"], capture_output=True, text=True, timeout=10, cwd=str(tmp_path))
    assert done.returncode == 1 and "would overwrite the exchange's telemetry file" in done.stderr, done.stderr


def test_without_the_option_no_file_is_written(tmp_path, processes, binaries):
    config = make_config(tmp_path)
    config.write()
    ex = ExchangeProcess(config)
    processes.append(ex)
    ex.wait_ready()
    time.sleep(0.2)
    ex.stop()
    assert "telemetry" not in ex.stderr_text()
    assert not list(tmp_path.rglob("*.ntt"))
