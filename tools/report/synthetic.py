"""A synthetic but realistic run for the report's tests: one exchange and
two traders exchanging market data and orders, every record placed at a
chosen tick, and the latencies the report must find computed here directly
from those ticks (not by the report's code).

The run is written by nanotick-telemetry-fixture (the project's own C++
Writer) from the script this module makes. It exercises every matching
rule of analysis.py: one-to-one hops, one engine step answered by several
writes (ack, fill, a passive fill to another trader), one packet read by
both traders and twice by one of them, one packet causing two orders, a
decision no packet caused (key 0), several answers to one order read in FIFO
order, passive fills sharing the answer key (client_id << 32) | 0, and one
answer whose order was never sent (unmatched). Not thread-safe (builds one scenario at a time).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import DefaultDict, Dict, List, Tuple

EXCHANGE_RECORDERS = ("gateway", "sequencer", "engine", "md")
TRADER_RECORDERS = ("feed", "engine", "gateway")


@dataclass
class Scenario:
    script: str
    # metric name (as the report names it) -> tick differences it must find
    expected_ticks: Dict[str, List[int]]
    # timer point -> elapsed ticks recorded
    timer_ticks: Dict[str, List[int]]
    # hop point -> records written
    hop_counts: Dict[str, int]
    # metric name -> {note: count} the report must show
    expected_notes: Dict[str, Dict[str, int]] = field(default_factory=dict)
    files: List[str] = field(default_factory=list)


class _Process:
    def __init__(self, name: str, recorders: Tuple[str, ...]):
        self.name = name
        self.records: Dict[str, List[Tuple[int, str, int, int, int]]] = {r: [] for r in recorders}

    def add(self, recorder: str, ticks: int, point: str, key: int, aux: int = 0, cycles: int = 0) -> None:
        self.records[recorder].append((ticks, point, key, aux, cycles))


def order_key(client_id: int, session_seq: int) -> int:
    return (client_id << 32) | session_seq


def make(run_dir: Path, seed: int = 7, packets: int = 400) -> Scenario:
    rng = random.Random(seed)
    exchange = _Process("exchange", EXCHANGE_RECORDERS)
    traders = [_Process(f"trader-mm{t + 1}", TRADER_RECORDERS) for t in range(2)]
    expected: DefaultDict[str, List[int]] = defaultdict(list)
    timers: DefaultDict[str, List[int]] = defaultdict(list)
    seq = [0, 0]
    exchange_writes: List[Tuple[int, int, int]] = []  # (write ticks, answer key, reader trader)

    def timer(proc: _Process, recorder: str, point: str, at: int, key: int = 0) -> None:
        cycles = rng.randint(40, 5_000)
        proc.add(recorder, at, point, key, 0, cycles)
        timers[point].append(cycles)

    def send_order(t: int, decision: int, md_key: int, read: int, md_write: int) -> None:
        """Trader t decides at `decision` (caused by the packet md_key written
        by the exchange at `md_write` and read at `read`, or by a timer when
        md_key is 0) and sends one order, which the exchange sequences,
        matches and answers."""
        seq[t] += 1
        okey = order_key(t + 1, seq[t])
        trader = traders[t]
        trader.add("engine", decision, "tr_decision", md_key, okey)
        timer(trader, "engine", "fn_risk_check", decision - 150)
        write = decision + rng.randint(100, 2_000)
        trader.add("engine", write, "tr_tcp_write", okey)
        expected["tr_decision -> tr_tcp_write"].append(write - decision)
        if md_key:
            expected["tick_to_trade"].append(write - read)

        ex_read = write + rng.randint(5_000, 30_000)
        exchange.add("gateway", ex_read, "ex_tcp_read", okey)
        expected["tr_tcp_write -> ex_tcp_read"].append(ex_read - write)
        if md_key:
            expected["venue_tick_to_trade"].append(ex_read - md_write)
        seq_in = ex_read + rng.randint(100, 900)
        exchange.add("gateway", seq_in, "ex_sequencer_in", okey)
        expected["ex_tcp_read -> ex_sequencer_in"].append(seq_in - ex_read)
        seq_out = seq_in + rng.randint(500, 20_000)
        exchange.add("sequencer", seq_out, "ex_sequencer_out", okey)
        expected["ex_sequencer_in -> ex_sequencer_out"].append(seq_out - seq_in)
        timer(exchange, "sequencer", "fn_sequencer", seq_in + 100)
        eng_in = seq_out + rng.randint(100, 2_000)
        exchange.add("engine", eng_in, "ex_engine_in", okey)
        expected["ex_sequencer_out -> ex_engine_in"].append(eng_in - seq_out)
        eng_out = eng_in + rng.randint(200, 5_000)
        exchange.add("engine", eng_out, "ex_engine_out", okey)
        expected["ex_engine_in -> ex_engine_out"].append(eng_out - eng_in)
        timer(exchange, "engine", "fn_book_add", eng_in + 20, okey)
        # Its effect on the book in a market data packet (every order but each 5th, which changed nothing:
        # a rejected one); aux is that packet's md key (one the run's md loop does not use).
        if seq[t] % 5 != 0:
            effect = eng_out + rng.randint(300, 3_000)
            effect_md_key = 10_000_000 + len(expected["exchange_reaction_time"])  # a packet of its own
            exchange.add("md", effect, "ex_md_write", effect_md_key)
            exchange.add("md", effect, "ex_md_effect", okey, effect_md_key)
            expected["ex_engine_out -> ex_md_effect"].append(effect - eng_out)
            expected["exchange_reaction_time"].append(effect - ex_read)
            md_read = effect + rng.randint(5_000, 40_000)  # read by the other trader (its own feed)
            traders[1 - t].add("feed", md_read, "tr_udp_read", effect_md_key)
            expected["ex_md_write -> tr_udp_read"].append(md_read - effect)
        if seq[t] % 4 == 0:
            timer(exchange, "engine", "fn_book_match", eng_in + 40, okey)

        # Answers: the ack, on every 4th order a fill too, and on every 10th a
        # passive fill to another client's resting order (ref_seq 0 on the
        # wire, so its answer key is (client_id << 32) | 0; aux = this order).
        answers = [(okey, t)]
        if seq[t] % 4 == 0:
            answers.append((okey, t))
        if seq[t] % 10 == 0:
            other = 1 - t
            answers.append((order_key(other + 1, 0), other))
        at = eng_out
        for answer_key, reader in answers:
            at += rng.randint(100, 1_500)
            exchange.add("gateway", at, "ex_tcp_write", answer_key, okey)
            expected["ex_engine_out -> ex_tcp_write"].append(at - eng_out)
            exchange_writes.append((at, answer_key, reader))

    t_now = 50_000
    for j in range(packets):
        t_now += rng.randint(20_000, 60_000)
        md_key = 1 + 5 * j
        md_write = t_now
        exchange.add("md", md_write, "ex_md_write", md_key)
        timer(exchange, "md", "fn_md_publish", md_write - 2_000)
        for t, trader in enumerate(traders):
            read = md_write + rng.randint(5_000, 40_000)
            trader.add("feed", read, "tr_udp_read", md_key)
            expected["ex_md_write -> tr_udp_read"].append(read - md_write)
            if t == 0 and j % 50 == 7:  # the same packet read again (the other feed)
                again = read + rng.randint(100, 500)
                trader.add("feed", again, "tr_udp_read", md_key)
                expected["ex_md_write -> tr_udp_read"].append(again - md_write)
            dequeue = read + rng.randint(200, 3_000)
            trader.add("engine", dequeue, "tr_engine_dequeue", md_key)
            expected["tr_udp_read -> tr_engine_dequeue"].append(dequeue - read)
            timer(trader, "engine", "fn_feature_update", dequeue + 10)
            if (j + t) % 3 != 0:
                continue
            for o in range(1 + j % 2):  # odd packets cause two orders
                decision = dequeue + rng.randint(300, 4_000) + 50 * o
                expected["tr_engine_dequeue -> tr_decision"].append(decision - dequeue)
                send_order(t, decision, md_key, read, md_write)

    # A decision no packet caused (a timer's re-quote): key 0, so it is in the
    # order path and the round trip but in no market data join.
    t_now += 50_000
    send_order(0, t_now, 0, 0, 0)

    # Every answer read by its trader, per connection in write order (FIFO).
    last_read = [0, 0]
    first_answer: Dict[int, int] = {}
    sent: Dict[int, int] = {}
    for trader in traders:
        for ticks, point, key, _, _ in trader.records["engine"]:
            if point == "tr_tcp_write":
                sent[key] = ticks
    for at, answer_key, reader in sorted(exchange_writes):
        read = max(at + rng.randint(5_000, 30_000), last_read[reader] + 1)
        last_read[reader] = read
        traders[reader].add("gateway", read, "tr_response_read", answer_key)
        expected["ex_tcp_write -> tr_response_read"].append(read - at)
        first_answer.setdefault(answer_key, read)
    for okey, write in sent.items():
        expected["order_round_trip"].append(first_answer[okey] - write)

    # An answer whose order no trader sent: unmatched on the wire.
    traders[1].add("gateway", t_now + 1_000_000, "tr_response_read", order_key(99, 1))
    notes = {
        "ex_tcp_write -> tr_response_read": {"unmatched": 1},
        "tr_engine_dequeue -> tr_decision": {"keyless": 1},
        "tick_to_trade": {"keyless": 1},
        "venue_tick_to_trade": {"keyless": 1},
    }

    lines = []
    procs = [exchange] + traders
    files = []
    for proc in procs:
        path = Path(run_dir) / "telemetry" / f"{proc.name}.ntt"
        files.append(str(path))
        lines.append(f"process {proc.name} {path}")
        for recorder, records in proc.records.items():
            lines.append(f"recorder {recorder}")
            lines.extend(f"record {r[0]} {r[1]} {r[2]} {r[3]} {r[4]}" for r in records)
    hop_counts: DefaultDict[str, int] = defaultdict(int)
    for proc in procs:
        for records in proc.records.values():
            for r in records:
                if not r[1].startswith("fn_"):
                    hop_counts[r[1]] += 1
    return Scenario("\n".join(lines) + "\n", dict(expected), dict(timers), dict(hop_counts), notes, files)
