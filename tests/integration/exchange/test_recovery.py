"""Recovery: under load from two pipelining clients, the exchange is killed with
SIGKILL at a random point, several times, and restarted on the same journal.
After each restart:

- the journal the killed process left is replayed through the independent
  model (engine_model.py); every report the clients received before the kill
  is in that replay with the same exec_seq and fields, and every order they saw
  acknowledged was accepted with the same order id (nothing acknowledged lost);
- the restarted exchange's books, as its snapshot channel publishes them,
  equal the replay's books order by order, and reflect exactly the replay's
  last market data seq and each instrument's last instrument_seq; the
  incremental channel continues at the next seq, and each instrument's
  messages at its next instrument_seq (gap-free within the run, and nothing
  published before a kill is missing from the replay's numbering);
- a cancel of an acknowledged order the replay has resting is answered
  Cancelled (not UnknownOrder), with the replay's next exec_seq, above every
  exec_seq acknowledged before the kill.

The kill points come from a seeded RNG (NANOTICK_TEST_SEED; printed on failure);
the timing of the load still varies from run to run.
"""

from __future__ import annotations

import os
import time

from tests.integration.exchange.chaos import chaos_config, run_chaos

KILLS = 5


def test_kill_9_under_load_then_restart_recovers_everything_acknowledged(start_exchange, tmp_path):
    seed = int(os.environ.get("NANOTICK_TEST_SEED", str(int(time.time()))))
    figures = run_chaos(start_exchange, chaos_config(tmp_path), seed, kills=KILLS)
    assert figures.kills == KILLS
