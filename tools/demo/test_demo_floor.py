"""Tests of the demo's loopback floor (demo_floor.py, the floor's console
row, --no-floor): the floor is started on the exchange copy's group, its
summary is checked for the keys the block needs, its status line becomes an
aligned row, and the summary's "beside the loopback floor" block shows the
floor's figures from counters/floor.txt, with "n/a" for ours when the run
has no telemetry (tools/report's tests check our figures and the ratios).
"""

from __future__ import annotations

import pathlib
import tomllib
import re

import pytest

from tools.demo import demo_plan
from tools.demo import demo_console as dcon
from tools.demo import demo_floor as dfl
from tools.demo.demo_errors import DemoError

FLOOR_LINE = ("nanotick-floor: floor: tick-to-trade floor p50 3.21 us p99 10.50 us (1234), "
              "round trip floor p50 14.02 us p99 40.96 us (2999)")

FLOOR_SUMMARY = """tick_to_trade_floor.count 1234
tick_to_trade_floor.p50_ns 3210
tick_to_trade_floor.p90_ns 5000
tick_to_trade_floor.p99_ns 10500
tick_to_trade_floor.p99.9_ns 20000
tick_to_trade_floor.max_ns 90000
tick_to_trade_floor.mean_ns 3900.500
tick_to_trade_floor.write_errors 0
round_trip_floor.count 2999
round_trip_floor.p50_ns 14020
round_trip_floor.p90_ns 20000
round_trip_floor.p99_ns 40960
round_trip_floor.p99.9_ns 80000
round_trip_floor.max_ns 300000
round_trip_floor.mean_ns 15000.000
round_trip_floor.pings 3000
"""

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_floor_runs_on_the_exchange_copy_with_a_status_line():
    args = dfl.floor_args(pathlib.Path("/b/nanotick-floor"), pathlib.Path("/run/configs/exchange.toml"))
    assert args == ["/b/nanotick-floor", "--config", "/run/configs/exchange.toml", "--status", "1", "--transport", "tcp",
                    "--idle", "backoff"]
    args = dfl.floor_args(pathlib.Path("/b/nanotick-floor"), pathlib.Path("/run/configs/exchange.toml"), "shm", "block")
    assert args[-4:] == ["--transport", "shm", "--idle", "block"]


def test_the_floors_trader_side_idles_like_the_traders():
    assert dfl.trader_engine_idle({"threads": {"mode": "compact", "idle": "block"}}) == "block"
    assert dfl.trader_engine_idle({"threads": {"idle": "block", "engine": {"idle": "spin"}}}) == "spin"
    assert dfl.trader_engine_idle({}) == "backoff"
    assert dfl.trader_engine_idle({"threads": {"idle": "block"}}, {"mode": "compact", "idle": "spin"}) == "spin"
    assert dfl.traders_idle(["block", "block"]) == "block"
    assert dfl.traders_idle(["block", "spin"]) == "backoff"  # they differ: the floor's default
    assert dfl.traders_idle(["yield"]) == "backoff"  # not one the floor takes
    assert dfl.traders_idle([]) == "backoff"


def test_the_shipped_demo_traders_and_exchange_block():
    for name in ("mm1", "mm2", "taker", "random"):
        data = tomllib.loads((REPO / "config" / f"trader-{name}.toml").read_text())
        assert dfl.trader_engine_idle(data) == "block", name
    assert tomllib.loads((REPO / "config" / "exchange.toml").read_text())["threads"]["idle"] == "block"


def test_a_complete_floor_summary_is_no_problem_and_a_missing_one_is_named():
    from tools.demo import demo_summary as ds

    assert dfl.check_floor(ds.parse_counters(FLOOR_SUMMARY)) == []
    problems = dfl.check_floor({})
    assert len(problems) == 1 and "the floor's summary lacks tick_to_trade_floor.count" in problems[0]
    assert "counters/floor.txt" in problems[0]
    half = ds.parse_counters("\n".join(line for line in FLOOR_SUMMARY.splitlines() if "round_trip" not in line))
    assert "round_trip_floor.p50_ns" in dfl.check_floor(half)[0]


def test_the_floor_status_line_becomes_an_aligned_row():
    text = dcon.strip_prefix(FLOOR_LINE)
    st = dcon.floor_status(text)
    assert st == {"t2t_p50": "3.21", "t2t_p99": "10.50", "t2t_count": "1234", "rt_p50": "14.02", "rt_p99": "40.96",
                  "rt_count": "2999"}
    assert dcon.is_status(text)
    row = dcon.format_row("floor", text)
    assert row.startswith("floor ") and "t2t floor p50    3.21 us p99    10.50 us (1234)" in row, row
    assert "round trip floor p50   14.02 us p99    40.96 us (2999)" in row, row


def test_the_block_shows_the_floor_and_says_when_ours_are_missing(tmp_path):
    run = tmp_path / "run"
    (run / "counters").mkdir(parents=True)
    (run / "telemetry").mkdir()
    assert dfl.beside_floor_text(run) is None, "no floor file: no block"
    (run / "counters" / "floor.txt").write_text(FLOOR_SUMMARY)
    text = dfl.beside_floor_text(run)
    assert text is not None and text.startswith("Beside the loopback floor"), text
    rows = {re.split(r"\s{2,}", line.strip())[0]: line.split() for line in text.splitlines()[2:]}
    t2t_floor = next(v for k, v in rows.items() if k.startswith("floor: multicast recv"))
    assert t2t_floor[-5:] == ["1234", "3.21", "10.50", "20.00", "90.00"], text
    rt_floor = next(v for k, v in rows.items() if k.startswith("floor: TCP ping-pong"))
    assert rt_floor[-5:] == ["2999", "14.02", "40.96", "80.00", "300.00"], text
    ours = rows["tick-to-trade (all traders)"]
    assert ours[-5:] == ["n/a"] * 5, text
    assert "no end-to-end figures: no telemetry files" in text


def test_no_floor_skips_the_binary(tmp_path):
    args = demo_plan.parse_args(["--no-floor"])
    assert args.no_floor
    assert not demo_plan.parse_args([]).no_floor


def test_a_missing_floor_binary_says_to_build(tmp_path):
    with pytest.raises(DemoError) as e:
        demo_plan.find_binary(tmp_path / "bin", "nanotick-floor")
    assert "nanotick-floor is missing" in str(e.value) and "./nanotick build" in str(e.value)
