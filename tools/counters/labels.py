"""The counter labels the Python tools read by name (the demo's console rows
and summary), with what each counts: the one place the tools name them.

The binaries own the labels (each counter is placed under its label in the
counters file, docs/TELEMETRY.md "The counters file"), so every file carries
its own: a tool that lists counters reads them from the file (tools.counters)
and names none. The few a tool must pick out by name are here, and the
integration tests hold them to the files real binaries write
(tests/integration/exchange/test_described_by_binaries.py,
tests/integration/trader/test_trader_counters.py): a label renamed in C++
fails there, not as a silent 0 in a summary.
"""

from __future__ import annotations

from typing import Dict, Iterable, List

EXCHANGE: Dict[str, str] = {
    "requests_sequenced": "requests the sequencer numbered, in journal order (the console's req/s)",
    "messages_in": "order-entry messages received, every session",
    "messages_out": "order-entry messages sent, every session",
    "sessions_live": "sessions logged on now (a gauge)",
}
EXCHANGE_OPTIONAL: Dict[str, str] = {
    "md.incremental.messages": "market data messages published on the incremental channel (when it runs)",
}
# Families: one counter per queue, per client account; read by prefix.
EXCHANGE_PREFIXES: Dict[str, str] = {
    "queue.": "depth of each queue between the exchange's threads (gauges)",
}

TRADER: Dict[str, str] = {
    "session.logged_on": "1 while the order-entry session is logged on (a gauge)",
    "md.books_live": "books built from market data and current (a gauge)",
    "md.instruments": "instruments the trader follows (a gauge)",
    "fills": "fills the trader received",
    "volume": "quantity the trader traded, every instrument",
    "pnl.realised": "realised profit and loss, price units (a gauge)",
    "pnl.total": "realised plus unrealised, marked to the fair price (a real)",
    "orders.placed": "new orders sent",
    "orders.modifies": "modify requests sent",
    "orders.cancels": "cancel requests sent",
    "tick_to_trade_ns.count": "market data ticks that led to an order",
    "tick_to_trade_ns.p50": "median tick-to-trade, ns",
    "tick_to_trade_ns.p99": "99th percentile tick-to-trade, ns",
}
TRADER_PREFIXES: Dict[str, str] = {
    "risk.blocked.": "orders the risk manager refused, one counter per reason",
}

# The summary's columns and totals, and what a console row's rate counts.
TRADER_SUMMARY = ("fills", "volume", "pnl.realised", "pnl.total", "orders.placed", "orders.modifies", "orders.cancels",
                  "tick_to_trade_ns.p50", "tick_to_trade_ns.p99", "tick_to_trade_ns.count")
EXCHANGE_SUMMARY = ("requests_sequenced", "messages_in", "messages_out")
RATE_OF = {
    "exchange": ("requests_sequenced",),
    "trader": ("orders.placed", "orders.modifies", "orders.cancels"),
}


def missing(labels: Iterable[str], named: Dict[str, str], prefixes: Dict[str, str]) -> List[str]:
    """What `named` and `prefixes` ask for that `labels` (a counters file's) lacks."""
    have = set(labels)
    out = [label for label in named if label not in have]
    out += [prefix + "*" for prefix in prefixes if not any(label.startswith(prefix) for label in have)]
    return out
