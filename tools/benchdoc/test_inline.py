"""python -m tools.benchdoc render's inline markers (<!-- figure/measured/target: ... -->) and the targets
file's [[figure]] entries and target ids: rendering several to a table row, idempotence and --check, code
spans and fences left alone, and the refusals of bad pages, bad entries and hostile results files. The
results are crafted here, so these tests need no bench binary and no docs/benchmarks/results."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]


def benchdoc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.benchdoc", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def table(heading: str, columns: List[str], rows: List[List[str]], caption: Optional[str] = None) -> Dict:
    t = {"heading": heading, "columns": columns, "rows": rows, "align": ["left"] + ["right"] * (len(columns) - 1)}
    if caption is not None:
        t["caption"] = caption
    return t


RING = {
    "schema": 1, "name": "ring_bench", "bench": "ring_bench", "title": "ring_bench",
    "argv": ["build/release/bench/ring_bench", "--quick"], "command": "build/release/bench/ring_bench --quick",
    "git": {"commit": "15dfbd7", "dirty": False}, "date": "2026-11-29T06:57:44Z",
    "machine": {"cpu": "Test CPU", "cpus": 2, "build": "release"},
    "loadavg": {"before": "0.50 0.40 0.30 1/100 1", "after": "0.60 0.40 0.30 1/100 2"}, "wall_seconds": 0.3,
    "tables": [
        table("(a) SPSC throughput, 8-byte items", ["impl", "M ops/s", "vs boost"],
              [["nanotick::SpscRing", "190.94", "1.41x"], ["boost::lockfree::spsc_queue", "135.2", "1.00x"]]),
        table("(a) SPSC throughput, 8-byte items", ["impl", "median", "min", "max"],
              [["nanotick::SpscRing", "190.94", "186.99", "197.62"]], caption="Spread across 3 repeats:"),
        table("(b) SPSC round trip (ns)", ["impl", "p50", "p99", "vs floor"],
              [["floor", "511", "783", "1.00x"], ["nanotick::SpscRing", " 530 ", "763", "1.04x"],
               ["boost::lockfree::spsc_queue", "823", "1191", "1.61x"]]),
        table("(c) odd cells", ["impl", "pipe", "backtick", "empty", "range"],
              [["x", "a | b", "`1.2x", "", "0.80-1.19 M/s"]]),
    ],
    "notes": [],
}

TARGETS = """
[[target]]
id = "rtt"
bench = "ring_bench"
table = '^\\(b\\)'
row = '^nanotick::SpscRing$'
column = "vs floor"
op = "<="
value = 1.3
unit = "x"
target = "round trip p50 <= 1.3x the floor"

[[target]]
id = "rtt-strict"
bench = "ring_bench"
table = '^\\(b\\)'
row = '^nanotick::SpscRing$'
column = "vs floor"
op = "<="
value = 1.0
unit = "x"
target = "round trip p50 <= the floor"

[[target]]
bench = "ring_bench"
table = '^\\(a\\)'
caption = '^$'
row = '^nanotick::SpscRing$'
column = "vs boost"
op = ">="
value = 1.0
unit = "x"
target = "an entry without an id: only in targets blocks"

[[figure]]
id = "rtt-p50"
bench = "ring_bench"
table = '^\\(b\\)'
row = '^nanotick::SpscRing$'
column = "p50"
format = "{cell} ns"

[[figure]]
id = "vs-boost"
bench = "ring_bench"
table = '^\\(a\\)'
caption = '^$'
row = '^nanotick::SpscRing$'
column = "vs boost"

[[figure]]
id = "pipe"
bench = "ring_bench"
table = '^\\(c\\)'
row = '^x$'
column = "pipe"

[[figure]]
id = "backtick"
bench = "ring_bench"
table = '^\\(c\\)'
row = '^x$'
column = "backtick"

[[figure]]
id = "empty"
bench = "ring_bench"
table = '^\\(c\\)'
row = '^x$'
column = "empty"

[[figure]]
id = "ambiguous"
bench = "ring_bench"
table = '^\\(a\\)'
row = '^nanotick::SpscRing$'
column = "impl"

[[figure]]
id = "no-row"
bench = "ring_bench"
table = '^\\(b\\)'
row = '^moodycamel$'
column = "p50"

[[figure]]
id = "no-results"
bench = "pool_bench"
table = '^x'
row = '^x$'
column = "p50"
"""


@pytest.fixture
def site(tmp_path):
    """(results dir, targets file, page path, write(results dict)) for one test."""
    results = tmp_path / "results"
    results.mkdir()

    def write(data: Dict, name: str = "ring_bench") -> None:
        (results / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False))

    write(RING)
    targets = tmp_path / "targets.toml"
    targets.write_text(TARGETS)
    return results, targets, tmp_path / "README.md", write


def render(site, *extra: str) -> subprocess.CompletedProcess:
    results, targets, page, _ = site
    return benchdoc("render", str(page), "--results", str(results), "--targets", str(targets), *extra)


ROW = ("| SPSC ring | <!-- figure: rtt-p50 -->old<!-- /figure --> (<!-- target: rtt -->?<!-- /target -->, "
       "strict: <!-- target: rtt-strict -->met<!-- /target -->) | <!-- figure: vs-boost --><!-- /figure --> | "
       "<!-- measured: ring_bench -->2020-01-01, `0000000`<!-- /measured --> |\n")
ROW_RENDERED = ("| SPSC ring | <!-- figure: rtt-p50 -->530 ns<!-- /figure --> "
                "(<!-- target: rtt -->met<!-- /target -->, "
                "strict: <!-- target: rtt-strict -->**missed**<!-- /target -->) | "
                "<!-- figure: vs-boost -->1.41x<!-- /figure --> | "
                "<!-- measured: ring_bench -->2026-11-29, `15dfbd7`<!-- /measured --> |\n")


def test_several_inline_markers_on_a_table_row_render_and_stay_rendered(site):
    _, _, page, _ = site
    before = "# nanotick\n\n| part | figure | vs peer | measured |\n|---|---|---|---|\n"
    after = "\nProse after the table.\n"
    page.write_text(before + ROW + after)
    p = render(site)
    assert p.returncode == 0, p.stderr
    assert page.read_text() == before + ROW_RENDERED + after
    assert "rendered 5 generated blocks and inline markers" in p.stderr
    # Idempotent, and --check agrees; a hand edit inside a marker is caught and --check leaves it.
    p = render(site)
    assert p.returncode == 0 and page.read_text() == before + ROW_RENDERED + after
    assert render(site, "--check").returncode == 0
    edited = before + ROW_RENDERED.replace("530 ns", "430 ns") + after
    page.write_text(edited)
    p = render(site, "--check")
    assert p.returncode == 1 and "-| SPSC ring | <!-- figure: rtt-p50 -->430 ns" in p.stdout
    assert "+| SPSC ring | <!-- figure: rtt-p50 -->530 ns" in p.stdout and page.read_text() == edited


def test_measured_notes_a_dirty_tree_and_an_unknown_commit(site):
    _, _, page, write = site
    page.write_text("<!-- measured: ring_bench --><!-- /measured -->\n")
    write({**RING, "git": {"commit": "15dfbd7c0ffee", "dirty": True}})
    assert render(site).returncode == 0
    assert page.read_text() == "<!-- measured: ring_bench -->2026-11-29, `15dfbd7`+dirty<!-- /measured -->\n"
    write({**RING, "git": {"commit": None, "dirty": None}})  # recorded where git was not available
    assert render(site).returncode == 0
    assert page.read_text() == "<!-- measured: ring_bench -->2026-11-29, unknown commit<!-- /measured -->\n"


def test_a_figure_is_the_cell_verbatim_trimmed_with_pipes_escaped(site):
    _, _, page, _ = site
    page.write_text("| <!-- figure: pipe -->x<!-- /figure --> | <!-- figure: backtick -->x<!-- /figure --> | "
                    "<!-- measured: ring_bench --><!-- /measured --> |\r\n"
                    "no newline at the end: <!-- figure: rtt-p50 --><!-- /figure -->")
    p = render(site)
    assert p.returncode == 0, p.stderr
    text = page.read_bytes().decode()
    assert text == ("| <!-- figure: pipe -->a \\| b<!-- /figure --> | <!-- figure: backtick -->`1.2x<!-- /figure --> | "
                    "<!-- measured: ring_bench -->2026-11-29, `15dfbd7`<!-- /measured --> |\r\n"
                    "no newline at the end: <!-- figure: rtt-p50 -->530 ns<!-- /figure -->")
    # The lone backtick a figure brought in does not pair with the commit's and turn the measured marker
    # into code on the next render: still idempotent.
    p = render(site, "--check")
    assert p.returncode == 0, p.stdout + p.stderr


def test_markers_in_fences_and_code_spans_are_text(site):
    _, _, page, _ = site
    page.write_text("Write `<!-- figure: ID -->TEXT<!-- /figure -->` in a row, or ``<!-- /target -->`` alone;\n"
                    "`<!-- figure: nope -->`, then a real one: <!-- figure: vs-boost --><!-- /figure -->\n"
                    "```md\n| <!-- figure: no-such-id -->x<!-- /figure --> | <!-- measured: ../x -->\n```\n"
                    "~~~\n<!-- target: unclosed -->\n~~~\n")
    p = render(site)
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert "real one: <!-- figure: vs-boost -->1.41x<!-- /figure -->\n" in text
    assert text.count("1.41x") == 1 and "TEXT" in text and "no-such-id -->x<!--" in text


@pytest.mark.parametrize("line,message", [
    ("<!-- figure: rtt-p50 -->x", "line 2, <!-- figure: rtt-p50 -->: not closed on this line"),
    ("<!-- figure: rtt-p50 -->x\n<!-- /figure -->", "not closed on this line"),  # no marker spans lines
    ("x<!-- /figure -->", "line 2, <!-- /figure -->: a closing marker with no inline marker open"),
    ("<!-- figure: rtt-p50 -->x<!-- /target -->", "closed by '<!-- /target -->': expected '<!-- /figure -->'"),
    ("<!-- figure: rtt-p50 --><!-- figure: vs-boost --><!-- /figure --><!-- /figure -->",
     "not closed before '<!-- figure: vs-boost -->'"),
    ("<!-- figure: rtt-p50 -->x<!-- /figure extra -->", "expected '<!-- /figure -->'"),
    ("<!-- figure rtt-p50 --><!-- /figure -->", "malformed inline marker: write '<!-- figure: ID -->'"),
    ("<!-- figure: --><!-- /figure -->", "malformed inline marker"),
    ("<!-- figure: a b --><!-- /figure -->", "malformed inline marker"),
    ("<!-- measured: --><!-- /measured -->", "write '<!-- measured: NAME -->'"),
    ("| <!-- figure: rtt-p50 x | y |", "malformed inline marker: no '-->' on this line"),
    ("<!-- figure: nope --><!-- /figure -->", "has no [[figure]] with id 'nope' (figure ids: rtt-p50, vs-boost,"),
    ("<!-- target: nope --><!-- /target -->", "has no [[target]] with id 'nope' (target ids: rtt, rtt-strict)"),
    ("<!-- figure: RTT --><!-- /figure -->", "'RTT' is not an id"),
    ("<!-- figure: ../x --><!-- /figure -->", "'../x' is not an id"),
    ("<!-- measured: no_such_bench --><!-- /measured -->", "results file"),
    ("<!-- measured: ../../etc/passwd --><!-- /measured -->", "is not a results name"),
    ("<!-- figure: ambiguous --><!-- /figure -->", "figure 'ambiguous': 2 rows of ring_bench.json have"),
    ("<!-- figure: no-row --><!-- /figure -->", "figure 'no-row': no row of ring_bench.json's table"),
    ("<!-- figure: no-results --><!-- /figure -->", "results file"),
    ("<!-- figure: empty --><!-- /figure -->", "figure 'empty': the selected cell of ring_bench.json is empty"),
    ("ok <!-- figure: vs-boost --><!-- /figure --> then <!-- figure: nope --><!-- /figure -->", "id 'nope'"),
])
def test_render_refuses_a_bad_inline_marker_and_leaves_the_file_alone(site, line, message):
    _, _, page, _ = site
    original = f"| a | b |\n{line}\n<!-- measured: ring_bench -->stale<!-- /measured -->\n"
    page.write_text(original)
    p = render(site)
    assert p.returncode == 2 and message in p.stderr, p.stderr
    assert "README.md line 2" in p.stderr and "left unchanged" in p.stderr
    assert page.read_text() == original
    p = render(site, "--check")
    assert p.returncode == 2 and message in p.stderr and p.stdout == ""


# A results file is data from outside: a hostile or hand-edited one must not break the page or smuggle a
# marker into it that the next render would read differently.
@pytest.mark.parametrize("mutate,marker,message", [
    (lambda r: r["tables"][3]["rows"][0].__setitem__(1, "a<!-- /figure -->b"), "figure: pipe",
     "holds a line break, '<!--' or '-->'"),
    (lambda r: r["tables"][3]["rows"][0].__setitem__(1, "a --> b"), "figure: pipe", "holds a line break"),
    (lambda r: r["tables"][3]["rows"][0].__setitem__(1, "1.0\n| evil | row |"), "figure: pipe",
     "has a line break in '1.0\\n| evil | row |'"),
    (lambda r: r["tables"][2].__setitem__("heading", "(b)\r\nx"), "figure: rtt-p50", "has a line break"),
    (lambda r: r["git"].__setitem__("commit", "`; rm -rf / #"), "measured: ring_bench",
     "git commit '`; rm -rf / #' is not a hexadecimal commit id"),
    (lambda r: r["git"].__setitem__("commit", 1234567), "measured: ring_bench", "is not a hexadecimal commit id"),
    (lambda r: r.__setitem__("date", "yesterday"), "measured: ring_bench", "date 'yesterday' does not start with"),
    (lambda r: r.__setitem__("git", "15dfbd7"), "measured: ring_bench", "'git' missing or of the wrong type"),
    (lambda r: r.__setitem__("schema", 2), "figure: rtt-p50", "this tool reads schema 1"),
    (lambda r: r["tables"][2]["rows"][1].pop(), "target: rtt", "has a row that is not 4 strings"),
    (lambda r: r["tables"][2]["rows"][1].__setitem__(3, "fast"), "target: rtt", "is not a number"),
])
def test_render_refuses_a_hostile_results_file(site, mutate, marker, message):
    _, _, page, write = site
    data = copy.deepcopy(RING)
    mutate(data)
    write(data)
    kind = marker.split(":")[0]
    original = f"| x | <!-- {marker} -->old<!-- /{kind} --> |\n"
    page.write_text(original)
    p = render(site)
    assert p.returncode == 2 and message in p.stderr, p.stderr
    assert page.read_text() == original


def test_figure_entries_and_target_ids_resolve_against_crafted_results(site):
    # The same cell selection as a target: a row selector naming columns, a caption to tell tables apart.
    _, targets, page, _ = site
    targets.write_text(TARGETS + "\n[[figure]]\nid = 'spread-max'\nbench = 'ring_bench'\ntable = '^\\(a\\)'\n"
                       "caption = '^Spread'\nrow = { impl = 'SpscRing' }\ncolumn = 'max'\n"
                       "format = '{cell} M/s (max of {{3}}: {cell})'\n")
    page.write_text("<!-- figure: spread-max --><!-- /figure -->\n")
    p = render(site)
    assert p.returncode == 0, p.stderr
    assert page.read_text() == "<!-- figure: spread-max -->197.62 M/s (max of {3}: 197.62)<!-- /figure -->\n"


@pytest.mark.parametrize("entry,message", [
    ("[[figure]]\nid = 'rtt-p50'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n",
     "id 'rtt-p50' is already used by figure #1"),
    ("[[figure]]\nid = 'rtt'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n",
     "id 'rtt' is already used by target #1"),
    ("[[figure]]\nid = 'Bad Id'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n",
     "'id' must be a string of a-z, 0-9, '_' and '-', not 'Bad Id'"),
    ("[[figure]]\nid = 7\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n", "'id' must be a string"),
    ("[[figure]]\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n", "figure #9: 'id' is missing"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\nrow = 'x'\ncolumn = 'p50'\n", "'table' is missing"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nop = '<='\n",
     "unknown keys ['op']"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = '(['\nrow = 'x'\ncolumn = 'p50'\n",
     "'table' is not a valid regular expression"),
    ("[[figure]]\nid = 'f'\nbench = ''\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n", "'bench' must be a results name"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = '{value} {unit}'\n",
     "the only placeholder is {cell}"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = '{cell!r}'\n",
     "the only placeholder is {cell}"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = 'p50'\n",
     "the only placeholder is {cell}"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = '{cell'\n",
     "is not a valid template"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\n"
     "format = \"{cell}\\n| x |\"\n",
     "'format' must be one line"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = '{cell} -->'\n",
     "'format' must be one line"),
    ("[[figure]]\nid = 'f'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nformat = ''\n",
     "'format' must be \"cell\" or a template"),
    ("[[target]]\nid = 'vs-boost'\nbench = 'ring_bench'\ntable = 'x'\nrow = 'x'\ncolumn = 'p50'\nop = '<='\n"
     "value = 1\ntarget = 't'\n", "figure #2: id 'vs-boost' is already used by target #4"),
    ("figure = 'not an array'\n", "'figure' must be an array of tables"),
])
def test_render_refuses_a_bad_figure_or_target_id_entry(site, entry, message):
    _, targets, page, _ = site
    # An entry appended as a [[figure]] ends up #9 (after the 8 of TARGETS); as a [[target]] #4, loaded
    # before the figures. A top-level key cannot share a file with [[figure]] tables: it is the whole file.
    targets.write_text(entry if not entry.startswith("[[") else TARGETS + "\n" + entry)
    original = "| x | <!-- figure: vs-boost -->old<!-- /figure --> |\n"
    page.write_text(original)
    p = render(site)
    assert p.returncode == 2 and message in p.stderr, p.stderr
    assert "README.md line 1, <!-- figure: vs-boost -->" in p.stderr and page.read_text() == original


def test_a_page_of_only_measured_markers_needs_no_targets_file(site):
    results, _, page, _ = site
    page.write_text("<!-- measured: ring_bench --><!-- /measured -->\n")
    p = benchdoc("render", str(page), "--results", str(results), "--targets", str(page.parent / "missing.toml"))
    assert p.returncode == 0, p.stderr
    page.write_text("<!-- figure: rtt-p50 --><!-- /figure -->\n")
    p = benchdoc("render", str(page), "--results", str(results), "--targets", str(page.parent / "missing.toml"))
    assert p.returncode == 2 and "missing.toml is missing" in p.stderr


def test_the_real_targets_file_loads_and_its_figures_have_unique_ids():
    from tools.benchdoc.targets import load_entries
    targets, figures = load_entries(ROOT / "docs" / "benchmarks" / "targets.toml")
    ids = [t.id for t in targets if t.id] + [f.id for f in figures]
    assert figures and len(ids) == len(set(ids))
