"""python -m tools.benchdoc: recording real benches' --quick runs and rendering pages from them, the
refusals of bad input (benches that fail or print ragged tables, malformed or unclosed markers, missing
results, tables, rows, columns and unparsable cells), idempotence, --check, and docs/BENCHMARKS.md's
generated blocks being up to date."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from tools.benchdoc.parse import ParseError, parse_output
from tools.benchdoc.targets import parse_cell

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "build" / "release" / "bench"
TARGETS = ROOT / "docs" / "benchmarks" / "targets.toml"
QUICK_BENCHES = ("ring_bench", "hash_map_bench")  # 0.3 s and ~2 s with --quick on the 2-core machine


def benchdoc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.benchdoc", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def need_bench(name: str) -> Path:
    path = BENCH_DIR / name
    if not path.exists():
        message = f"{path} is missing: build it with 'cmake --build build/release --target {name}'"
        if os.environ.get("CI") == "true":
            pytest.fail(message)  # CI builds the benches before the Python tests: missing is a failure there
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def real_results(tmp_path_factory):
    """The quick benches recorded once through the command line, with what each printed."""
    for name in QUICK_BENCHES:
        need_bench(name)
    out = tmp_path_factory.mktemp("results")
    printed = {}
    for name in QUICK_BENCHES:
        p = benchdoc("record", "--out-dir", str(out), "--", f"build/release/bench/{name}", "--quick")
        assert p.returncode == 0, p.stderr
        printed[name] = p.stdout
    return out, printed


def fake_bench(tmp_path: Path, stdout: str, status: int = 0, name: str = "fake_bench") -> Path:
    """A stand-in bench: a shell script printing `stdout` and exiting with `status`."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\ncat <<'BENCH_EOF'\n{stdout}BENCH_EOF\nexit {status}\n")
    path.chmod(0o755)
    return path


HEADER = """## fake_bench: a stand-in

- CPU: Test CPU 9000, 4 CPUs allowed
- clock: invariant TSC calibrated at 2.000 GHz against steady_clock
- kernel: Linux 6.1.0; build: release

"""

FAKE_OUTPUT = HEADER + """Intro prose under the machine header.

### Latency (ns)

| impl | p50 | p99 | throughput | ratio | share | spread |
|---|---:|---:|---:|---:|---:|---:|
| ours | 461 ns | 4.1 µs | 0.80-1.19 M/s | 1.16x | 12% | 1.14x [1.10x-1.20x] |
| theirs | 23.6k | 12.0M | n/a | 2.9 (±3%) | 6.92x / 1.34x | 110-120 |

Spread across 3 repeats (ns):

| impl | p50 min-max |
|---|---:|
| ours | 450-470 |

#### A | pipe \\| in a cell

| a | b |
|:---:|:---|
| x \\| y | z |

A closing note.
"""


def record_fake(tmp_path: Path, stdout: str = FAKE_OUTPUT, status: int = 0, name: str = "fake_bench"):
    bench = fake_bench(tmp_path, stdout, status, name)
    out = tmp_path / "results"
    return benchdoc("record", "--out-dir", str(out), "--", str(bench)), out


def write_targets(tmp_path: Path, entries: List[str]) -> Path:
    path = tmp_path / "targets.toml"
    path.write_text("\n".join("[[target]]\n" + e for e in entries))
    return path


def fake_target(row: str = "'^ours$'", column: str = "p50", op: str = "<=", value: str = "500", unit: str = "ns",
                extra: str = "") -> str:
    return (f"bench = 'fake_bench'\ntable = '^Latency'\ncaption = '^$'\nrow = {row}\ncolumn = '{column}'\n"
            f"op = '{op}'\nvalue = {value}\nunit = '{unit}'\ntarget = 'the {column} target'\n{extra}\n")


# ------------------------------------------------------------------ record, on real benches


def test_record_writes_a_real_quick_run_as_json(real_results):
    out, printed = real_results
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    for name in QUICK_BENCHES:
        r = json.loads((out / f"{name}.json").read_text())
        assert r["schema"] == 1 and r["name"] == name and r["bench"] == name
        assert r["argv"] == [f"build/release/bench/{name}", "--quick"]
        assert r["command"] == f"build/release/bench/{name} --quick"
        # Other people commit to the same tree while the tests run: the recorded commit is HEAD's or its
        # ancestor's, never anything else.
        assert re.fullmatch(r"[0-9a-f]{7,}", r["git"]["commit"]) and isinstance(r["git"]["dirty"], bool)
        assert subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", r["git"]["commit"], commit]
                              ).returncode == 0
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["date"])
        assert r["machine"]["cpu"] and r["machine"]["cpus"] >= 1 and r["machine"]["build"] == "release"
        assert len(r["loadavg"]["before"].split()) == 5 and len(r["loadavg"]["after"].split()) == 5
        assert r["wall_seconds"] > 0
        assert r["tables"]
        for t in r["tables"]:
            assert t["heading"] and t["rows"] and all(len(row) == len(t["columns"]) for row in t["rows"])
            # The bench's stdout was passed through: every recorded row is a line of what it printed.
            for row in t["rows"]:
                assert "| " + " | ".join(row) + " |" in printed[name].splitlines()
        assert printed[name].startswith(f"## {name}")
    ring = json.loads((out / "ring_bench.json").read_text())
    assert [t["heading"][:3] for t in ring["tables"]] == ["(a)", "(a)", "(b)", "(b)", "(c)", "(c)"]
    assert ring["tables"][1]["caption"].startswith("Spread across")
    assert any(n["text"].startswith("Targets (this run)") for n in ring["notes"])


# timing: a bound on the machine's speed as much as on the benches' --quick sizes.
@pytest.mark.timing
def test_the_quick_runs_take_seconds(real_results):
    out, _ = real_results
    for name in QUICK_BENCHES:
        seconds = json.loads((out / f"{name}.json").read_text())["wall_seconds"]
        assert seconds < 30, f"{name} --quick took {seconds} s: too slow for a test that runs in every CI pass"


def test_render_a_page_from_real_results_with_the_real_targets(real_results, tmp_path):
    out, _ = real_results
    page = tmp_path / "page.md"
    before = "# Page\n\nHand-written prose stays.\n\n"
    page.write_text(before + "<!-- bench: ring_bench tables: ^\\(b\\) -->\nstale\n<!-- /bench -->\n\n"
                    "<!-- bench: hash_map_bench -->\n<!-- /bench -->\n\n"
                    "<!-- targets: ring_bench hash_map_bench -->\n<!-- /targets -->\n\nThe end.\n")
    p = benchdoc("render", str(page), "--results", str(out), "--targets", str(TARGETS))
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert text.startswith(before) and text.endswith("<!-- /targets -->\n\nThe end.\n")
    assert "stale" not in text
    ring_block = text.split("<!-- bench: ring_bench tables: ^\\(b\\) -->\n")[1].split("<!-- /bench -->")[0]
    assert re.search(r"^Measured \d{4}-\d\d-\d\d at commit `[0-9a-f]{7,}`.* on .+, \d+ CPUs; load [\d.]+ → "
                     r"[\d.]+; `build/release/bench/ring_bench --quick` \([\d.]+ s\)\.$", ring_block, re.M)
    assert "**(b) SPSC round trip" in ring_block and "(a) SPSC" not in ring_block
    assert "| nanotick::SpscRing | 60000 |" in ring_block or "| nanotick::SpscRing |" in ring_block
    assert "Spread across 3 repeats of" in ring_block
    hm_block = text.split("<!-- bench: hash_map_bench -->\n")[1].split("<!-- /bench -->")[0]
    assert "**ns per operation" in hm_block and "**find (hit) latency" in hm_block
    targets_block = text.split("<!-- targets: ring_bench hash_map_bench -->\n")[1].split("<!-- /targets -->")[0]
    rows = [line for line in targets_block.splitlines() if line.startswith("| ") and "target |" not in line]
    assert len(rows) == 3
    for line in rows:
        assert re.fullmatch(r"\| .+ \| [\d.]+x \| (yes|\*\*no\*\*) \|", line), line
    # Rendering again changes nothing, and --check agrees.
    first = page.read_bytes()
    assert benchdoc("render", str(page), "--results", str(out), "--targets", str(TARGETS)).returncode == 0
    assert page.read_bytes() == first
    check = benchdoc("render", str(page), "--results", str(out), "--targets", str(TARGETS), "--check")
    assert check.returncode == 0 and check.stdout == "", check.stdout + check.stderr


def test_check_catches_a_hand_edit_inside_a_block(real_results, tmp_path):
    out, _ = real_results
    page = tmp_path / "page.md"
    page.write_text("<!-- bench: ring_bench tables: ^\\(a\\) -->\n<!-- /bench -->\n")
    assert benchdoc("render", str(page), "--results", str(out)).returncode == 0
    rendered = page.read_text()
    edited = re.sub(r"(\| nanotick::SpscRing \| )[\d.]+", r"\g<1>999.99", rendered, count=1)
    assert edited != rendered
    page.write_text(edited)
    p = benchdoc("render", str(page), "--results", str(out), "--check")
    assert p.returncode == 1
    assert "-| nanotick::SpscRing | 999.99 |" in p.stdout and "+| nanotick::SpscRing | " in p.stdout
    assert page.read_text() == edited, "--check must not change the file"


# ------------------------------------------------------------------ record, on stand-in benches


def test_record_keeps_headings_captions_notes_and_escaped_pipes(tmp_path):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == FAKE_OUTPUT.replace("\\\\", "\\")  # passed through unchanged
    r = json.loads((out / "fake_bench.json").read_text())
    assert r["bench"] == "fake_bench" and r["title"] == "fake_bench: a stand-in"
    assert r["machine"] == {"cpu": "Test CPU 9000", "cpus": 4, "build": "release", "kernel": "Linux 6.1.0",
                            "clock": "invariant TSC calibrated at 2.000 GHz against steady_clock"}
    assert [(t["heading"], t.get("caption")) for t in r["tables"]] == [
        ("Latency (ns)", None), ("Latency (ns)", "Spread across 3 repeats (ns):"), ("A | pipe \\| in a cell", None)]
    assert r["tables"][2]["rows"] == [["x | y", "z"]] and r["tables"][2]["align"] == ["center", "left"]
    assert r["notes"] == [{"heading": "fake_bench: a stand-in", "text": "Intro prose under the machine header."},
                          {"heading": "Latency (ns)", "text": "Spread across 3 repeats (ns):"},
                          {"heading": "A | pipe \\| in a cell", "text": "A closing note."}]
    assert not list(out.glob(".*.tmp")), "the temporary file was renamed, not left behind"


def test_record_defaults_and_command(tmp_path):
    bench = fake_bench(tmp_path, FAKE_OUTPUT, name="other_bench")
    out = tmp_path / "r"
    p = benchdoc("record", "--out-dir", str(out), "--name", "custom", "--command", "./nanotick bench --filter x",
                 "--", str(bench), "--arg")
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "custom.json").read_text())
    assert r["name"] == "custom" and r["command"] == "./nanotick bench --filter x"
    assert r["argv"] == [str(bench), "--arg"]  # outside the repo: as given


@pytest.mark.parametrize("stdout,status,message", [
    ("", 1, "exited with status 1"),
    (FAKE_OUTPUT, 3, "exited with status 3"),
    (HEADER + "### t\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 1 | 2 | 3 |\n", 0, "a row of 3 cells under a header of 2"),
    (HEADER + "### t\n\n| a | b |\n|---|---|---|\n| 1 | 2 |\n", 0, "the separator has 3 cells"),
    (HEADER + "### t\n\n| a | b |\n| 1 | 2 |\n", 0, "without a '|---|' separator"),
    (HEADER + "### t\n\nonly prose, no table\n", 0, "printed no table"),
    ("| a |\n|---|\n| 1 |\n", 0, "expected the machine header '## <bench>'"),
    ("## x\n\n- clock: c\n\n### t\n\n| a |\n|---|\n| 1 |\n", 0, "no '- CPU: <model>, <n> CPUs allowed' line"),
    ("", 0, "printed nothing on stdout"),
    (FAKE_OUTPUT + "\n" + FAKE_OUTPUT, 0, "line 30: a second machine header '## fake_bench: a stand-in'"),
], ids=["fails-silently", "fails-after-printing", "ragged-row", "ragged-separator", "no-separator", "no-table",
        "no-header", "no-cpu-line", "prints-nothing", "two-benches"])
def test_record_refuses_a_failed_or_unparsable_run_and_writes_nothing(tmp_path, stdout, status, message):
    out = tmp_path / "results"
    out.mkdir()
    old = out / "fake_bench.json"
    old.write_text('{"an": "earlier run"}\n')
    p, _ = record_fake(tmp_path, stdout, status)
    assert p.returncode == 1, p.stderr
    assert message in p.stderr and "nothing recorded" in p.stderr, p.stderr
    assert old.read_text() == '{"an": "earlier run"}\n' and sorted(os.listdir(out)) == ["fake_bench.json"]


def test_record_refuses_false_and_missing_binaries_and_bad_names(tmp_path):
    out = tmp_path / "results"
    p = benchdoc("record", "--out-dir", str(out), "--", "false")
    assert p.returncode == 1 and "false exited with status 1: nothing recorded" in p.stderr
    p = benchdoc("record", "--out-dir", str(out), "--", "build/release/bench/no_such_bench")
    assert p.returncode == 2 and "no such file" in p.stderr
    p = benchdoc("record", "--out-dir", str(out), "--", "no-such-command-anywhere")
    assert p.returncode == 2 and "not found on PATH" in p.stderr
    for bad in ("../evil", "a/b", "", "x.json", ".hidden"):
        p = benchdoc("record", "--out-dir", str(out), "--name", bad, "--", "true")
        assert p.returncode == 2 and "bad name" in p.stderr, (bad, p.stderr)
    p = benchdoc("record", "--out-dir", str(out))
    assert p.returncode == 2 and "needs the bench to run" in p.stderr
    assert not out.exists()


def test_record_goes_on_recording_when_its_reader_leaves(tmp_path):
    rows = "".join(f"| row {i} | {i} |\n" for i in range(20000))  # far more than a pipe buffer holds
    bench = fake_bench(tmp_path, HEADER + "### big\n\n| a | b |\n|---|---:|\n" + rows)
    out = tmp_path / "results"
    p = subprocess.run(f"'{sys.executable}' -m tools.benchdoc record --out-dir '{out}' -- '{bench}' | head -c 10",
                       shell=True, cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout == "## fake_be"
    assert "Traceback" not in p.stderr and "recorded" in p.stderr, p.stderr
    assert len(json.loads((out / "fake_bench.json").read_text())["tables"][0]["rows"]) == 20000


def test_parse_output_names_the_line_of_a_ragged_row():
    with pytest.raises(ParseError, match=r"line 11: a row of 1 cells"):
        parse_output(HEADER + "### t\n\n| a | b |\n|---|---|\n| 1 |\n")


# ------------------------------------------------------------------ targets


def test_parse_cell_reads_the_benches_number_formats():
    cases = {"461 ns": (461, 461, "ns", False), "23.6k": (23600, 23600, "", False),
             "12.0M": (12e6, 12e6, "", False), "1.16x": (1.16, 1.16, "x", False), "12%": (12, 12, "%", False),
             "0.80-1.19 M/s": (0.8, 1.19, "M/s", True), "4.1-4.4 µs": (4.1, 4.4, "µs", True),
             "1.14x [1.10x-1.20x]": (1.10, 1.20, "x", True), "311 ns [311-320]": (311, 320, "ns", True),
             "2.9 (±3%)": (2.9, 2.9, "", False), "53.3 (+7.9)": (53.3, 53.3, "", False),
             "1,000": (1000, 1000, "", False), "**0.92x**": (0.92, 0.92, "x", False),
             "341440/s (1 session)": (341440, 341440, "/s", False), "3.4M/s": (3.4, 3.4, "M/s", False)}
    for cell, (lo, hi, unit, is_range) in cases.items():
        m = parse_cell(cell)
        assert (m.low, m.high, m.unit, m.is_range) == (pytest.approx(lo), pytest.approx(hi), unit, is_range), cell
    for bad in ("n/a", "**no**", "6.92x / 1.34x", "28.8 / 8912.9", "", "yes", "1.2.3", "1-2 [3-4]", "1x-2%",
                "5 (a) (b)"):
        with pytest.raises(ValueError):
            parse_cell(bad)


def test_targets_convert_units_and_check_the_worst_end_of_ranges(tmp_path):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    targets = write_targets(tmp_path, [
        fake_target(column="p50", op="<=", value="0.5", unit="us"),  # 461 ns = 0.461 us: met
        fake_target(column="p99", op="<=", value="4000", unit="ns"),  # 4.1 µs = 4100 ns: not met
        fake_target(column="throughput", op=">=", value="1.0", unit="M/s"),  # 0.80-1.19: lower end 0.8, not met
        fake_target(column="throughput", op="<=", value="1.2", unit="M/s"),  # upper end 1.19: met
        fake_target(column="ratio", op=">=", value="1.15", unit="x"),
        fake_target(column="share", op="<=", value="10", unit="%"),
        fake_target(column="spread", op=">=", value="1.1", unit="x"),  # bracket range: lower end 1.10, met
        fake_target(row="'^theirs$'", column="p50", op="<=", value="30", unit="us", extra="cell_unit = 'ns'"),
    ])
    page = tmp_path / "page.md"
    page.write_text("<!-- targets: fake_bench -->\n<!-- /targets -->\n")
    r = benchdoc("render", str(page), "--results", str(out), "--targets", str(targets))
    assert r.returncode == 0, r.stderr
    rows = [line for line in page.read_text().splitlines() if line.startswith("| the ")]
    assert rows == [
        "| the p50 target | 461 ns | yes |",
        "| the p99 target | 4.1 µs | **no** |",
        "| the throughput target | 0.80-1.19 M/s (range: its lower end, 0.8 M/s, checked) | **no** |",
        "| the throughput target | 0.80-1.19 M/s (range: its upper end, 1.19 M/s, checked) | yes |",
        "| the ratio target | 1.16x | yes |",
        "| the share target | 12% | **no** |",
        "| the spread target | 1.14x [1.10x-1.20x] (range: its lower end, 1.1x, checked) | yes |",
        "| the p50 target | 23.6k | yes |",
    ]
    assert "`fake_bench` measured " in page.read_text()


@pytest.mark.parametrize("entry,message", [
    (fake_target(column="nope"), "no column 'nope' in the tables of fake_bench.json"),
    (fake_target(row="'^nobody$'"), "no row of fake_bench.json's table 'Latency (ns)' has first cell ~ '^nobody$'"),
    (fake_target(row="'^'"), "2 rows of fake_bench.json have first cell ~ '^'"),
    (fake_target(column="throughput", row="'^theirs$'", unit="M/s"), "is not a number"),
    (fake_target(column="ratio", unit="ns"), "the cell is in 'x', the target in 'ns'"),
    (fake_target().replace("'^Latency'", "'^Throughput'"), "no table of fake_bench.json has a heading matching"),
    (fake_target().replace("caption = '^$'", "caption = '^Nothing'"), "has a caption matching '^Nothing'"),
    (fake_target(row="{ impl = '^ours$', size = '^1K$' }"), "names columns ['size'] that table does not have"),
    (fake_target(op="<"), "'op' must be \"<=\" or \">=\""),
    (fake_target(value="'fast'"), "'value' must be a finite number"),
    (fake_target(extra="colour = 'red'"), "unknown keys ['colour']"),
    (fake_target(row="'(['"), "'row' is not a valid regular expression"),
    (fake_target().replace("column = 'p50'\n", ""), "'column' is missing"),
    ("bench = 'fake_bench'\n[[[", "not valid TOML"),
])
def test_render_refuses_a_bad_target_and_leaves_the_file_alone(tmp_path, entry, message):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    targets = write_targets(tmp_path, [entry])
    page = tmp_path / "page.md"
    original = "intro\n<!-- targets: fake_bench -->\nold content\n<!-- /targets -->\n"
    page.write_text(original)
    r = benchdoc("render", str(page), "--results", str(out), "--targets", str(targets))
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "line 2, <!-- targets: fake_bench -->" in r.stderr and "left unchanged" in r.stderr
    assert page.read_text() == original


# ------------------------------------------------------------------ render's refusals


@pytest.mark.parametrize("page,message", [
    ("<!-- bench: fake_bench -->\ntext\n", "line 1, <!-- bench: fake_bench -->: never closed"),
    ("<!-- bench: fake_bench -->\n<!-- bench: fake_bench -->\n<!-- /bench -->\n",
     "not closed before the marker on line 2"),
    ("<!-- bench: fake_bench -->\n<!-- /targets -->\n", "expected '<!-- /bench -->'"),
    ("text\n<!-- /bench -->\n", "line 2, <!-- /bench -->: a closing marker with no block open"),
    ("<!-- bench fake_bench -->\n<!-- /bench -->\n", "malformed marker"),
    ("<!-- bench: -->\n<!-- /bench -->\n", "malformed marker"),
    ("<!-- benchmark: fake_bench -->\n", None),  # not a marker of ours: plain text, left alone
    ("<!-- bench: no_such_bench -->\n<!-- /bench -->\n", "results file"),
    ("<!-- bench: ../../etc/passwd -->\n<!-- /bench -->\n", "is not a results name"),
    ("<!-- bench: fake_bench tables: ^Throughput -->\n<!-- /bench -->\n",
     "no table of fake_bench.json has a heading matching '^Throughput' (headings: 'Latency (ns)'"),
    ("<!-- bench: fake_bench tables: ([ -->\n<!-- /bench -->\n", "is not a valid regular expression"),
    ("<!-- bench: fake_bench tables: -->\n<!-- /bench -->\n", "'tables:' without a regular expression"),
    ("<!-- targets: -->\n<!-- /targets -->\n", "name at least one results name"),
    ("<!-- targets: other_bench -->\n<!-- /targets -->\n", "the targets file has no entry for other_bench"),
])
def test_render_refuses_malformed_blocks_and_leaves_the_file_alone(tmp_path, page, message):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    (out / "no_such_bench.json").unlink(missing_ok=True)
    targets = write_targets(tmp_path, [fake_target()])
    path = tmp_path / "page.md"
    path.write_text(page)
    r = benchdoc("render", str(path), "--results", str(out), "--targets", str(targets))
    if message is None:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2 and message in r.stderr, r.stderr
        assert "left unchanged" in r.stderr
    assert path.read_text() == page


@pytest.mark.parametrize("mutate,message", [
    (lambda r: r["tables"][0]["rows"].append(["ragged"]), "has a row that is not 7 strings"),
    (lambda r: r.update(schema=99), "schema 99, this tool reads schema 1"),
    (lambda r: r.pop("command"), "'command' missing"),
    (lambda r: r["tables"][0].pop("heading"), "table #1 lacks a heading"),
])
def test_render_refuses_a_damaged_results_file(tmp_path, mutate, message):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    path = out / "fake_bench.json"
    r = json.loads(path.read_text())
    mutate(r)
    path.write_text(json.dumps(r))
    page = tmp_path / "page.md"
    page.write_text("<!-- bench: fake_bench -->\n<!-- /bench -->\n")
    res = benchdoc("render", str(page), "--results", str(out))
    assert res.returncode == 2 and message in res.stderr, res.stderr
    (out / "fake_bench.json").write_text("{not json")
    res = benchdoc("render", str(page), "--results", str(out))
    assert res.returncode == 2 and "cannot read results file" in res.stderr


def test_render_keeps_text_outside_blocks_and_fenced_examples_byte_for_byte(tmp_path):
    p, out = record_fake(tmp_path)
    assert p.returncode == 0, p.stderr
    page = tmp_path / "page.md"
    outside = ["# Title\r\n\r\nCRLF prose  \r\n", "```md\n<!-- bench: not_rendered -->\n<!-- /bench -->\n```\n",
               "\ntrailing text without a newline"]
    page.write_bytes((outside[0] + outside[1] + "<!-- bench: fake_bench tables: pipe -->\n<!-- /bench -->\n"
                      + outside[2]).encode())
    r = benchdoc("render", str(page), "--results", str(out))
    assert r.returncode == 0, r.stderr
    text = page.read_bytes().decode()
    assert text.startswith(outside[0] + outside[1]) and text.endswith("<!-- /bench -->\n" + outside[2])
    assert "**A | pipe \\| in a cell**" in text and "| x \\| y | z |" in text and "|:---:|:---|" in text
    assert "Latency" not in text
    assert "on Test CPU 9000, 4 CPUs;" in text
    again = benchdoc("render", str(page), "--results", str(out), "--check")
    assert again.returncode == 0, again.stdout


def test_render_refuses_a_missing_page(tmp_path):
    r = benchdoc("render", str(tmp_path / "nope.md"))
    assert r.returncode == 2 and "no such file" in r.stderr


# ------------------------------------------------------------------ the real page


def test_benchmarks_page_is_up_to_date_with_its_results():
    page = ROOT / "docs" / "BENCHMARKS.md"
    text = page.read_text() if page.exists() else ""
    if not re.search(r"^<!--\s*(bench|targets):", text, re.M):
        pytest.skip("docs/BENCHMARKS.md has no generated block yet")
    r = benchdoc("render", "docs/BENCHMARKS.md", "--check")
    assert r.returncode == 0, ("docs/BENCHMARKS.md differs from what docs/benchmarks/results renders to "
                               "(a hand edit inside a generated block?):\n" + r.stdout + r.stderr)
