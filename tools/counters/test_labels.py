"""The counter labels the demo reads by name are the ones tools/counters/labels.py
lists (whose list the integration tests hold to the binaries' files)."""

from __future__ import annotations

import pathlib
import re

from tools.counters import labels

DEMO = pathlib.Path(__file__).resolve().parents[1] / "demo"
# values.get('md.books_live', 0), exchange['messages_in'], k.startswith("queue.")
_READ = re.compile(r"""(?:values\.get\(|exchange\[|startswith\()\s*['"]([a-z_.]+)['"]""")


def named() -> set:
    return set(labels.EXCHANGE) | set(labels.EXCHANGE_OPTIONAL) | set(labels.TRADER)


def test_every_label_the_demo_reads_by_name_is_listed():
    prefixes = set(labels.EXCHANGE_PREFIXES) | set(labels.TRADER_PREFIXES)
    found = {}
    for path in (DEMO / "demo_console.py", DEMO / "demo_summary.py"):
        for label in _READ.findall(path.read_text()):
            found.setdefault(label, path.name)
    assert found, "the pattern found no label: update this test"
    unlisted = {label: where for label, where in found.items()
                if label not in named() and label not in prefixes and not label.startswith(("account.", "client."))}
    assert not unlisted, f"labels read by name but not in tools/counters/labels.py: {unlisted}"


def test_summary_and_rates_use_listed_labels():
    for label in labels.TRADER_SUMMARY + labels.RATE_OF["trader"]:
        assert label in labels.TRADER
    for label in labels.EXCHANGE_SUMMARY + labels.RATE_OF["exchange"]:
        assert label in labels.EXCHANGE


def test_missing_names_labels_and_families():
    have = ["fills", "risk.blocked.max_position"]
    assert labels.missing(have, {"fills": "", "volume": ""}, {"risk.blocked.": "", "queue.": ""}) == ["volume", "queue.*"]
