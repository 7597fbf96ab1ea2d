"""nanotick-fix-gateway's refusals, as the process: a bad command line or
config (exit 2), a venue it cannot log on to, an order map it cannot trust,
a data dictionary that is not there (exit 1) -- each with a message naming
what is wrong, and none leaving a gateway listening.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

import pytest

from tests.integration.exchange.exchange_harness import make_config
from tests.integration.fix.fix_harness import FIX_DIR, GATEWAY, free_port, write_gateway_config


def run(args, timeout=20):
    if not GATEWAY.exists():
        pytest.skip(f"{GATEWAY} is missing: build it with 'cmake --build build/release --target nanotick-fix-gateway'")
    return subprocess.run([str(GATEWAY)] + args, capture_output=True, text=True, timeout=timeout)


def test_bad_command_line_and_config(tmp_path):
    assert run([]).returncode == 2
    assert run(["--config", str(tmp_path / "missing.toml")]).returncode == 2
    config = make_config(tmp_path)
    config.write()
    path = write_gateway_config(tmp_path, config, {"CLIENT1": 1}, free_port())
    r = run(["--config", str(path), "--transport", "udp"])
    assert r.returncode == 2 and "transport" in r.stderr
    r = run(["--config", str(path), "--exchange", "localhost:1"])
    assert r.returncode == 2 and "error" in r.stderr
    # Beyond loopback only with allow_remote: the error names the file, the key, the value and the fix.
    good = path.read_text()
    path.write_text(good.replace('listen = "127.0.0.1:', 'listen = "0.0.0.0:'))
    r = run(["--config", str(path)])
    assert r.returncode == 2, r.stderr
    assert all(w in r.stderr for w in (str(path), "gateway.listen", '"0.0.0.0:', "allow_remote = true")), r.stderr
    # A session without its password's hash, or with one that is not a hash.
    path.write_text("\n".join(l for l in good.splitlines() if not l.startswith("password_hash")) + "\n")
    r = run(["--config", str(path)])
    assert r.returncode == 2 and "sessions[0].password_hash" in r.stderr and str(path) in r.stderr, r.stderr
    path.write_text(re.sub(r'password_hash = "[^"]*"', 'password_hash = "hunter2hunter2hunter2"', good))
    r = run(["--config", str(path)])
    assert r.returncode == 2 and "sessions[0].password_hash" in r.stderr and "./nanotick credential" in r.stderr, \
        r.stderr
    assert "hunter2hunter2hunter2" in r.stderr  # the value named: it is not a secret, the config holds no plaintext
    # An older config naming the exchange's trade ledger: the gateway asks the venue now, and says so.
    path.write_text(good.replace("[gateway]\n", '[gateway]\ntrade_ledger = "journal/trades.ledger"\n'))
    r = run(["--config", str(path)])
    assert r.returncode == 2, r.stderr
    assert all(w in r.stderr for w in (str(path), "gateway.trade_ledger", "asks the venue", "ReportsRequest")), r.stderr
    # Its runner's idle strategy from [threads], as the exchange's: one the gateway does not offer is refused.
    path.write_text(good + '\n[threads]\nidle = "block"\n')
    r = run(["--config", str(path)])
    assert r.returncode == 2 and "threads.idle" in r.stderr, r.stderr


def test_failures_at_start(tmp_path):
    config = make_config(tmp_path)
    config.write()
    path = write_gateway_config(tmp_path, config, {"CLIENT1": 1}, free_port())
    # No exchange at that address: the venue session never logs on.
    r = run(["--config", str(path), "--exchange", f"127.0.0.1:{free_port()}", "--logon-timeout-ms", "300"])
    assert r.returncode == 1 and "no venue logon within 300 ms" in r.stderr, r.stderr

    # An order map that does not parse: refused before anything else happens.
    store = tmp_path / "fix-store"
    store.mkdir(exist_ok=True)
    good = b"O 1 0 0 0 1 2 - 100 10 0 0 0 2:A1\n"
    (store / "CLIENT1-NANOTICK.orders").write_bytes(good + b"garbage\n")
    r = run(["--config", str(path), "--exchange", f"127.0.0.1:{free_port()}", "--logon-timeout-ms", "300"])
    assert r.returncode == 1 and f"corrupt record at byte {len(good)}" in r.stderr, r.stderr


def test_missing_data_dictionary(tmp_path, start_exchange_for_cli):
    exchange = start_exchange_for_cli(tmp_path)
    path = write_gateway_config(tmp_path, exchange.config, {"CLIENT1": 1}, free_port())
    path.write_text(path.read_text().replace(str(FIX_DIR / "FIX44.xml"), str(tmp_path / "FIX44.xml")))
    r = run(["--config", str(path), "--exchange", f"127.0.0.1:{exchange.port}"])
    assert r.returncode == 1 and "QuickFIX" in r.stderr and "FIX44.xml" in r.stderr, r.stderr
