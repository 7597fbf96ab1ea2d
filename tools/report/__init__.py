"""nanotick latency report (docs/TELEMETRY.md): telemetry files in, a
self-contained HTML report and a plain-text percentile table out.

Modules: ntt (file reader), analysis (timers, transits, end to end,
throughput), paths (a message's whole path, hop by hop), stats
(percentiles), page (HTML), compare (two runs side by side), report
(command line), loader (the numbers as pandas DataFrames: `load`).
"""

from .loader import load

__all__ = ["load"]
