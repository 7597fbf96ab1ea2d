"""Market data consumers for the tests, from docs/PROTOCOL.md section 2: an
order-by-order book per instrument that applies the incremental feed (checking
every TopOfBook against itself and each instrument's instrument_seq for gaps),
a snapshot assembler for the snapshot channel (only gapless Start ... End
sequences count; Start, End and every order agree on the snapshot's
instrument_seq), the snapshot audit (PROTOCOL.md 2.3: a snapshot's
instrument_seq against the incremental feed) and the sequence checks of both
numbers. Not thread-safe (one test thread; MdRecorder copies its packets under
a lock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tools.wire import (BUY, CHANNEL_INCREMENTAL, CHANNEL_SNAPSHOT, SELL, MdAddOrder, MdDeleteOrder, MdMessage,
                           MdModifyOrder, MdSnapshotEnd, MdSnapshotOrder, MdSnapshotStart, MdTopOfBook, MdTrade, Packet,
                           MdInstrumentState)


@dataclass
class BookOrder:
    order_id: int
    side: int
    price: int
    qty: int


class Book:
    """One instrument's order-by-order book in priority order (what a snapshot lists)."""

    def __init__(self) -> None:
        # Insertion order of the dict is time priority; sorting by price is stable.
        self.orders: Dict[int, BookOrder] = {}

    def add(self, order_id: int, side: int, price: int, qty: int) -> None:
        if order_id in self.orders:
            raise AssertionError(f"AddOrder for order {order_id} already in the book")
        if qty <= 0:
            raise AssertionError(f"AddOrder {order_id} with qty {qty}")
        self.orders[order_id] = BookOrder(order_id, side, price, qty)

    def modify(self, order_id: int, qty: int) -> None:
        o = self._get(order_id, "ModifyOrder")
        if not 0 < qty < o.qty:
            raise AssertionError(f"ModifyOrder {order_id} to qty {qty} from {o.qty}: must reduce")
        o.qty = qty

    def delete(self, order_id: int) -> None:
        self._get(order_id, "DeleteOrder")
        del self.orders[order_id]

    def trade(self, maker_order_id: int, price: int, qty: int) -> None:
        o = self._get(maker_order_id, "Trade")
        if price != o.price or not 0 < qty <= o.qty:
            raise AssertionError(f"Trade {qty}@{price} against maker {o}")
        o.qty -= qty
        if o.qty == 0:
            del self.orders[maker_order_id]

    def _get(self, order_id: int, what: str) -> BookOrder:
        o = self.orders.get(order_id)
        if o is None:
            raise AssertionError(f"{what} for order {order_id} not in the book")
        return o

    def side(self, side: int) -> List[BookOrder]:
        """Orders of one side, best price first, FIFO within a level."""
        same = [o for o in self.orders.values() if o.side == side]
        return sorted(same, key=lambda o: -o.price if side == BUY else o.price)

    def priority_list(self) -> List[Tuple[int, int, int, int]]:
        """(side, order_id, price, qty): bids best first, then asks best first, FIFO within a level."""
        return [(o.side, o.order_id, o.price, o.qty) for s in (BUY, SELL) for o in self.side(s)]

    def top(self) -> Tuple[int, int, int, int]:
        """(bid_price, bid_qty, ask_price, ask_qty); an empty side is 0, 0."""
        out: List[int] = []
        for s in (BUY, SELL):
            orders = self.side(s)
            if not orders:
                out += [0, 0]
            else:
                best = orders[0].price
                out += [best, sum(o.qty for o in orders if o.price == best)]
        return (out[0], out[1], out[2], out[3])


class IncrementalBooks:
    """Applies the incremental channel in sequence; checks TopOfBook against the books it builds
    and that each instrument's instrument_seq follows on (+1) from its previous message."""

    def __init__(self, instrument_seqs: Optional[Dict[int, int]] = None) -> None:
        """`instrument_seqs`: each instrument's last instrument_seq before the first packet, when
        known (after a restart); otherwise an instrument's first message sets its start, except
        on a channel heard from seq 1, where every instrument starts at 1."""
        self.books: Dict[int, Book] = {}
        self.next_seq: Optional[int] = None  # unknown until the first packet
        self.gaps: List[Tuple[int, int]] = []
        self.trades: List[MdTrade] = []
        self.halted: Dict[int, bool] = {}  # per instrument, from InstrumentState messages
        self.instrument_seqs: Dict[int, int] = dict(instrument_seqs or {})  # last applied, per instrument
        self._starts_known = instrument_seqs is not None

    def book(self, instrument: int) -> Book:
        return self.books.setdefault(instrument, Book())

    def apply_packet(self, pkt: Packet) -> None:
        if pkt.channel != CHANNEL_INCREMENTAL:
            raise AssertionError(f"snapshot packet given to the incremental books: {pkt}")
        if self.next_seq is None:
            self.next_seq = pkt.first_seq
            self._starts_known = self._starts_known or pkt.first_seq == 1
        if pkt.first_seq > self.next_seq:
            self.gaps.append((self.next_seq, pkt.first_seq))
            raise AssertionError(f"incremental gap: expected seq {self.next_seq}, packet starts at {pkt.first_seq}")
        if pkt.is_heartbeat:
            if pkt.first_seq != self.next_seq:
                raise AssertionError(f"heartbeat says next seq {pkt.first_seq}, we expect {self.next_seq}")
            return
        for m in pkt.messages:
            if m.seq < self.next_seq:  # a repeat: dropped (PROTOCOL.md 2.3)
                continue
            self.apply(m)
            self.next_seq = m.seq + 1

    def apply(self, m: MdMessage) -> None:
        ins, iseq = m.instrument, m.instrument_seq  # type: ignore[attr-defined]
        last = self.instrument_seqs.get(ins, 0 if self._starts_known else None)
        if last is not None and iseq != last + 1:
            raise AssertionError(f"{type(m).__name__} seq {m.seq}: instrument {ins} instrument_seq {iseq}, expected {last + 1}")
        self.instrument_seqs[ins] = iseq
        if isinstance(m, MdAddOrder):
            self.book(m.instrument).add(m.order_id, m.side, m.price, m.qty)
        elif isinstance(m, MdModifyOrder):
            self.book(m.instrument).modify(m.order_id, m.qty)
        elif isinstance(m, MdDeleteOrder):
            self.book(m.instrument).delete(m.order_id)
        elif isinstance(m, MdTrade):
            self.book(m.instrument).trade(m.maker_order_id, m.price, m.qty)
            self.trades.append(m)
        elif isinstance(m, MdTopOfBook):
            got = (m.bid_price, m.bid_qty, m.ask_price, m.ask_qty)
            want = self.book(m.instrument).top()
            if got != want:
                raise AssertionError(f"TopOfBook seq {m.seq} instrument {m.instrument} says {got}, book has {want}")
        elif isinstance(m, MdInstrumentState):
            self.halted[m.instrument] = m.state == 1
        else:
            raise AssertionError(f"unexpected message on the incremental channel: {m}")


@dataclass
class Snapshot:
    instrument: int
    last_seq: int
    orders: List[MdSnapshotOrder]
    instrument_seq: int = 0  # the instrument's last incremental instrument_seq with seq <= last_seq
    trading_state: int = 0  # 1: halted as of last_seq

    def priority_list(self) -> List[Tuple[int, int, int, int]]:
        return [(o.side, o.order_id, o.price, o.qty) for o in self.orders]


class SnapshotAssembler:
    """Collects complete snapshots (Start ... End without a gap in the channel's seq)."""

    def __init__(self) -> None:
        self._next_seq: Optional[int] = None
        self._current: Optional[Tuple[MdSnapshotStart, List[MdSnapshotOrder]]] = None
        self.complete: List[Snapshot] = []

    def apply_packet(self, pkt: Packet) -> None:
        if pkt.channel != CHANNEL_SNAPSHOT:
            raise AssertionError(f"incremental packet given to the snapshot assembler: {pkt}")
        if self._next_seq is not None and pkt.first_seq != self._next_seq:
            self._current = None  # a gap (or a restarted channel): this snapshot is unusable
        self._next_seq = pkt.first_seq + len(pkt.messages)
        for m in pkt.messages:
            if isinstance(m, MdSnapshotStart):
                self._current = (m, [])
            elif isinstance(m, MdSnapshotOrder):
                if self._current is not None:
                    if m.instrument != self._current[0].instrument:
                        raise AssertionError(f"SnapshotOrder for {m.instrument} inside the snapshot of {self._current[0].instrument}")
                    if m.instrument_seq != self._current[0].instrument_seq:
                        raise AssertionError(f"SnapshotOrder {m} does not carry its snapshot's instrument_seq {self._current[0].instrument_seq}")
                    self._current[1].append(m)
            elif isinstance(m, MdSnapshotEnd):
                if self._current is None:
                    continue
                start, orders = self._current
                self._current = None
                if (m.instrument, m.last_seq, m.orders, m.instrument_seq, m.trading_state) != (
                        start.instrument, start.last_seq, start.orders, start.instrument_seq, start.trading_state):
                    raise AssertionError(f"SnapshotEnd {m} does not match its SnapshotStart {start}")
                if len(orders) != start.orders:
                    raise AssertionError(f"snapshot of {start.instrument} announces {start.orders} orders, carries {len(orders)}")
                if start.instrument_seq > start.last_seq:
                    raise AssertionError(f"snapshot of {start.instrument}: instrument_seq {start.instrument_seq} above its last_seq {start.last_seq}")
                self.complete.append(Snapshot(start.instrument, start.last_seq, orders, start.instrument_seq,
                                              start.trading_state))


def sequence_problems(packets: List[Packet], first: Optional[int] = None) -> List[str]:
    """Gaps, repeats or bad heartbeats in one channel's packets (in arrival order); `first`
    is the seq the first packet must carry (1 for a channel heard from its start). On the
    incremental channel also each instrument's instrument_seq: +1 per message of the
    instrument (from 1 when `first` is 1; else from its first message heard)."""
    problems: List[str] = []
    expected = first
    last_iseq: Dict[int, int] = {}
    for p in packets:
        if expected is not None and p.first_seq != expected:
            problems.append(f"channel {p.channel}: packet starts at {p.first_seq}, expected {expected}")
        expected = p.first_seq + len(p.messages)
        if p.channel != CHANNEL_INCREMENTAL:
            continue
        for m in p.messages:
            ins, iseq = m.instrument, m.instrument_seq  # type: ignore[attr-defined]
            last = last_iseq.get(ins, 0 if first == 1 else None)
            if last is not None and iseq != last + 1:
                problems.append(f"instrument {ins}: seq {m.seq} has instrument_seq {iseq}, expected {last + 1}")
            last_iseq[ins] = iseq
    return problems


def first_instrument_seqs(packets: List[Packet]) -> Dict[int, int]:
    """The instrument_seq of each instrument's first message in incremental `packets`."""
    out: Dict[int, int] = {}
    for p in packets:
        for m in p.messages:
            out.setdefault(m.instrument, m.instrument_seq)  # type: ignore[attr-defined]
    return out


def audit_snapshot(snapshot: Snapshot, packets: List[Packet], instrument_seq_before: int = 0) -> Optional[str]:
    """The snapshot audit of PROTOCOL.md 2.3: None when `snapshot.instrument_seq` is the
    instrument_seq of its instrument's last incremental message with seq <= its last_seq
    (`instrument_seq_before` when `packets` hold none: the instrument's number before the
    first packet), else what differs. `packets` must reach past the snapshot's last_seq."""
    last = instrument_seq_before
    reached = 0
    for p in packets:
        for m in p.messages:
            reached = max(reached, m.seq)
            if m.seq <= snapshot.last_seq and m.instrument == snapshot.instrument:  # type: ignore[attr-defined]
                last = m.instrument_seq  # type: ignore[attr-defined]
        if p.is_heartbeat:
            reached = max(reached, p.first_seq - 1)
    if reached < snapshot.last_seq:
        return f"the incremental packets end at seq {reached}, before the snapshot's last_seq {snapshot.last_seq}"
    if last != snapshot.instrument_seq:
        return (f"snapshot of instrument {snapshot.instrument} at last_seq {snapshot.last_seq} says instrument_seq "
                f"{snapshot.instrument_seq}, the incremental feed's last for it is {last}")
    return None
