"""tools/doctor's runner roles of the trader (tools/doctor/layout.py RUNNERS)
held to what the binary accepts: in each [threads] mode, a [threads.<role>]
table for every role the doctor knows of that mode is taken (the trader
starts), and one for a role of the other mode only is refused, naming it.
(The exchange's roles are checked against its threads' names:
tests/integration/exchange/test_described_by_binaries.py.)"""

from __future__ import annotations

import signal

import pytest

from tests.integration.trader.trader_harness import TraderSpec, market_maker_instruments
from tools.doctor.layout import RUNNERS


def spec(config, mode: str, roles) -> TraderSpec:
    extra = {"threads": {"mode": mode}}
    extra.update({f"threads.{role}": {"idle": "backoff"} for role in roles})
    # No exchange: the trader starts ("ready") and retries its connection.
    return TraderSpec("roles", "market_maker", config.client(1), market_maker_instruments(), exchange_port=1,
                      extra=extra)


@pytest.mark.parametrize("mode", sorted(RUNNERS["trader"]))
def test_every_doctor_role_of_a_mode_is_a_runner_of_the_trader(binaries, start_trader, config, tmp_path, mode):
    config.write()
    proc = start_trader(spec(config, mode, RUNNERS["trader"][mode]).write(tmp_path))  # waits for "ready"
    assert proc.stop(signal.SIGINT) == 0, proc.describe()


# (mode, role): a role of another mode that `mode` lacks (today: compact's "receiver").
OTHER_MODE_ROLES = [(mode, role) for mode in sorted(RUNNERS["trader"]) for other, roles in RUNNERS["trader"].items()
                    if other != mode for role in roles if role not in RUNNERS["trader"][mode]]


@pytest.mark.parametrize("mode,role", OTHER_MODE_ROLES)
def test_a_role_of_the_other_mode_only_is_refused(binaries, start_trader, config, tmp_path, mode, role):
    config.write()
    proc = start_trader(spec(config, mode, [role]).write(tmp_path), wait=False)
    assert proc.wait_exit(10.0) == 2, proc.describe()
    assert any("config error" in line and role in line for line in proc.stderr_text().splitlines()), proc.describe()
