"""./nanotick fix-bench's short form runs end to end: both paths measured in the
same run, the JSON written with every round, the ratio printed; and its
refusals."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from tools.fixbench import fixbench

BIN = fixbench.ROOT / "build" / "release" / "bin"


@pytest.fixture
def binaries():
    for name in ("nanotick-exchange", "nanotick-fix-gateway", "nanotick-loadgen"):
        if not os.access(BIN / name, os.X_OK):
            pytest.skip(f"{BIN / name} is missing: run ./nanotick build")


def test_quick_run_measures_both_paths(binaries, tmp_path, capsys):
    assert fixbench.main(["--quick", "--run-dir", str(tmp_path / "run")]) == 0
    out = json.loads((tmp_path / "run" / "fixbench.json").read_text())
    assert len(out["rounds"]) == 1
    r = out["rounds"][0]
    assert r["fix"]["n"] == 100 and r["binary"]["n"] == 100  # 50 orders, each a new and a cancel
    for path in ("fix", "binary"):
        assert 0 < r[path]["p50_ns"] <= r[path]["p99_ns"] <= r[path]["p99_9_ns"] <= r[path]["max_ns"]
    assert set(out["gateway_time"]) == {"inbound", "outbound"}
    assert out["gateway_time"]["inbound"]["n"] >= 100 + 100  # the warm-up's and the round's requests
    assert "FIX / binary" in capsys.readouterr().out


def test_gateway_time_is_read_from_its_log():
    log = ("nanotick-fix-gateway: client 2: gateway time inbound (FIX request -> venue message written): n 10, "
           "p50 1500 ns, p99 4000 ns, p99.9 5000 ns, max 6000 ns\n")
    assert fixbench.gateway_time(log) == {"inbound": {"n": 10, "p50_ns": 1500, "p99_ns": 4000, "p99_9_ns": 5000,
                                                      "max_ns": 6000}}


def test_refusals(tmp_path):
    with pytest.raises(SystemExit) as e:
        fixbench.main(["--round-trips", "5"])
    assert e.value.code == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    assert fixbench.main(["--run-dir", str(tmp_path / "full")]) == 2


def test_percentiles_are_nearest_rank():
    p = fixbench.percentiles(list(range(1, 1001)))
    assert (p["p50_ns"], p["p99_ns"], p["p99_9_ns"], p["max_ns"]) == (500, 990, 999, 1000)
