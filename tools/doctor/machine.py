"""What a machine offers a latency-sensitive process, read from /sys and /proc
(docs/TUNING.md lists what each fact means). Every reader takes the
filesystem root, so the tests run them against a made-up tree; a file that
is missing or does not parse gives None (or an empty result), never an
exception: a VM or a container leaves out much of /sys.

Pure reads, no caching: thread-safe.
"""

from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

_CPULIST_RE = re.compile(r"^\s*(\d+)(?:-(\d+))?\s*$")
MAX_CPUS = 4096  # a cpulist naming more is not believed (and would cost memory)


def parse_cpulist(text: Optional[str]) -> Optional[List[int]]:
    """"0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]; "" -> []; None when it does not parse."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return []
    out: List[int] = []
    for part in text.split(","):
        m = _CPULIST_RE.match(part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo or hi >= MAX_CPUS:
            return None
        out.extend(range(lo, hi + 1))
    return sorted(set(out))


def parse_cpumask(text: Optional[str]) -> Optional[List[int]]:
    """A hex mask in 32-bit words, most significant first ("00000000,00000003" -> [0, 1]); None when it does
    not parse."""
    if text is None:
        return None
    words = text.strip().split(",")
    if not words or any(not re.fullmatch(r"[0-9a-fA-F]{1,8}", w) for w in words) or len(words) * 32 > MAX_CPUS:
        return None
    value = int("".join(w.zfill(8) for w in words), 16)
    return [i for i in range(len(words) * 32) if value >> i & 1]


@dataclass
class CState:
    name: str
    latency_us: Optional[int]
    disabled: bool


@dataclass
class Facts:
    """Everything the checks look at, read once."""

    online: Optional[List[int]]
    isolated: Optional[List[int]]
    nohz_full: Optional[List[int]]
    cmdline: str
    smt_active: Optional[bool]
    siblings: Dict[int, List[int]]            # cpu -> its thread siblings (itself included)
    governors: Dict[int, str]                 # cpu -> scaling governor (absent: no cpufreq)
    cstates: Dict[int, List[CState]]          # cpu -> its idle states (absent: no cpuidle)
    thp_enabled: Optional[str]                # the bracketed choice of transparent_hugepage/enabled
    thp_defrag: Optional[str]
    numa_nodes: Dict[int, List[int]]          # node -> its cpus
    clocksource: Optional[str]
    clocksources: List[str]
    cpu_flags: List[str]
    irq_affinity: Dict[str, List[int]] = field(default_factory=dict)  # irq -> cpus it may run on
    default_irq_affinity: Optional[List[int]] = None


class Machine:
    """Reads the facts under `root` ("/" for this machine)."""

    def __init__(self, root: str | os.PathLike = "/") -> None:
        self.root = pathlib.Path(root)

    def read(self, rel: str, limit: int = 1 << 20) -> Optional[str]:
        try:
            with open(self.root / rel, "rb") as f:
                data = f.read(limit)
            return data.decode("utf-8", errors="replace")
        except OSError:
            return None

    def _cpu_dirs(self) -> List[Tuple[int, pathlib.Path]]:
        base = self.root / "sys/devices/system/cpu"
        out = []
        try:
            for p in base.iterdir():
                m = re.fullmatch(r"cpu(\d+)", p.name)
                if m and int(m.group(1)) < MAX_CPUS:
                    out.append((int(m.group(1)), p))
        except OSError:
            pass
        return sorted(out)

    def _choice(self, rel: str) -> Optional[str]:
        text = self.read(rel)
        if text is None:
            return None
        m = re.search(r"\[([^\]]+)\]", text)
        return m.group(1) if m else (text.strip() or None)

    def facts(self) -> Facts:
        cmdline = (self.read("proc/cmdline") or "").strip()
        nohz = parse_cpulist(self.read("sys/devices/system/cpu/nohz_full"))
        if nohz is None:
            m = re.search(r"(?:^|\s)nohz_full=(\S+)", cmdline)
            nohz = parse_cpulist(m.group(1)) if m else None
        smt = self.read("sys/devices/system/cpu/smt/active")
        siblings, governors, cstates = {}, {}, {}
        for cpu, d in self._cpu_dirs():
            rel = d.relative_to(self.root)
            s = parse_cpulist(self.read(f"{rel}/topology/thread_siblings_list"))
            if s is not None:
                siblings[cpu] = s
            g = self.read(f"{rel}/cpufreq/scaling_governor")
            if g is not None and g.strip():
                governors[cpu] = g.strip()
            states = []
            try:
                state_dirs = sorted((p for p in (d / "cpuidle").iterdir() if re.fullmatch(r"state\d+", p.name)),
                                    key=lambda p: int(p.name[5:]))
            except OSError:
                state_dirs = []
            for sd in state_dirs:
                srel = sd.relative_to(self.root)
                name = (self.read(f"{srel}/name") or "?").strip()
                lat = (self.read(f"{srel}/latency") or "").strip()
                dis = (self.read(f"{srel}/disable") or "0").strip()
                states.append(CState(name, int(lat) if lat.isdigit() else None, dis == "1"))
            if states:
                cstates[cpu] = states
        nodes = {}
        try:
            for p in (self.root / "sys/devices/system/node").iterdir():
                m = re.fullmatch(r"node(\d+)", p.name)
                if m:
                    cpus = parse_cpulist(self.read(f"sys/devices/system/node/{p.name}/cpulist"))
                    nodes[int(m.group(1))] = cpus or []
        except OSError:
            pass
        flags: List[str] = []
        for line in (self.read("proc/cpuinfo", 4 << 20) or "").splitlines():
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                break
        irqs = {}
        try:
            for p in (self.root / "proc/irq").iterdir():
                if p.name.isdigit():
                    cpus = parse_cpulist(self.read(f"proc/irq/{p.name}/smp_affinity_list"))
                    if cpus is not None:
                        irqs[p.name] = cpus
        except OSError:
            pass
        available = (self.read("sys/devices/system/clocksource/clocksource0/available_clocksource") or "").split()
        current = self.read("sys/devices/system/clocksource/clocksource0/current_clocksource")
        return Facts(
            online=parse_cpulist(self.read("sys/devices/system/cpu/online")),
            isolated=parse_cpulist(self.read("sys/devices/system/cpu/isolated")),
            nohz_full=nohz,
            cmdline=cmdline,
            smt_active=None if smt is None or smt.strip() not in ("0", "1") else smt.strip() == "1",
            siblings=siblings,
            governors=governors,
            cstates=cstates,
            thp_enabled=self._choice("sys/kernel/mm/transparent_hugepage/enabled"),
            thp_defrag=self._choice("sys/kernel/mm/transparent_hugepage/defrag"),
            numa_nodes=nodes,
            clocksource=current.strip() if current and current.strip() else None,
            clocksources=available,
            cpu_flags=flags,
            irq_affinity=irqs,
            default_irq_affinity=parse_cpumask(self.read("proc/irq/default_smp_affinity")),
        )
