"""The end of a demo run: each process's final counters, read from its
counters file (counters/<process>.counters, docs/TELEMETRY.md "The counters
file"; the floor, a measuring tool, prints "key value" lines to
counters/floor.txt), checked for completeness and against each other (every
trader's fills equal the exchange's client.<id>.fills: both sides count the
same executions), and the summary table the demo prints.

Pure functions and plain data: thread-safe.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tools.counters import labels
from tools.counters.counters_file import CountersFileError, read
from tools.counters.summary_text import parse_counters  # noqa: F401 (also this module's API)

TRADER_KEYS = labels.TRADER_SUMMARY  # the labels, with their meanings: tools/counters/labels.py
EXCHANGE_KEYS = labels.EXCHANGE_SUMMARY


def read_counters(path: pathlib.Path) -> Dict[str, str]:
    try:
        return parse_counters(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return {}


def read_counters_file(path: pathlib.Path) -> Tuple[Dict[str, str], Optional[str]]:
    """A process's final counters as text values (what the "key value" lines held), and a
    problem when the file is unreadable or its process did not end cleanly (then its values
    are the last it wrote, not final)."""
    try:
        f = read(path)
    except CountersFileError as e:
        return {}, f"no counters: {e}"
    values = {c.label: (f"{c.value:.6f}" if isinstance(c.value, float) else str(c.value)) for c in f.counters}
    if f.status != "stopped":
        return values, f"{path.name}: its process is {f.status}, not stopped cleanly: the counters are not final"
    return values, None


@dataclass
class TraderResult:
    name: str
    client_id: int
    counters: Dict[str, str]

    def int(self, key: str) -> int:
        return int(self.counters.get(key, "0"))

    def real(self, key: str) -> float:
        return float(self.counters.get(key, "0"))

    @property
    def risk_blocks(self) -> int:
        return sum(int(v) for k, v in self.counters.items() if k.startswith("risk.blocked."))


def missing_keys(counters: Dict[str, str], keys: Sequence[str]) -> List[str]:
    return [k for k in keys if k not in counters]


def check(traders: List[TraderResult], exchange: Dict[str, str]) -> List[str]:
    """Problems with the summaries: one missing or incomplete, or a trader whose fills differ
    from the exchange's count for its client. Empty when all is well."""
    problems: List[str] = []
    missing = missing_keys(exchange, EXCHANGE_KEYS)
    if missing:
        problems.append(f"the exchange's summary lacks {', '.join(missing)} (counters/exchange.counters)")
    for t in traders:
        missing = missing_keys(t.counters, TRADER_KEYS)
        if missing:
            problems.append(f"trader {t.name}'s summary lacks {', '.join(missing)} (counters/trader-{t.name}.counters)")
            continue
        if not missing_keys(exchange, EXCHANGE_KEYS):
            ex_fills = int(exchange.get(f"client.{t.client_id}.fills", "0"))
            if t.int("fills") != ex_fills:
                problems.append(f"trader {t.name} counted {t.int('fills')} fills, the exchange {ex_fills} for its "
                                f"client {t.client_id}: they must agree (see both logs)")
    return problems


def account_checks(traders: List[TraderResult], exchange_out: Dict[str, str]) -> List[str]:
    """Problems reconciling the venue's accounts (the exchange's end-of-run
    balances, docs/CONTROLS.md) with each trader's own positions and PnL:
    position = opening + the trader's position.<SYM>.qty, and cash = opening
    + the sum over its instruments of realised - open_cost (the cash its fills
    moved, by the trader's own books). A trader without an account is skipped."""
    problems = []
    for t in traders:
        prefix = f"account.{t.client_id}."
        if prefix + "cash" not in exchange_out:
            continue
        c = t.counters
        symbols = sorted(k[len(prefix) + len("position."):] for k in exchange_out
                         if k.startswith(prefix + "position."))
        cash_flow = 0
        for sym in symbols:
            opening = int(exchange_out.get(f"{prefix}opening_position.{sym}", "0"))
            venue = int(exchange_out[f"{prefix}position.{sym}"])
            own = int(c.get(f"position.{sym}.qty", "0"))
            if venue != opening + own:
                problems.append(f"trader {t.name}: the venue holds {venue} {sym} for client {t.client_id} "
                                f"(opening {opening}), the trader counts a change of {own}: they must agree")
            cash_flow += int(c.get(f"position.{sym}.realised", "0")) - int(c.get(f"position.{sym}.open_cost", "0"))
        venue_cash = int(exchange_out[prefix + "cash"])
        opening_cash = int(exchange_out.get(prefix + "opening_cash", "0"))
        if venue_cash != opening_cash + cash_flow:
            problems.append(f"trader {t.name}: the venue's cash for client {t.client_id} is {venue_cash} (opening "
                            f"{opening_cash}), the trader's fills moved {cash_flow}: they must agree")
    return problems


def account_lines(exchange_out: Dict[str, str], client_names: Dict[int, str]) -> List[str]:
    """The venue's end-of-run balances per client with an account (the exchange's stdout)."""
    ids = sorted({int(k.split(".")[1]) for k in exchange_out if re.fullmatch(r"account\.\d+\.cash", k)})
    lines = []
    for cid in ids:
        p = f"account.{cid}."
        positions = ", ".join(f"{k[len(p) + 9:]} {v} (opening {exchange_out.get(p + 'opening_position.' + k[len(p) + 9:], '0')})"
                              for k, v in sorted(exchange_out.items()) if k.startswith(p + "position."))
        lines.append(f"venue account {cid} ({client_names.get(cid, '?')}): cash {exchange_out[p + 'cash']} "
                     f"(opening {exchange_out.get(p + 'opening_cash', '0')}), {positions}")
    return lines


def venue_rejects_line(exchange: Dict[str, str]) -> str:
    """The venue's own refusals (4xx, docs/CONTROLS.md) by reason, from the gateway's counters:
    the account checks' always, a block's or a halt's when there were any."""
    names = {400: "no account", 401: "instrument not permitted", 402: "client qty limit",
             403: "client notional limit", 404: "client collar", 405: "too many open orders",
             406: "insufficient cash", 407: "insufficient position", 408: "client blocked",
             409: "instrument halted"}
    codes = [c for c in range(400, 410) if c < 408 or exchange.get(f"engine_reject.{c}", "0") != "0"]
    parts = [f"{names[code]} {exchange.get(f'engine_reject.{code}', '0')}" for code in codes]
    total = sum(int(exchange.get(f"engine_reject.{code}", "0")) for code in codes)
    return f"venue rejects (account controls): {total}: " + ", ".join(parts)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns aligned: the first left, the others right (numbers)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _us(ns: str) -> str:
    return f"{int(ns) / 1000:.2f}"


def trader_table(traders: List[TraderResult], exchange: Dict[str, str]) -> str:
    headers = ("trader", "client", "fills", "exch fills", "volume", "realised PnL", "total PnL", "orders", "modifies",
               "cancels", "risk blocks", "t2t p50 us", "t2t p99 us", "t2t count")
    rows: List[Tuple[str, ...]] = []
    for t in traders:
        c = t.counters
        if missing_keys(c, TRADER_KEYS):
            rows.append((t.name, str(t.client_id)) + ("-",) * (len(headers) - 2))
            continue
        rows.append((t.name, str(t.client_id), c["fills"], exchange.get(f"client.{t.client_id}.fills", "0"),
                     c["volume"], c["pnl.realised"], f"{float(c['pnl.total']):.1f}", c["orders.placed"],
                     c["orders.modifies"], c["orders.cancels"], str(t.risk_blocks), _us(c["tick_to_trade_ns.p50"]),
                     _us(c["tick_to_trade_ns.p99"]), c["tick_to_trade_ns.count"]))
    return format_table(headers, rows)


def exchange_lines(exchange: Dict[str, str], client_names: Dict[int, str]) -> List[str]:
    if missing_keys(exchange, EXCHANGE_KEYS):
        return ["exchange: no complete summary (see counters/exchange.counters and logs/exchange.log)"]
    lines = [f"exchange: {exchange['requests_sequenced']} requests sequenced, messages in {exchange['messages_in']}, "
             f"out {exchange['messages_out']}"
             + (f", market data messages {exchange['md.incremental.messages']}"
                if "md.incremental.messages" in exchange else "")]
    fills = sorted((int(k.split(".")[1]), v) for k, v in exchange.items()
                   if re.fullmatch(r"client\.\d+\.fills", k))
    if fills:
        lines.append("exchange fills per client: " + ", ".join(
            f"{cid} ({client_names.get(cid, '?')}) {v}" for cid, v in fills))
    else:
        lines.append("exchange fills per client: none (nobody traded)")
    lines.append(venue_rejects_line(exchange))
    return lines


def summary_text(traders: List[TraderResult], exchange: Dict[str, str], client_names: Dict[int, str],
                 problems: Optional[List[str]] = None) -> str:
    parts = [trader_table(traders, exchange), ""] + exchange_lines(exchange, client_names)
    if problems:
        parts += [""] + [f"PROBLEM: {p}" for p in problems]
    return "\n".join(parts)
