"""The Debian 12 packages, grouped by what needs them, so that a first
`./nanotick demo` installs only what running the venue takes (about a minute
of apt on a fresh machine) and `./nanotick test` everything."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import IO, List, Sequence

from .context import die
from .logs import run_logged, stage

# APT_RUN: building the programs and running them (the venue, the traders,
# the floor, the tools in tools/ on the venv's Python).
APT_RUN = (
    "cmake", "ninja-build", "g++", "pkg-config",
    "libfmt-dev", "libtomlplusplus-dev", "libcli11-dev", "libsodium-dev",
    "python3", "python3-venv",
)
# APT_FIX: the FIX gateway. libquickfix-dev: its session layer (docs/FIX.md);
# maven and openjdk-17-jdk-headless: FIX44.xml, which Debian's QuickFIX does
# not ship (provision.setup_fix), and the FIX tests' third-party client,
# QuickFIX/J; also the exchange-core peer benchmark (bench/peers/exchange_core/run).
APT_FIX = ("libquickfix-dev", "maven", "openjdk-17-jdk-headless")
# APT_TEST: the tests and the benchmarks. GoogleTest, Google Benchmark and
# the peers measured beside our code in every bench run (Boost, readerwriter-
# queue, spdlog, mimalloc, Abseil). chromium: the latency report's test
# renders it headless. clang-16, libfuzzer-16-dev and libclang-rt-16-dev (the
# fuzzer and sanitizer runtimes clang links; only recommended by clang-16, so
# --no-install-recommends left it out): the asan preset and its fuzz targets.
# clang-format-16: './nanotick format' and its check in './nanotick test'; one
# pinned version, because each clang-format release formats a little
# differently. iproute2 and nftables: the multi-host venue test (network
# namespaces, veth, a bridge, packet drop rules).
APT_TEST = (
    "libgtest-dev", "libbenchmark-dev",
    "libboost-dev", "libreaderwriterqueue-dev", "libspdlog-dev", "libmimalloc-dev", "libabsl-dev",
    "chromium",
    "clang-16", "libfuzzer-16-dev", "libclang-rt-16-dev", "clang-format-16",
    "iproute2", "nftables",
)

PROFILES = ("run", "fix", "full")


def for_profile(profile: str) -> List[str]:
    """The packages of one setup profile: run, fix (run + FIX) or full (everything)."""
    if profile == "run":
        return list(APT_RUN)
    if profile == "fix":
        return list(APT_RUN + APT_FIX)
    if profile == "full":
        return list(APT_RUN + APT_FIX + APT_TEST)
    die(f"internal: unknown setup profile '{profile}'")


def missing(packages: Sequence[str]) -> List[str]:
    """Those of packages dpkg does not list as installed, in their order (one
    dpkg-query for all: a check that runs before every command)."""
    if shutil.which("dpkg-query") is None:
        die("dpkg-query not found: nanotick setup expects Debian 12")
    done = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Status}\n", *packages],
                          capture_output=True, text=True)
    installed = set()
    for line in done.stdout.splitlines():  # unknown packages: only a message on stderr
        name, _, status = line.partition("\t")
        if status.strip() == "install ok installed":
            installed.add(name.split(":")[0])
    return [p for p in packages if p not in installed]


def _apt_install(log: IO[str], packages: Sequence[str]) -> bool:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if not run_logged(log, ["apt-get", "update", "-q"], env=env):
        log.write("apt-get update failed\n")
        return False
    if not run_logged(log, ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages], env=env):
        log.write(f"apt-get install failed for: {' '.join(packages)}\n")
        return False
    return True


def install(packages: Sequence[str]) -> None:
    """Installs what of packages is missing: with apt-get as root, else fails
    naming the exact command."""
    absent = missing(packages)
    if not absent:
        return
    names = " ".join(absent)
    if os.geteuid() != 0:
        die(f"missing Debian packages: {names}\n"
            f"  install them as root with:\n"
            f"    sudo apt-get update && sudo apt-get install -y {names}")
    if not stage(f"apt: installing {len(absent)} Debian package(s): {names}", lambda log: _apt_install(log, absent),
                 f"apt-get install {names}"):
        die("installing Debian packages failed")
