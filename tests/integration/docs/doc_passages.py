"""The docs' prose, and the launcher's help texts, cut into the passages and
clauses test_docs_match_code.py reads claims from; the number and duration
patterns the claims are made of.

How prose is read. A doc is cut into passages: paragraphs, list items and
table rows (fenced code and HTML comments are skipped: a command shown as an
example is not a claim). A passage, and a list or table that a paragraph
introduces, that carries a date (2026-11-27) records a past run: what it
says held then, so the duration checks skip it. Passages are cut into
sentences and sentences into clauses at semicolons. A figure counts as a
claim only in one of the phrasings below (e.g. "each for 3 s", "3 s per
target", "30 s in `./nanotick test`", "the 60 s soak", "(default 10)"), in a
clause about fuzzing or the soak (or a section titled so), so that other
durations nearby ("killed every 0.2-0.8 s", "a 5 s run of each binary by
hand") are left alone. A clause naming `./nanotick test`, CI or the
NANOTICK_*_SECONDS variable speaks of the CI run; one saying "default"
without them of the command's own default. A new phrasing that these
patterns miss goes unchecked: add it to the patterns of test_docs_match_code.py.
"""

from __future__ import annotations

import bisect
import dataclasses
import pathlib
import re
from typing import Iterator, List, Optional, Tuple


from tools.launcher import cli as launcher_cli
from tools.launcher.commands import fuzz as launcher_fuzz
from tools.launcher.commands import soak as launcher_soak
from tools.launcher.commands import testing as launcher_testing

REPO = pathlib.Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "nanotick"
SOAK_TEST = REPO / "tests" / "integration" / "trader" / "test_soak.py"
CI_RUN = REPO / ".ci" / "run"
COMMANDS_DOC = REPO / "docs" / "COMMANDS.md"

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "sixty": 60,
}
NUM = r"(?P<n>\d+(?:\.\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
# A duration: "3 s", "3s", "3 sec", "3 seconds", "3-second", "10 min", "10 minutes", "10-minute".
UNIT = r"(?P<u>seconds?|secs?|s|minutes?|mins?)\b"
DUR = NUM + r"(?:\s*|-)" + UNIT
# After "default", the unit may be left out: "(default 60)".
DUR_OPT = NUM + r"(?:(?:\s*|-)" + UNIT + r")?"


def number(text: str) -> float:
    return float(NUMBER_WORDS.get(text.lower(), text))


def seconds_of(match: re.Match, bare_unit_seconds: float) -> float:
    unit = match.group("u") if "u" in match.re.groupindex else None
    scale = bare_unit_seconds if not unit else (60.0 if unit.lower().startswith("min") else 1.0)
    return number(match.group("n")) * scale


def show(value: float) -> str:
    return f"{value:g} s" if value < 120 or value % 60 else f"{value / 60:g} min"


# ---------------------------------------------------------------- passages


@dataclasses.dataclass
class Passage:
    source: str  # file (and launcher function) it comes from
    line: int  # first line, 1-based
    text: str  # its lines joined by single spaces
    kind: str  # "para", "item" or "row"
    group: int  # passages of one list or one table share it
    section: str  # the heading above it
    dated: bool  # records a past run (a date in it or in the paragraph introducing it)
    topic: str = ""  # what a launcher help text is about when it does not say ("fuzz", "soak", "test")
    starts: Tuple[int, ...] = ()  # where each of its lines starts in text

    def where(self, offset: int = 0) -> str:
        """file:line of the character at offset in text."""
        return f"{self.source}:{self.line + max(0, bisect.bisect_right(self.starts, offset) - 1)}"


LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
TABLE_ROW = re.compile(r"^\s*\|")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
HEADING = re.compile(r"^#{1,6}\s+(.*)")
FENCE = re.compile(r"^\s*(```|~~~)")


def passages(source: str, text: str, first_line: int = 1, topic: str = "") -> List[Passage]:
    out: List[Passage] = []
    section = ""
    context_dated = False  # the last paragraph's: lists and tables under it inherit it
    group = 0
    cur: Optional[Tuple[str, int, List[str]]] = None  # kind, line, lines
    in_fence = False
    in_comment = False

    def flush() -> None:
        nonlocal cur, context_dated
        if cur is None:
            return
        kind, line, lines = cur
        stripped = [s.strip() for s in lines]
        joined = " ".join(stripped)
        starts = tuple(sum(len(s) + 1 for s in stripped[:i]) for i in range(len(stripped)))
        dated = bool(DATE.search(joined))
        if kind == "para":
            context_dated = dated
        out.append(Passage(source, line, joined, kind, group, section, dated or context_dated, topic, starts))
        cur = None

    prev_kind = ""
    for offset, line in enumerate(text.splitlines()):
        number_ = first_line + offset
        if FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if not line.strip():
            flush()
            continue
        heading = HEADING.match(line)
        if heading:
            flush()
            section, context_dated, prev_kind = heading.group(1).strip(), False, ""
            continue
        if TABLE_ROW.match(line):
            flush()
            if TABLE_RULE.match(line):
                continue
            if prev_kind != "row":
                group += 1
            cur, prev_kind = ("row", number_, [line]), "row"
            flush()
            continue
        if LIST_ITEM.match(line):
            flush()
            if prev_kind != "item":
                group += 1
            cur, prev_kind = ("item", number_, [line]), "item"
            continue
        if cur is None:  # a paragraph starts (lines after a list item continue it)
            group += 1
            cur, prev_kind = ("para", number_, [line]), "para"
        else:
            cur[2].append(line)
    flush()
    return out


# The launcher is the Python package tools/launcher/ (./nanotick only
# bootstraps it): its help texts, defaults and command table are read from
# there. Its help texts keep the names of the bash functions that printed
# them ("nanotick (test_usage)"), which the checks below name as sources.
LAUNCHER_HELP = {"usage": launcher_cli, "test_usage": launcher_testing, "fuzz_usage": launcher_fuzz,
                 "soak_usage": launcher_soak}


def launcher_help(function: str) -> Tuple[str, int]:
    """A launcher help text, and the line of its module where it is written."""
    module = LAUNCHER_HELP[function]
    text, anchor = (module.usage(), r"^def usage\(") if function == "usage" else (module.USAGE, r"^USAGE = ")
    source = pathlib.Path(module.__file__).read_text()
    m = re.search(anchor, source, re.M)
    assert m, f"{module.__name__}: no {anchor} found; update this test"
    return text, source[: m.start()].count("\n") + 2


def launcher_source(module) -> Tuple[str, str]:
    path = pathlib.Path(module.__file__)
    return path.read_text(), rel(path)


def doc_files() -> List[pathlib.Path]:
    return [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def rel(path: pathlib.Path) -> str:
    return str(path.relative_to(REPO))


def all_passages() -> List[Passage]:
    out: List[Passage] = []
    for path in doc_files():
        out += passages(rel(path), path.read_text())
    for function, topic in (("usage", ""), ("test_usage", "test"), ("fuzz_usage", "fuzz"), ("soak_usage", "soak")):
        text, line = launcher_help(function)
        out += passages(f"nanotick ({function})", text, line, topic)
    soak = SOAK_TEST.read_text()
    doc = re.match(r'\s*"""(.*?)"""', soak, re.S)
    if doc:
        out += passages(rel(SOAK_TEST) + " (docstring)", doc.group(1), 1, "soak")
    return out


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[*])")


def clauses(p: Passage) -> Iterator[Tuple[str, str, int]]:
    """(clause, its sentence, the clause's offset in p.text) for each clause of each sentence of a passage."""
    ends = list(SENTENCE_END.finditer(p.text))
    starts = [0] + [m.end() for m in ends]
    stops = [m.start() for m in ends] + [len(p.text)]
    for start, stop in zip(starts, stops):
        sentence = p.text[start:stop]
        offset = start
        for clause in sentence.split(";"):
            yield clause, sentence, offset
            offset += len(clause) + 1
