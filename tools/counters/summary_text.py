"""The text form of a process's counters: "key value" lines, as the counters
file's report and the programs' summaries print them (keys may contain spaces;
values are integers or reals). One parser for every tool that reads them (the
demo's summary, the report's floor block)."""

from __future__ import annotations

import re
from typing import Dict

_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


def parse_counters(text: str) -> Dict[str, str]:
    """The "key value" lines of `text`; every other line is skipped."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.strip().rpartition(" ")
        if key and _NUMBER_RE.fullmatch(value):
            out[key] = value
    return out
