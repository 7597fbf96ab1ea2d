"""CMake presets (CMakePresets.json) and the scope a build directory is
configured for."""

from __future__ import annotations

import os
from typing import Iterable, Optional, Sequence

from .context import BUILD_ROOT, ROOT, die
from .logs import build_with_progress, stage_command

PRESETS = ("release", "debug", "asan", "tsan", "pgo-train", "pgo")

# What a release or debug build directory is configured to build: run (the
# programs), fix (and the FIX gateway) or full (and the tests and
# benchmarks); none before its first configure. A scope only ever widens: the
# demo after the tests builds its programs in the full build, without
# reconfiguring away what the tests need.
SCOPES = ("none", "run", "fix", "full")
SCOPE_FLAGS = {
    "run": ("-DNANOTICK_BUILD_TESTS=OFF", "-DNANOTICK_BUILD_BENCH=OFF", "-DNANOTICK_WITH_FIX=OFF"),
    "fix": ("-DNANOTICK_BUILD_TESTS=OFF", "-DNANOTICK_BUILD_BENCH=OFF", "-DNANOTICK_WITH_FIX=ON"),
    "full": ("-DNANOTICK_BUILD_TESTS=ON", "-DNANOTICK_BUILD_BENCH=ON", "-DNANOTICK_WITH_FIX=ON"),
}
SCOPED_PRESETS = ("release", "debug")


def check_preset(preset: str) -> None:
    if preset not in PRESETS:
        die(f"unknown preset '{preset}' (choose release, debug, asan, tsan, pgo-train or pgo)")


def configured_scope(preset: str) -> str:
    """The scope build/PRESET was last configured for, from its CMakeCache.txt."""
    try:
        cache = (BUILD_ROOT / preset / "CMakeCache.txt").read_text(errors="replace").splitlines()
    except OSError:
        return "none"
    if "NANOTICK_BUILD_TESTS:BOOL=ON" in cache:
        return "full"
    if "NANOTICK_WITH_FIX:BOOL=OFF" in cache:
        return "run"
    return "fix"


def widest(a: str, b: str) -> str:
    return a if SCOPES.index(a) >= SCOPES.index(b) else b


def werror() -> str:
    """NANOTICK_WERROR when set; else warnings are errors in CI (CI=true)."""
    value = os.environ.get("NANOTICK_WERROR", "")
    if value:
        return value
    return "ON" if os.environ.get("CI", "") == "true" else "OFF"


def configure_args(preset: str, scope: str = "full", sets: Optional[str] = None,
                   bench_lto: Optional[str] = None) -> list:
    """cmake --preset's arguments. scope (release and debug only) is widened
    to what the directory already has; sets picks the test sets
    (NANOTICK_TEST_SETS), bench_lto the benchmarks' LTO (NANOTICK_BENCH_LTO);
    left out, the preset's own or the last configured value stays."""
    args = ["cmake", "--preset", preset, f"-DNANOTICK_WERROR={werror()}"]
    if sets is not None:
        args.append(f"-DNANOTICK_TEST_SETS={sets}")
    if bench_lto is not None:
        args.append(f"-DNANOTICK_BENCH_LTO={bench_lto}")
    if preset in SCOPED_PRESETS:
        args += SCOPE_FLAGS[widest(configured_scope(preset), scope)]
    return args


def build_preset(preset: str, targets: Sequence[str] = (), scope: str = "full", sets: Optional[str] = None,
                 bench_lto: Optional[str] = None) -> None:
    """Configures and builds one preset (only targets when given)."""
    check_preset(preset)
    if not stage_command(f"configure {preset}", configure_args(preset, scope, sets, bench_lto), cwd=ROOT):
        die(f"cmake configure failed for preset '{preset}'")
    only: Iterable[str] = ("--target", *targets) if targets else ()
    if not build_with_progress(preset, list(only)):
        die(f"build failed for preset '{preset}'")
