"""./nanotick fix-bench: the FIX order round trip beside the binary one, in
the same run, against the same exchange.

Starts one exchange (tools/loadtest's config: one instrument, no accounts, the
journal's batch fsync) and nanotick-fix-gateway in front of it, then, round
after round, interleaved:
  FIX     QuickFIX/J (tests/integration/fix/client, a JVM) sends one resting
          NewOrderSingle, waits for its ExecutionReport New, sends its
          OrderCancelRequest, waits for Canceled; N times, a message every
          2 ms. Each wait is a round trip: System.nanoTime from before the
          send to the report handed to the application.
  binary  nanotick-loadgen, one session, open-loop at a low rate (a message
          every 2 ms, so nothing queues): the same pattern, a resting
          NewOrder then its cancel, each timed from its due time to its
          answer read (TSC). With --yield: it gives its CPU away when it has
          nothing to do, as the blocked JVM does (a spinning load generator
          on a 2-CPU machine would take the CPU the exchange needs).
Both paths send on the same 2 ms clock: a client that sends the next message
as soon as the last answer came finds the exchange's threads still awake, one
every 2 ms finds them parked (the backoff idle strategy), and the two would
not be comparable. The first FIX round is a warm-up (the JVM compiles QuickFIX/J's code paths)
and is not reported.

What differs, so the ratio is not only the gateway's: the FIX client is
QuickFIX/J in a JVM and the binary client is C++; FIX encodes and decodes text
at both ends; the FIX path has two more loopback hops and one more process
to wake. So FIX - binary bounds what the gateway adds from above. The
gateway's own share is measured inside it (TSC) and printed beside: inbound,
from QuickFIX handing over a request to its venue message written; outbound,
from a venue report read to its FIX answer handed to QuickFIX. QuickFIX's
socket read and parse before that are in neither.

Writes RUN_DIR/fixbench.json and prints the table. Exit status: 0 measured,
1 a process failed, 2 bad option.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

from tools.credential import stored_credential
from tools.loadtest.loadtest import Exchange, LoadTestError, exchange_config

ROOT = pathlib.Path(__file__).resolve().parents[2]

FIX_DIR = ROOT / "build" / "fix"
CLIENT_SOURCE = ROOT / "tests" / "integration" / "fix" / "client" / "NanotickFixClient.java"
PRICE = 10  # resting buys, below any seller (there is none)
INTERVAL_US = 2000  # both paths send a message every 2 ms


def percentiles(values: List[int]) -> Dict[str, float]:
    """Nearest-rank p50/p99/p99.9/max, in ns."""
    v = sorted(values)
    rank = lambda q: v[min(len(v) - 1, max(0, int(-(-q * len(v) // 1)) - 1))]  # noqa: E731
    return {"n": len(v), "p50_ns": rank(0.5), "p99_ns": rank(0.99), "p99_9_ns": rank(0.999), "max_ns": v[-1]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


class FixBenchClient:
    """The QuickFIX/J client, driven on stdin (see NanotickFixClient.java)."""

    def __init__(self, classes: pathlib.Path, port: int, store: pathlib.Path, quick: bool, password: str) -> None:
        # --quick (the tests'): the JVM's quick-start compiler only; the figures are not for reading.
        jit = ["-XX:TieredStopAtLevel=1"] if quick else []
        self.proc = subprocess.Popen(
            ["java", *jit, "-cp", f"{FIX_DIR / 'jars' / '*'}:{classes}", "NanotickFixClient", "127.0.0.1", str(port),
             "BENCH", "NANOTICK", str(store), password],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.expect(lambda e: e.get("event") == "ready", "the client to start")
        self.expect(lambda e: e.get("event") == "logon", "the FIX logon")

    def expect(self, predicate, what: str) -> dict:
        for line in self.proc.stdout:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == "error":
                raise LoadTestError(f"FIX client: {e.get('text')}")
            if predicate(e):
                return e
        raise LoadTestError(f"the FIX client exited waiting for {what}")

    def bench(self, n: int, interval_us: int) -> List[int]:
        self.proc.stdin.write(f"bench {n} LOAD 1 {PRICE} 1 {interval_us}\n")
        self.proc.stdin.flush()
        e = self.expect(lambda e: e.get("event") == "bench", "the bench's results")
        return e["new"] + e["cancel"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def compile_client() -> pathlib.Path:
    """The Java client compiled once per source version into build/fix/classes-<hash>, shared
    with the FIX tests (atomically: a test worker may be making it at the same time)."""
    digest = hashlib.sha256(CLIENT_SOURCE.read_bytes()).hexdigest()[:16]
    out = FIX_DIR / f"classes-{digest}"
    if (out / "NanotickFixClient.class").exists():
        return out
    tmp = pathlib.Path(tempfile.mkdtemp(dir=FIX_DIR, prefix="classes-tmp-"))
    subprocess.run(["javac", "-nowarn", "-cp", str(FIX_DIR / "jars" / "*"), "-d", str(tmp), str(CLIENT_SOURCE)],
                   check=True, capture_output=True, timeout=120)
    try:
        tmp.rename(out)
    except OSError:  # made meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def gateway_config(run_dir: pathlib.Path, port: int, password: str, build: pathlib.Path) -> pathlib.Path:
    """Client 2 of the exchange's config trades through the gateway as BENCH, whose Logon carries `password`
    (stored as its hash, computed by `build`'s nanotick-credential)."""
    key = [line.split()[1] for line in (run_dir / "sessions.txt").read_text().splitlines() if line.startswith("2 ")][0]
    (run_dir / "bench.key").touch(mode=0o600)  # key files are read only when their owner's alone
    (run_dir / "bench.key").write_text(key + "\n")
    path = run_dir / "fix-gateway.toml"
    path.write_text(f"""[gateway]
exchange_config = "{run_dir / 'exchange.toml'}"
listen = "127.0.0.1:{port}"
store_dir = "{run_dir / 'fix-store'}"
data_dictionary = "{FIX_DIR / 'FIX44.xml'}"

[[sessions]]
sender_comp_id = "BENCH"
target_comp_id = "NANOTICK"
client_id = 2
key_file = "{run_dir / 'bench.key'}"
password_hash = "{stored_credential(password, build)}"
""")
    return path


_GATEWAY_TIME = re.compile(r"gateway time (inbound|outbound) \(.*\): n (\d+), p50 (\d+) ns, p99 (\d+) ns, "
                           r"p99\.9 (\d+) ns, max (\d+) ns")


def gateway_time(log: str) -> Dict[str, Dict[str, int]]:
    """The gateway's own time per message, from the lines it logs when it stops (apps/fix_gateway.cpp)."""
    out = {}
    for m in _GATEWAY_TIME.finditer(log):
        out[m.group(1)] = {"n": int(m.group(2)), "p50_ns": int(m.group(3)), "p99_ns": int(m.group(4)),
                           "p99_9_ns": int(m.group(5)), "max_ns": int(m.group(6))}
    return out


def row(name: str, p: Dict[str, float]) -> str:
    return (f"{name:<8} {p['n']:>7,} {p['p50_ns'] / 1e3:>9,.1f} {p['p99_ns'] / 1e3:>9,.1f} "
            f"{p['p99_9_ns'] / 1e3:>9,.1f} {p['max_ns'] / 1e3:>9,.1f}")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="./nanotick fix-bench", description=__doc__.split("\n\n")[0].strip())
    p.add_argument("--round-trips", type=int, default=2000, help="FIX orders per round (each: new + cancel)")
    p.add_argument("--rounds", type=int, default=5, help="measured rounds, FIX and binary interleaved (default 5)")
    p.add_argument("--idle", choices=("backoff", "spin"), default="backoff",
                   help="the exchange's idle strategy (default backoff, the demo's) and the gateway's")
    p.add_argument("--run-dir", type=pathlib.Path, default=None, help="where to write (default runs/fixbench-<time>)")
    p.add_argument("--build-dir", type=pathlib.Path, default=ROOT / "build" / "release")
    p.add_argument("--quick", action="store_true", help="the tests' form: 1 round of 50 round trips")
    args = p.parse_args(argv)
    if args.quick:
        args.round_trips, args.rounds = 50, 1
    if not 10 <= args.round_trips <= 1_000_000 or not 1 <= args.rounds <= 100:
        p.error("--round-trips must be in [10, 1000000] and --rounds in [1, 100]")
    bins = {n: args.build_dir / "bin" / f"nanotick-{n}" for n in ("exchange", "fix-gateway", "loadgen", "credential")}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            print(f"nanotick fix-bench: error: {b} is missing: run ./nanotick build", file=sys.stderr)
            return 2
    if not (FIX_DIR / "FIX44.xml").exists():
        print(f"nanotick fix-bench: error: {FIX_DIR}/FIX44.xml is missing: run ./nanotick setup", file=sys.stderr)
        return 2
    run_dir = (args.run_dir or ROOT / "runs" / f"fixbench-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}").resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        print(f"nanotick fix-bench: error: {run_dir} exists and is not empty", file=sys.stderr)
        return 2
    (run_dir / "journal").mkdir(parents=True, exist_ok=True)
    config = run_dir / "exchange.toml"
    config.write_text(exchange_config(run_dir, 2, args.idle, random.Random().randrange(20000, 30000),
                                      build=args.build_dir))
    # Client 1 is the binary one (loadgen), client 2 the FIX one.
    (run_dir / "binary-session.txt").touch(mode=0o600)
    (run_dir / "binary-session.txt").write_text((run_dir / "sessions.txt").read_text().splitlines()[0] + "\n")
    exchange = gateway = client = None
    rounds = []
    try:
        exchange = Exchange(bins["exchange"], config, run_dir / "exchange.log")
        port = free_port()
        password = os.urandom(12).hex()  # this run's FIX password: 24 characters
        gw_log = open(run_dir / "gateway.log", "wb")
        gateway = subprocess.Popen([str(bins["fix-gateway"]), "--config", str(gateway_config(run_dir, port, password, args.build_dir)),
                                    "--exchange", exchange.address, "--idle", args.idle], stdin=subprocess.DEVNULL, stdout=gw_log,
                                   stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while b"ready:" not in (run_dir / "gateway.log").read_bytes():
            if gateway.poll() is not None or time.monotonic() > deadline:
                raise LoadTestError("the gateway did not start: see " + str(run_dir / "gateway.log"))
            time.sleep(0.05)
        client = FixBenchClient(compile_client(), port, run_dir / "qfj-store", quick=args.quick, password=password)
        print(f"nanotick fix-bench: exchange at {exchange.address}, gateway on port {port}, idle {args.idle}; {args.rounds} round(s) of "
              f"{args.round_trips:,} FIX round trips (new + cancel) and as many binary messages; run dir {run_dir}",
              flush=True)
        client.bench(args.round_trips, INTERVAL_US)  # warm-up: not reported
        rate = 1e6 / INTERVAL_US
        print(f"{'round':<5} {'path':<8} {'msgs':>7} {'p50 us':>9} {'p99 us':>9} {'p99.9 us':>9} {'max us':>9}")
        for r in range(1, args.rounds + 1):
            # Alternate which path goes first: whatever the one before leaves running (the JVM's
            # compiler threads, the kernel's writeback) falls on each path alike.
            fix = percentiles(client.bench(args.round_trips, INTERVAL_US)) if r % 2 == 1 else None
            done = subprocess.run([str(bins["loadgen"]), "--exchange", exchange.address, "--sessions",
                                   str(run_dir / "binary-session.txt"), "--yield", "--rate", f"{rate:g}", "--duration",
                                   f"{2 * args.round_trips / rate:g}", "--warmup", "0", "--price", str(PRICE - 1)],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=2 * args.round_trips / rate + 60)
            if done.returncode != 0:
                raise LoadTestError(f"nanotick-loadgen exited {done.returncode}: {done.stderr.strip()}")
            lg = json.loads(done.stdout.strip().splitlines()[-1])
            binary = {"n": lg["answered"], "p50_ns": lg["p50_ns"], "p99_ns": lg["p99_ns"], "p99_9_ns": lg["p99_9_ns"],
                      "max_ns": lg["max_ns"]}
            if fix is None:
                fix = percentiles(client.bench(args.round_trips, INTERVAL_US))
            rounds.append({"fix": fix, "binary": binary})
            print(f"{r:<5} {row('FIX', fix)}\n{'':<5} {row('binary', binary)}", flush=True)
    except (LoadTestError, subprocess.CalledProcessError) as e:
        print(f"nanotick fix-bench: error: {e}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()
        if gateway is not None and gateway.poll() is None:
            gateway.terminate()  # it logs its own time per message as it stops
            try:
                gateway.wait(timeout=15)
            except subprocess.TimeoutExpired:
                gateway.kill()
                gateway.wait()
        if exchange is not None:
            exchange.stop()

    own = gateway_time((run_dir / "gateway.log").read_text(errors="replace"))

    def spread(path: str, key: str) -> List[float]:
        return [min(x[path][key] for x in rounds), max(x[path][key] for x in rounds)]

    ratios = {k: sorted(x["fix"][k] / x["binary"][k] for x in rounds) for k in ("p50_ns", "p99_ns")}
    summary = {
        "round_trips": args.round_trips, "idle": args.idle, "rounds": rounds,
        "fix_p50_ns": spread("fix", "p50_ns"), "binary_p50_ns": spread("binary", "p50_ns"),
        "fix_p99_ns": spread("fix", "p99_ns"), "binary_p99_ns": spread("binary", "p99_ns"),
        "ratio_p50": ratios["p50_ns"], "ratio_p99": ratios["p99_ns"],
        "gateway_time": own,
    }
    (run_dir / "fixbench.json").write_text(json.dumps(summary, indent=2) + "\n")
    med = lambda v: v[len(v) // 2]  # noqa: E731
    print(f"FIX / binary, median over rounds: p50 {med(ratios['p50_ns']):.1f}x "
          f"(rounds {ratios['p50_ns'][0]:.1f}-{ratios['p50_ns'][-1]:.1f}x), p99 {med(ratios['p99_ns']):.1f}x "
          f"(rounds {ratios['p99_ns'][0]:.1f}-{ratios['p99_ns'][-1]:.1f}x)")
    for direction, p in own.items():
        print(f"gateway's own time, {direction} (every message of the run, warm-up included): n {p['n']:,}, "
              f"p50 {p['p50_ns'] / 1e3:,.1f} us, p99 {p['p99_ns'] / 1e3:,.1f} us, p99.9 {p['p99_9_ns'] / 1e3:,.1f} us, "
              f"max {p['max_ns'] / 1e3:,.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
