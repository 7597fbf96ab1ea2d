"""./nanotick test: every test, what CI runs (.ci/run)."""

from __future__ import annotations

import os
import subprocess
import time
from typing import List

from .. import presets, provision
from ..context import ROOT, VENV_PYTHON, die, jobs, say
from ..options import CommandParser, whole_number
from . import format as format_cmd
from . import fuzz

# Each fuzz target's seconds in this run, unless NANOTICK_FUZZ_SECONDS says otherwise.
FUZZ_SECONDS = 3
PYTEST_DIRS = ("tools", "tests/integration")

USAGE = f"""\
usage: ./nanotick test [--quick] [--stress N]

Builds and runs every test and exits non-zero on any failure:
  0. './nanotick format --check' (seconds), once .clang-format's first line
     is '{format_cmd.MARKER}'
  1. release build (programs, benchmarks, unit and concurrency tests): the
     unit tests at their release sizes, the concurrency tests and the
     benchmark smoke runs
  2. asan build (clang-16): unit tests under AddressSanitizer + UBSan, at the
     reduced sizes of a sanitizer build
  3. tsan build: concurrency tests under ThreadSanitizer
  4. the asan build's libFuzzer targets (the same libraries, compiled once):
     each for {FUZZ_SECONDS} s on its seeds (NANOTICK_FUZZ_SECONDS changes it)
  5. pytest on tools/ and tests/integration/, one worker per core (at most
     4): Python tests driving the release binaries as real processes on
     loopback, network namespaces where the kernel allows them, and the
     chaos soak for 30 s; then the tests marked 'timing' (wall-clock
     bounds) one at a time, with no other test running
--quick skips steps 2, 3 and 4.
--stress N   the larger run: N items (requests, messages or values, as each
             test counts them) for every randomized differential test (the
             engine against its reference model and against Liquibook) and
             every concurrency stress test, instead of the defaults sized for
             CI (sets NANOTICK_STRESS_ITEMS; a test may cap N)."""


def run_ctest(preset: str, *args: str) -> None:
    say(f"running tests of preset '{preset}' {' '.join(args)}")
    if subprocess.run(["ctest", "--preset", preset, "-j", str(jobs()), *args], cwd=ROOT).returncode != 0:
        die(f"tests failed in preset '{preset}'")


def pytest_dirs() -> List[str]:
    """The directories that hold Python tests (test_*.py)."""
    return [d for d in PYTEST_DIRS if next((ROOT / d).rglob("test_*.py"), None) is not None]


def run_pytest() -> None:
    """The tools' own tests and the integration tests that drive the release
    binaries as real processes over loopback."""
    dirs = pytest_dirs()
    if not dirs:
        return
    # One worker per core, at most 4: the tests mostly wait on real processes,
    # and each worker's processes, ports and multicast groups are its own.
    workers = min(jobs(), 4)
    say(f"running pytest on {' '.join(dirs)} ({workers} workers), all but the timing tests")
    pytest = [str(VENV_PYTHON), "-m", "pytest", "-q"]
    if subprocess.run([*pytest, "-n", str(workers), "-m", "not timing", "--durations=12", *dirs],
                      cwd=ROOT).returncode != 0:
        die("pytest failed")
    # Tests that assert a wall-clock bound (marker 'timing', pytest.ini) run
    # one at a time once the parallel pass and its chaos soak are done, so the
    # bound measures the code, not the other workers.
    say(f"running the timing tests of {' '.join(dirs)} alone")
    if subprocess.run([*pytest, "-m", "timing", "--durations=12", *dirs], cwd=ROOT).returncode != 0:
        die("pytest failed (timing tests)")


def run(args: List[str]) -> int:
    parser = CommandParser("test", USAGE)
    parser.add("--quick", action="store_true")
    parser.add("--stress", type=whole_number(19), needs="a whole number of items from 1")
    options = parser.parse(args)
    if options.stress is not None:
        os.environ["NANOTICK_STRESS_ITEMS"] = str(options.stress)  # ctest's and pytest's tests read it
    provision.setup_for("full")
    start = time.monotonic()
    # House style first: seconds, before minutes of building. Only once the
    # tree has been formatted and .clang-format says so on its first line.
    if format_cmd.enforced():
        format_cmd.run(["--check"])
    # Every unit test runs here at its release size (test::stress_items'
    # `normal`: the sizes that make the coverage checks guarded by a size run,
    # e.g. the controls differential test's "every reject reason refused"),
    # and again under ASan+UBSan in step 2 at the reduced sanitizer sizes. On
    # 2 cores the release unit tests cost about 2 min of build and 25 s of
    # run. The benchmarks are built here only to smoke-run them: without LTO
    # (NANOTICK_BENCH_LTO; ./nanotick bench builds them with it).
    presets.build_preset("release", scope="full", sets="unit;concurrency", bench_lto="OFF")
    run_ctest("release")
    if not options.quick:
        presets.build_preset("asan")
        run_ctest("asan", "-L", "unit")
        presets.build_preset("tsan", ["nanotick-tests-concurrency"])  # only what those tests link
        run_ctest("tsan", "-L", "concurrency")
        # Fuzzing: every target a few seconds under ASan+UBSan, on its seeds
        # (the long runs: ./nanotick fuzz --seconds N).
        # An empty NANOTICK_FUZZ_SECONDS counts as unset, as ${VAR:-N} did.
        fuzz.run(["--seconds", os.environ.get("NANOTICK_FUZZ_SECONDS") or str(FUZZ_SECONDS)])
    run_pytest()
    say(f"all tests passed in {int(time.monotonic() - start)} s")
    return 0
