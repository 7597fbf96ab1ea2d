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


ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"


def walk_paths(text: str) -> List[str]:
    """The `path`s the step-by-step walk in ARCHITECTURE.md names (its tables' last column)."""
    m = re.search(r"^## One order and one market data packet, step by step\n(.*?)^## ", text, re.S | re.M)
    assert m, "docs/ARCHITECTURE.md: no section '## One order and one market data packet, step by step'"
    return re.findall(r"`((?:src|apps|tools)/[^`]+)`", m.group(1))


def test_every_step_of_the_walk_is_where_the_doc_says() -> None:
    paths = walk_paths(ARCHITECTURE.read_text())
    assert len(paths) >= 20, f"the walk names only {len(paths)} files"
    missing = [p for p in paths if not (REPO / p).is_file()]
    assert not missing, f"docs/ARCHITECTURE.md's walk names files that do not exist: {missing}"


def test_the_walk_stays_on_its_side() -> None:
    # Client-side steps live in src/client or src/trading, venue-side ones in src/exchange:
    # a step drawn in the wrong process's folder is the reach this issue removed.
    text = ARCHITECTURE.read_text()
    rows = re.findall(r"^\| (the client[^|]*|received[^|]*|gaps found[^|]*) \| ([^|]*) \|$", text, re.M)
    assert len(rows) >= 4
    for what, where in rows:
        for path in re.findall(r"`([^`]+)`", where):
            assert path.startswith(("src/client/", "src/trading/")), f"client step '{what}' drawn in {path}"


FILE_NAMED = re.compile(r"\b((?:src|apps|bench|tests|tools|fuzz|examples)/[A-Za-z0-9_./-]+\.(?:cpp|hpp|py|sh|toml|java))\b")


def test_every_file_a_page_names_exists() -> None:
    # README.md and docs/*.md (the current pages; docs/benchmarks/history/ keeps old text as it was).
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    missing = sorted({f"{page.relative_to(REPO)}: {path}" for page in pages
                      for path in FILE_NAMED.findall(page.read_text()) if not (REPO / path).exists()})
    assert not missing, "pages name files the tree does not have (moved? update the page):\n  " + "\n  ".join(missing)
