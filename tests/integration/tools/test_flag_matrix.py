"""The build-flag matrix and the PGO pipeline (issue 13), cheaply: their
command lines (--help, clear errors for bad arguments, before anything is
built), the figures flag_matrix.sh takes from each bench's output (on
excerpts of real output), the training script's checks of its build
directory, and CMake's checks of NANOTICK_MARCH and NANOTICK_PGO (configure
only, benches and tests off: seconds). The full PGO build and training
(./nanotick build-pgo, about 10 minutes on 2 vCPUs) is not run here.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import textwrap
from typing import List

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
MATRIX = REPO / "tools" / "bench" / "flag_matrix.sh"
TRAIN = REPO / "tools" / "bench" / "pgo_train.sh"


def run(args: List[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def test_flag_matrix_help_names_every_option():
    done = run([MATRIX, "--help"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: tools/bench/flag_matrix.sh")
    for option in ["--quick", "--rounds", "--configs", "--build-only", "--bench-only", "--jobs", "--list", "--parse"]:
        assert option in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown option '--bogus'"),
    (["--rounds", "0"], "--rounds needs a whole number 1..50, got '0'"),
    (["--rounds", "many"], "--rounds needs a whole number 1..50, got 'many'"),
    (["--rounds", "51"], "--rounds needs a whole number 1..50"),
    (["--rounds"], "--rounds needs a whole number"),
    (["--jobs", "0"], "--jobs needs a whole number 1..64"),
    (["--configs"], "--configs needs a comma-separated list"),
    (["--configs", "gcc12-O3-v2-lto,nope"], "unknown configuration 'nope' (known: gcc12-O3-v2-lto"),
    (["--build-only", "--bench-only"], "--build-only and --bench-only exclude each other"),
    (["--quick", "--rounds", "3"], "--quick runs one round"),
    (["--quick", "--configs", "gcc12-O3-v2-lto,gcc12-O2-v2-lto,gcc12-O3-v3-lto,gcc12-O3-v2-nolto"],
     "--quick runs at most 3 configurations (got 4"),
    (["--parse", "flops", "/dev/null"], "--parse needs a KIND (regime, ring or order), got 'flops'"),
    (["--parse", "ring", "/nonexistent/ring.txt"], "--parse ring needs a bench output file"),
])
def test_flag_matrix_bad_arguments_exit_1_naming_the_problem(args, message):
    done = run([MATRIX, *args])
    assert done.returncode == 1, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert message in done.stderr, f"{args}: {done.stderr}"
    assert "building" not in done.stderr  # refused before any build


def test_flag_matrix_lists_the_issue_configurations():
    done = run([MATRIX, "--list"])
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert names == ["gcc12-O3-v2-lto", "gcc12-O2-v2-lto", "gcc12-O3-v3-lto", "gcc12-O3-native-lto",
                     "gcc12-O3-v2-nolto", "clang16-O3-v2-lto", "gcc12-O3-v2-lto-pgo"]
    text = done.stdout
    # The baseline is today's release preset.
    baseline = text.split("gcc12-O3-v2-lto (order round trip: yes):\n", 1)[1].splitlines()[0]
    for arg in ["-DCMAKE_CXX_FLAGS_RELEASE=-O3\\ -DNDEBUG", "-DNANOTICK_MARCH=x86-64-v2",
                "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON", "-DNANOTICK_PGO="]:
        assert arg in baseline
    assert "-DCMAKE_CXX_COMPILER=clang++-16" in text
    assert "-DNANOTICK_MARCH=native" in text and "-DNANOTICK_MARCH=x86-64-v3" in text
    assert "-DNANOTICK_PGO=use" in text and "pgo_train.sh" in text


REGIME_OUTPUT = textwrap.dedent("""\
    ### regime-static (seed 1): 1996425 messages — throughput, reports across the SPSC queue (M msgs/s)

    | impl | median | min | max | runs | reports | trades | vs Liquibook | vs std::map |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | nanotick | 9.75 | 9.50 | 9.90 | 1 | 2188364 | 42035 | — | — |

    ### regime-static: latency per message, reports across the queue (one replay) (ns)

    | impl | samples | mean | p50 | p90 | p99 | p99.9 | max | p50 vs Liquibook 2.0.1 |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | nanotick | 1996425 | 151 | 119 | 195 | 991 | 7999 | 17.9M | n/a |

    ### regime-flash-crash (seed 1): 1996893 messages — throughput, reports across the SPSC queue (M msgs/s)

    | impl | median | min | max | runs | reports | trades | vs Liquibook | vs std::map |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | Liquibook 2.0.1 | 1.00 | 1.00 | 1.00 | 1 | 2960131 | 875611 | — | — |
    | nanotick | 6.50 | 6.40 | 6.60 | 1 | 2960131 | 875611 | — | — |

    ### Summary (seed 1, 1 rounds): median M msgs/s per regime, p99 ns in brackets

    | regime | nanotick | nanotick vs Liquibook | nanotick vs std::map |
    """)

RING_OUTPUT = textwrap.dedent("""\
    Spread across 5 repeats of 10000000 items (M items/s):

    | impl | median | min | max |
    |---|---:|---:|---:|
    | nanotick::SpscRing | 61.66 | 51.17 | 62.42 |
    | nanotick::SpscRing pop_batch(64) | 97.39 | 96.12 | 122.27 |

    Spread across 5 repeats of 200000 round trips (ns):

    | impl | p50 median | p50 min-max | p99 median | p99 min-max |
    |---|---:|---:|---:|---:|
    | cache-line ping-pong (floor) | 107 | 103-117 | 173 | 143-205 |
    | nanotick::SpscRing | 155 | 147-171 | 259 | 199-351 |

    Spread across 5 repeats of 2000000 items (M items/s):

    | impl | median | min | max |
    |---|---:|---:|---:|
    | nanotick::SpscRing | 11.39 | 10.96 | 11.40 |
    """)

ORDER_OUTPUT = textwrap.dedent("""\
    ### (1) Order round trip on loopback: 40 bytes out, 96 bytes back, all repeats merged (ns)

    | impl | samples | mean | p50 | p90 | p99 | p99.9 | max | p50 vs raw |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | nanotick-exchange, fsync batch: NewOrder -> Accepted | 300000 | 30.1k | 28.5k | 33.0k | 41.0k | 90.0k | 1.2M | 1.10x |

    Spread across 3 repeats of 100000 round trips (fsync every: 3000) (ns):

    | impl | p50 median | p50 min-max | p99 median | p99 min-max | p99.9 median | p99.9 min-max |
    |---|---:|---:|---:|---:|---:|---:|
    | raw TCP ping-pong, busy-poll echo thread | 8031 | 7900-8100 | 22.4k | 20.0k-23.0k | 80.0k | 70.0k-90.0k |
    | raw TCP ping-pong, epoll_wait(0) echo thread | 8255 | 8255-8255 | 17.4k | 17.4k-17.4k | 12.0M | 12.0M-12.0M |
    | nanotick-exchange, fsync batch: NewOrder -> Accepted | 28.4k | 27.9k-29.0k | 40.5k | 38.0k-47.0k | 85.0k | 80.0k-99.0k |
    | nanotick-exchange, fsync none: NewOrder -> Accepted | 9876 | 9000-9999 | 10.5k | 10.0k-11.0k | 12.0k | 11.0k-13.0k |
    """)


@pytest.mark.parametrize("kind, output, expected", [
    ("regime", REGIME_OUTPUT, [("regime-static", 9.75), ("regime-flash-crash", 6.5)]),
    ("ring", RING_OUTPUT, [("ring_tp", 61.66), ("ring_rtt_p50", 155.0)]),
    ("order", ORDER_OUTPUT, [("rt_p50", 28400.0), ("rt_p99", 40500.0), ("raw_tcp_p50", 8031.0)]),
])
def test_flag_matrix_takes_the_right_figures_from_each_bench(tmp_path, kind, output, expected):
    log = tmp_path / f"{kind}.txt"
    log.write_text(output)
    done = run([MATRIX, "--parse", kind, log])
    assert done.returncode == 0, done.stderr
    got = [(line.split("\t")[0], float(line.split("\t")[1])) for line in done.stdout.splitlines()]
    assert got == expected


def test_pgo_train_help_and_targets():
    done = run([TRAIN, "--help"])
    assert done.returncode == 0 and done.stdout.startswith("usage: tools/bench/pgo_train.sh BUILD_DIR")
    done = run([TRAIN, "--targets"])
    assert done.returncode == 0
    assert done.stdout.split() == ["regime_bench", "ring_bench", "nanotick-gen", "nanotick-replay",
                                   "tick_to_trade_bench"]


def test_pgo_train_refuses_a_build_that_is_not_instrumented(tmp_path):
    done = run([TRAIN])
    assert done.returncode == 1 and "BUILD_DIR is required" in done.stderr
    done = run([TRAIN, tmp_path / "missing"])
    assert done.returncode == 1 and "is not a directory" in done.stderr
    done = run([TRAIN, tmp_path])
    assert done.returncode == 1 and "has no CMakeCache.txt" in done.stderr
    (tmp_path / "CMakeCache.txt").write_text("NANOTICK_PGO:STRING=\nNANOTICK_PGO_DIR:PATH=/nonexistent\n")
    done = run([TRAIN, tmp_path])
    assert done.returncode == 1 and "is not an instrumented build (NANOTICK_PGO is '', want generate)" in done.stderr
    done = run([TRAIN, tmp_path, "--bogus"])
    assert done.returncode == 1 and "unknown option '--bogus'" in done.stderr


def test_launcher_build_pgo_help():
    done = run([REPO / "nanotick", "build-pgo", "--help"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ./nanotick build-pgo")
    done = run([REPO / "nanotick", "build-pgo", "--bogus"])
    assert done.returncode == 1 and "unknown build-pgo option '--bogus'" in done.stderr


# ---- CMake: configure only, no benches, no tests ------------------------------------

def configure(build: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake and ninja are needed (./nanotick setup)")
    return run(["cmake", "-S", REPO, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DNANOTICK_BUILD_TESTS=OFF", "-DNANOTICK_BUILD_BENCH=OFF", *args], timeout=300)


def test_cmake_refuses_a_bad_march(tmp_path):
    done = configure(tmp_path / "b", "-DNANOTICK_MARCH=x86-64 v3")
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "NANOTICK_MARCH: must be one -march value without spaces" in message and "got 'x86-64 v3'" in message


def test_cmake_pgo_generate_configures_and_use_without_a_profile_says_what_to_run(tmp_path):
    profile = tmp_path / "profile"
    done = configure(tmp_path / "train", "-DNANOTICK_PGO=generate", f"-DNANOTICK_PGO_DIR={profile}")
    assert done.returncode == 0, done.stderr
    commands = (tmp_path / "train" / "compile_commands.json").read_text()
    assert f"-fprofile-generate={profile}" in commands and "-march=x86-64-v2" in commands
    done = configure(tmp_path / "use", "-DNANOTICK_PGO=use", f"-DNANOTICK_PGO_DIR={profile}")
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "NANOTICK_PGO=use: no profile (*.gcda)" in message and "./nanotick build-pgo" in message
    done = configure(tmp_path / "bad", "-DNANOTICK_PGO=sometimes")
    assert done.returncode != 0
    assert "NANOTICK_PGO: must be '' (off), generate or use, got 'sometimes'" in " ".join(done.stderr.split())
