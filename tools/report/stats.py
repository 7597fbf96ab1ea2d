"""Percentiles for the latency report: nearest rank, exact on the samples.

The p-th percentile of n samples is the sample of rank ceil(p/100 * n) in
ascending order (rank 1 = the smallest): always an observed value, the same
definition as core::LatencyHistogram's (without its bucketing). Ranks are
computed in integer per-mille, so p99.9 of 1000 samples is rank 999 exactly,
never 1000 through floating-point rounding. Pure functions.
"""

from __future__ import annotations

from typing import Dict, Sequence

import numpy as np

PERCENTILES = (50.0, 90.0, 99.0, 99.9)


def nearest_rank_index(p: float, n: int) -> int:
    """0-based index of the p-th percentile in n sorted samples (n >= 1)."""
    if n < 1:
        raise ValueError("no samples")
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"percentile {p} outside 0..100")
    per_mille = int(round(p * 10))
    rank = -(-per_mille * n // 1000)  # ceil(per_mille * n / 1000)
    return max(rank, 1) - 1


def summarize(values: Sequence[float]) -> Dict[str, float]:
    """count, p50, p90, p99, p99.9, max (and mean); NaN percentiles when empty."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    out: Dict[str, float] = {"count": int(v.size)}
    for p in PERCENTILES:
        out[label(p)] = float(v[nearest_rank_index(p, v.size)]) if v.size else float("nan")
    out["max"] = float(v[-1]) if v.size else float("nan")
    out["mean"] = float(v.mean()) if v.size else float("nan")
    return out


def label(p: float) -> str:
    """50.0 -> 'p50', 99.9 -> 'p99.9'."""
    return "p" + (f"{p:g}")
