"""The runner roles of the exchange and the trader, as the binaries describe
them: `nanotick-exchange --describe` and `nanotick-trader --describe` print,
as JSON, the runners of each [threads] mode (in `cpus` order) and the roles
whose default idle is [threads] idle (apps/observability_options.hpp). The
doctor and the demo's layouts read them from there instead of keeping a copy.

Each binary is run once per process and build directory (cached).
Not thread-safe, and needs not be: the doctor and the demo are one thread.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple

from tools.binaries import BinaryMissing, PathLike, binary

KINDS = ("exchange", "trader")


class RolesUnavailable(Exception):
    """The binary is not built, or its description cannot be read; the message says which and why."""


@dataclass(frozen=True)
class Roles:
    runners: Dict[str, List[str]]  # [threads] mode -> its runners, in `cpus` order
    critical: FrozenSet[str]       # roles whose default idle is [threads] idle


_cache: Dict[Tuple[str, str], Roles] = {}


def parse_description(text: str, program: str) -> Roles:
    """The roles of one --describe output; RolesUnavailable naming what does not fit."""
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise RolesUnavailable(f"{program} --describe printed no JSON ({e})") from e

    def names(value: object, where: str) -> List[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise RolesUnavailable(f"{program} --describe: {where} is not a list of names: {value!r}")
        return list(value)

    runners = d.get("runners") if isinstance(d, dict) else None
    if not isinstance(runners, dict) or not runners:
        raise RolesUnavailable(f"{program} --describe: no \"runners\" object: {text.strip()[:200]}")
    modes = {mode: names(roles, f"runners.{mode}") for mode, roles in runners.items()}
    return Roles(modes, frozenset(names(d.get("critical"), "critical")))


def roles_of(kind: str, build: Optional[PathLike] = None) -> Roles:
    """The runner roles of nanotick-<kind> (kind "exchange" or "trader") in `build`."""
    if kind not in KINDS:
        raise ValueError(f"no binary describes the roles of {kind!r} (known: {', '.join(KINDS)})")
    try:
        exe = binary(f"nanotick-{kind}", build)
    except BinaryMissing as e:
        raise RolesUnavailable(str(e)) from e
    key = (kind, str(exe))
    if key not in _cache:
        try:
            done = subprocess.run([str(exe), "--describe"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RolesUnavailable(f"cannot run {exe} --describe: {e}") from e
        if done.returncode != 0:
            raise RolesUnavailable(f"{exe} --describe exited {done.returncode} (rebuild it: ./nanotick build): "
                                   f"{done.stderr.strip()[:200]}")
        _cache[key] = parse_description(done.stdout, exe.name)
    return _cache[key]
