"""nanotick latency report (docs/TELEMETRY.md): telemetry files in, a
self-contained HTML report and a plain-text percentile table out.

Modules: ntt (file reader), analysis (timers, transits, end to end,
throughput), stats (percentiles), page (HTML), report (command line).
"""
