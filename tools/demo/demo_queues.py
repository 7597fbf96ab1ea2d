"""Queue depths over time: while the demo runs, the `queue.*` gauges of every
process's counters file (the exchange's rings between its threads, the
traders' own) are sampled and appended to RUN_DIR/counters/queue_depths.csv
(t_s, process, queue, depth), which the report draws. A gauge is the depth
at the moment it is read: in the compact layout the rings between the
exchange's stages are drained within each pass of its one thread, so most
samples read 0 there; the dedicated layout's rings show their backlog.

Not thread-safe: the demo's main loop calls sample().
"""

from __future__ import annotations

import pathlib
from typing import Dict, Optional

from tools.demo.demo_summary import CountersFileError, read

HEADER = "t_s,process,queue,depth\n"


class QueueSampler:
    def __init__(self, out: pathlib.Path, every_s: float = 0.1) -> None:
        self.out = out
        self.every_s = every_s
        self.last_t: Optional[float] = None
        out.write_text(HEADER, encoding="utf-8")

    def sample(self, t_s: float, files: Dict[str, pathlib.Path]) -> int:
        """Appends one sample of every queue gauge when `every_s` has passed; returns the rows written."""
        if self.last_t is not None and t_s - self.last_t < self.every_s:
            return 0
        self.last_t = t_s
        rows = []
        for process, path in files.items():
            try:
                counters = read(path).counters
            except (CountersFileError, OSError):
                continue  # not written yet, or being replaced: the next sample
            rows += [f"{t_s:.3f},{process},{c.label[len('queue.'):]},{c.value}\n" for c in counters
                     if c.label.startswith("queue.")]
        if rows:
            with open(self.out, "a", encoding="utf-8") as f:
                f.writelines(rows)
        return len(rows)
