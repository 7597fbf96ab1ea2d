"""What the exchange says about its config at start-up (issue 30; docs/EXCHANGE.md
"Config"): an address it could not use is a config error naming the file and
the key, exit 2, before anything listens; a demo credential (its API key public
in this repository) loads with a warning naming the client and the fix.
"""

from __future__ import annotations

import pathlib
import subprocess
import tomllib
from dataclasses import dataclass

from tools import wire as w
from tests.integration.exchange.exchange_harness import ClientSpec, make_config

SHIPPED = pathlib.Path(__file__).resolve().parents[3] / "config" / "exchange.toml"


def test_unusable_addresses_exit_2_naming_the_file_and_the_key(exchange_binary, tmp_path):
    # Each failed at start-up with exit 1, naming neither file nor key (the socket code's own error).
    cases = [
        ("server", "order_entry", "127.0.0.1", "found no ':'"),
        ("server", "order_entry", "127.0.0.1:70000", "port 70000 is out of range"),
        ("server", "order_entry", "localhost:9100", "host names are not resolved"),
        ("market_data", "interface", "eth0", "is not a dotted IPv4 address"),
        ("market_data", "incremental", "10.1.2.3:9201", "is not a multicast group"),
        ("market_data", "snapshot", "127.0.0.1:9202", "is not a multicast group"),
    ]
    for i, (table, key, value, words) in enumerate(cases):
        d = tmp_path / f"case{i}"
        d.mkdir()
        config = make_config(d)
        getattr(config, table)[key] = value
        path = config.write()
        p = subprocess.run([str(exchange_binary), "--config", str(path), "--journal-dir", str(d / "journal")],
                           capture_output=True, text=True, timeout=20, cwd=str(d))
        assert p.returncode == 2, (key, value, p.returncode, p.stderr)
        assert f"config error: {path}: {table}.{key}: \"{value}\"" in p.stderr, (key, value, p.stderr)
        assert words in p.stderr and "listening" not in p.stderr, (key, value, p.stderr)


@dataclass
class StoredCredentialClient(ClientSpec):
    """A client whose config line is a given stored credential (the demo's), not a fresh hash of its key."""

    stored: str = ""

    def credential(self) -> str:
        return self.stored


def test_a_demo_credential_loads_with_a_warning_naming_the_client(start_exchange, tmp_path):
    shipped = {c["name"]: c for c in tomllib.loads(SHIPPED.read_text())["clients"]}
    config = make_config(tmp_path, n_clients=2)
    # Client 2 is configured with the demo's "test" credential, whose key is config/keys/test.key.
    demo_key = (SHIPPED.parent / "keys" / "test.key").read_text().strip()
    config.clients[1] = StoredCredentialClient(id=2, name="c2", key=demo_key, stored=shipped["test"]["credential"])
    ex = start_exchange(config)
    with ex.logon(2) as demo, ex.logon(1) as other:  # the demo key does log on: a warning, not a refusal
        s = demo.send(w.NewOrder(client_order_id=1, instrument=0, side=w.BUY, order_type=w.LIMIT, price=10, qty=1))
        demo.expect(w.ExecutionReport, ref_seq=s, exec_type=w.EXEC_ACCEPTED)
        other.send(w.Heartbeat())
    ex.stop()
    warnings = [line for line in ex.stderr_text().splitlines() if "warning:" in line]
    assert len(warnings) == 1, ex.stderr_text()  # client 1's fresh credential is no demo one
    assert f"{config.path}: clients[1] (id 2)" in warnings[0], warnings
    assert '"test"' in warnings[0] and "public" in warnings[0], warnings
    assert "./nanotick credential" in warnings[0], warnings
