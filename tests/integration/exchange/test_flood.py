"""Flood: one client (its own process, flood_client.py) sends order messages as
fast as it can. The rate limit throttles it (RateLimited session rejects, no
more acknowledgements than its token bucket allows, the session stays open),
and another client's acknowledgement round trips measured during the flood stay
bounded.

The bound: p99 of the other client's NewOrder -> acknowledgement round trip
below 50 ms. Generous on purpose: the machine has 2 cores shared by the
exchange, the flooder, this test and whatever else CI runs; an unthrottled or
unfair gateway (the flood read to exhaustion before the other session's turn)
shows up as hundreds of milliseconds or as timeouts, far above it. A bound on
wall-clock time: marked `timing`, so `./nanotick test` runs it alone after
the parallel pass (never beside the chaos soak; pytest.ini).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tools import wire as w
from tests.integration.exchange.exchange_harness import REPO, make_config

FLOOD_SECONDS = 2.0
RATE = 1000
BURST = 100
P99_BOUND_S = 0.050


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


@pytest.mark.timing
def test_flooding_client_is_throttled_and_does_not_delay_others(start_exchange, tmp_path):
    config = make_config(tmp_path)
    config.client(1).rate_limit_per_s = RATE
    config.client(1).rate_burst = BURST
    ex = start_exchange(config)
    with ex.logon(2) as probe:
        def round_trip(coid):
            t0 = time.perf_counter()
            s = probe.send(w.NewOrder(client_order_id=coid, instrument=1, side=w.SELL, order_type=w.IOC, price=100_000, qty=1))
            probe.expect(w.ExecutionReport, exec_type=w.EXEC_ACCEPTED, ref_seq=s, timeout=2.0)
            rtt = time.perf_counter() - t0
            probe.expect(w.ExecutionReport, exec_type=w.EXEC_CANCELLED, ref_seq=s, timeout=2.0)
            return rtt

        baseline = [round_trip(i) for i in range(1, 51)]
        flooder = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.exchange.flood_client", str(ex.port), "1", config.client(1).key, str(FLOOD_SECONDS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)  # from the root: it imports tools.wire
        try:
            time.sleep(0.2)  # let the flood build up
            during = []
            coid = 1000
            t_end = time.monotonic() + FLOOD_SECONDS - 0.4
            while time.monotonic() < t_end:
                coid += 1
                during.append(round_trip(coid))
                time.sleep(0.003)
            out, err = flooder.communicate(timeout=FLOOD_SECONDS + 10)
        finally:
            if flooder.poll() is None:
                flooder.kill()
                flooder.wait(timeout=5)
        assert flooder.returncode == 0, err
        result = json.loads(out)
        stats = (f"baseline p50 {percentile(baseline, 0.5) * 1e3:.2f} ms p99 {percentile(baseline, 0.99) * 1e3:.2f} ms; "
                 f"during the flood ({len(during)} round trips) p50 {percentile(during, 0.5) * 1e3:.2f} ms "
                 f"p99 {percentile(during, 0.99) * 1e3:.2f} ms max {max(during) * 1e3:.2f} ms; flooder {result}")
        print(stats)
        assert not result["closed"], f"the flooder was disconnected instead of throttled: {stats}"
        assert result["other_session_rejects"] == 0, stats
        assert result["sent"] > 10 * (BURST + RATE * FLOOD_SECONDS), f"the flooder did not flood: {stats}"
        # Throttled: at most the burst plus the rate over the flood's life (+0.5 s of slack for timing).
        assert result["accepted"] <= BURST + RATE * (FLOOD_SECONDS + 0.5), stats
        assert result["accepted"] >= RATE * FLOOD_SECONDS * 0.5, f"the flooder got far less than its rate: {stats}"
        assert result["rate_limited"] + result["accepted"] == result["sent"], stats
        assert len(during) >= 100, stats
        assert percentile(during, 0.99) < P99_BOUND_S, stats
        assert not probe.in_seq_errors
    counters = ex.stop()
    assert counters.get("session_reject.rate limited") == result["rate_limited"], counters
