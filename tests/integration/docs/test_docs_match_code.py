"""The docs' claims that drift, held equal to the code (issue 32, item 5).

Reads files only (plus `./nanotick fuzz --list`, which builds nothing), so it
runs in about a second. What it checks, in README.md, docs/*.md and the
launcher's own help texts:

- fuzz seconds: `./nanotick test` runs each fuzz target for
  tools/launcher/commands/testing.py's FUZZ_SECONDS (NANOTICK_FUZZ_SECONDS
  overrides it), `./nanotick fuzz` for commands/fuzz.py's DEFAULT_SECONDS
  unless --seconds says otherwise;
- the chaos soak: `./nanotick test` runs it for the seconds test_soak.py takes
  when NANOTICK_SOAK_SECONDS is unset (or whatever the test command or
  .ci/run set it to), `./nanotick soak` for commands/soak.py's DEFAULT_MINUTES;
- the fuzz targets (fuzz/*_fuzz.cpp, which fuzz/CMakeLists.txt globs and
  `./nanotick fuzz --list` prints): a doc passage that lists them lists every
  one and no other, and a count of them is their number;
- the launcher's commands: tools/launcher/cli.py's command table, its
  `--help` list and docs/COMMANDS.md's table name the same set, and every `./nanotick WORD` in the docs is one.

How prose is read (passages, dates, clauses) and which phrasings count as
claims: doc_passages.py's docstring.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from typing import Dict, List, Optional, Sequence, Set, Tuple

import pytest

from tests.integration.docs.doc_passages import (CI_RUN, COMMANDS_DOC, DUR, DUR_OPT, LAUNCHER, NUM, REPO, SOAK_TEST,
                                                 Passage, all_passages, clauses, doc_files, launcher_help,
                                                 launcher_source, number, rel, seconds_of, show)
from tools.launcher import cli as launcher_cli
from tools.launcher.commands import fuzz as launcher_fuzz
from tools.launcher.commands import soak as launcher_soak
from tools.launcher.commands import testing as launcher_testing

# ---------------------------------------------------------------- the code's values


@dataclasses.dataclass(frozen=True)
class CodeValues:
    fuzz_default_s: float
    fuzz_ci_s: float
    soak_default_s: float
    soak_ci_s: float
    soak_ci_from: str


def code_values() -> CodeValues:
    # The CI soak: whatever the test command or CI sets NANOTICK_SOAK_SECONDS
    # to, else test_soak.py's own default.
    soak_ci: Optional[Tuple[float, str]] = None
    for text, where in (launcher_source(launcher_testing), (CI_RUN.read_text(), rel(CI_RUN))):
        m = re.search(r"NANOTICK_SOAK_SECONDS[\"']?\]?\s*=\s*[\"']?(\d+)\b", text)
        if m:
            soak_ci = (float(m.group(1)), where)
            break
    if soak_ci is None:
        m = re.search(r'os\.environ\.get\("NANOTICK_SOAK_SECONDS",\s*"(\d+(?:\.\d+)?)"\)', SOAK_TEST.read_text())
        assert m, f"{rel(SOAK_TEST)}: no os.environ.get(\"NANOTICK_SOAK_SECONDS\", \"N\"); update this test"
        soak_ci = (float(m.group(1)), rel(SOAK_TEST))
    return CodeValues(float(launcher_fuzz.DEFAULT_SECONDS), float(launcher_testing.FUZZ_SECONDS),
                      float(launcher_soak.DEFAULT_MINUTES) * 60, *soak_ci)


# ---------------------------------------------------------------- duration claims

CI_CONTEXT = re.compile(r"nanotick test|\bCI\b|NANOTICK_(?:FUZZ|SOAK)_SECONDS")
# "NANOTICK_FUZZ_SECONDS (default 3)": the variable's default is the CI run's.
VAR_DEFAULT = re.compile(r"NANOTICK_(?:FUZZ|SOAK)_SECONDS[`'\"]?\s*\(?\s*default:?\s+" + DUR_OPT)
DEFAULT = re.compile(r"\bdefault:?\s+" + DUR_OPT)

TARGET = r"(?:(?:fuzz|libFuzzer)\s+)?targets?"
FUZZ_PER_TARGET = [
    re.compile(r"\beach(?:\s+" + TARGET + r")?\s+(?:\w+\s+){0,2}?for\s+" + DUR, re.I),  # "each target for 5 s"
    re.compile(DUR + r"\s+(?:per|for each|of each|on each|each)\s+" + TARGET, re.I),  # "3 s per target"
    re.compile(r"\btargets?\s*(?:x|×|\*|times)\s*" + DUR, re.I),  # "9 targets x 3 s"
    re.compile(r"\bfor\s+" + DUR + r"\s+each\b", re.I),  # "for 3 s each"
]
SOAK_LENGTH = [
    re.compile(DUR + r"\s+(?:in|under|during)\s+[`']?\./nanotick test", re.I),  # "30 s in `./nanotick test`"
    re.compile(r"nanotick test[`']?\s+runs\s+(?:it|the soak|the chaos soak|the CI form|its CI form)"
               r"\s*(?:for|:)?\s*" + DUR, re.I),  # "runs the CI form: 30 s", "runs it for 30 s"
    re.compile(r"\bsoak\s*(?:for|of|:)?\s*" + DUR, re.I),  # "the chaos soak for 30 s", "chaos soak 30 s"
    re.compile(DUR + r"\s+(?:chaos\s+)?soak\b", re.I),  # "the 60 s soak", "a 30-second soak"
]


@dataclasses.dataclass
class Claim:
    where: str
    what: str  # "fuzz CI", "fuzz default", "soak CI", "soak default"
    seconds: float
    quote: str


def is_about(p: Passage, clause: str, sentence: str, word: str, whole_passage: bool = False) -> bool:
    """Whether the clause speaks of word ("fuzz", "soak"): it, its sentence or its section names it (or
    the whole passage, when whole_passage: a count of targets in a list item about fuzzing)."""
    texts = (clause, sentence, p.section) + ((p.text,) if whole_passage else ())
    return any(word in t.lower() for t in texts) or p.topic == word


def duration_claims(ps: Sequence[Passage]) -> List[Claim]:
    claims: List[Claim] = []
    for p in ps:
        if p.dated:
            continue
        for clause, sentence, offset in clauses(p):
            fuzz, soak = is_about(p, clause, sentence, "fuzz"), is_about(p, clause, sentence, "soak")
            if not (fuzz or soak):
                continue
            ci = bool(CI_CONTEXT.search(clause) or (not re.search(r"nanotick (?:fuzz|soak)\b", clause)
                                                    and (CI_CONTEXT.search(sentence) or p.topic == "test")))
            # Only one of the two may be meant: a clause naming both is read for neither's default.
            which = "fuzz" if fuzz and not soak else "soak" if soak and not fuzz else ""
            if not which and "fuzz" in clause.lower() and "soak" not in clause.lower():
                which = "fuzz"
            elif not which and "soak" in clause.lower() and "fuzz" not in clause.lower():
                which = "soak"
            taken: List[Tuple[int, int]] = []

            def add(m: re.Match, what: str, bare: float) -> None:
                if any(a <= m.start("n") < b for a, b in taken):
                    return
                taken.append(m.span())
                claims.append(Claim(p.where(offset + m.start()), what, seconds_of(m, bare), m.group(0)))

            for m in VAR_DEFAULT.finditer(clause):
                add(m, ("fuzz" if "FUZZ" in m.group(0) else "soak") + " CI", 1.0)
            if which == "fuzz":
                for pattern in FUZZ_PER_TARGET:
                    for m in pattern.finditer(clause):
                        if ci:
                            add(m, "fuzz CI", 1.0)
                        elif re.search(r"\bdefault\b", clause):
                            add(m, "fuzz default", 1.0)
                for m in DEFAULT.finditer(clause):
                    add(m, "fuzz default", 1.0)
            if which == "soak":
                for pattern in SOAK_LENGTH:
                    for m in pattern.finditer(clause):
                        if ci:
                            add(m, "soak CI", 1.0)
                for m in DEFAULT.finditer(clause):
                    add(m, "soak default", 60.0)  # `--minutes N (default 10)`
    return claims


@pytest.fixture(scope="module")
def docs() -> List[Passage]:
    return all_passages()


@pytest.fixture(scope="module")
def code() -> CodeValues:
    return code_values()


def check_durations(claims: Sequence[Claim], what: str, want: float, origin: str) -> None:
    found = [c for c in claims if c.what == what]
    wrong = [f"{c.where}: says {c.quote!r} ({show(c.seconds)}), the code has {show(want)} ({origin})"
             for c in found if abs(c.seconds - want) > 1e-9]
    assert not wrong, f"{what}: docs disagree with the code:\n  " + "\n  ".join(wrong)


def test_fuzz_seconds_in_ci_match_the_launcher(docs, code):
    claims = duration_claims(docs)
    check_durations(claims, "fuzz CI", code.fuzz_ci_s, "tools/launcher/commands/testing.py: FUZZ_SECONDS")
    # The test itself must see the claims it exists for (a rewording would silently drop them).
    sources = {c.where.split(":")[0] for c in claims if c.what == "fuzz CI"}
    assert "docs/CONTRIBUTING.md" in sources and "nanotick (test_usage)" in sources, \
        f"the fuzz seconds in CI are no longer found in docs/CONTRIBUTING.md or test_usage (found in {sorted(sources)})"


def test_fuzz_default_seconds_match_the_launcher(docs, code):
    claims = duration_claims(docs)
    check_durations(claims, "fuzz default", code.fuzz_default_s, "tools/launcher/commands/fuzz.py: DEFAULT_SECONDS")
    sources = {c.where.split(":")[0] for c in claims if c.what == "fuzz default"}
    assert "nanotick (fuzz_usage)" in sources, f"fuzz_usage's default is no longer found (found in {sorted(sources)})"


def test_soak_seconds_in_ci_match_the_code(docs, code):
    claims = duration_claims(docs)
    check_durations(claims, "soak CI", code.soak_ci_s, code.soak_ci_from + ": NANOTICK_SOAK_SECONDS")
    sources = {c.where.split(":")[0] for c in claims if c.what == "soak CI"}
    for must in ("docs/CONTRIBUTING.md", "docs/RELIABILITY.md", "nanotick (soak_usage)"):
        assert must in sources, f"the CI soak length is no longer found in {must} (found in {sorted(sources)})"


def test_soak_default_minutes_match_the_launcher(docs, code):
    claims = duration_claims(docs)
    check_durations(claims, "soak default", code.soak_default_s, "tools/launcher/commands/soak.py: DEFAULT_MINUTES")
    sources = {c.where.split(":")[0] for c in claims if c.what == "soak default"}
    assert "nanotick (soak_usage)" in sources, f"soak_usage's default is no longer found (found in {sorted(sources)})"


# ---------------------------------------------------------------- fuzz targets


def fuzz_targets() -> List[str]:
    return sorted(p.name[: -len("_fuzz.cpp")] for p in (REPO / "fuzz").glob("*_fuzz.cpp"))


def test_fuzz_list_is_the_fuzz_directory():
    done = subprocess.run([str(LAUNCHER), "fuzz", "--list"], capture_output=True, text=True, timeout=30, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == fuzz_targets(), \
        f"./nanotick fuzz --list printed {sorted(done.stdout.split())}, fuzz/*_fuzz.cpp has {fuzz_targets()}"


def name_pattern(name: str) -> re.Pattern:
    # `order_entry`, order_entry_fuzz, fuzz/order_entry_fuzz.cpp, fuzz_order_entry; not order_entry_bench.
    return re.compile(r"(?<![\w-])(?:fuzz_)?" + re.escape(name) + r"(?:_fuzz(?:\.cpp)?)?(?![\w-])")


FIRST_CELL = re.compile(r"^\s*\|\s*`?([A-Za-z0-9_]+)`?\s*\|")
COUNT = re.compile(r"\b" + NUM + r"\s+(?:of\s+the\s+)?(?:(?:libFuzzer|fuzz)\s+)?targets\b", re.I)


def test_docs_that_list_the_fuzz_targets_list_all_of_them(docs):
    targets = fuzz_targets()
    patterns = {t: name_pattern(t) for t in targets}
    groups: Dict[Tuple[str, int], List[Passage]] = {}
    for p in docs:
        groups.setdefault((p.source, p.group), []).append(p)
    problems: List[str] = []
    for (source, _), members in groups.items():
        text = " ".join(p.text for p in members)
        named = {t for t, pat in patterns.items() if pat.search(text)}
        about_fuzz = "fuzz" in text.lower() or "fuzz" in members[0].section.lower() or members[0].topic == "fuzz"
        if len(named) < 3 or not about_fuzz:
            continue
        where = members[0].where()
        missing = [t for t in targets if t not in named]
        if missing:
            problems.append(f"{where}: lists fuzz targets but not {missing} (fuzz/*_fuzz.cpp has {len(targets)})")
        if members[0].kind == "row":  # a table of targets: every first cell must be one
            cells = [m.group(1) for p in members[1:] for m in [FIRST_CELL.match(p.text)] if m]
            unknown = [c for c in cells if c not in targets]
            if unknown:
                problems.append(f"{where}: the table names fuzz targets that do not exist: {unknown}")
    for p in docs:
        if p.dated:
            continue
        for clause, sentence, offset in clauses(p):
            if not is_about(p, clause, sentence, "fuzz", whole_passage=True):
                continue
            for m in COUNT.finditer(clause):
                if number(m.group("n")) != len(targets):
                    where = p.where(offset + m.start())
                    problems.append(f"{where}: says {m.group(0)!r}, fuzz/*_fuzz.cpp has {len(targets)}")
    assert not problems, "fuzz targets: docs disagree with fuzz/:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------- launcher commands


def case_commands() -> Set[str]:
    """The commands the launcher dispatches (tools/launcher/cli.py COMMANDS)."""
    out = {c.name for c in launcher_cli.COMMANDS}
    assert out, "tools/launcher/cli.py: no command in COMMANDS; update this test"
    return out


def usage_commands() -> Set[str]:
    text, _ = launcher_help("usage")
    section = text.split("\ncommands:\n", 1)
    assert len(section) == 2, "nanotick --help: no 'commands:' list; update this test"
    body = section[1].split("\n\n", 1)[0]
    # A command's line starts two spaces in; its continuation lines further.
    return set(re.findall(r"^  ([a-z][a-z0-9-]*)\s", body, re.M))


def test_help_names_every_command_of_the_table():
    case, usage = case_commands(), usage_commands()
    assert case == usage, (f"tools/launcher: the command table and --help differ: only in the case {sorted(case - usage)}, "
                           f"only in usage() {sorted(usage - case)}")


ROW_COMMAND = re.compile(r"^\s*\|\s*`\./nanotick ([a-z][a-z0-9-]*)")


def test_commands_doc_has_one_row_per_command():
    if not COMMANDS_DOC.exists():
        pytest.skip("docs/COMMANDS.md does not exist yet: its command table is checked once it does")
    rows: List[Tuple[int, str]] = []
    for number_, line in enumerate(COMMANDS_DOC.read_text().splitlines(), 1):
        m = ROW_COMMAND.match(line)
        if m:
            rows.append((number_, m.group(1)))
    case = case_commands()
    named = [c for _, c in rows]
    problems = []
    if not rows:
        problems.append("no table row starts with `./nanotick CMD")
    missing = sorted(case - set(named))
    if missing:
        problems.append(f"no row for {missing}")
    unknown = [f"line {n}: {c}" for n, c in rows if c not in case]
    if unknown:
        problems.append(f"rows for commands the launcher does not have: {unknown}")
    twice = sorted({c for c in named if named.count(c) > 1})
    if twice:
        problems.append(f"more than one row for {twice}")
    assert not problems, "docs/COMMANDS.md against tools/launcher's command table:\n  " + "\n  ".join(problems)


MENTION = re.compile(r"\./nanotick ([a-z][a-z0-9-]*)\b")


def test_every_command_a_doc_names_exists(docs):
    case = case_commands()
    wrong = [f"{p.where(m.start())}: ./nanotick {m.group(1)}" for p in docs for m in MENTION.finditer(p.text)
             if m.group(1) not in case]
    for path in doc_files():  # the examples in fenced code too, which the passages leave out
        for number_, line in enumerate(path.read_text().splitlines(), 1):
            wrong += [f"{rel(path)}:{number_}: ./nanotick {m.group(1)}" for m in MENTION.finditer(line)
                      if m.group(1) not in case]
    wrong = sorted(set(wrong))
    assert not wrong, f"docs name launcher commands that do not exist (nanotick has {sorted(case)}):\n  " + \
        "\n  ".join(wrong)
