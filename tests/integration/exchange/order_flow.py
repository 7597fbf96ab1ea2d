"""What a test client knows about its orders, and a seeded random order flow.

OrderTracker follows one client's orders from the reports it receives (across
reconnects: attach a new session with `attach`): which requests are still
unanswered, each order's exchange id, price, filled and open quantity, and
whether it is done. RandomFlow draws that client's next request (new orders of
every type, cancels and modifies of its live orders, an occasional cancel of an
order that never existed) with self-trade prevention off, within what
engine_model.py models. Client order ids are never reused, so (client, id)
names one order for the whole test. Not thread-safe (one test thread).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Dict, List, Optional

from tools import wire as w


@dataclass
class TrackedOrder:
    client_order_id: int
    order_id: int
    instrument: int
    side: int
    order_type: int
    price: int
    qty: int
    cum: int = 0
    leaves: int = 0
    done: bool = False


class OrderTracker:
    def __init__(self, client_id: int, session: Optional[w.OrderEntryClient] = None) -> None:
        self.client_id = client_id
        self.session = session
        self.pending: Dict[int, w.Message] = {}  # seq -> request awaiting its first answer (this session)
        self.unanswered: List[w.Message] = []  # requests of closed sessions that never got an answer
        self.orders: Dict[int, TrackedOrder] = {}
        self.reports: List[w.Message] = []  # every ExecutionReport / CancelReject / ModifyReject
        self.session_rejects: List[w.SessionReject] = []
        self.errors: List[str] = []
        self.next_coid = 1
        # With other clients trading while this one is logged off (the soak), fills can happen
        # that it never hears of (the protocol has no replay): a later fill then jumps in
        # cum_qty, and a cancel of an order filled meanwhile is "too late" (202). `resync`
        # accepts both, as a real client must, and counts them.
        self.resync = False
        self.resynced = 0

    def attach(self, session: w.OrderEntryClient) -> None:
        """A new session (after a reconnect or a restart): requests still pending never got answers."""
        self.unanswered += self.pending.values()
        self.pending = {}
        self.session = session

    def send(self, msg: w.Message) -> int:
        assert self.session is not None
        seq = self.session.send(msg)
        if isinstance(msg, (w.NewOrder, w.CancelOrder, w.ModifyOrder)):
            self.pending[seq] = msg
        return seq

    def new_coid(self) -> int:
        c = self.next_coid
        self.next_coid += 1
        return c

    def pump(self) -> List[w.Message]:
        """Handles every message already received; returns them."""
        assert self.session is not None
        msgs = self.session.poll()
        for m in msgs:
            self.on_message(m)
        return msgs

    def wait_answers(self, timeout: float = 5.0) -> None:
        """Until every pending request has its first answer."""
        assert self.session is not None
        deadline = time.monotonic() + timeout
        while self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"client {self.client_id}: {len(self.pending)} requests unanswered after {timeout} s: "
                                     f"{list(self.pending.items())[:3]}")
            self.on_message(self.session.recv(timeout=left))

    def on_message(self, m: w.Message) -> None:
        if isinstance(m, w.ExecutionReport):
            self.reports.append(m)
            req = self.pending.pop(m.ref_seq, None)
            if req is not None:
                self._check_first_answer(req, m)
            self._apply(m)
        elif isinstance(m, (w.CancelReject, w.ModifyReject)):
            self.reports.append(m)
            req = self.pending.pop(m.ref_seq, None)
            want = w.CancelOrder if isinstance(m, w.CancelReject) else w.ModifyOrder
            if not isinstance(req, want) or req.client_order_id != m.client_order_id:
                self.errors.append(f"{m} answers {req}")
            o = self.orders.get(m.client_order_id)
            if self.resync and m.reason == 202 and o is not None and not o.done:
                o.leaves, o.done = 0, True  # finished while we were away
                self.resynced += 1
        elif isinstance(m, w.SessionReject):
            self.session_rejects.append(m)
            self.pending.pop(m.ref_seq, None)
        elif isinstance(m, w.ServerLogout):
            pass
        else:
            self.errors.append(f"unexpected {m}")

    def _check_first_answer(self, req: w.Message, r: w.ExecutionReport) -> None:
        allowed = {
            w.NewOrder: (w.EXEC_ACCEPTED, w.EXEC_REJECTED),
            w.CancelOrder: (w.EXEC_CANCELLED,),
            w.ModifyOrder: (w.EXEC_MODIFIED, w.EXEC_CANCELLED),
        }[type(req)]
        if r.exec_type not in allowed or r.client_order_id != req.client_order_id:
            self.errors.append(f"first answer {r} to {req}")

    def _apply(self, r: w.ExecutionReport) -> None:
        if r.exec_type == w.EXEC_ACCEPTED:
            self.orders[r.client_order_id] = TrackedOrder(r.client_order_id, r.order_id, r.instrument, r.side, r.order_type,
                                                          r.price, r.order_qty, 0, r.leaves_qty)
            return
        if r.exec_type == w.EXEC_REJECTED:
            return
        o = self.orders.get(r.client_order_id)
        if o is None or o.order_id != r.order_id or o.done:
            self.errors.append(f"report {r} for an order not live here: {o}")
            return
        if r.exec_type == w.EXEC_FILL:
            if r.cum_qty != o.cum + r.last_qty or r.leaves_qty != o.leaves - r.last_qty:
                if self.resync and r.cum_qty > o.cum + r.last_qty and r.cum_qty + r.leaves_qty == o.cum + o.leaves:
                    self.resynced += 1  # fills we missed while logged off
                else:
                    self.errors.append(f"fill {r} does not follow {o}")
            o.cum, o.leaves = r.cum_qty, r.leaves_qty
            o.done = o.leaves == 0
        elif r.exec_type == w.EXEC_CANCELLED:
            o.leaves, o.done = 0, True
        elif r.exec_type == w.EXEC_MODIFIED:
            if r.cum_qty != o.cum:  # fills we missed while logged off (resync) or a wrong report
                if self.resync and r.cum_qty > o.cum:
                    self.resynced += 1
                    o.cum = r.cum_qty
                else:
                    self.errors.append(f"modify {r} does not follow {o}")
            o.price, o.qty, o.leaves = r.price, r.order_qty, r.leaves_qty
        else:
            self.errors.append(f"unknown exec_type in {r}")

    def live(self) -> List[TrackedOrder]:
        """Orders acknowledged, not known to be done (resting, as far as this client knows)."""
        return [o for o in self.orders.values() if not o.done]

    def resting_set(self, instrument: int):
        return {(o.side, o.order_id, o.price, o.leaves) for o in self.live() if o.instrument == instrument}


class RandomFlow:
    """Draws one client's requests; `mids` and `ticks` per instrument keep prices crossing often."""

    def __init__(self, rng: random.Random, tracker: OrderTracker, mids: List[int], ticks: List[int]) -> None:
        self.rng = rng
        self.t = tracker
        self.mids = mids
        self.ticks = ticks

    def next(self) -> w.Message:
        rng = self.rng
        live = [o for o in self.t.live() if o.order_type == w.LIMIT]
        r = rng.random()
        if r < 0.22 and live:
            o = rng.choice(live)
            return w.CancelOrder(client_order_id=o.client_order_id, instrument=o.instrument)
        if r < 0.32 and live:
            o = rng.choice(live)
            price = o.price + rng.choice((-1, 0, 0, 1)) * self.ticks[o.instrument]
            qty = max(1, o.qty + rng.randint(-6, 6))
            return w.ModifyOrder(client_order_id=o.client_order_id, instrument=o.instrument, price=price, qty=qty)
        if r < 0.34:  # an order that never existed
            return w.CancelOrder(client_order_id=10_000_000 + rng.randrange(1000), instrument=rng.randrange(len(self.mids)))
        instrument = rng.randrange(len(self.mids))
        kind = rng.random()
        order_type = w.LIMIT if kind < 0.75 else w.IOC if kind < 0.87 else w.FOK if kind < 0.95 else w.MARKET
        price = self.mids[instrument] + rng.randint(-5, 5) * self.ticks[instrument]
        return w.NewOrder(client_order_id=self.t.new_coid(), instrument=instrument, side=rng.choice((w.BUY, w.SELL)),
                          order_type=order_type, price=0 if order_type == w.MARKET else price, qty=rng.randint(1, 20))


def check_reports_against_model(trackers: List[OrderTracker], model) -> int:
    """Every report the clients received equals the model's report with the same exec_seq
    (all wire fields, and addressed to the same client). Returns how many were compared."""
    by_seq = {r.exec_seq: r for r in model.reports}
    n = 0
    for t in trackers:
        for got in t.reports:
            want = by_seq.get(got.exec_seq)
            assert want is not None, f"client {t.client_id} received exec_seq {got.exec_seq}, the journal replay has {len(model.reports)} reports"
            assert want.client == t.client_id, f"exec_seq {got.exec_seq} went to client {t.client_id}, the model addresses it to {want.client}"
            kind = {w.ExecutionReport: "exec", w.CancelReject: "cancel_reject", w.ModifyReject: "modify_reject"}[type(got)]
            assert kind == want.kind, f"exec_seq {got.exec_seq}: exchange sent {got}, model says {want}"
            fields = {k: getattr(got, k) for k in want.wire_fields()}
            assert fields == want.wire_fields(), f"exec_seq {got.exec_seq}: exchange sent {fields}, model says {want.wire_fields()}"
            n += 1
    return n
