"""Targets: docs/benchmarks/targets.toml's entries checked against recorded results.

Each `[[target]]` entry names one cell of one recorded table and the bound it must meet:

    [[target]]
    bench = "ring_bench"                 # results name: docs/benchmarks/results/<bench>.json
    table = '^\\(b\\) SPSC round trip'     # regex searched in the table's heading
    caption = '^Spread'                  # optional regex on the prose line right above the table ("" if none),
                                         # to tell apart two tables under one heading
    row = '^nanotick::SpscRing$'         # regex on the row's first cell, or an inline table of
                                         # column = regex pairs: row = { keys = '^random$', op = '^find hit$' }
    column = "p50 vs cache-line ping-pong (floor)"  # the column's header, exactly
    op = "<="                            # "<=" or ">="
    value = 1.3
    unit = "x"                           # "x", "%", "ns", "us", "ms", "s", any other label, or "" for none
    cell_unit = "ns"                     # optional: what a bare number in that column is in (default: unit)
    target = "round trip p50 <= 1.3x the cache-line ping-pong floor"   # the wording shown
    id = "ring-rtt"                      # optional: lets a page show this target's verdict inline,
                                         # <!-- target: ring-rtt -->met<!-- /target --> (render.py)

Exactly one (table, row) pair must match, or the entry is an error: a target never silently checks a
different cell. Cells are read as numbers by parse_cell (suffixes k/M/G, x, %, time units, ranges).

Each `[[figure]]` entry names one cell to quote inline on a page, <!-- figure: ID -->...<!-- /figure -->:

    [[figure]]
    id = "ring-rtt-p50"                  # [a-z0-9_-]+, unique among the figures and the targets' ids
    bench = "ring_bench"                 # the cell is selected exactly as a target's:
    table = '^\\(b\\) SPSC round trip'     #   table, optional caption, row, column
    caption = '^$'
    row = '^nanotick::SpscRing$'
    column = "p50"
    format = "{cell} ns"                 # optional: "cell" (default) shows the cell's text as recorded;
                                         # otherwise a template in which {cell} stands for that text

A figure is the cell's text, not a number re-printed: the README and the full tables cannot disagree on
rounding. A cell that matches no row or several is an error, as for a target.
"""

from __future__ import annotations

import math
import re
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

TIME_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
MULTIPLIERS = {"k": 1e3, "M": 1e6, "G": 1e9}
OPS = ("<=", ">=")
_KEYS = {"bench", "table", "caption", "row", "column", "op", "value", "unit", "cell_unit", "target", "id"}
_FIGURE_KEYS = {"id", "bench", "table", "caption", "row", "column", "format"}
ID = re.compile(r"^[a-z0-9_-]+$")

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+"
_UNIT = r"%|/?[A-Za-zµμ][A-Za-zµμ/]*"  # x, %, ns, µs, M/s, /s, msgs/s


def _quantity_re(i: int, signed: bool = True) -> str:
    """A number with an optional k/M/G multiplier and unit, its groups numbered i (num1, mult1, unit1)."""
    num = _NUM if signed else _NUM.replace("[-+]?", "")  # a range's upper end ("0.80-1.19") has no sign
    return rf"(?P<num{i}>{num})(?P<mult{i}>[kMG](?![A-Za-z/]))?(?:\s*(?P<unit{i}>{_UNIT}))?"


_Q1, _Q2, _Q3, _Q4 = _quantity_re(1), _quantity_re(2, False), _quantity_re(3), _quantity_re(4, False)
_CELL = re.compile(rf"^{_Q1}(?:\s*[-–]\s*{_Q2})?"  # a value, or a bare range "0.80-1.19"
                   rf"(?:\s*\[\s*{_Q3}\s*[-–]\s*{_Q4}\s*\])?"  # then perhaps "[min-max]" over repeats
                   rf"(?:\s*\([^()]*\))?$")  # then perhaps "(±3%)", "(+7.9)", "(1 session)": a note, not checked


class TargetError(Exception):
    pass


@dataclass
class Measured:
    low: float
    high: float
    unit: str  # "" when the cell printed none
    is_range: bool


def _quantity(m: re.Match, i: int) -> Tuple[float, str]:
    value = float(m.group(f"num{i}").replace(",", ""))
    mult = m.group(f"mult{i}")
    if mult:
        value *= MULTIPLIERS[mult]
    return value, m.group(f"unit{i}") or ""


def parse_cell(text: str) -> Measured:
    """A cell as a number or a range: "461 ns", "23.6k", "1.16x", "12%", "0.80-1.19 M/s", "1.14x [1.10x-1.20x]",
    "2.9 (±3%)", "341440/s (1 session)". A bracketed range (min-max over repeats) is the range checked, not
    the median before it; one parenthesised note at the end is ignored. Raises ValueError on anything else
    (two values "28.8 / 8912.9", words, "n/a")."""
    s = text.replace("**", "").replace("`", "").strip()
    m = _CELL.match(s)
    if not m:
        raise ValueError(f"cell {text!r} is not a number, a range 'a-b' or 'value [a-b]'")
    v1, u1 = _quantity(m, 1)
    if m.group("num3") is not None:
        lo, ulo = _quantity(m, 3)
        hi, uhi = _quantity(m, 4)
        unit = uhi or ulo or u1
        if m.group("num2") is not None:
            raise ValueError(f"cell {text!r} has a range and a bracketed range: which one is meant?")
        return Measured(min(lo, hi), max(lo, hi), unit, True)
    if m.group("num2") is not None:
        v2, u2 = _quantity(m, 2)
        if u1 and u2 and u1 != u2:
            raise ValueError(f"cell {text!r}: the range's ends are in different units")
        return Measured(min(v1, v2), max(v1, v2), u2 or u1, True)
    return Measured(v1, v1, u1, False)


def _normalise_unit(u: str) -> str:
    return "us" if u in ("µs", "μs") else u


def convert(value: float, cell_unit: str, column_unit: str, target_unit: str) -> float:
    """`value` as printed with `cell_unit` ("" = the column's own `column_unit`), in `target_unit`."""
    unit = _normalise_unit(cell_unit or column_unit)
    want = _normalise_unit(target_unit)
    if unit == want:
        return value
    if unit in TIME_UNITS and want in TIME_UNITS:
        return value * TIME_UNITS[unit] / TIME_UNITS[want]
    raise ValueError(f"the cell is in {unit or 'no unit'!r}, the target in {want or 'no unit'!r}")


@dataclass
class Target:
    bench: str
    table: re.Pattern
    caption: Optional[re.Pattern]
    row: Dict[Optional[str], re.Pattern]  # None = the first cell
    column: str
    op: str
    value: float
    unit: str
    cell_unit: Optional[str]
    wording: str
    index: int  # 1-based position in the file, for messages
    id: Optional[str] = None

    @property
    def what(self) -> str:
        return f"target {self.wording!r}"


@dataclass
class Figure:
    id: str
    bench: str
    table: re.Pattern
    caption: Optional[re.Pattern]
    row: Dict[Optional[str], re.Pattern]
    column: str
    format: str  # "cell" or a template with {cell}
    index: int

    @property
    def what(self) -> str:
        return f"figure {self.id!r}"


def _regex(entry: str, key: str, pattern: object) -> re.Pattern:
    if not isinstance(pattern, str):
        raise TargetError(f"{entry}: '{key}' must be a string (a regular expression)")
    try:
        return re.compile(pattern)
    except re.error as e:
        raise TargetError(f"{entry}: '{key}' is not a valid regular expression: {e}") from None


def _row_selector(where: str, row: object) -> Dict[Optional[str], re.Pattern]:
    if isinstance(row, dict):
        if not row:
            raise TargetError(f"{where}: 'row' is an empty table: name at least one column")
        return {str(col): _regex(where, f"row.{col}", pat) for col, pat in row.items()}
    return {None: _regex(where, "row", row)}


def _check_id(where: str, value: object, seen: Dict[str, str]) -> str:
    if not isinstance(value, str) or not ID.match(value):
        raise TargetError(f"{where}: 'id' must be a string of a-z, 0-9, '_' and '-', not {value!r}")
    if value in seen:
        raise TargetError(f"{where}: id {value!r} is already used by {seen[value]}")
    return value


def _check_format(where: str, fmt: object) -> str:
    """"cell", or a one-line template whose only placeholder is {cell}: checked when loaded, not when used."""
    if not isinstance(fmt, str) or not fmt:
        raise TargetError(f"{where}: 'format' must be \"cell\" or a template such as \"{{cell}} ns\"")
    if fmt == "cell":
        return fmt
    if "\n" in fmt or "\r" in fmt or "<!--" in fmt or "-->" in fmt:
        raise TargetError(f"{where}: 'format' must be one line of text without '<!--' or '-->' (it is put "
                          "inside a marker on a table row)")
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(fmt) if name is not None]
    except ValueError as e:
        raise TargetError(f"{where}: 'format' {fmt!r} is not a valid template: {e} (write {{{{ and }}}} for "
                          "literal braces)") from None
    bad = [name for name, spec, conv in fields if name != "cell" or spec or conv]
    if bad or not fields:
        raise TargetError(f"{where}: 'format' {fmt!r}: the only placeholder is {{cell}} (the cell's text as "
                          f"recorded), used at least once{'; found ' + repr(bad) if bad else ''}")
    return fmt


def load_entries(path: Path) -> Tuple[List[Target], List[Figure]]:
    """The [[target]] and [[figure]] entries of a targets file; raises TargetError on the first bad one."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TargetError(f"targets file {path} is missing") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TargetError(f"cannot read targets file {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"{path}: not valid TOML: {e}") from None
    unknown_top = set(data) - {"target", "figure"}
    if unknown_top:
        raise TargetError(f"{path}: unknown top-level keys {sorted(unknown_top)} (only [[target]] and [[figure]] "
                          "entries)")
    ids: Dict[str, str] = {}
    out = []
    for n, e in enumerate(_array(path, data, "target"), 1):
        where = f"{path} target #{n}"
        _check_entry_keys(where, e, _KEYS, ("bench", "table", "row", "column", "op", "value", "target"))
        if not isinstance(e["bench"], str) or not e["bench"]:
            raise TargetError(f"{where}: 'bench' must be a results name such as \"ring_bench\"")
        where = f"{path} target #{n} ({e['bench']}: {e['target']!r})"
        if e["op"] not in OPS:
            raise TargetError(f"{where}: 'op' must be \"<=\" or \">=\", not {e['op']!r}")
        value = e["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TargetError(f"{where}: 'value' must be a finite number")
        for key in ("column", "target", "unit", "cell_unit"):
            if key in e and not isinstance(e[key], str):
                raise TargetError(f"{where}: '{key}' must be a string")
        target_id = None
        if "id" in e:
            target_id = _check_id(where, e["id"], ids)
            ids[target_id] = f"target #{n}"
        out.append(Target(bench=e["bench"], table=_regex(where, "table", e["table"]),
                          caption=_regex(where, "caption", e["caption"]) if "caption" in e else None,
                          row=_row_selector(where, e["row"]), column=e["column"], op=e["op"], value=float(value),
                          unit=e.get("unit", ""), cell_unit=e.get("cell_unit"), wording=e["target"], index=n,
                          id=target_id))
    figures = []
    for n, e in enumerate(_array(path, data, "figure"), 1):
        where = f"{path} figure #{n}"
        _check_entry_keys(where, e, _FIGURE_KEYS, ("id", "bench", "table", "row", "column"))
        figure_id = _check_id(where, e["id"], ids)
        ids[figure_id] = f"figure #{n}"
        where = f"{path} figure #{n} ({figure_id!r})"
        if not isinstance(e["bench"], str) or not e["bench"]:
            raise TargetError(f"{where}: 'bench' must be a results name such as \"ring_bench\"")
        if not isinstance(e["column"], str):
            raise TargetError(f"{where}: 'column' must be a string")
        figures.append(Figure(id=figure_id, bench=e["bench"], table=_regex(where, "table", e["table"]),
                              caption=_regex(where, "caption", e["caption"]) if "caption" in e else None,
                              row=_row_selector(where, e["row"]), column=e["column"],
                              format=_check_format(where, e.get("format", "cell")), index=n))
    return out, figures


def _check_entry_keys(where: str, e: object, known: object, required: Tuple[str, ...]) -> None:
    """An entry is a table holding every required key and no key outside `known`."""
    if not isinstance(e, dict):
        raise TargetError(f"{where}: not a table")
    unknown = set(e) - set(known)
    if unknown:
        raise TargetError(f"{where}: unknown keys {sorted(unknown)} (known: {', '.join(sorted(known))})")
    for key in required:
        if key not in e:
            raise TargetError(f"{where}: '{key}' is missing")


def _array(path: Path, data: Dict[str, object], key: str) -> List[object]:
    entries = data.get(key, [])
    if not isinstance(entries, list):
        raise TargetError(f"{path}: '{key}' must be an array of tables: write [[{key}]]")
    return entries


def load_targets(path: Path) -> List[Target]:
    return load_entries(path)[0]


def _row_matches(t: Target | Figure, columns: List[str], row: List[str]) -> bool:
    for col, pat in t.row.items():
        cell = row[0] if col is None else row[columns.index(col)]
        if not pat.search(cell):
            return False
    return True


def _with_unit(v: float, unit: str) -> str:
    """1.3x, 12%, 461 ns, 5: a number as the page writes it."""
    return f"{v:.6g}{unit}" if unit in ("x", "%") else f"{v:.6g} {unit}" if unit else f"{v:.6g}"


def select_cell(t: Target | Figure, result: Dict[str, object]) -> Tuple[List[str], str]:
    """(row, cell) of the one cell an entry selects; raises TargetError naming what is missing or ambiguous."""
    name = f"{t.bench}.json"
    what = t.what
    tables = [tb for tb in result["tables"] if t.table.search(tb["heading"])]
    if not tables:
        raise TargetError(f"{what}: no table of {name} has a heading matching {t.table.pattern!r}")
    if t.caption is not None:
        tables = [tb for tb in tables if t.caption.search(tb.get("caption") or "")]
        if not tables:
            raise TargetError(f"{what}: no table of {name} under {t.table.pattern!r} has a caption matching "
                              f"{t.caption.pattern!r}")
    with_column = [tb for tb in tables if t.column in tb["columns"]]
    if not with_column:
        seen = "; ".join(" | ".join(tb["columns"]) for tb in tables)
        raise TargetError(f"{what}: no column {t.column!r} in the tables of {name} matching "
                          f"{t.table.pattern!r} (their columns: {seen})")
    missing = [c for c in t.row if c is not None and all(c not in tb["columns"] for tb in with_column)]
    if missing:
        raise TargetError(f"{what}: the row selector names columns {missing} that table does not have")
    hits = [(tb, r) for tb in with_column if all(c is None or c in tb["columns"] for c in t.row)
            for r in tb["rows"] if _row_matches(t, tb["columns"], r)]
    selector = " and ".join(f"{'first cell' if c is None else c} ~ {p.pattern!r}" for c, p in t.row.items())
    if not hits:
        raise TargetError(f"{what}: no row of {name}'s table {with_column[0]['heading']!r} has {selector}")
    if len(hits) > 1:
        rows = "; ".join(" | ".join(r) for _, r in hits[:4])
        raise TargetError(f"{what}: {len(hits)} rows of {name} have {selector} (e.g. {rows}): make 'table', "
                          "'caption' or 'row' pick exactly one")
    table, row = hits[0]
    return row, row[table["columns"].index(t.column)]


def check(t: Target, result: Dict[str, object]) -> Tuple[str, bool]:
    """(measured cell as shown, met) for one target against one results dict; raises TargetError."""
    row, cell = select_cell(t, result)
    try:
        m = parse_cell(cell)
        column_unit = t.cell_unit if t.cell_unit is not None else t.unit
        low = convert(m.low, m.unit, column_unit, t.unit)
        high = convert(m.high, m.unit, column_unit, t.unit)
    except ValueError as e:
        raise TargetError(f"{t.what}: {t.bench}.json, row {row[0]!r}, column {t.column!r}: {e}") from None
    checked = high if t.op == "<=" else low
    met = checked <= t.value if t.op == "<=" else checked >= t.value
    measured = cell.replace("|", "\\|")
    if m.is_range:
        end = "upper" if t.op == "<=" else "lower"
        measured += f" (range: its {end} end, {_with_unit(checked, t.unit)}, checked)"
    return measured, met


def evaluate(t: Target, result: Dict[str, object]) -> Tuple[str, str]:
    """(measured, met?) cells of the targets table for one target against one results dict; raises TargetError."""
    measured, met = check(t, result)
    return measured, "yes" if met else "**no**"


def figure_text(f: Figure, result: Dict[str, object]) -> str:
    """The figure as shown: the selected cell's text trimmed, through the format; raises TargetError."""
    _, cell = select_cell(f, result)
    cell = cell.strip()
    if not cell:
        raise TargetError(f"{f.what}: the selected cell of {f.bench}.json is empty")
    return cell if f.format == "cell" else f.format.format(cell=cell)
