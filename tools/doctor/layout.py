"""Thread layouts against a machine: whether a process's configured [threads]
fit the CPUs there are (the doctor's "problem" findings), and which layout
the demo runs on this machine (docs/TUNING.md "Layouts").

The runners per mode are the binaries' own, read from their --describe
(roles.py); the keys are those of
docs/EXCHANGE.md "Threads": [threads] mode, idle, cpus (pinning by runner
position) and [threads.<role>] cpu, idle. The binaries check the syntax
themselves; here only what the machine decides is checked.

Pure functions: thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .findings import Finding, cpulist
from .machine import Facts
from .roles import Roles


@dataclass
class Runner:
    process: str   # e.g. "exchange", "trader mm1"
    role: str
    cpu: Optional[int]
    idle: str


def runners_of(process: str, roles: Roles, data: dict) -> List[Runner]:
    """The runners a config's [threads] makes, given its binary's `roles` (roles.roles_of); [] when its mode
    is unknown (the binary refuses that config itself)."""
    threads = data.get("threads", {})
    if not isinstance(threads, dict):
        return []
    mode = threads.get("mode", "compact")
    names = roles.runners.get(mode) if isinstance(mode, str) else None
    if names is None:
        return []
    cpus = threads.get("cpus", [])
    cpus = cpus if isinstance(cpus, list) else []
    default_idle = threads.get("idle", "backoff")
    out = []
    for i, role in enumerate(names):
        own = threads.get(role, {})
        own = own if isinstance(own, dict) else {}
        cpu = own.get("cpu", cpus[i] if i < len(cpus) else None)
        if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
            cpu = None
        idle = own.get("idle", default_idle if role in roles.critical else "backoff")
        out.append(Runner(process, role, cpu, idle if isinstance(idle, str) else "backoff"))
    return out


def pinning_findings(runners: List[Runner], facts: Facts) -> List[Finding]:
    """Whether the runners fit this machine: each pinned CPU exists, no two spinning runners share a CPU or a
    core, there are not more spinning runners than CPUs, and spinning runners are pinned (onto isolated CPUs,
    where there are any)."""
    topic = "configured pinning"
    out: List[Finding] = []
    online = set(facts.online or [])
    spinning = [r for r in runners if r.idle == "spin"]
    for r in runners:
        if r.cpu is not None and facts.online is not None and r.cpu not in online:
            out.append(Finding(topic, "problem", f"{r.process} {r.role} is pinned to CPU {r.cpu}, which this "
                               f"machine does not have (online: {cpulist(sorted(online))})",
                               "pin it to an online CPU, or leave it unpinned (cpu = -1)"))
    by_cpu: Dict[int, List[Runner]] = {}
    for r in spinning:
        if r.cpu is not None:
            by_cpu.setdefault(r.cpu, []).append(r)
    for cpu, rs in sorted(by_cpu.items()):
        if len(rs) > 1:
            out.append(Finding(topic, "problem", f"spinning runners share CPU {cpu}: "
                               f"{', '.join(f'{r.process} {r.role}' for r in rs)}",
                               "each spinning runner needs a CPU of its own: the others wait a whole time slice"))
    if facts.online is not None and len(spinning) > len(online):
        out.append(Finding(topic, "problem", f"{len(spinning)} spinning runners on {len(online)} CPUs",
                           "use idle = \"backoff\" (the compact layout) or a bigger machine: spinning threads "
                           "that outnumber the CPUs starve each other"))
    for r in spinning:
        if r.cpu is None:
            out.append(Finding(topic, "change", f"{r.process} {r.role} spins but is not pinned",
                               "pin it ([threads.<role>] cpu) so the scheduler cannot move it or stack it on "
                               "another runner's CPU"))
        elif facts.isolated and r.cpu not in facts.isolated:
            out.append(Finding(topic, "change", f"{r.process} {r.role} spins on CPU {r.cpu}, not isolated "
                               f"(isolated: {cpulist(facts.isolated)})", "pin it to an isolated CPU"))
    pinned_spinning = {r.cpu: r for r in spinning if r.cpu is not None}
    for cpu, r in sorted(pinned_spinning.items()):
        for sib in facts.siblings.get(cpu, []):
            if sib != cpu and sib in pinned_spinning and cpu < sib:
                o = pinned_spinning[sib]
                out.append(Finding(topic, "change", f"{r.process} {r.role} (CPU {cpu}) and {o.process} {o.role} "
                                   f"(CPU {sib}) spin on one core's two threads",
                                   "give each its own core (or switch SMT off)"))
    if not out:
        n = sum(1 for r in runners if r.cpu is not None)
        out.append(Finding(topic, "ok", f"{len(runners)} runners, {n} pinned, {len(spinning)} spinning: they fit "
                           f"{len(online)} CPUs"))
    return out


@dataclass
class Layout:
    """A thread layout for the demo: the [threads] keys of the exchange's config and of each trader's."""

    name: str       # "compact", "pinned" or "dedicated"
    reason: str
    exchange: Dict[str, object] = field(default_factory=dict)   # [threads] key -> value
    traders: List[Dict[str, object]] = field(default_factory=list)


LAYOUTS = ("auto", "compact", "pinned", "dedicated")


def pinned_runners(roles: Roles, mode: str) -> int:
    """How many of a mode's runners a layout pins, one CPU each: its critical runners, which come first in
    `cpus` order (the binary's description; `cpus` pins by position, so only a leading run can be pinned)."""
    n = 0
    for role in roles.runners.get(mode, []):
        if role not in roles.critical:
            break
        n += 1
    return n


def needed_cpus(name: str, traders: int, exchange: Roles, trader: Roles) -> int:
    """CPUs a layout wants: one per spinning runner, plus one left to the rest (the OS, the venue's auxiliary
    threads, the floor)."""
    if name == "compact":
        return 1
    ex_mode = "dedicated" if name == "dedicated" else "compact"
    return pinned_runners(exchange, ex_mode) + traders * pinned_runners(trader, "compact") + 1


def _spare(facts: Facts) -> List[int]:
    """The CPUs spinning runners go to: the isolated ones if any, else every online CPU but the first (which
    keeps the housekeeping)."""
    if facts.isolated:
        return list(facts.isolated)
    online = facts.online or []
    return online[1:]


def make_layout(name: str, facts: Facts, traders: int, reason: str, exchange: Roles, trader: Roles) -> Layout:
    """The layout `name` on this machine (cpus from _spare, in order: the exchange's critical runners first),
    for the binaries whose runner roles are `exchange` and `trader` (roles.roles_of)."""
    if name == "compact":
        return Layout(name, reason, {"mode": "compact", "idle": "block"},
                      [{"mode": "compact", "idle": "block"} for _ in range(traders)])
    cpus = _spare(facts)
    ex_mode = "dedicated" if name == "dedicated" else "compact"
    ex_n, tr_n = pinned_runners(exchange, ex_mode), pinned_runners(trader, "compact")
    if len(cpus) < ex_n + traders * tr_n:
        raise ValueError(f"the {name} layout needs {ex_n + traders * tr_n} CPUs for its spinning runners "
                         f"({cpulist(cpus) or 'none'} free here)")
    ex = {"mode": ex_mode, "idle": "spin", "cpus": cpus[:ex_n]}
    tr = [{"mode": "compact", "idle": "spin", "cpus": cpus[ex_n + i * tr_n:ex_n + (i + 1) * tr_n]}
          for i in range(traders)]
    return Layout(name, reason, ex, tr)


def choose_layout(facts: Facts, traders: int, exchange: Roles, trader: Roles, wanted: str = "auto") -> Layout:
    """The demo's layout: `wanted` if not "auto" (ValueError when this machine cannot run it), else the most
    dedicated one this machine has CPUs for."""
    n = len(_spare(facts)) + 1
    if wanted != "auto":
        return make_layout(wanted, facts, traders, f"--layout {wanted}", exchange, trader)
    for name in ("dedicated", "pinned"):
        need = needed_cpus(name, traders, exchange, trader)
        if n >= need:
            return make_layout(name, facts, traders,
                               f"{n} CPUs{' (isolated + 1)' if facts.isolated else ''} >= {need}"
                               f": every critical runner spins on a CPU of its own", exchange, trader)
    return make_layout("compact", facts, traders,
                       f"{n} CPUs < {needed_cpus('pinned', traders, exchange, trader)} that pinned spinning runners "
                       f"need for {traders} traders: one thread per process, asleep on its sockets when idle "
                       "(latency figures are then wake-ups)", exchange, trader)
