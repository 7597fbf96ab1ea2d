"""./nanotick loadtest: the venue's latency against offered load.

Starts one exchange (its own config, written into the run directory: one
instrument, N clients without accounts or rate limits, the journal's batch
fsync, the idle strategy asked for), then runs nanotick-loadgen at each rate
of a sweep: open-loop, every message measured from the time it was due
(apps/loadgen.cpp), round-robin over N sessions, TCP or shared memory. The sweep goes up from
1,000 messages/s until the venue saturates: the answered rate falls below
95% of the offered rate, or p99 grows past 10 times the first rate's (or
past 100 ms). The knee is the highest rate before that.

Writes RUN_DIR/loadtest.json (every step, the knee) and RUN_DIR/loadtest.html
(the curve, log axes), prints the table. Exit status: 0 measured, 1 a step
failed (the exchange died, a session could not log on), 2 bad option.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import random
import re
import secrets
import subprocess
import sys
import time
from typing import Dict, List, Optional

from tools.binaries import PathLike
from tools.credential import stored_credential

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_RATES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000]
IDLES = ("backoff", "spin", "yield")
SATURATED_ANSWERED = 0.95
SATURATED_P99_GROWTH = 10.0
SATURATED_P99_NS = 100e6
_LISTENING = re.compile(r"order entry listening on (\d+\.\d+\.\d+\.\d+:\d+)")


class LoadTestError(Exception):
    pass


FSYNCS = ("batch", "every", "none")


TRANSPORTS = ("tcp", "shm")


def shm_path(run_dir: pathlib.Path) -> str:
    """The exchange's shared-memory session socket: in the run directory when it fits a UNIX socket path."""
    path = str(run_dir / "order-entry.sock")
    return path if len(path.encode()) <= 107 else f"/tmp/nanotick-loadtest-{os.getpid()}.sock"


def exchange_config(run_dir: pathlib.Path, sessions: int, idle: str, group_port: int, fsync: str = "batch",
                    transport: str = "tcp", build: Optional[PathLike] = None) -> str:
    """The exchange's config for the load test, and RUN_DIR/sessions.txt with the clients' keys
    (their stored forms computed by `build`'s nanotick-credential)."""
    keys = []
    clients = []
    for i in range(1, sessions + 1):
        key = f"loadtest-{i:04d}-{secrets.token_hex(6)}"
        keys.append(f"{i} {key}")
        clients.append(f"[[clients]]\nid = {i}\nname = \"load{i}\"\ncredential = \"{stored_credential(key, build)}\"\n"
                       "rate_limit_per_s = 100000000\nrate_burst = 100000000\ncancel_on_disconnect = true\n")
    sessions_file = run_dir / "sessions.txt"
    sessions_file.touch(mode=0o600)  # API keys: the loadgen reads them only from a file that is the owner's alone
    sessions_file.write_text("\n".join(keys) + "\n")
    g = 40 + group_port % 200
    return f"""# ./nanotick loadtest's exchange (tools/loadtest/loadtest.py)
[server]
order_entry = "127.0.0.1:0"
{f'shm_path = "{shm_path(run_dir)}"' if transport == "shm" else ""}
max_sessions = {sessions + 4}
heartbeat_ms = 1000
output_buffer_bytes = 4194304
read_budget_bytes = 65536

[market_data]
interface = "127.0.0.1"
incremental = "239.255.{g}.1:{group_port}"
snapshot = "239.255.{g}.2:{group_port + 1}"
ttl = 0
mtu = 1400
heartbeat_ms = 1000
snapshot_interval_ms = 1000

[journal]
dir = "{run_dir / 'journal'}"
fsync = "{fsync}"
batch_window_us = 1000

[threads]
mode = "compact"
idle = "{idle}"

[[instruments]]
symbol = "LOAD"
tick_size = 1
min_price = 1
max_price = 1000000
max_order_qty = 1000000
max_orders = 65536
max_levels = 4096

""" + "\n".join(clients)


class Exchange:
    """The exchange process: started, ready, its address; stopped with SIGTERM."""

    def __init__(self, binary: pathlib.Path, config: pathlib.Path, log: pathlib.Path) -> None:
        self.log_path = log
        self.log = open(log, "wb")
        self.proc = subprocess.Popen([str(binary), "--config", str(config)], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.address = self._wait_ready(15.0)

    def _wait_ready(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        address = None
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            m = _LISTENING.search(text)
            address = m.group(1) if m else address
            if address and re.search(r"^nanotick-exchange: ready$", text, re.M):
                return address
            if self.proc.poll() is not None:
                raise LoadTestError(f"the exchange exited ({self.proc.returncode}) before it was ready:\n"
                                    + "\n".join(text.splitlines()[-10:]))
            time.sleep(0.05)
        self.stop()
        raise LoadTestError(f"the exchange did not log 'ready' within {timeout:.0f} s")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def saturated(step: dict, first: Optional[dict]) -> Optional[str]:
    """Why this step saturated the venue, or None."""
    if step["answered"] < SATURATED_ANSWERED * step["scheduled"]:
        return f"answered {step['answered']:,} of {step['scheduled']:,} in time"
    if step["achieved_per_s"] < SATURATED_ANSWERED * step["offered_per_s"]:
        return f"achieved {step['achieved_per_s']:,.0f}/s of {step['offered_per_s']:,.0f}/s offered"
    if step["p99_ns"] > SATURATED_P99_NS:
        return f"p99 {step['p99_ns'] / 1e6:,.1f} ms > {SATURATED_P99_NS / 1e6:.0f} ms"
    if first is not None and first["p99_ns"] > 0 and step["p99_ns"] > SATURATED_P99_GROWTH * first["p99_ns"]:
        return f"p99 grew {step['p99_ns'] / first['p99_ns']:,.0f}x over the first rate's"
    return None


def run_step(loadgen: pathlib.Path, where: List[str], sessions_file: pathlib.Path, rate: float, duration: float,
             warmup: float) -> dict:
    done = subprocess.run([str(loadgen), *where, "--sessions", str(sessions_file), "--rate",
                           f"{rate:g}", "--duration", f"{duration:g}", "--warmup", f"{warmup:g}"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=duration + 60)
    if done.returncode != 0:
        raise LoadTestError(f"nanotick-loadgen at {rate:g}/s exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(steps: List[dict]) -> str:
    lines = [f"{'offered/s':>10} {'achieved/s':>11} {'answered':>9} {'p50 us':>9} {'p99 us':>9} {'p99.9 us':>9} "
             f"{'max us':>9} {'jitter us':>9}  note"]
    for s in steps:
        lines.append(f"{s['offered_per_s']:>10,.0f} {s['achieved_per_s']:>11,.0f} {s['answered']:>9,} "
                     f"{s['p50_ns'] / 1e3:>9,.1f} {s['p99_ns'] / 1e3:>9,.1f} {s['p99_9_ns'] / 1e3:>9,.1f} "
                     f"{s['max_ns'] / 1e3:>9,.1f} {(s['p99_ns'] - s['p50_ns']) / 1e3:>9,.1f}  {s.get('saturated') or ''}")
    return "\n".join(lines)


def parse_rates(text: str) -> List[float]:
    try:
        rates = [float(r) for r in text.split(",") if r.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--rates: not a list of numbers: {text!r}") from e
    if not rates or any(not 1 <= r <= 10_000_000 for r in rates) or rates != sorted(rates):
        raise argparse.ArgumentTypeError(f"--rates: increasing rates in [1, 10000000] per second, got {text!r}")
    return rates


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="./nanotick loadtest", description=__doc__.split("\n\n")[1].strip())
    p.add_argument("--rates", type=parse_rates, default=DEFAULT_RATES, metavar="R1,R2,...",
                   help="offered rates, messages/s, increasing (default 1000 .. 500000; the sweep stops at the "
                        "first saturated one)")
    p.add_argument("--sessions", type=int, default=4, help="TCP sessions the load goes over (default 4)")
    p.add_argument("--duration", type=float, default=3.0, help="seconds per rate (default 3)")
    p.add_argument("--warmup", type=float, default=0.5, help="seconds of each step not measured (default 0.5)")
    p.add_argument("--idle", choices=IDLES, default="backoff",
                   help="the exchange's idle strategy (default backoff, the demo's)")
    p.add_argument("--transport", choices=TRANSPORTS, default="tcp",
                   help="order entry: loopback TCP (default) or the exchange's shared-memory sessions")
    p.add_argument("--fsync", choices=FSYNCS, default="batch",
                   help="the journal's fsync policy (docs/EXCHANGE.md \"Journal\"; default batch, the demo's)")
    p.add_argument("--run-dir", type=pathlib.Path, default=None, help="where to write (default runs/loadtest-<time>)")
    p.add_argument("--build-dir", type=pathlib.Path, default=ROOT / "build" / "release")
    p.add_argument("--quick", action="store_true", help="the tests' form: rates 1000,2000, 1 s each")
    args = p.parse_args(argv)
    if not 1 <= args.sessions <= 64:
        p.error(f"--sessions must be in [1, 64], got {args.sessions}")
    if not 0.5 <= args.duration <= 600 or not 0 <= args.warmup < args.duration:
        p.error("--duration must be in [0.5, 600] s and --warmup in [0, duration)")
    if args.quick:
        args.rates, args.duration, args.warmup = [1_000.0, 2_000.0], 1.0, 0.2
    bin_dir = args.build_dir / "bin"
    exchange_bin, loadgen = bin_dir / "nanotick-exchange", bin_dir / "nanotick-loadgen"
    for b in (exchange_bin, loadgen, bin_dir / "nanotick-credential"):
        if not os.access(b, os.X_OK):
            print(f"nanotick loadtest: error: {b} is missing: run ./nanotick build", file=sys.stderr)
            return 2
    run_dir = args.run_dir or ROOT / "runs" / f"loadtest-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    run_dir = run_dir.resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        print(f"nanotick loadtest: error: {run_dir} exists and is not empty", file=sys.stderr)
        return 2
    (run_dir / "journal").mkdir(parents=True, exist_ok=True)
    config = run_dir / "exchange.toml"
    config.write_text(exchange_config(run_dir, args.sessions, args.idle, random.Random().randrange(20000, 30000),
                                      args.fsync, args.transport, args.build_dir))

    steps: List[Dict] = []
    knee = None
    why_stopped = "every rate measured"
    exchange = None
    try:
        exchange = Exchange(exchange_bin, config, run_dir / "exchange.log")
        print(f"nanotick loadtest: exchange at {exchange.address} (compact, idle {args.idle}, fsync {args.fsync}), "
              f"{args.sessions} "
              f"sessions, {args.duration:g} s a rate; run dir {run_dir}", flush=True)
        print(table([]), flush=True)
        for rate in args.rates:
            where = ["--shm", shm_path(run_dir)] if args.transport == "shm" else ["--exchange", exchange.address]
            step = run_step(loadgen, where, run_dir / "sessions.txt", rate, args.duration, args.warmup)
            if not exchange.alive():
                raise LoadTestError(f"the exchange died during the {rate:g}/s step: see {exchange.log_path}")
            step["saturated"] = saturated(step, steps[0] if steps else None)
            steps.append(step)
            print(table([step]).splitlines()[1], flush=True)
            if step["saturated"]:
                why_stopped = f"saturated at {rate:,.0f}/s: {step['saturated']}"
                break
            knee = rate
    except LoadTestError as e:
        print(f"nanotick loadtest: error: {e}", file=sys.stderr)
        return 1
    finally:
        if exchange is not None:
            exchange.stop()
    result = {"idle": args.idle, "fsync": args.fsync, "sessions": args.sessions, "duration_s": args.duration,
              "transport": args.transport,
              "knee_per_s": knee, "stopped": why_stopped, "steps": steps}
    (run_dir / "loadtest.json").write_text(json.dumps(result, indent=2) + "\n")
    from tools.report import loadcurve  # plotly: only once there is something to draw
    (run_dir / "loadtest.html").write_text(loadcurve.page([result]), encoding="utf-8")
    print(f"knee: {f'{knee:,.0f}/s' if knee else 'none (the first rate saturated)'}; {why_stopped}")
    print(f"curve: {run_dir / 'loadtest.html'}")
    return 0
