"""A FIX engine nobody here wrote (QuickFIX/J) trades on the venue through
nanotick-fix-gateway against a nanotick client on the binary protocol: its
orders, fills, cancels and replaces, and every way the gateway or the venue
refuses one (docs/FIX.md "Messages"). The FIX fills are checked against the
fills the exchange reported to the other side.
"""

from __future__ import annotations

from tools import wire as w
from tests.integration.exchange.exchange_harness import make_config

T = "60=20261127-00:00:00"  # TransactTime, required by FIX 4.4 on D, F and G


def new_order(cl: str, side: str, qty: int, price, symbol: str = "T0", tif: str = "1", ord_type: str = "2") -> str:
    price_field = f"|44={price}" if price is not None else ""
    return f"35=D|11={cl}|55={symbol}|54={side}|{T}|38={qty}|40={ord_type}{price_field}|59={tif}"


def binary_fills(session, count: int):
    """(price, qty) of the next `count` fills the exchange reports to a binary session."""
    out = []
    while len(out) < count:
        r = session.recv()
        if isinstance(r, w.ExecutionReport) and r.exec_type == 3:
            out.append((r.last_price, r.last_qty))
    return out


def binary_report(session):
    while True:
        r = session.recv()
        if isinstance(r, w.ExecutionReport):
            return r


def test_fix_client_trades_with_a_binary_trader(fix_venue):
    fix = fix_venue.client()
    trader = fix_venue.exchange.logon(3, heartbeat_ms=60000)  # a nanotick client on the binary protocol

    # A resting buy: acknowledged with the venue's order id.
    fix.send(new_order("A1", "1", 10, 100))
    new = fix.report("A1", "0")
    assert (new["39"], new["151"], new["14"], new["38"], new["44"]) == ("0", "10", "0", "10", "100")
    assert new["37"] != "NONE" and new["17"].startswith("E")

    # The binary trader sells 4 into it: a partial fill at the resting price.
    trader.send(w.NewOrder(client_order_id=1, instrument=0, side=w.SELL, order_type=w.IOC, price=100, qty=4))
    fill = fix.report("A1", "F")
    assert (fill["39"], fill["31"], fill["32"], fill["14"], fill["151"]) == ("1", "100", "4", "4", "6")
    assert float(fill["6"]) == 100.0

    # Replace: new price and total quantity; the new ClOrdID names the order from now on.
    fix.send(f"35=G|11=A2|41=A1|55=T0|54=1|{T}|38=10|40=2|44=101|59=1")
    replaced = fix.report("A2", "5")
    assert (replaced["41"], replaced["44"], replaced["38"], replaced["151"], replaced["14"], replaced["39"]) == \
        ("A1", "101", "10", "6", "4", "1")
    assert replaced["37"] == new["37"]  # the venue modifies in place: the same order

    # The rest fills at the new price: AvgPx over both fills.
    trader.send(w.NewOrder(client_order_id=2, instrument=0, side=w.SELL, order_type=w.IOC, price=101, qty=6))
    done = fix.report("A2", "F")
    assert (done["39"], done["31"], done["32"], done["14"], done["151"]) == ("2", "101", "6", "10", "0")
    assert abs(float(done["6"]) - (4 * 100 + 6 * 101) / 10) < 1e-9

    # The FIX fills are the exchange's: the binary side was told the same trades.
    assert binary_fills(trader, 2) == [(100, 4), (101, 6)]

    # A cancel of a filled order is too late; a cancel naming nothing is unknown.
    fix.send(f"35=F|11=C1|41=A2|55=T0|54=1|{T}")
    late = fix.app(lambda f: f.get("35") == "9" and f.get("11") == "C1", what="OrderCancelReject C1")
    assert (late["434"], late["102"], late["39"]) == ("1", "0", "2")
    fix.send(f"35=F|11=C2|41=NOSUCH|55=T0|54=1|{T}")
    unknown = fix.app(lambda f: f.get("35") == "9" and f.get("11") == "C2", what="OrderCancelReject C2")
    assert (unknown["102"], unknown["37"]) == ("1", "NONE")

    # A resting sell, cancelled on request: the cancel's ClOrdID, OrigClOrdID the order's.
    fix.send(new_order("S1", "2", 5, 200))
    fix.report("S1", "0")
    fix.send(f"35=F|11=C3|41=S1|55=T0|54=2|{T}")
    cancelled = fix.report("C3", "4")
    assert (cancelled["41"], cancelled["39"], cancelled["151"]) == ("S1", "4", "0")

    # IOC with nothing to trade against: New, then the rest cancelled with the reason.
    fix.send(new_order("I1", "1", 3, 1, tif="3"))
    fix.report("I1", "0")
    ioc = fix.report("I1", "4")
    assert "IOC" in ioc["58"]

    # FOK that cannot fill completely: nothing trades.
    trader.send(w.NewOrder(client_order_id=3, instrument=0, side=w.SELL, order_type=w.LIMIT, price=150, qty=2))
    assert binary_report(trader).exec_type == 1
    fix.send(new_order("K1", "1", 5, 150, tif="4"))
    fok = fix.app(lambda f: f.get("11") == "K1" and f.get("150") in ("4", "8"), what="FOK K1's end")
    assert fok["14"] == "0" and fok["39"] in ("4", "8")

    # Market order: trades at the resting price, no Price field needed.
    fix.send(new_order("M1", "1", 2, None, ord_type="1", tif="3"))
    market = fix.report("M1", "F")
    assert (market["31"], market["32"], market["39"]) == ("150", "2", "2")


def test_gateway_and_venue_refusals(fix_venue):
    fix = fix_venue.client()
    fix.send(new_order("R1", "1", 10, 100))
    fix.report("R1", "0")

    def rejected(cl: str):
        r = fix.report(cl, "8")
        assert r["39"] == "8"
        return r

    # Refused by the gateway, before the venue: a ClOrdID used before, an unknown symbol,
    # a price that is not a whole number of the price unit, a side and an OrdType nanotick has not.
    fix.send(new_order("R1", "1", 1, 100))
    assert rejected("R1")["103"] == "6"
    fix.send(new_order("R2", "1", 1, 100, symbol="NOPE"))
    assert rejected("R2")["103"] == "1"
    fix.send(new_order("R3", "1", 1, "100.5"))
    assert "whole number" in rejected("R3")["58"]
    fix.send(new_order("R4", "5", 1, 100))  # sell short
    assert rejected("R4")["103"] == "11"
    fix.send(new_order("R5", "1", 1, 100, ord_type="3"))  # stop
    assert rejected("R5")["103"] == "11"
    fix.send(new_order("R6", "1", 1, 100, tif="6"))  # good till date
    assert "TimeInForce" in rejected("R6")["58"]
    # Refused by the venue: its reason in Text.
    fix.send(new_order("V1", "1", 1, 7, symbol="T1"))  # T1's tick is 5
    assert "tick" in rejected("V1")["58"]
    fix.send(new_order("V2", "1", 1, 2_000_000))  # above T0's band
    assert rejected("V2")["103"] == "99"

    # The R1 order survived all that and still answers to its name.
    fix.send(f"35=G|11=R1b|41=R1|55=T0|54=1|{T}|38=10|40=2|44=100|59=1")
    no_change = fix.app(lambda f: f.get("35") == "9" and f.get("11") == "R1b", what="replace reject")
    assert no_change["434"] == "2" and no_change["39"] == "0"
    # A replace may not change the side.
    fix.send(f"35=G|11=R1c|41=R1|55=T0|54=2|{T}|38=10|40=2|44=99|59=1")
    assert "Side" in fix.app(lambda f: f.get("35") == "9" and f.get("11") == "R1c", what="side change")["58"]

    # An application message the gateway does not handle: BusinessMessageReject, Unsupported Message Type.
    fix.send(f"35=H|11=R1|55=T0|54=1")  # OrderStatusRequest
    bmr = fix.app(lambda f: f.get("35") == "j", what="BusinessMessageReject")
    assert bmr["380"] == "3"
    # A NewOrderSingle without its Symbol breaks the data dictionary: session-level Reject, tag named.
    fix.send(f"35=D|11=R7|54=1|{T}|38=1|40=2|44=100")
    reject = fix.admin(lambda f: f.get("35") == "3", what="session Reject")
    assert (reject["371"], reject["373"]) == ("55", "1")
    # ... and the session goes on.
    fix.send(new_order("R8", "1", 1, 100))
    fix.report("R8", "0")


def test_gateway_over_shared_memory(tmp_path, fix_venue_factory):
    """The gateway's venue sessions over the exchange's shared-memory transport: the same session code."""
    venue = fix_venue_factory(make_config(tmp_path), gateway_args=["--transport", "shm"])
    fix = venue.client()
    trader = venue.exchange.logon(3, heartbeat_ms=60000)
    fix.send(new_order("H1", "2", 3, 500))
    fix.report("H1", "0")
    trader.send(w.NewOrder(client_order_id=1, instrument=0, side=w.BUY, order_type=w.IOC, price=500, qty=3))
    filled = fix.report("H1", "F")
    assert (filled["39"], filled["32"], filled["31"]) == ("2", "3", "500")
    assert binary_fills(trader, 1) == [(500, 3)]
