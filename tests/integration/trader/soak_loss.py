"""What the soak (test_soak.py) counts as lost: the execution reports the
exchange wrote to the traders' sessions (recorded by wire_tap.py) checked
against what the venue kept, read after the last restart and a clean stop.

Definitions (docs/RELIABILITY.md "Chaos soak" repeats them):

- An **acknowledged order** is an ExecutionReport with exec_type Accepted
  that the exchange wrote to a trader's session. It is **kept** when the
  final journal's replay (journal_reader.py through engine_model.py) produces the same report (same
  exec_seq, addressed to the same client, every wire field equal) and the
  journal record that replay says produced it, as `nanotick-journal dump`
  prints it, is a `new` of that client with that client_order_id,
  instrument, side, order type, quantity and (not for market orders) price.
  Otherwise it is a **lost ack**.
- A **fill** is an ExecutionReport with exec_type Fill written to a
  trader's session. It is **kept** when the final `trades.ledger`, as
  `nanotick-ledger list` prints it, has a trade whose exec seq on that
  report's side (buy_exec_seq for a buy, sell_exec_seq for a sell) is the
  report's exec_seq, with the same client, order id, client order id, price
  (the report's last_price) and quantity (last_qty). Otherwise it is a
  **lost fill**.
- Every other report to a trader (cancelled, modified, rejected), and the
  acks and fills too, must equal the replay's report with its exec_seq;
  those that do not are counted as **reports differing** (a report the
  venue cannot reproduce from its journal).
- The final journal must be clean (`nanotick-journal dump` says "no
  problems") after the clean stop.
- Venue-wide, every fill of the final replay (all clients, the checking
  clients' included) must be in the ledger as above: **replay fills
  missing from the ledger**.

A report the relay saw is one the exchange sent, whether or not a trader
killed a moment later read it: the exchange promised it, so it counts.

Not thread-safe (one test thread).
"""

from __future__ import annotations

import csv
import pathlib
import subprocess
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Set, Tuple

from tests.integration.exchange import engine_model as em
from tools import wire as w

from tests.integration.trader.wire_tap import HEADER as TAP_HEADER


@dataclass
class TapReport:
    session: int
    client: int
    r: w.ExecutionReport


@dataclass
class LossFigures:
    sessions: int = 0              # trader sessions the relay carried
    reports: int = 0               # execution reports the exchange wrote to the traders
    acks_checked: int = 0
    fills_checked: int = 0
    lost_acks: int = 0
    lost_fills: int = 0
    reports_differing: int = 0
    replay_fills: int = 0          # fills of the final replay, every client
    replay_fills_missing_from_ledger: int = 0
    journal_verdict: str = ""      # what `nanotick-journal dump` said of the journal ("... no problems")
    examples: List[str] = field(default_factory=list)  # the first few problems, for the failure message

    def problem(self, text: str) -> None:
        if len(self.examples) < 10:
            self.examples.append(text)

    def problems(self) -> int:
        journal_damaged = 0 if self.journal_verdict.endswith("no problems") else 1
        return self.lost_acks + self.lost_fills + self.reports_differing + self.replay_fills_missing_from_ledger + journal_damaged


def read_tap(path: pathlib.Path) -> List[TapReport]:
    """The relay's record; fails on a line that is not one of its reports."""
    lines = path.read_text().splitlines()
    if not lines or lines[0] != TAP_HEADER:
        raise AssertionError(f"{path}: does not start with the relay's header {TAP_HEADER!r}: {lines[:1]}")
    names = TAP_HEADER.split(",")
    out = []
    for n, line in enumerate(lines[1:], start=2):
        values = line.split(",")
        if len(values) != len(names) or not all(v.isdigit() for v in values):
            raise AssertionError(f"{path}:{n}: not {len(names)} unsigned integers: {line!r}")
        row = dict(zip(names, map(int, values)))
        session, client = row.pop("session"), row.pop("client")
        if client == 0:
            raise AssertionError(f"{path}:{n}: a report on session {session} before its Logon")
        out.append(TapReport(session, client, w.ExecutionReport(**row)))
    return out


def csv_rows(args: List[str], verdict: List[str]) -> Iterator[Dict[str, str]]:
    """Runs a nanotick tool that prints CSV with a header and yields its rows (streamed: a
    long soak's journal dump is large); then appends what it said on stderr to `verdict`.
    Fails, naming the command, on an exit other than 0 (3: the ledger has a torn tail)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    yield from csv.DictReader(proc.stdout)
    err = proc.stderr.read().strip()
    rc = proc.wait()
    assert rc == 0, f"{' '.join(args)} exited {rc}: {err}"
    verdict.append(err)


def check_loss(tap: List[TapReport], model: em.EngineModel, journal_tool: pathlib.Path, ledger_tool: pathlib.Path,
               journal_dir: pathlib.Path) -> LossFigures:
    f = LossFigures(sessions=len({t.session for t in tap}), reports=len(tap))
    by_seq = {r.exec_seq: r for r in model.reports}

    # Every report against the replay; the acks' journal records to look up.
    want_new: Dict[int, TapReport] = {}  # journal seq -> the ack the replay says it produced
    for t in tap:
        r = t.r
        want = by_seq.get(r.exec_seq)
        same = (want is not None and want.kind == em.EXEC and want.client == t.client
                and want.wire_fields() == {k: getattr(r, k) for k in want.wire_fields()})
        if r.exec_type == w.EXEC_ACCEPTED:
            f.acks_checked += 1
            if same:
                want_new[want.request_seq] = t
            else:
                f.lost_acks += 1
                f.problem(f"ack exec_seq {r.exec_seq} to client {t.client} (order {r.order_id}, coid {r.client_order_id}): "
                          f"the final journal's replay has {want}")
        elif r.exec_type == w.EXEC_FILL:
            f.fills_checked += 1
        if not same:
            f.reports_differing += 1
            f.problem(f"client {t.client} session {t.session} received {r}; the replay has {want}")

    found: Set[int] = set()
    verdict: List[str] = []
    for row in csv_rows([str(journal_tool), "dump", str(journal_dir)], verdict):
        seq = int(row["seq"])
        t = want_new.get(seq)
        if t is None or row["status"] != "good":
            continue
        r = t.r
        got = (row["type"], int(row["client"]), int(row["client_order_id"]), int(row["instrument"]), int(row["side"]),
               int(row["order_type"]), int(row["qty"]), int(row["price"]) if r.order_type != w.MARKET else 0)
        expect = ("new", t.client, r.client_order_id, r.instrument, r.side, r.order_type, r.order_qty,
                  r.price if r.order_type != w.MARKET else 0)
        if got == expect:
            found.add(seq)
        else:
            f.problem(f"ack exec_seq {r.exec_seq}: journal seq {seq} is {row}, expected {expect}")
    f.journal_verdict = verdict[0]
    if not f.journal_verdict.endswith("no problems"):
        f.problem(f"the final journal is not clean: {f.journal_verdict}")
    for seq, t in want_new.items():
        if seq not in found:
            f.lost_acks += 1
            if not any(f"journal seq {seq} " in e for e in f.examples):
                f.problem(f"ack exec_seq {t.r.exec_seq} to client {t.client}: journal seq {seq} is not in the dump")

    # The ledger, by the exec seq of each side: (client, order id, client order id, price, qty).
    sides: Dict[int, Tuple[int, int, int, int, int]] = {}
    for row in csv_rows([str(ledger_tool), "list", str(journal_dir)], []):
        price, qty = int(row["price"]), int(row["qty"])
        for side in ("buy", "sell"):
            seq = int(row[f"{side}_exec_seq"])
            value = (int(row[f"{side}_client"]), int(row[f"{side}_order_id"]), int(row[f"{side}_client_order_id"]), price, qty)
            if seq in sides:
                f.problem(f"ledger: exec seq {seq} on two trades: {sides[seq]} and {value}")
                f.replay_fills_missing_from_ledger += 1  # a duplicate is as wrong as a gap
            sides[seq] = value

    def in_ledger(client: int, exec_seq: int, order_id: int, coid: int, price: int, qty: int) -> bool:
        return sides.get(exec_seq) == (client, order_id, coid, price, qty)

    for t in tap:
        r = t.r
        if r.exec_type == w.EXEC_FILL and not in_ledger(t.client, r.exec_seq, r.order_id, r.client_order_id, r.last_price, r.last_qty):
            f.lost_fills += 1
            f.problem(f"fill exec_seq {r.exec_seq} to client {t.client} (order {r.order_id}, {r.last_qty} at {r.last_price}): "
                      f"the ledger has {sides.get(r.exec_seq)}")
    for r in model.reports:
        if r.kind == em.EXEC and r.exec_type == w.EXEC_FILL:
            f.replay_fills += 1
            if not in_ledger(r.client, r.exec_seq, r.order_id, r.client_order_id, r.last_price, r.last_qty):
                f.replay_fills_missing_from_ledger += 1
                f.problem(f"replay fill exec_seq {r.exec_seq} (client {r.client}, order {r.order_id}): the ledger has {sides.get(r.exec_seq)}")
    return f
