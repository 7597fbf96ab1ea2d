"""The trader's runner roles as it describes them (--describe, which
tools/doctor reads) held to what its config loader accepts: in each
[threads] mode, a [threads.<role>] table for every described role of that
mode is taken (the trader starts), and one for a role of the other mode
only is refused, naming it.
(The exchange's roles are checked against its threads' names:
tests/integration/exchange/test_described_by_binaries.py.)"""

from __future__ import annotations

import signal

import pytest

from tests.integration.trader.trader_harness import TraderSpec, market_maker_instruments
from tests.integration.trader.trader_harness import TRADER_BINARY
from tools.doctor.roles import RolesUnavailable, roles_of

try:  # mode -> roles; without a built trader there is nothing to hold them to (its tests skip)
    RUNNERS = roles_of("trader", TRADER_BINARY.parent.parent).runners
except RolesUnavailable:
    RUNNERS = {}


def spec(config, mode: str, roles) -> TraderSpec:
    extra = {"threads": {"mode": mode}}
    extra.update({f"threads.{role}": {"idle": "backoff"} for role in roles})
    # No exchange: the trader starts ("ready") and retries its connection.
    return TraderSpec("roles", "market_maker", config.client(1), market_maker_instruments(), exchange_port=1,
                      extra=extra)


@pytest.mark.parametrize("mode", sorted(RUNNERS))
def test_every_doctor_role_of_a_mode_is_a_runner_of_the_trader(binaries, start_trader, config, tmp_path, mode):
    config.write()
    proc = start_trader(spec(config, mode, RUNNERS[mode]).write(tmp_path))  # waits for "ready"
    assert proc.stop(signal.SIGINT) == 0, proc.describe()


# (mode, role): a role of another mode that `mode` lacks (today: compact's "receiver").
OTHER_MODE_ROLES = [(mode, role) for mode in sorted(RUNNERS) for other, roles in RUNNERS.items()
                    if other != mode for role in roles if role not in RUNNERS[mode]]


@pytest.mark.parametrize("mode,role", OTHER_MODE_ROLES)
def test_a_role_of_the_other_mode_only_is_refused(binaries, start_trader, config, tmp_path, mode, role):
    config.write()
    proc = start_trader(spec(config, mode, [role]).write(tmp_path), wait=False)
    assert proc.wait_exit(10.0) == 2, proc.describe()
    assert any("config error" in line and role in line for line in proc.stderr_text().splitlines()), proc.describe()
