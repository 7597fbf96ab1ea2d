"""The doctor's findings about a machine (docs/TUNING.md explains each topic):
what was found and, where it is not what a latency-sensitive run wants,
what to change. Pure functions of machine.Facts: thread-safe.

Statuses: "ok" (as tuned), "change" (works, but costs latency: the advice
says what to do), "info" (nothing to decide, or not visible here), and, for
the configured pinning only (layout.py), "problem" (the config cannot run
as meant on this machine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

from .machine import Facts

STATUSES = ("ok", "info", "change", "problem")


@dataclass
class Finding:
    topic: str
    status: str   # one of STATUSES
    found: str
    advice: str = ""


def cpulist(cpus: List[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5"."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def _cores(f: Facts) -> Finding:
    if f.online is None:
        return Finding("cores", "info", "the online CPU list is not readable (/sys/devices/system/cpu/online)")
    n = len(f.online)
    found = f"{n} online CPU{'s' if n != 1 else ''} ({cpulist(f.online)})"
    if n < 4:
        return Finding("cores", "change", found,
                       "too few to give the critical threads their own cores: the demo runs the compact layout with "
                       "blocking idle (asleep on its sockets: latency is then wake-up time); 4 + one per trader gives each spinning thread "
                       "a core")
    return Finding("cores", "ok", found)


def _smt(f: Facts) -> Finding:
    shared = sorted({tuple(s) for s in f.siblings.values() if len(s) > 1})
    if f.smt_active is False or (f.smt_active is None and f.siblings and not shared):
        return Finding("SMT (hyper-threading)", "ok", "off: no two CPUs share a core")
    if f.smt_active is None and not f.siblings:
        return Finding("SMT (hyper-threading)", "info", "not visible here (no smt/active, no topology)")
    pairs = ", ".join(cpulist(list(s)) for s in shared[:4]) + (" ..." if len(shared) > 4 else "")
    return Finding("SMT (hyper-threading)", "change", f"on: sibling CPUs {pairs}",
                   "a spinning thread's sibling takes half its core's execution units: switch SMT off "
                   "(echo off > /sys/devices/system/cpu/smt/control, or nosmt on the kernel command line), or "
                   "leave each critical thread's sibling idle")


def _isolated(f: Facts) -> Finding:
    if f.isolated is None:
        return Finding("isolated cores", "info", "not visible here (/sys/devices/system/cpu/isolated)")
    if not f.isolated:
        return Finding("isolated cores", "change", "none: the scheduler may put any task on any CPU",
                       "isolate the cores the critical threads are pinned to: isolcpus=managed_irq,domain,N-M on "
                       "the kernel command line (or a cpuset / systemd AllowedCPUs= for everything else), and pin "
                       "the threads there ([threads.<role>] cpu)")
    return Finding("isolated cores", "ok", f"CPUs {cpulist(f.isolated)}")


def _nohz(f: Facts) -> Finding:
    if f.nohz_full:
        missing = sorted(set(f.isolated or []) - set(f.nohz_full))
        if missing:
            return Finding("tickless cores (nohz_full)", "change",
                           f"CPUs {cpulist(f.nohz_full)}; isolated but ticking: {cpulist(missing)}",
                           f"add them: nohz_full={cpulist(sorted(set(f.nohz_full) | set(missing)))}")
        return Finding("tickless cores (nohz_full)", "ok", f"CPUs {cpulist(f.nohz_full)}")
    return Finding("tickless cores (nohz_full)", "change", "none: every CPU takes the scheduler tick (a few us, "
                   "up to 1,000 times a second)",
                   "nohz_full=N-M (the isolated cores) and rcu_nocbs=N-M on the kernel command line: a core "
                   "running one spinning thread then takes almost no timer interrupts")


def _irqs(f: Facts) -> Finding:
    if not f.irq_affinity:
        return Finding("IRQ affinity", "info", "not visible here (/proc/irq)")
    critical = set(f.isolated or [])
    if not critical:
        on_all = sum(1 for cpus in f.irq_affinity.values() if f.online and set(f.online) <= set(cpus))
        return Finding("IRQ affinity", "change",
                       f"{len(f.irq_affinity)} IRQs, {on_all} of them allowed on every CPU",
                       "steer interrupts away from the critical cores: write the housekeeping CPUs to "
                       "/proc/irq/*/smp_affinity_list and /proc/irq/default_smp_affinity (and stop irqbalance, "
                       "or give it IRQBALANCE_BANNED_CPULIST)")
    hitting = sorted(irq for irq, cpus in f.irq_affinity.items() if set(cpus) & critical)
    if hitting:
        return Finding("IRQ affinity", "change", f"{len(hitting)} IRQs may run on isolated CPUs "
                       f"({', '.join(hitting[:8])}{' ...' if len(hitting) > 8 else ''})",
                       "write the housekeeping CPUs to their /proc/irq/N/smp_affinity_list")
    return Finding("IRQ affinity", "ok", f"no IRQ may run on the isolated CPUs ({len(f.irq_affinity)} IRQs)")


def _governor(f: Facts) -> Finding:
    if not f.governors:
        return Finding("CPU frequency governor", "info",
                       "no cpufreq here (a VM, or the firmware controls the clock): nothing to set")
    kinds = sorted(set(f.governors.values()))
    if kinds == ["performance"]:
        return Finding("CPU frequency governor", "ok", "performance on every CPU")
    slow = sorted(c for c, g in f.governors.items() if g != "performance")
    return Finding("CPU frequency governor", "change", f"{', '.join(kinds)} (not performance on CPUs {cpulist(slow)})",
                   "cpupower frequency-set -g performance (or write performance to "
                   "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor): a core that slows down when idle "
                   "takes tens of us to come back up")


def _cstates(f: Facts) -> Finding:
    if not f.cstates:
        m = [w for w in f.cmdline.split() if w.startswith(("intel_idle.max_cstate", "processor.max_cstate", "idle="))]
        if m:
            return Finding("C-states", "ok", f"limited on the kernel command line ({' '.join(m)})")
        return Finding("C-states", "info", "no cpuidle here (a VM: the host decides), or not visible")
    deep = set()
    for cpu, states in f.cstates.items():
        for s in states:
            if not s.disabled and s.latency_us is not None and s.latency_us > 2:
                deep.add(s.name)
    if not deep:
        return Finding("C-states", "ok", "no idle state deeper than 2 us exit latency is enabled")
    return Finding("C-states", "change", f"deep idle states enabled: {', '.join(sorted(deep))}",
                   "a spinning thread never idles, but every other core that does pays the exit latency on "
                   "wake-up: disable them (cpupower idle-set -D 2, or intel_idle.max_cstate=1 "
                   "processor.max_cstate=1), or hold /dev/cpu_dma_latency at 0")


def _thp(f: Facts) -> Finding:
    if f.thp_enabled is None:
        return Finding("transparent huge pages", "info", "not visible here (/sys/kernel/mm/transparent_hugepage)")
    found = f"enabled={f.thp_enabled}" + (f", defrag={f.thp_defrag}" if f.thp_defrag else "")
    if f.thp_enabled == "always" or f.thp_defrag == "always":
        return Finding("transparent huge pages", "change", found,
                       "'always' lets khugepaged and synchronous compaction stall any thread at a page fault: use "
                       "madvise (echo madvise > .../enabled and .../defrag), and pre-fault what the hot path "
                       "touches at start-up (nanotick sizes its tables at construction)")
    return Finding("transparent huge pages", "ok", found)


def _numa(f: Facts) -> Finding:
    if not f.numa_nodes:
        return Finding("NUMA", "info", "not visible here (/sys/devices/system/node)")
    if len(f.numa_nodes) == 1:
        return Finding("NUMA", "ok", "one node: every CPU is as near every page")
    nodes = "; ".join(f"node {n}: CPUs {cpulist(c)}" for n, c in sorted(f.numa_nodes.items()))
    return Finding("NUMA", "change", f"{len(f.numa_nodes)} nodes ({nodes})",
                   "pin every thread of the venue and its rings to one node's cores, with memory from that node "
                   "(numactl --cpunodebind=N --membind=N), and the NIC's interrupts to that node too")


def _clock(f: Facts) -> Finding:
    invariant = "constant_tsc" in f.cpu_flags and "nonstop_tsc" in f.cpu_flags
    found = f"clock source {f.clocksource or 'unknown'}" + (f" (available: {' '.join(f.clocksources)})"
                                                            if f.clocksources else "")
    found += "; TSC invariant" if invariant else "; TSC not invariant (no constant_tsc + nonstop_tsc)"
    if not invariant:
        return Finding("clock source and TSC", "change", found,
                       "nanotick's clock (core::TscClock) falls back to the steady clock without an invariant TSC: "
                       "each reading is then a vDSO call; use a machine whose CPUs report constant_tsc and "
                       "nonstop_tsc")
    if f.clocksource != "tsc":
        return Finding("clock source and TSC", "change", found,
                       "the kernel's clock is not the TSC: clock_gettime is slower and may disagree with the TSC "
                       "readings telemetry takes; tsc=reliable clocksource=tsc on the kernel command line if the "
                       "TSC is sound here")
    return Finding("clock source and TSC", "ok", found)


def _virtual(f: Facts) -> Finding:
    if "hypervisor" in f.cpu_flags:
        return Finding("virtualisation", "change", "a virtual machine (the CPUs report the hypervisor flag)",
                       "the host schedules the vCPUs: a vCPU can stop for milliseconds while the host runs "
                       "something else (steal time), whatever is tuned inside; for figures to publish use bare metal, "
                       "or vCPUs pinned to dedicated host cores")
    if not f.cpu_flags:
        return Finding("virtualisation", "info", "not visible here (/proc/cpuinfo)")
    return Finding("virtualisation", "ok", "bare metal (no hypervisor flag)")


def machine_findings(f: Facts) -> List[Finding]:
    """One finding per topic, in docs/TUNING.md's order."""
    return [_virtual(f), _cores(f), _smt(f), _isolated(f), _nohz(f), _irqs(f), _governor(f), _cstates(f), _thp(f), _numa(f),
            _clock(f)]
