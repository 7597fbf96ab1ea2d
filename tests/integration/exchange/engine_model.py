"""A small matching model written from docs/MATCHING.md (the journal it
replays is read by journal_reader.py, written from docs/EXCHANGE.md "Journal").

The recovery test replays the journal the killed exchange left behind through
this model and compares the result with what the restarted exchange publishes
(its snapshot channel's books, its next exec_seq and market data seq, each
instrument's market data instrument_seq) and with
every report the clients received before the kill (same exec_seq, same fields).

Scope: what the tests send. New orders of every type and cancels and modifies
with self-trade prevention mode none; every validation step of MATCHING.md;
finished-order memory without its generations (the tests stay below
`max_orders` finished orders per instrument, so nothing is forgotten); capacity limits are not modelled
(the tests configure capacities they cannot reach) - a request that would need
them raises instead of guessing. Not thread-safe (one test thread).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tools import wire as w

MAX_CLIENT_ID = (1 << 16) - 1
MAX_CLIENT_ORDER_ID = (1 << 48) - 1

REQ_NEW, REQ_CANCEL, REQ_MODIFY, REQ_MASS_CANCEL = 1, 2, 3, 4
ALL_INSTRUMENTS = 0xFFFFFFFF  # a mass cancel's instrument: every one

# RejectReason codes (src/market/reject_reason.hpp).
R_UNKNOWN_INSTRUMENT, R_INVALID_REQUEST_TYPE, R_INVALID_SIDE, R_INVALID_ORDER_TYPE, R_INVALID_STP = 100, 101, 102, 103, 104
R_OFF_TICK, R_OUT_OF_BAND, R_OUTSIDE_COLLAR, R_ZERO_QTY, R_QTY_TOO_LARGE = 105, 106, 107, 108, 109
R_INVALID_CLIENT, R_INVALID_COID, R_RESERVED = 110, 111, 112
R_DUPLICATE, R_UNKNOWN_ORDER, R_TOO_LATE, R_NO_CHANGE = 200, 201, 202, 203

# Report kinds: an ExecutionReport, or the two reject messages.
EXEC, CANCEL_REJECT, MODIFY_REJECT = "exec", "cancel_reject", "modify_reject"


@dataclass
class Request:
    seq: int  # journal seq = the engine's request_seq
    type: int
    side: int
    order_type: int
    stp: int
    instrument: int
    client: int
    reserved: int
    client_order_id: int
    price: int
    qty: int
    event_id: int


@dataclass
class Report:
    kind: str
    exec_seq: int
    client: int
    client_order_id: int
    instrument: int
    order_id: int = 0
    price: int = 0
    order_qty: int = 0
    last_price: int = 0
    last_qty: int = 0
    cum_qty: int = 0
    leaves_qty: int = 0
    exec_type: int = 0
    side: int = 0
    order_type: int = 0
    is_maker: int = 0
    reject_reason: int = 0
    cancel_reason: int = 0
    request_seq: int = 0

    def wire_fields(self) -> Dict[str, int]:
        """The fields the wire message of this report carries (to compare with a received one)."""
        if self.kind == EXEC:
            names = ("exec_seq", "client_order_id", "order_id", "price", "order_qty", "last_price", "last_qty", "cum_qty",
                     "leaves_qty", "instrument", "exec_type", "side", "order_type", "is_maker", "reject_reason", "cancel_reason")
            return {n: getattr(self, n) for n in names}
        return {"exec_seq": self.exec_seq, "client_order_id": self.client_order_id, "instrument": self.instrument, "reason": self.reject_reason}


@dataclass
class Order:
    order_id: int
    client: int
    client_order_id: int
    instrument: int
    side: int
    order_type: int
    stp: int
    price: int
    qty: int  # total
    cum: int = 0
    done: bool = False

    @property
    def open(self) -> int:
        return self.qty - self.cum


@dataclass
class InstrumentModel:
    tick_size: int
    min_price: int
    max_price: int
    collar: int
    max_order_qty: int
    bids: List[Order] = field(default_factory=list)  # priority order
    asks: List[Order] = field(default_factory=list)
    last_trade: Optional[int] = None
    finished: set = field(default_factory=set)  # (client, client_order_id)
    md_seq: int = 0  # the instrument's last market data instrument_seq (MATCHING.md "Sequence numbers")

    def side_list(self, side: int) -> List[Order]:
        return self.bids if side == w.BUY else self.asks

    def rest(self, o: Order) -> None:
        book = self.side_list(o.side)
        # Back of its level: after every order at a better or equal price.
        better_or_equal = (lambda x: x.price >= o.price) if o.side == w.BUY else (lambda x: x.price <= o.price)
        i = 0
        while i < len(book) and better_or_equal(book[i]):
            i += 1
        book.insert(i, o)

    def top(self) -> Tuple[int, int, int, int]:
        out: List[int] = []
        for book in (self.bids, self.asks):
            if not book:
                out += [0, 0]
            else:
                best = book[0].price
                out += [best, sum(o.open for o in book if o.price == best)]
        return (out[0], out[1], out[2], out[3])

    def priority_list(self) -> List[Tuple[int, int, int, int]]:
        return [(o.side, o.order_id, o.price, o.open) for o in self.bids + self.asks]


class EngineModel:
    def __init__(self, instruments) -> None:
        """`instruments`: objects with tick_size, min_price, max_price, collar, max_order_qty (InstrumentSpec)."""
        self.instruments = [InstrumentModel(i.tick_size, i.min_price, i.max_price, i.collar, i.max_order_qty) for i in instruments]
        self.live: Dict[Tuple[int, int], Order] = {}  # (client, client_order_id) -> resting order
        self.next_order_id = 1
        self.next_exec_seq = 1
        self.next_md_seq = 1
        self.request_seq = 0
        self.reports: List[Report] = []
        self.md_count_by_type: Dict[str, int] = {}
        self.orders: Dict[Tuple[int, int], Order] = {}  # (client, coid) -> the latest order accepted with that key

    # -- outputs --
    def _report(self, req: Request, kind: str, **f) -> Report:
        r = Report(kind=kind, exec_seq=self.next_exec_seq, request_seq=req.seq, **f)
        self.next_exec_seq += 1
        self.reports.append(r)
        return r

    def _order_report(self, req: Request, o: Order, exec_type: int, **f) -> Report:
        return self._report(req, EXEC, client=o.client, client_order_id=o.client_order_id, instrument=o.instrument,
                            order_id=o.order_id, price=0 if o.order_type == w.MARKET else o.price, order_qty=o.qty,
                            cum_qty=o.cum, leaves_qty=o.open if exec_type not in (w.EXEC_CANCELLED,) else 0,
                            exec_type=exec_type, side=o.side, order_type=o.order_type, **f)

    def _reject(self, req: Request, kind: str, reason: int) -> None:
        exec_type = w.EXEC_REJECTED if kind == EXEC else 0
        self._report(req, kind, client=req.client, client_order_id=req.client_order_id, instrument=req.instrument,
                     price=req.price, order_qty=req.qty, side=req.side, order_type=req.order_type, exec_type=exec_type,
                     reject_reason=reason)

    def _md(self, ins: InstrumentModel, kind: str) -> None:
        self.md_count_by_type[kind] = self.md_count_by_type.get(kind, 0) + 1
        self.next_md_seq += 1
        ins.md_seq += 1

    def _finish(self, ins: InstrumentModel, o: Order) -> None:
        o.done = True
        ins.finished.add((o.client, o.client_order_id))
        self.live.pop((o.client, o.client_order_id), None)

    # -- validation (MATCHING.md "Validation") --
    def _common_checks(self, req: Request, new: bool) -> int:
        if req.type not in (REQ_NEW, REQ_CANCEL, REQ_MODIFY):
            return R_INVALID_REQUEST_TYPE
        if req.instrument >= len(self.instruments):
            return R_UNKNOWN_INSTRUMENT
        if new:
            if req.side not in (w.BUY, w.SELL):
                return R_INVALID_SIDE
            if req.order_type not in (w.LIMIT, w.IOC, w.FOK, w.MARKET):
                return R_INVALID_ORDER_TYPE
            if req.stp not in (0, 1, 2, 3):
                return R_INVALID_STP
        if req.reserved != 0:
            return R_RESERVED
        if req.client > MAX_CLIENT_ID:
            return R_INVALID_CLIENT
        if req.client_order_id > MAX_CLIENT_ORDER_ID:
            return R_INVALID_COID
        return 0

    def _qty_price_checks(self, ins: InstrumentModel, qty: int, price: int, is_market: bool) -> int:
        if qty <= 0:
            return R_ZERO_QTY
        if qty > ins.max_order_qty:
            return R_QTY_TOO_LARGE
        if not is_market:
            if price % ins.tick_size != 0:
                return R_OFF_TICK
            if not ins.min_price <= price <= ins.max_price:
                return R_OUT_OF_BAND
            if ins.collar and ins.last_trade is not None and abs(price - ins.last_trade) > ins.collar:
                return R_OUTSIDE_COLLAR
        return 0

    # -- requests --
    def apply(self, req: Request) -> None:
        self.request_seq += 1
        assert req.seq == self.request_seq, f"journal seq {req.seq} after {self.request_seq - 1}"
        # Types 5-9 are admin requests (docs/CONTROLS.md "Admin"), which this model does not know:
        # a comparison on a journal holding one would diverge, so it is refused here, by name.
        assert not 5 <= req.type <= 9, f"journal seq {req.seq}: an admin request (type {req.type}): not modelled"
        if req.type == REQ_NEW or req.type not in (REQ_CANCEL, REQ_MODIFY, REQ_MASS_CANCEL):
            self._new(req)
        elif req.type == REQ_CANCEL:
            self._cancel(req)
        elif req.type == REQ_MASS_CANCEL:
            self._mass_cancel(req)
        else:
            self._modify(req)

    def _new(self, req: Request) -> None:
        reason = self._common_checks(req, new=True)
        if reason:
            return self._reject(req, EXEC, reason)
        ins = self.instruments[req.instrument]
        reason = self._qty_price_checks(ins, req.qty, req.price, req.order_type == w.MARKET)
        if reason:
            return self._reject(req, EXEC, reason)
        if (req.client, req.client_order_id) in self.live:
            return self._reject(req, EXEC, R_DUPLICATE)
        if req.stp not in (w.STP_NONE, w.STP_CANCEL_RESTING):
            raise NotImplementedError("the model covers self-trade prevention modes none and cancel-resting only")
        before = ins.top()
        o = Order(self.next_order_id, req.client, req.client_order_id, req.instrument, req.side, req.order_type, req.stp,
                  0 if req.order_type == w.MARKET else req.price, req.qty)
        self.next_order_id += 1
        self.orders[(o.client, o.client_order_id)] = o
        self._order_report(req, o, w.EXEC_ACCEPTED)
        if o.order_type == w.FOK and self._fillable(ins, o) < o.qty:
            self._order_report(req, o, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_FOK_UNFILLABLE)
            self._finish(ins, o)
        else:
            self._match(req, ins, o, collar_ref=ins.last_trade)
            self._after_match(req, ins, o)
        self._top(ins, before)

    def _limit_ok(self, ins: InstrumentModel, o: Order, maker: Order, collar_ref: Optional[int]) -> bool:
        if o.order_type == w.MARKET:
            if ins.collar and collar_ref is not None:
                return maker.price <= collar_ref + ins.collar if o.side == w.BUY else maker.price >= collar_ref - ins.collar
            return True
        return maker.price <= o.price if o.side == w.BUY else maker.price >= o.price

    def _fillable(self, ins: InstrumentModel, o: Order) -> int:
        total = 0
        for maker in ins.side_list(w.SELL if o.side == w.BUY else w.BUY):
            if not self._limit_ok(ins, o, maker, ins.last_trade):
                break
            if o.stp == w.STP_CANCEL_RESTING and maker.client == o.client:
                continue  # would be cancelled, not traded (MATCHING.md "Self-trade prevention")
            total += maker.open
        return total

    def _match(self, req: Request, ins: InstrumentModel, o: Order, collar_ref: Optional[int]) -> None:
        book = ins.side_list(w.SELL if o.side == w.BUY else w.BUY)
        while o.open > 0 and book and self._limit_ok(ins, o, book[0], collar_ref):
            maker = book[0]
            if o.stp == w.STP_CANCEL_RESTING and maker.client == o.client:
                book.pop(0)
                self._order_report(req, maker, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_SELF_TRADE)
                self._md(ins, "delete")
                self._finish(ins, maker)
                continue
            q = min(o.open, maker.open)
            o.cum += q
            maker.cum += q
            self._order_report(req, o, w.EXEC_FILL, last_price=maker.price, last_qty=q, is_maker=0)
            self._order_report(req, maker, w.EXEC_FILL, last_price=maker.price, last_qty=q, is_maker=1)
            self._md(ins, "trade")
            ins.last_trade = maker.price
            if maker.open == 0:
                book.pop(0)
                self._finish(ins, maker)

    def _after_match(self, req: Request, ins: InstrumentModel, o: Order) -> None:
        if o.open > 0 and o.order_type == w.LIMIT:
            ins.rest(o)
            self.live[(o.client, o.client_order_id)] = o
            self._md(ins, "add")
            return
        if o.open > 0:
            self._order_report(req, o, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_IOC_RESIDUAL)
        self._finish(ins, o)

    def _find(self, req: Request, kind: str) -> Optional[Order]:
        reason = self._common_checks(req, new=False)
        if reason:
            self._reject(req, kind, reason)
            return None
        o = self.live.get((req.client, req.client_order_id))
        if o is None or o.instrument != req.instrument:
            ins = self.instruments[req.instrument]
            self._reject(req, kind, R_TOO_LATE if (req.client, req.client_order_id) in ins.finished else R_UNKNOWN_ORDER)
            return None
        return o

    def _cancel(self, req: Request) -> None:
        o = self._find(req, CANCEL_REJECT)
        if o is None:
            return
        ins = self.instruments[o.instrument]
        before = ins.top()
        ins.side_list(o.side).remove(o)
        self._order_report(req, o, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_USER)
        self._md(ins, "delete")
        self._finish(ins, o)
        self._top(ins, before)

    def _mass_cancel(self, req: Request) -> None:
        """MATCHING.md "Mass cancel": the venue's request when a session ends."""
        everywhere = req.instrument == ALL_INSTRUMENTS
        if not everywhere and req.instrument >= len(self.instruments):
            return self._reject(req, CANCEL_REJECT, R_UNKNOWN_INSTRUMENT)
        if req.client > MAX_CLIENT_ID:
            return self._reject(req, CANCEL_REJECT, R_INVALID_CLIENT)
        if req.reserved or req.client_order_id or req.price or req.qty:
            return self._reject(req, CANCEL_REJECT, R_RESERVED)
        for i in range(len(self.instruments)) if everywhere else [req.instrument]:
            ins = self.instruments[i]
            mine = sorted((o for book in (ins.bids, ins.asks) for o in book if o.client == req.client),
                          key=lambda o: o.order_id)
            if not mine:
                continue
            before = ins.top()
            for o in mine:
                ins.side_list(o.side).remove(o)
                self._order_report(req, o, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_MASS)
                self._md(ins, "delete")
                self._finish(ins, o)
            self._top(ins, before)

    def _modify(self, req: Request) -> None:
        o = self._find(req, MODIFY_REJECT)
        if o is None:
            return
        ins = self.instruments[o.instrument]
        reason = self._qty_price_checks(ins, req.qty, req.price, False)
        if not reason and req.price == o.price and req.qty == o.qty:
            reason = R_NO_CHANGE
        if reason:
            return self._reject(req, MODIFY_REJECT, reason)
        before = ins.top()
        if req.qty <= o.cum:
            ins.side_list(o.side).remove(o)
            self._order_report(req, o, w.EXEC_CANCELLED, cancel_reason=w.CANCEL_MODIFY_BELOW_FILLED)
            self._md(ins, "delete")
            self._finish(ins, o)
        elif req.price == o.price and req.qty < o.qty:
            o.qty = req.qty
            self._order_report(req, o, w.EXEC_MODIFIED)
            self._md(ins, "modify")
        else:
            ins.side_list(o.side).remove(o)
            self._md(ins, "delete")
            o.price, o.qty = req.price, req.qty
            self._order_report(req, o, w.EXEC_MODIFIED)
            self.live.pop((o.client, o.client_order_id))
            self._match(req, ins, o, collar_ref=ins.last_trade)
            self._after_match(req, ins, o)
        self._top(ins, before)

    def _top(self, ins: InstrumentModel, before) -> None:
        if ins.top() != before:
            self._md(ins, "top")

    def instrument_seqs(self) -> Dict[int, int]:
        """Each instrument's last market data instrument_seq (0: no event yet)."""
        return {i: ins.md_seq for i, ins in enumerate(self.instruments)}

    def books(self) -> Dict[int, List[Tuple[int, int, int, int]]]:
        return {i: ins.priority_list() for i, ins in enumerate(self.instruments)}
