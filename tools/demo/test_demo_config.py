"""Tests of demo_config.py: the demo's checks of trader configs against the
exchange config (on the shipped configs and on broken copies of them), and
the config copies it writes (keys rewritten in place, verified by parsing).
No process is started.
"""

from __future__ import annotations

import pathlib
import tomllib

import pytest

from tools.demo import demo_config as dc
from tools.demo.demo_errors import EXIT_CANNOT_START, DemoError

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_TRADERS = ["mm1", "mm2", "taker", "random"]


def exchange() -> dc.ExchangeSpec:
    return dc.load_exchange(ROOT / "config" / "exchange.toml")


def copy_config(src: pathlib.Path, dst_dir: pathlib.Path, replace=()) -> pathlib.Path:
    text = src.read_text()
    for old, new in replace:
        assert old in text, f"{old!r} not in {src}"
        text = text.replace(old, new, 1)
    out = dst_dir / src.name
    out.write_text(text)
    return out


def refused(fn, *needles: str) -> str:
    with pytest.raises(DemoError) as e:
        fn()
    assert e.value.exit_code == EXIT_CANNOT_START
    for n in needles:
        assert n in str(e.value), f"{n!r} not in the error: {e.value}"
    return str(e.value)


def test_shipped_trader_configs_agree_with_the_shipped_exchange_config():
    traders = dc.load_traders(ROOT, DEFAULT_TRADERS, exchange())
    assert [t.name for t in traders] == DEFAULT_TRADERS
    assert sorted(t.client_id for t in traders) == [1, 2, 3, 4]
    assert [t.process for t in traders] == [f"trader-{n}" for n in DEFAULT_TRADERS]


def test_unknown_trader_name_is_refused_naming_its_file_and_the_known_ones():
    msg = refused(lambda: dc.load_traders(ROOT, ["mm1", "nope"], exchange()), "nope",
                  str(ROOT / "config" / "trader-nope.toml"), "does not exist")
    for known in DEFAULT_TRADERS:
        assert known in msg


def test_a_trader_listed_twice_is_refused():
    refused(lambda: dc.load_traders(ROOT, ["mm1", "mm1"], exchange()), "'mm1' is listed twice")


def test_two_traders_of_one_client_are_refused(tmp_path):
    other = copy_config(ROOT / "config" / "trader-mm2.toml", tmp_path,
                        [("client_id = 2", "client_id = 1"), ("demo-mm2-f9a7f37633f49d84", "demo-mm1-8f8b6a269496be68")])
    refused(lambda: dc.load_traders(ROOT, ["mm1", str(other)], exchange()), "both client 1")


def test_two_traders_of_one_name_are_refused(tmp_path):
    other = copy_config(ROOT / "config" / "trader-mm2.toml", tmp_path, [('name = "mm2"', 'name = "mm1"')])
    refused(lambda: dc.load_traders(ROOT, ["mm1", str(other)], exchange()), 'both have [trader] name = "mm1"')


def test_client_unknown_to_the_exchange_config_is_refused(tmp_path):
    bad = copy_config(ROOT / "config" / "trader-mm1.toml", tmp_path, [("client_id = 1", "client_id = 9")])
    refused(lambda: dc.load_traders(ROOT, [str(bad)], exchange()), "session.client_id", "client 9", "1 mm1")


def test_api_key_not_matching_the_credential_is_refused(tmp_path):
    bad = copy_config(ROOT / "config" / "trader-mm1.toml", tmp_path,
                      [("demo-mm1-8f8b6a269496be68", "demo-mm1-0000000000000000")])
    refused(lambda: dc.load_traders(ROOT, [str(bad)], exchange()), "session.api_key", "client 1")


def test_symbol_unknown_to_the_exchange_config_is_refused(tmp_path):
    bad = copy_config(ROOT / "config" / "trader-taker.toml", tmp_path, [('symbol = "NTK2"', 'symbol = "NOPE"')])
    refused(lambda: dc.load_traders(ROOT, [str(bad)], exchange()), "instruments[1].symbol", "NOPE", "NTK1, NTK2")


def test_invalid_toml_is_refused_with_its_path(tmp_path):
    bad = tmp_path / "trader-broken.toml"
    bad.write_text("[trader\nname = 1\n")
    refused(lambda: dc.load_traders(ROOT, [str(bad)], exchange()), str(bad), "not valid TOML")


def test_exchange_config_without_clients_is_refused(tmp_path):
    ex = tmp_path / "exchange.toml"
    ex.write_text('[[instruments]]\nsymbol = "X"\n')
    refused(lambda: dc.load_exchange(ex), "no [[clients]]")


def test_trader_source_takes_names_and_paths(tmp_path):
    assert dc.trader_source(ROOT, "mm1") == ("mm1", ROOT / "config" / "trader-mm1.toml")
    path = tmp_path / "trader-fast.toml"
    assert dc.trader_source(ROOT, str(path)) == ("fast", path.resolve())
    assert dc.trader_source(ROOT, str(tmp_path / "other.toml"))[0] == "other"
    refused(lambda: dc.trader_source(ROOT, "bad name"), "'bad name' is not a trader name")


def test_rewrite_replaces_inserts_and_appends_keeping_the_rest():
    text = "# top comment\n[a]\nx = 1  # why x\ny = \"keep\"\n\n# comment before b\n[b]\nz = 2\n[[arr]]\nq = 1\n"
    data = tomllib.loads(text)
    out = dc.rewrite(text, data, {("a", "x"): 5, ("a", "new"): "v", ("c", "k"): 1.5}, pathlib.Path("t.toml"))
    parsed = tomllib.loads(out)
    assert parsed == {"a": {"x": 5, "y": "keep", "new": "v"}, "b": {"z": 2}, "arr": [{"q": 1}], "c": {"k": 1.5}}
    lines = out.splitlines()
    assert "# top comment" in lines and "# comment before b" in lines
    # The new key goes after the table's last key, not after the comment that introduces the next table.
    assert lines.index(f"new = \"v\"  {dc.MARK}") == lines.index(f"y = \"keep\"") + 1
    assert f"x = 5  {dc.MARK}" in lines


def test_rewrite_refuses_what_it_cannot_change_in_place():
    # The key lives in an inline table: a line-based rewrite would make a second [a] table.
    text = 'a = { x = 1 }\n'
    refused(lambda: dc.rewrite(text, tomllib.loads(text), {("a", "x"): 2}, pathlib.Path("inline.toml")),
            "inline.toml", "a.x")


def test_exchange_copy_moves_the_journal_into_the_run_dir(tmp_path):
    ex = exchange()
    out = dc.write_exchange_copy(ex, tmp_path, tmp_path / "journal")
    assert out == tmp_path / "exchange.toml"
    parsed = tomllib.loads(out.read_text())
    assert parsed["journal"]["dir"] == str(tmp_path / "journal")
    expected = tomllib.loads((ROOT / "config" / "exchange.toml").read_text())
    expected["journal"]["dir"] = str(tmp_path / "journal")
    assert parsed == expected
    assert out.read_text().startswith(f"# The nanotick demo's copy of {ROOT / 'config' / 'exchange.toml'}")


def test_trader_copy_points_at_the_exchange_copy_and_the_running_exchange(tmp_path):
    ex = exchange()
    mm1 = dc.load_traders(ROOT, ["mm1"], ex)[0]
    out = dc.write_trader_copy(mm1, tmp_path, ex, "127.0.0.1:45678")
    assert out == tmp_path / "trader-mm1.toml"
    parsed = tomllib.loads(out.read_text())
    assert parsed["trader"]["exchange_config"] == "exchange.toml"
    assert parsed["session"]["exchange"] == "127.0.0.1:45678"
    assert parsed["instruments"] == mm1.data["instruments"]
    assert parsed["session"]["api_key"] == mm1.data["session"]["api_key"]
    assert out.stat().st_mode & 0o777 == 0o600, oct(out.stat().st_mode)  # it holds the API key (issue 30)


def test_trader_copy_makes_market_data_addresses_it_names_follow_the_exchange(tmp_path):
    ex = exchange()
    src = copy_config(ROOT / "config" / "trader-mm1.toml", tmp_path,
                      [("[market_data]\n", '[market_data]\nincremental = "239.1.1.1:1"\n')])
    trader = dc.load_traders(ROOT, [str(src)], ex)[0]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    parsed = tomllib.loads(dc.write_trader_copy(trader, out_dir, ex, "127.0.0.1:1").read_text())
    assert parsed["market_data"]["incremental"] == ex.market_data["incremental"]
    assert "snapshot" not in parsed["market_data"]  # not named: the trader takes the exchange's


def test_trader_address_maps_the_wildcard_to_loopback():
    assert dc.trader_address("0.0.0.0:9100") == "127.0.0.1:9100"
    assert dc.trader_address("127.0.0.1:41000") == "127.0.0.1:41000"


def test_shm_run_gives_the_exchange_a_socket_path_and_the_traders_the_transport(tmp_path):
    ex = exchange()
    path = dc.shm_path_for(tmp_path)
    md_path = dc.shm_path_for(tmp_path, dc.MD_SHM_SOCKET)
    assert path == str(tmp_path / dc.SHM_SOCKET) and md_path == str(tmp_path / dc.MD_SHM_SOCKET)
    out = dc.write_exchange_copy(ex, tmp_path, tmp_path / "journal", (path, md_path))
    parsed = tomllib.loads(out.read_text())
    assert parsed["server"]["shm_path"] == path and parsed["market_data"]["shm_path"] == md_path
    mm1 = dc.load_traders(ROOT, ["mm1"], ex)[0]
    parsed = tomllib.loads(dc.write_trader_copy(mm1, tmp_path, ex, "127.0.0.1:1", "shm").read_text())
    assert parsed["trader"]["transport"] == "shm"
    assert "exchange" not in parsed["session"]  # a TCP address: the trader refuses it with shm


def test_shm_socket_path_falls_back_to_tmp_when_the_run_dir_is_too_deep(tmp_path):
    deep = tmp_path / ("d" * 120)
    for name in (dc.SHM_SOCKET, dc.MD_SHM_SOCKET):
        path = dc.shm_path_for(deep, name)
        assert path.startswith("/tmp/nanotick-demo-") and path.endswith(name) and len(path.encode()) <= dc.UNIX_PATH_MAX


def test_shm_run_refuses_a_trader_config_that_names_a_tcp_address(tmp_path):
    ex = exchange()
    src = copy_config(ROOT / "config" / "trader-mm1.toml", tmp_path,
                      [("[session]\n", '[session]\nexchange = "127.0.0.1:9100"\n')])
    trader = dc.load_traders(ROOT, [str(src)], ex)[0]
    with pytest.raises(DemoError, match="session.exchange is a TCP address"):
        dc.write_trader_copy(trader, tmp_path, ex, "127.0.0.1:1", "shm")


def test_a_layouts_threads_go_into_the_copies_and_conflicting_tables_are_refused(tmp_path):
    ex = exchange()
    threads = {"mode": "dedicated", "idle": "spin", "cpus": [1, 2, 3, 4]}
    parsed = tomllib.loads(dc.write_exchange_copy(ex, tmp_path, tmp_path / "journal", None, threads).read_text())
    assert parsed["threads"] == threads
    mm1 = dc.load_traders(ROOT, ["mm1"], ex)[0]
    trader_threads = {"mode": "compact", "idle": "spin", "cpus": [5]}
    parsed = tomllib.loads(dc.write_trader_copy(mm1, tmp_path, ex, "127.0.0.1:1", "tcp", trader_threads).read_text())
    assert parsed["threads"] == trader_threads
    # A config pinning a runner itself would be pinned twice: refused, naming the table.
    (tmp_path / "own").mkdir()
    own = copy_config(ROOT / "config" / "exchange.toml", tmp_path / "own")
    own.write_text(own.read_text() + "\n[threads.critical]\ncpu = 1\n")
    with pytest.raises(DemoError, match=r"threads\.critical.*--layout compact"):
        dc.write_exchange_copy(dc.load_exchange(own), tmp_path / "own", tmp_path / "journal", None, threads)
