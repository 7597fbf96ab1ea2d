"""./nanotick build and ./nanotick build-pgo."""

from __future__ import annotations

import subprocess
import time
from typing import List

from .. import presets, provision
from ..context import BUILD_ROOT, ROOT, die, say
from ..options import CommandParser

BUILD_USAGE = """\
usage: ./nanotick build [PRESET]

Configures and builds one CMake preset into build/PRESET. Presets:
  release   -O3, NDEBUG, LTO (default)
  debug     -O0 -g, debug checks on
  asan      AddressSanitizer + UndefinedBehaviorSanitizer (clang-16; also the
            libFuzzer targets: ./nanotick fuzz)
  tsan      ThreadSanitizer
  pgo-train release instrumented for profile-guided optimisation
  pgo       release optimised with pgo-train's profile (needs its training:
            ./nanotick build-pgo does all three steps)
Warnings are errors when CI=true (or NANOTICK_WERROR=ON). ninja's output goes
to build/logs/ (named on the screen); warnings and errors are shown in full."""

BUILD_PGO_USAGE = """\
usage: ./nanotick build-pgo [--quick]

Builds release with profile-guided optimisation (GCC; issue 13) in one command:
  1. preset pgo-train (build/pgo-train): release instrumented with
     -fprofile-generate, only the programs the training runs
  2. the training, tools/bench/pgo_train.sh: generated workloads, never the
     benchmarks' input -- regime_bench on the five regimes of seed 7 (the
     benchmarks measure seed 1), gen + replay of the regimes at seed 11,
     ring_bench --quick, and the exchange with two traders under the random
     strategy's load (tick_to_trade_bench); the profile goes to
     build/pgo-train/pgo-profile, the programs' output to
     build/pgo-train/pgo-train.log
  3. preset pgo (build/pgo): every program and benchmark, rebuilt from clean
     with -fprofile-use (the profile is not a build dependency)
Takes about 6 minutes on a quiet 2-vCPU machine: 2.5 for pgo-train, 1 for the
training, 3 for pgo (NANOTICK_JOBS sets the build's -j).
Then: build/pgo/bin/ and build/pgo/bench/; tools/bench/flag_matrix.sh measures
PGO beside the other flag sets.
  --quick   a short training (checks the pipeline; not a profile to ship)"""

PGO_TRAIN = ROOT / "tools" / "bench" / "pgo_train.sh"


def run_build(args: List[str]) -> int:
    parser = CommandParser("build", BUILD_USAGE)
    parser.add("preset", nargs="*")
    chosen = parser.parse(args).preset
    if len(chosen) > 1:
        die(f"build takes at most one preset (got: {' '.join(chosen)})")
    preset = chosen[0] if chosen else "release"
    presets.check_preset(preset)  # before minutes of apt, not after
    provision.setup_for("full")
    if preset in presets.SCOPED_PRESETS:
        # Everything: ./nanotick test may have narrowed the test sets or the benchmarks' LTO.
        presets.build_preset(preset, scope="full", sets="unit;concurrency")
    else:
        presets.build_preset(preset)
    return 0


def run_build_pgo(args: List[str]) -> int:
    parser = CommandParser("build-pgo", BUILD_PGO_USAGE)
    parser.add("--quick", action="store_true")
    quick = parser.parse(args).quick
    provision.setup_for("full")
    start = time.monotonic()
    listed = subprocess.run([str(PGO_TRAIN), "--targets"], capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout.split():
        die(f"{PGO_TRAIN.relative_to(ROOT)} --targets failed: {listed.stderr.strip()}")
    step = time.monotonic()
    presets.build_preset("pgo-train", listed.stdout.split())
    say(f"pgo-train built in {int(time.monotonic() - step)} s")
    train = [str(PGO_TRAIN), str(BUILD_ROOT / "pgo-train")] + (["--quick"] if quick else [])
    if subprocess.run(train).returncode != 0:
        die("the PGO training failed")
    step = time.monotonic()
    # Objects compiled with an older profile would stay: start from clean.
    if (BUILD_ROOT / "pgo" / "build.ninja").is_file():
        if subprocess.run(["cmake", "--build", str(BUILD_ROOT / "pgo"), "--target", "clean"],
                          stdout=subprocess.DEVNULL).returncode != 0:
            die("cleaning build/pgo failed")
    presets.build_preset("pgo")
    say(f"pgo built in {int(time.monotonic() - step)} s; build-pgo took {int(time.monotonic() - start)} s in all "
        "(binaries in build/pgo/bin, build/pgo/bench)")
    return 0
