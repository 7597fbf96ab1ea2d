"""The loopback floor in a demo run (docs/TELEMETRY.md "The loopback floor"):
nanotick-floor runs beside the traders, from the exchange's ready to the
traders' stop, and prints its summary at exit (counters/floor.txt). Here:
its command line, the check of its summary, and the "beside the loopback
floor" block of the demo's summary.

The block's figures are the latency report's own (tools/report/floor.py: our
tick-to-trade and order round trip through tools/report/analysis.py over
the traders' telemetry, the floor's from its summary), so the demo's summary
and report.html show the same numbers.

Pure functions apart from reading the run directory: thread-safe.
"""

from __future__ import annotations

import pathlib
from typing import Dict, List, Optional

PROCESS = "floor"
FLOOR_READY_S = 15.0  # joins a group and connects two loopback pairs: milliseconds; slack for a busy machine
# What its summary must hold (src/floor/floor_summary.hpp).
FLOOR_KEYS = ("tick_to_trade_floor.count", "tick_to_trade_floor.p50_ns", "tick_to_trade_floor.p99_ns",
              "round_trip_floor.count", "round_trip_floor.p50_ns", "round_trip_floor.p99_ns")


def floor_args(binary: pathlib.Path, exchange_config: pathlib.Path, transport: str = "tcp",
               trader_idle: str = "backoff") -> List[str]:
    """nanotick-floor on the exchange copy's incremental group (as the traders read it), its order
    leg over the run's order-entry transport, its trader-side threads idling like the traders (its
    exchange side reads the exchange copy's), a status line a second like the others, until the
    demo's SIGINT."""
    return [str(binary), "--config", str(exchange_config), "--status", "1", "--transport", transport,
            "--idle", trader_idle]


def traders_idle(idles: List[str]) -> str:
    """The one idle strategy the floor's trader side takes: the traders' (their engine runner's
    [threads] idle). Traders that differ get the floor's default, backoff, and say so nowhere
    else: the demo's shipped traders all agree."""
    agreed = idles[0] if idles and all(i == idles[0] for i in idles) else "backoff"
    return agreed if agreed in FLOOR_IDLES else "backoff"


FLOOR_IDLES = ("backoff", "spin", "block")  # what nanotick-floor --idle takes


def trader_engine_idle(data: dict, layout_threads: Optional[Dict[str, object]] = None) -> str:
    """The idle strategy of a trader's engine runner: the layout's [threads] when the demo writes one,
    else its config's [threads.engine] idle, else [threads] idle, else the default, backoff."""
    threads = layout_threads if layout_threads is not None else data.get("threads", {})
    engine = threads.get("engine", {}) if isinstance(threads, dict) else {}
    idle = engine.get("idle") if isinstance(engine, dict) else None
    if idle is None and isinstance(threads, dict):
        idle = threads.get("idle")
    return idle if isinstance(idle, str) else "backoff"


def check_floor(counters: Dict[str, str]) -> List[str]:
    """Problems with the floor's summary: empty when complete."""
    missing = [k for k in FLOOR_KEYS if k not in counters]
    if missing:
        return [f"the floor's summary lacks {', '.join(missing)} (counters/floor.txt, logs/floor.log)"]
    return []


def beside_floor_text(run_dir: pathlib.Path) -> Optional[str]:
    """The block for the summary, or None when the run has no counters/floor.txt. A failure
    to compute it is said in the block, never raised: the summary still gets written."""
    try:
        # Imported here: the report's numpy stack may be missing (a bare venv), which the block says.
        from tools.report import floor as report_floor
        return report_floor.block_for_run(run_dir)
    except ImportError as e:
        return f"beside the loopback floor: not available ({e}: run ./nanotick setup)"
    except Exception as e:  # a malformed file of a killed process, a bug: shown, not fatal to the summary
        return f"beside the loopback floor: cannot compute it: {type(e).__name__}: {e}"
