"""`render`: rewrites the generated blocks of a Markdown file from recorded results.

Two kinds of block, each between marker lines of its own (a marker is a whole line):

    <!-- bench: NAME -->                 every table of RESULTS/NAME.json
    <!-- bench: NAME tables: REGEX -->    only the tables whose heading matches REGEX (re.search)
    ...generated...
    <!-- /bench -->

    <!-- targets: NAME [NAME...] -->      the targets.toml entries of those results, in file order
    ...generated...
    <!-- /targets -->

And three kinds of inline marker, anywhere in a line (a README table row), several to a line; each pair
opens and closes on the same line and what is between them is replaced:

    <!-- figure: ID -->...<!-- /figure -->        the [[figure]] ID of the targets file: its cell's text
    <!-- measured: NAME -->...<!-- /measured -->  "2026-11-29, `abc1234`" (+dirty when the tree was)
    <!-- target: ID -->...<!-- /target -->        the [[target]] with that id: "met" or "**missed**"

Everything between a pair of markers is replaced; everything outside is left byte for byte. Markers inside
``` or ~~~ fences, and inline markers inside `code spans` (documentation showing the syntax), are text, not
markers. A file with an error anywhere (a malformed or unclosed marker, a results file or table or cell
missing) is not changed at all.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import targets as targets_mod
from .record import NAME, SCHEMA_VERSION

_OPEN_BENCH = re.compile(r"^<!--\s*bench:\s*(?P<name>\S+)(?:\s+tables:\s*(?P<regex>.*?))?\s*-->$")
_OPEN_TARGETS = re.compile(r"^<!--\s*targets:\s*(?P<names>.*?)\s*-->$")
_CLOSE = re.compile(r"^<!--\s*/(?P<kind>bench|targets)\s*-->$")
_ANY_MARKER = re.compile(r"^<!--\s*/?\s*(bench|targets)\b")
_FENCE = re.compile(r"^(```|~~~)")
# Inline markers: a token is one HTML comment naming a kind; its argument is checked once paired.
_INLINE_START = re.compile(r"<!--\s*/?\s*(?:figure|measured|target)\b")
_INLINE_TOKEN = re.compile(r"<!--\s*(?P<close>/)?\s*(?P<kind>figure|measured|target)\b(?P<rest>.*?)-->")
_INLINE_ARG = re.compile(r"^:\s*(?P<arg>\S+)\s*$")
_BACKTICKS = re.compile(r"`+")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\d")


class RenderError(Exception):
    pass


class Results:
    """Loads and checks RESULTS/NAME.json once per render."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.cache: Dict[str, Dict[str, object]] = {}

    def get(self, name: str, where: str) -> Dict[str, object]:
        if not NAME.match(name) or ".." in name:
            raise RenderError(f"{where}: {name!r} is not a results name (letters, digits, '_', '-', '.')")
        if name in self.cache:
            return self.cache[name]
        path = self.directory / f"{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RenderError(f"{where}: results file {path} is missing: record it with "
                              f"'python -m tools.benchdoc record -- build/release/bench/{name} ...'") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RenderError(f"{where}: cannot read results file {path}: {e}") from None
        _check_results(data, path, where)
        self.cache[name] = data
        return data


def _check_results(data: object, path: Path, where: str) -> None:
    """A results file is data from outside: check every field render uses before trusting it."""
    def bad(what: str) -> RenderError:
        return RenderError(f"{where}: results file {path} is not a benchdoc result: {what}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    if data.get("schema") != SCHEMA_VERSION:
        raise bad(f"schema {data.get('schema')!r}, this tool reads schema {SCHEMA_VERSION}: record it again")
    for key, kind in (("command", str), ("date", str), ("git", dict), ("machine", dict), ("loadavg", dict),
                      ("wall_seconds", (int, float)), ("tables", list)):
        if not isinstance(data.get(key), kind):
            raise bad(f"'{key}' missing or of the wrong type")
    for n, t in enumerate(data["tables"], 1):
        if not (isinstance(t, dict) and isinstance(t.get("heading"), str) and isinstance(t.get("columns"), list)
                and isinstance(t.get("rows"), list) and all(isinstance(c, str) for c in t["columns"])):
            raise bad(f"table #{n} lacks a heading, columns or rows")
        for r in t["rows"]:
            if not isinstance(r, list) or len(r) != len(t["columns"]) or not all(isinstance(c, str) for c in r):
                raise bad(f"table #{n} ({t['heading']!r}) has a row that is not {len(t['columns'])} strings")
        # record parses line by line, so no text of its tables holds a line break; one that does was edited
        # by hand and would end a Markdown table row, or a generated block, early.
        texts = [t["heading"], t.get("caption") or "", *t["columns"], *(c for r in t["rows"] for c in r)]
        broken = next((c for c in texts if isinstance(c, str) and ("\n" in c or "\r" in c)), None)
        if broken is not None:
            raise bad(f"table #{n} ({t['heading']!r}) has a line break in {broken!r}")
        align = t.get("align")
        if align is not None and (not isinstance(align, list) or len(align) != len(t["columns"])):
            raise bad(f"table #{n} ({t['heading']!r}) has an 'align' list of the wrong length")


def measured_inline(r: Dict[str, object], name: str, where: str) -> str:
    """"2026-11-29, `abc1234`": when and at which commit NAME was recorded, "+dirty" if the tree had changes."""
    date, commit = r["date"], r["git"].get("commit")
    if not _DATE.match(date):
        raise RenderError(f"{where}: {name}.json's date {date!r} does not start with YYYY-MM-DD")
    if commit is None:
        at = "unknown commit"  # recorded where git was not available: say so rather than refuse
    elif isinstance(commit, str) and _COMMIT.match(commit):
        at = f"`{commit[:7]}`"
    else:
        raise RenderError(f"{where}: {name}.json's git commit {commit!r} is not a hexadecimal commit id")
    return f"{date[:10]}, {at}" + ("+dirty" if r["git"].get("dirty") is True else "")


def _load(loadavg: object) -> str:
    """The 1-minute load average of a /proc/loadavg line, '?' when it was not readable."""
    if isinstance(loadavg, str) and loadavg.split():
        return loadavg.split()[0]
    return "?"


def measured_line(r: Dict[str, object], subject: str = "Measured") -> str:
    git = r["git"]
    commit = git.get("commit")
    at = f"at commit `{commit}`" if commit else "at an unknown commit"
    if git.get("dirty"):
        at += " (with uncommitted changes in the tree)"
    machine = r["machine"]
    cpus = machine.get("cpus")
    on = str(machine.get("cpu") or "an unknown CPU") + (f", {cpus} CPUs" if cpus else "")
    seconds = float(r["wall_seconds"])
    secs = f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"
    load = r["loadavg"]
    return (f"{subject} {str(r['date'])[:10]} {at} on {on}; load {_load(load.get('before'))} → "
            f"{_load(load.get('after'))}; {_code(str(r['command']))} ({secs} s).")


def _code(text: str) -> str:
    """Inline code that survives a backtick inside it (a command with `...` substitution)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


_SEP = {"left": ":---", "right": "---:", "center": ":---:", "none": "---"}


def table_markdown(t: Dict[str, object]) -> List[str]:
    align = t.get("align") or ["none"] * len(t["columns"])
    out = ["| " + " | ".join(_escape(c) for c in t["columns"]) + " |",
           "|" + "|".join(_SEP.get(a, "---") for a in align) + "|"]
    out += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in t["rows"]]
    return out


def bench_block(r: Dict[str, object], regex: Optional[re.Pattern], where: str) -> List[str]:
    tables = [t for t in r["tables"] if regex is None or regex.search(t["heading"])]
    if not tables:
        headings = "; ".join(repr(t["heading"]) for t in r["tables"])
        raise RenderError(f"{where}: no table of {r.get('name', '?')}.json has a heading matching "
                          f"{regex.pattern!r} (headings: {headings})")
    out = ["", measured_line(r), ""]
    last_heading = None
    for t in tables:
        if t["heading"] != last_heading:  # two tables under one heading (a spread table): the heading once
            out += [f"**{t['heading']}**", ""]
            last_heading = t["heading"]
        if t.get("caption"):
            out += [t["caption"], ""]
        out += table_markdown(t) + [""]
    return out


def targets_block(names: List[str], results: Results, target_list: List[targets_mod.Target],
                  where: str) -> List[str]:
    chosen = [t for t in target_list if t.bench in names]
    unused = [n for n in names if all(t.bench != n for t in target_list)]
    if unused:
        raise RenderError(f"{where}: the targets file has no entry for {', '.join(unused)}")
    out = [""]
    for name in names:
        out.append(measured_line(results.get(name, where), f"`{name}` measured"))
        out.append("")
    out += ["| target | measured | met? |", "|---|---|---|"]
    for t in chosen:
        try:
            measured, met = targets_mod.evaluate(t, results.get(t.bench, where))
        except targets_mod.TargetError as e:
            raise RenderError(f"{where}: {e}") from None
        out.append(f"| {_escape(t.wording)} | {measured} | {met} |")
    return out + [""]


class _Entries:
    """The targets file, loaded on first use (a page without targets or figures does not need one)."""

    def __init__(self, path: Path):
        self.path = path
        self.loaded: Optional[Tuple[List[targets_mod.Target], List[targets_mod.Figure]]] = None

    def get(self, where: str) -> Tuple[List[targets_mod.Target], List[targets_mod.Figure]]:
        if self.loaded is None:
            try:
                self.loaded = targets_mod.load_entries(self.path)
            except targets_mod.TargetError as e:
                raise RenderError(f"{where}: {e}") from None
        return self.loaded


def _code_spans(line: str) -> List[Tuple[int, int]]:
    """[start, end) of the `code spans` of a line: a run of n backticks up to the next run of exactly n
    (CommonMark); a run with no partner is a literal backtick."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    spans, k = [], 0
    while k < len(runs):
        a, b = runs[k]
        partner = next((j for j in range(k + 1, len(runs)) if runs[j][1] - runs[j][0] == b - a), None)
        if partner is None:
            k += 1
        else:
            spans.append((a, runs[partner][1]))
            k = partner + 1
    return spans


def _inline_tokens(line: str, where_line: str) -> List[re.Match]:
    """The inline marker tokens of a line that are markers, not text inside a code span."""
    tokens = list(_INLINE_TOKEN.finditer(line))
    starts = {m.start() for m in tokens}
    # What a pair encloses is generated (a figure's cell may hold backticks): blank it before looking for
    # code spans, so that rendering cannot change which markers are in code.
    masked = list(line)
    for a, b in zip(tokens, tokens[1:]):
        if not a.group("close") and b.group("close") and a.group("kind") == b.group("kind"):
            masked[a.end():b.start()] = " " * (b.start() - a.end())
    spans = _code_spans("".join(masked))

    def in_code(pos: int) -> bool:
        return any(s <= pos < e for s, e in spans)

    for m in _INLINE_START.finditer(line):
        if m.start() not in starts and not in_code(m.start()):
            text = line[m.start():].rstrip("\r\n")
            raise RenderError(f"{where_line}, {text}: malformed inline marker: no '-->' on this line")
    return [m for m in tokens if not in_code(m.start())]


def _inline_body(kind: str, arg: str, results: Results, entries: _Entries, where: str) -> str:
    if kind == "measured":
        return measured_inline(results.get(arg, where), arg, where)
    if not targets_mod.ID.match(arg):
        raise RenderError(f"{where}: {arg!r} is not an id (a-z, 0-9, '_', '-')")
    target_list, figures = entries.get(where)
    try:
        if kind == "figure":
            figure = next((f for f in figures if f.id == arg), None)
            if figure is None:
                known = ", ".join(f.id for f in figures) or "none"
                raise RenderError(f"{where}: the targets file {entries.path} has no [[figure]] with id {arg!r} "
                                  f"(figure ids: {known})")
            text = targets_mod.figure_text(figure, results.get(figure.bench, where))
        else:
            target = next((t for t in target_list if t.id == arg), None)
            if target is None:
                known = ", ".join(t.id for t in target_list if t.id) or "none"
                raise RenderError(f"{where}: the targets file {entries.path} has no [[target]] with id {arg!r} "
                                  f"(target ids: {known})")
            text = "met" if targets_mod.check(target, results.get(target.bench, where))[1] else "**missed**"
    except targets_mod.TargetError as e:
        raise RenderError(f"{where}: {e}") from None
    if "\n" in text or "\r" in text or "<!--" in text or "-->" in text:
        # It would end the row or be read as a marker on the next render: refuse rather than break the page.
        raise RenderError(f"{where}: the cell's text {text!r} holds a line break, '<!--' or '-->'")
    return _escape(text)


def render_inline(line: str, results: Results, entries: _Entries, where_line: str) -> Tuple[str, int]:
    """(line with its inline markers rendered, number of markers); raises RenderError."""
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    tokens = _inline_tokens(body, where_line)
    out, pos, count, k = [], 0, 0, 0
    while k < len(tokens):
        m = tokens[k]
        marker = m.group(0)
        where = f"{where_line}, {marker}"
        kind = m.group("kind")
        if m.group("close"):
            if m.group("rest").strip():
                raise RenderError(f"{where}: malformed closing marker: write '<!-- /{kind} -->'")
            raise RenderError(f"{where}: a closing marker with no inline marker open")
        a = _INLINE_ARG.match(m.group("rest"))
        if not a:
            raise RenderError(f"{where}: malformed inline marker: write '<!-- {kind}: "
                              f"{'NAME' if kind == 'measured' else 'ID'} -->'")
        if k + 1 == len(tokens):
            raise RenderError(f"{where}: not closed on this line: add '<!-- /{kind} -->' after it")
        c = tokens[k + 1]
        if not c.group("close"):
            raise RenderError(f"{where}: not closed before '{c.group(0)}': add '<!-- /{kind} -->'")
        if c.group("kind") != kind or c.group("rest").strip():
            raise RenderError(f"{where}: closed by '{c.group(0)}': expected '<!-- /{kind} -->'")
        out += [body[pos:m.end()], _inline_body(kind, a.group("arg"), results, entries, where)]
        pos = c.start()
        count += 1
        k += 2
    out.append(body[pos:])
    return "".join(out) + ending, count


def render_text(text: str, results_dir: Path, targets_path: Path, file_label: str) -> Tuple[str, int]:
    """(new text, number of blocks and inline markers) of a Markdown file; raises RenderError and changes
    nothing on any problem."""
    lines = text.splitlines(keepends=True)
    results = Results(results_dir)
    entries = _Entries(targets_path)
    out: List[str] = []
    blocks = 0
    fence: Optional[str] = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            out.append(line)
            i += 1
            continue
        f = _FENCE.match(stripped)
        if f:
            fence = f.group(1)
            out.append(line)
            i += 1
            continue
        if not _ANY_MARKER.match(stripped):
            rendered, n = render_inline(line, results, entries, f"{file_label} line {i + 1}")
            out.append(rendered)
            blocks += n
            i += 1
            continue
        where = f"{file_label} line {i + 1}, {stripped}"
        mb, mt = _OPEN_BENCH.match(stripped), _OPEN_TARGETS.match(stripped)
        if _CLOSE.match(stripped):
            raise RenderError(f"{where}: a closing marker with no block open")
        if not mb and not mt:
            raise RenderError(f"{where}: malformed marker: write '<!-- bench: NAME -->', "
                              "'<!-- bench: NAME tables: REGEX -->' or '<!-- targets: NAME [NAME...] -->'")
        kind = "bench" if mb else "targets"
        # Find this block's end: the content inside is ours and is dropped, but another opening marker
        # before the end means a block was left unclosed.
        j = i + 1
        while j < len(lines):
            inner = lines[j].strip()
            c = _CLOSE.match(inner)
            if c:
                if c.group("kind") != kind:
                    raise RenderError(f"{where}: closed by '{inner}' on line {j + 1}: expected '<!-- /{kind} -->'")
                break
            if _ANY_MARKER.match(inner):
                raise RenderError(f"{where}: not closed before the marker on line {j + 1} ('{inner}'): "
                                  f"add '<!-- /{kind} -->'")
            j += 1
        if j == len(lines):
            raise RenderError(f"{where}: never closed: add '<!-- /{kind} -->' after it")
        if mb:
            name, pattern = mb.group("name"), mb.group("regex")
            regex = None
            if pattern is not None:
                if not pattern:
                    raise RenderError(f"{where}: 'tables:' without a regular expression")
                try:
                    regex = re.compile(pattern)
                except re.error as e:
                    raise RenderError(f"{where}: 'tables: {pattern}' is not a valid regular expression: {e}") from None
            body = bench_block(results.get(name, where), regex, where)
        else:
            names = mt.group("names").split()
            if not names:
                raise RenderError(f"{where}: name at least one results name: '<!-- targets: ring_bench -->'")
            body = targets_block(names, results, entries.get(where)[0], where)
        newline = "\r\n" if line.endswith("\r\n") else "\n"
        out.append(line if line.endswith(("\n", "\r")) else line + newline)
        out += [b + newline for b in body]
        out.append(lines[j])
        blocks += 1
        i = j + 1
    return "".join(out), blocks


def unified_diff(old: str, new: str, label: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"{label} (as it is)", tofile=f"{label} (as rendered)"))
