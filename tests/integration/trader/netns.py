"""A small multi-host network for the venue's network tests, made of Linux
network namespaces (needs root and a kernel that allows them):

    host "ex" 10.213.0.1 ─┐
    host "t1" 10.213.0.11 ┤
    host "t2" 10.213.0.12 ├─ bridge br0 (in namespace "sw", multicast flooded)
    host "t3" 10.213.0.13 ┤
    host "obs" 10.213.0.20┘

Each host is a namespace with one veth link ("eth0") to the bridge; market
data multicast crosses the bridge like a switch, not loopback. Faults:
`drop(host, ports, percent)` installs an nftables rule in that host's input
(`numgen random mod 100 < percent drop` on the UDP ports), `clear_drops`
removes it, `link(host, up)` takes the host's link down or up. Every name
carries the test process's pid, so two runs never collide; `close()` (and
the context manager) deletes every namespace it made, which removes their
links and rules with them.

Not thread-safe: one test at a time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List, Optional

SUBNET = "10.213.0"
HOST_IPS = {"ex": 1, "t1": 11, "t2": 12, "t3": 13, "obs": 20}


class NetnsUnavailable(Exception):
    """The kernel or the user may not make namespaces here. The tests skip, saying why, except
    under CI=true (CI runs as root with iproute2 and nftables), where they fail with the reason
    (test_network_faults.py's `net` fixture)."""


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=check)


class Network:
    def __init__(self, hosts: Optional[List[str]] = None) -> None:
        if os.geteuid() != 0:
            raise NetnsUnavailable("network namespaces need root")
        for tool in ("ip", "nft"):
            if shutil.which(tool) is None:
                raise NetnsUnavailable(f"'{tool}' is not installed (./nanotick setup installs iproute2 and nftables)")
        self.tag = f"nt{os.getpid() % 100000}"
        self.hosts = hosts or list(HOST_IPS)
        self.made: List[str] = []
        self.children: List[subprocess.Popen] = []
        self._dropped_before: Dict[str, int] = {}  # by rules since replaced
        try:
            self._build()
        except subprocess.CalledProcessError as e:
            self.close()
            raise NetnsUnavailable(f"the kernel refused: {' '.join(e.cmd)}: {e.stderr.strip()}") from e

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def ip(self, host: str) -> str:
        return f"{SUBNET}.{HOST_IPS[host]}"

    def prefix(self, host: str) -> List[str]:
        """Runs a command on `host` (ip netns exec execs it: the pid is the command's)."""
        return ["ip", "netns", "exec", self.ns(host)]

    def _build(self) -> None:
        sw = self.ns("sw")
        _run("ip", "netns", "add", sw)
        self.made.append(sw)
        _run("ip", "-n", sw, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        _run("ip", "-n", sw, "link", "set", "br0", "up")
        for host in self.hosts:
            ns = self.ns(host)
            _run("ip", "netns", "add", ns)
            self.made.append(ns)
            port = f"p-{host}"
            _run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", sw)
            _run("ip", "-n", sw, "link", "set", port, "master", "br0", "up")
            _run("ip", "-n", ns, "addr", "add", f"{self.ip(host)}/24", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            # Multicast leaves by eth0 (the processes also name the interface).
            _run("ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0")

    def drop(self, host: str, udp_ports: List[int], percent: int) -> None:
        """Drops `percent`% of the UDP datagrams to `udp_ports` arriving at `host` (at random);
        replaces the host's rule."""
        self.clear_drops(host)
        ports = ", ".join(str(p) for p in udp_ports)
        match = "" if percent >= 100 else f"numgen random mod 100 < {percent} "
        rule = (f"table inet ntfault {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n"
                f"  udp dport {{ {ports} }} {match}counter drop\n }}\n}}\n")
        subprocess.run(["ip", "netns", "exec", self.ns(host), "nft", "-f", "-"], input=rule, capture_output=True,
                       text=True, timeout=30, check=True)

    def dropped(self, host: str) -> int:
        """Datagrams the drop rules of `host` have dropped so far (all of them, since the first)."""
        return self._dropped_before.get(host, 0) + self._rule_dropped(host)

    def _rule_dropped(self, host: str) -> int:
        out = _run("ip", "netns", "exec", self.ns(host), "nft", "list", "table", "inet", "ntfault", check=False).stdout
        for word_i, word in enumerate(out.split()):
            if word == "packets":
                return int(out.split()[word_i + 1])
        return 0

    def clear_drops(self, host: str) -> None:
        self._dropped_before[host] = self.dropped(host)
        _run("ip", "netns", "exec", self.ns(host), "nft", "delete", "table", "inet", "ntfault", check=False)

    def link(self, host: str, up: bool) -> None:
        _run("ip", "-n", self.ns(host), "link", "set", "eth0", "up" if up else "down")

    def spawn(self, host: str, args: List[str], **popen) -> subprocess.Popen:
        """A helper process on `host`, killed by close() if still running."""
        p = subprocess.Popen(self.prefix(host) + args, **popen)
        self.children.append(p)
        return p

    def close(self) -> None:
        for p in self.children:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        self.children.clear()
        for ns in reversed(self.made):
            _run("ip", "netns", "del", ns, check=False)
        self.made.clear()

    def __enter__(self) -> "Network":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
