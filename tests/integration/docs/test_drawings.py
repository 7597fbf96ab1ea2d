"""The thread drawings in docs/CONTRIBUTING.md, held to the binaries (issue 33, item 6).

Each process's block in the "agent graph" drawing ends with a `compact:` and
a `dedicated:` line naming its runners: `role = what runs on it` or a bare
`role`, separated by `|`. Those roles must be exactly the roles the binary
describes for that [threads] mode (`nanotick-exchange --describe`,
`nanotick-trader --describe`), in the same order: a runner added, renamed or
dropped in the code fails here until the drawing says so.
"""

from __future__ import annotations

import re
from typing import Dict, List

import pytest

from tests.integration.docs.doc_passages import REPO
from tools.doctor.roles import roles_of

CONTRIBUTING = REPO / "docs" / "CONTRIBUTING.md"


def drawn_runners(text: str) -> Dict[str, Dict[str, List[str]]]:
    """process -> mode -> roles, read from the ```text block of the agent graph in `text`."""
    m = re.search(r"\*\*Each process's agent graph\*\*.*?```text\n(.*?)```", text, re.S)
    assert m, "docs/CONTRIBUTING.md: no ```text block after **Each process's agent graph**"
    drawn: Dict[str, Dict[str, List[str]]] = {}
    process = ""
    for line in m.group(1).splitlines():
        head = re.match(r"^([a-z]+) \(", line)
        if head:
            process = head.group(1)
            continue
        mode = re.match(r"^\s+(compact|dedicated):\s+(.*)$", line)
        if mode and process:
            roles = [part.split("=")[0].strip().split()[0] for part in mode.group(2).split("|")]
            drawn.setdefault(process, {})[mode.group(1)] = roles
    return drawn


@pytest.mark.parametrize("process", ["exchange", "trader"])
def test_drawn_runners_are_the_binarys_roles(process: str) -> None:
    drawn = drawn_runners(CONTRIBUTING.read_text())
    assert process in drawn, f"docs/CONTRIBUTING.md draws no runners for {process} (found {sorted(drawn)})"
    described = roles_of(process).runners
    assert drawn[process] == described, (
        f"docs/CONTRIBUTING.md draws {process}'s runners as {drawn[process]}, "
        f"but nanotick-{process} --describe says {described}")


def test_the_reader_parses_roles_as_the_drawing_writes_them() -> None:
    drawing = ("**Each process's agent graph**\n```text\nexchange (x.cpp)\n  [a] -> [b]\n"
               "  compact:   critical = a+b | aux = c+d (why) | snapshotter\n"
               "  dedicated: gateway | engine\n\ntrader (y.hpp)\n  dedicated: receiver = sockets -> ring | engine = rest\n```\n")
    assert drawn_runners(drawing) == {
        "exchange": {"compact": ["critical", "aux", "snapshotter"], "dedicated": ["gateway", "engine"]},
        "trader": {"dedicated": ["receiver", "engine"]},
    }
