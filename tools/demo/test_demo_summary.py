"""Tests of demo_summary.py: the processes' "key value" summaries are read,
a trader whose fills differ from the exchange's count for its client (or a
missing summary) is a problem the demo reports, and the table shows each
trader's figures.
"""

from __future__ import annotations

from tools.demo import demo_summary as ds

TRADER = """position.NTK1.qty 19
position.NTK1.unrealised -293.500000
pnl.realised -2818
pnl.unrealised -286.000000
pnl.total -3104.000000
volume 300
fills 41
orders.placed 33
orders.modifies 354
orders.cancels 4
risk.allowed 380
risk.blocked.max position 2
risk.blocked.price band 3
tick_to_trade_ns.count 353
tick_to_trade_ns.p50 22143
tick_to_trade_ns.p99 346111
"""

EXCHANGE = """requests_sequenced 966
messages_in 970
messages_out 1187
logon_reject.bad credentials 0
client.1.fills 41
client.4.fills 41
md.incremental.messages 1905
"""


def test_counters_are_read_with_spaces_in_keys_and_signed_reals():
    c = ds.parse_counters(EXCHANGE + "not a counter line\n")
    assert c["logon_reject.bad credentials"] == "0"
    assert c["client.4.fills"] == "41"
    t = ds.parse_counters(TRADER)
    assert t["pnl.total"] == "-3104.000000" and t["position.NTK1.unrealised"] == "-293.500000"
    assert "not a counter" not in " ".join(c)


def test_fills_that_agree_are_no_problem():
    t = ds.TraderResult("mm1", 1, ds.parse_counters(TRADER))
    assert t.risk_blocks == 5
    assert ds.check([t], ds.parse_counters(EXCHANGE)) == []


def test_fills_that_disagree_are_a_problem_naming_both_counts():
    t = ds.TraderResult("mm2", 2, ds.parse_counters(TRADER))  # the exchange has no fills for client 2
    problems = ds.check([t], ds.parse_counters(EXCHANGE))
    assert len(problems) == 1
    assert "mm2" in problems[0] and "41 fills" in problems[0] and "the exchange 0" in problems[0]


def test_missing_summaries_are_problems():
    t = ds.TraderResult("taker", 3, {})
    problems = ds.check([t], {})
    assert any("exchange's summary lacks requests_sequenced" in p for p in problems), problems
    assert any("trader taker's summary lacks fills" in p for p in problems), problems


def test_table_shows_each_trader_and_the_exchange():
    ex = ds.parse_counters(EXCHANGE)
    traders = [ds.TraderResult("mm1", 1, ds.parse_counters(TRADER)), ds.TraderResult("taker", 3, {})]
    text = ds.summary_text(traders, ex, {1: "mm1", 4: "random"}, ["a problem"])
    lines = text.splitlines()
    header = lines[0].split()
    assert header[:3] == ["trader", "client", "fills"]
    mm1 = lines[2].split()
    assert mm1[:5] == ["mm1", "1", "41", "41", "300"]
    assert mm1[5:11] == ["-2818", "-3104.0", "33", "354", "4", "5"]
    assert mm1[11:] == ["22.14", "346.11", "353"]
    assert lines[3].split()[:3] == ["taker", "3", "-"]
    assert "exchange: 966 requests sequenced, messages in 970, out 1187, market data messages 1905" in text
    assert "exchange fills per client: 1 (mm1) 41, 4 (random) 41" in text
    assert "PROBLEM: a problem" in text


def test_table_columns_are_aligned():
    t = ds.format_table(["a", "long header"], [["x", "1"], ["yyyy", "22"]])
    lines = t.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[2] == "x               1"
