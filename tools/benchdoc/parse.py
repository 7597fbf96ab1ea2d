"""Parses a nanotick bench's Markdown output (bench/common/bench_util.cpp) into its machine header, tables and notes.

The output is: a machine header `## <bench>[: subtitle]` followed by `- key: value` lines (CPU, clock,
kernel; some benches add more), then `###`/`####` headings, prose lines and pipe tables (a header row, a
`|---|---:|` separator, rows). Each table is kept with the nearest heading above it and, as its caption, the
prose line just above it when that line belongs to the same heading (ring_bench prints two tables under one
heading: the second is told apart by "Spread across 3 repeats ..."). Everything else that is not blank is a
note, kept in order with its heading. Anything that does not fit (no header, a table without its separator,
a row with a different cell count than its header) raises ParseError naming the line.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

_HEADING = re.compile(r"^(#{2,6})\s+(.*?)\s*$")
_SEPARATOR_CELL = re.compile(r"^\s*(:?)-+(:?)\s*$")
_CPU = re.compile(r"^(?P<model>.*?),\s*(?P<n>\d+) CPUs? allowed$")
_KERNEL = re.compile(r"^(?P<kernel>.*?);\s*build:\s*(?P<build>.*)$")


class ParseError(Exception):
    pass


def split_row(line: str) -> List[str]:
    """The cells of one `| a | b |` line, stripped; `\\|` inside a cell is a literal bar."""
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|") and len(s) >= 2):
        raise ValueError("a table line must start and end with '|'")
    cells: List[str] = []
    cur: List[str] = []
    i = 1
    while i < len(s) - 1:
        c = s[i]
        if c == "\\" and i + 1 < len(s) - 1 and s[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if c == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def _separator_alignments(line: str) -> Optional[List[str]]:
    """["left"|"right"|"center"|"none", ...] when `line` is a table separator, else None."""
    try:
        cells = split_row(line)
    except ValueError:
        return None
    out = []
    for cell in cells:
        m = _SEPARATOR_CELL.match(cell)
        if not m:
            return None
        left, right = bool(m.group(1)), bool(m.group(2))
        out.append("center" if left and right else "right" if right else "left" if left else "none")
    return out


def _machine(bullets: Dict[str, str]) -> Dict[str, object]:
    cpu_line = bullets.get("CPU")
    if cpu_line is None:
        raise ParseError("the machine header has no '- CPU: <model>, <n> CPUs allowed' line")
    m = _CPU.match(cpu_line)
    machine: Dict[str, object] = {"cpu": m.group("model") if m else cpu_line,
                                  "cpus": int(m.group("n")) if m else None,
                                  "clock": bullets.get("clock"), "kernel": None, "build": None}
    kernel_line = bullets.get("kernel")
    if kernel_line is not None:
        k = _KERNEL.match(kernel_line)
        machine["kernel"], machine["build"] = (k.group("kernel"), k.group("build")) if k else (kernel_line, None)
    extra = {key: value for key, value in bullets.items() if key not in ("CPU", "clock", "kernel")}
    if extra:
        machine["extra"] = extra
    return machine


def parse_output(text: str) -> Dict[str, object]:
    """{title, bench, machine, tables, notes} of one bench's stdout; raises ParseError when it does not fit."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines):
        raise ParseError("the bench printed nothing on stdout")
    m = _HEADING.match(lines[i])
    if not m or len(m.group(1)) != 2:
        raise ParseError(f"line {i + 1}: expected the machine header '## <bench>', found {lines[i]!r}")
    title = m.group(2)
    bench = title.split(":", 1)[0].strip()
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    bullets: Dict[str, str] = {}
    while i < len(lines) and lines[i].startswith("- "):
        key, sep, value = lines[i][2:].partition(":")
        if not sep:
            break  # a list item that is not a "key: value" pair ends the header: it is prose
        bullets[key.strip()] = value.strip()
        i += 1
    machine = _machine(bullets)

    tables: List[Dict[str, object]] = []
    notes: List[Dict[str, object]] = []
    heading, level = title, 2
    caption: Optional[str] = None  # the prose line right above, while still under the same heading
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        h = _HEADING.match(line)
        if h:
            if len(h.group(1)) == 2:  # every bench prints one machine header: a second one is a second bench
                raise ParseError(f"line {i + 1}: a second machine header {line.strip()!r}: the output holds more "
                                 "than one bench; record each bench into its own results file")
            heading, level, caption = h.group(2), len(h.group(1)), None
            i += 1
            continue
        if stripped.startswith("|"):
            start = i + 1
            try:
                columns = split_row(stripped)
            except ValueError as e:
                raise ParseError(f"line {start}: {e}: {line!r}") from None
            align = _separator_alignments(lines[i + 1]) if i + 1 < len(lines) else None
            if align is None:
                raise ParseError(f"line {start}: a table row without a '|---|' separator line under its header "
                                 f"(heading {heading!r}): {line!r}")
            if len(align) != len(columns):
                raise ParseError(f"line {start + 1}: the separator has {len(align)} cells, the header "
                                 f"{len(columns)} (heading {heading!r})")
            rows: List[List[str]] = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                try:
                    cells = split_row(lines[i])
                except ValueError as e:
                    raise ParseError(f"line {i + 1}: {e}: {lines[i]!r}") from None
                if len(cells) != len(columns):
                    raise ParseError(f"line {i + 1}: a row of {len(cells)} cells under a header of "
                                     f"{len(columns)} (heading {heading!r}): {lines[i]!r}")
                rows.append(cells)
                i += 1
            table: Dict[str, object] = {"heading": heading, "level": level, "columns": columns, "align": align,
                                        "rows": rows}
            if caption is not None:
                table["caption"] = caption
            tables.append(table)
            caption = None
            continue
        notes.append({"heading": heading, "text": stripped})
        caption = stripped
        i += 1
    if not tables:
        raise ParseError("the bench printed no table")
    return {"title": title, "bench": bench, "machine": machine, "tables": tables, "notes": notes}
