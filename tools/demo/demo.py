#!/usr/bin/env python3
"""nanotick demo (issue 6): runs the whole ecosystem on loopback. One exchange
and the traders of --traders (default: two market makers, a liquidity taker,
a random load generator), a live status line per process while they run,
then an ordered stop, a summary table and the latency report, all kept in a
run directory:

    RUN_DIR/configs/    exchange.toml, trader-<name>.toml: the copies the processes read
    RUN_DIR/logs/       <process>.log: each process's stderr (report.log: the report's)
    RUN_DIR/counters/   <process>.counters: the exchange's and the traders' counters files (live while
                        they run: ./nanotick stat; final after); <process>.txt: what each printed on
                        stdout at exit (the floor's summary)
    RUN_DIR/telemetry/  binary telemetry (--telemetry RUN_DIR/telemetry, given to each binary whose
                        --help offers it: each writes its own file there, named by its process)
    RUN_DIR/journal/    the exchange's journal
    RUN_DIR/summary.txt the summary table; RUN_DIR/demo.json: processes, pids, exit codes, result
    RUN_DIR/report.html the latency report (tools/report/report.py, when the build has it)

Usage (the launcher runs it as `./nanotick demo [args]`), from the repository root:
    build/venv/bin/python -m tools.demo --root REPO [--duration S] [--traders LIST]
        [--config EXCHANGE_TOML] [--run-dir DIR] [--build-dir DIR] [--no-report] [--no-floor]

Exit codes: 0 success; 1 a failure while running or stopping (a process died,
did not stop, printed no summary, a trader's fills disagree with the
exchange's, the report failed); 2 nothing was started (bad option, config,
missing build, run directory in use); 128+N stopped by signal N (130: Ctrl-C),
after stopping every child.

Order: the exchange starts and logs "ready" (bounded wait), then the
loopback floor (nanotick-floor, demo_floor.py: the raw cost of the two
end-to-end hops, measured on the same group, under the same load, on the
same CPUs; --no-floor skips it), then each trader in turn; after --duration
the traders and the floor get SIGINT (the traders cancel their orders and
log out while the exchange still serves), then the exchange does. The
summary ends with the end-to-end figures beside the floor's. Every
exit path stops every child (see demo_process.py for the rest of the "no
orphan" story). Not thread-safe: one main thread does everything; signals
only raise an exception or set a flag there.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and not __package__:  # `python tools/demo/demo.py`: its imports would fail obscurely
    sys.exit("the demo runs as a package: `python -m tools.demo` from the repository root (./nanotick demo does)")

import datetime
import json
import pathlib
import signal
import time
from typing import Callable, Dict, List, Optional, TextIO, Tuple

from tools.demo.demo_config import MD_SHM_SOCKET, TraderSpec, shm_path_for, trader_address, write_trader_copy
from tools.demo.demo_console import CountersRows, LiveView, format_row, is_status, strip_prefix
from tools.demo.demo_errors import EXIT_FAILED, EXIT_OK, DemoError, Interrupted, signal_name
from tools.demo.demo_floor import FLOOR_READY_S, beside_floor_text, check_floor, floor_args, trader_engine_idle, traders_idle
from tools.demo.demo_plan import Plan, parse_args, prepare
from tools.demo.demo_process import Child, describe_exit
from tools.demo.demo_queues import QueueSampler
from tools.demo.demo_report import make_report
from tools.demo.demo_summary import (TraderResult, account_checks, account_lines, check, read_counters, read_counters_file,
                                     summary_text)

EXCHANGE_READY_S = 20.0  # recovery of a fresh journal takes milliseconds; a busy machine gets slack
TRADER_READY_S = 15.0
TRADER_STOP_S = 15.0  # a trader waits up to 2 s for the answers to its cancels before it logs out
EXCHANGE_STOP_S = 15.0
TAIL_LINES = 20
_LISTENING = "order entry listening on "  # apps/exchange.cpp, then "ip:port, market data ..."
_HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)



def _error_lines(lines: List[str]) -> List[str]:
    return [line for line in lines if "error" in line.lower()]


class DemoRun:
    """One run of the plan: start, watch, stop, summarise."""

    def __init__(self, plan: Plan, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 tty: Optional[bool] = None) -> None:
        self.plan = plan
        self.out, self.err = out, err
        self.view = LiveView(out, out.isatty() if tty is None else tty, plan.status_every)
        self.exchange: Optional[Child] = None
        self.floor: Optional[Child] = None
        self.traders: List[Tuple[TraderSpec, Child]] = []
        self.latest: Dict[str, str] = {}  # process -> its latest status line (without the log prefix): the floor's
        self.counter_rows = CountersRows()  # the exchange's and the traders' rows, from their counters files
        self.address: Optional[str] = None  # the exchange's order-entry address as it logged it
        # What a signal does: "raise" Interrupted (running, writing the report); "defer" it until
        # the child being started is on the list (raised right after); "hurry" the stop that is
        # under way (a second Ctrl-C: kill instead of waiting).
        self.on_signal = "raise"
        self.pending_signal = 0
        self.hurry = False
        self.killed: set = set()  # processes the stop had to SIGKILL (already reported)
        self.ran_s = 0.0
        self.started_at = datetime.datetime.now().isoformat(timespec="seconds")
        self.result, self.message = "running", ""

    # ------------------------------------------------------------ output
    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def complain(self, text: str) -> None:
        self.err.write(f"nanotick demo: {text}\n")
        self.err.flush()

    # ------------------------------------------------------------ signals
    def _on_signal(self, signum: int, _frame) -> None:
        if self.on_signal == "raise":
            raise Interrupted(signum)
        if self.on_signal == "defer":
            self.pending_signal = self.pending_signal or signum
        else:
            self.hurry = True

    # ------------------------------------------------------------ children
    def children(self) -> List[Child]:
        return (([self.exchange] if self.exchange else []) + ([self.floor] if self.floor else [])
                + [c for _, c in self.traders])

    def _label(self, child: Child) -> str:
        if child is self.exchange:
            return "the exchange"
        if child is self.floor:
            return "the floor (nanotick-floor)"
        return f"trader {child.name[len('trader-'):]}"

    def _telemetry_args(self, binary: pathlib.Path) -> List[str]:
        if not self.plan.telemetry.get(binary.name):
            return []
        return ["--telemetry", str(self.plan.run_dir / "telemetry")]

    def _start(self, process: str, args: List[str], register: Callable[[Child], None]) -> Child:
        """Starts a child and registers it (so that the stop finds it) before a signal that
        arrived meanwhile is raised: no child can be started and forgotten."""
        run = self.plan.run_dir
        self.on_signal = "defer"
        try:
            child = Child(process, args, run, run / "logs" / f"{process}.log", run / "counters" / f"{process}.txt")
        except OSError as e:
            raise DemoError(f"cannot start {process} ({args[0]}): {e}: rebuild with ./nanotick build") from e
        finally:
            self.on_signal = "raise"
        register(child)
        if self.pending_signal:
            raise Interrupted(self.pending_signal)
        return child

    def _handle(self, child: Child, line: str) -> str:
        """Takes what the demo needs from one log line (a status line, the exchange's address);
        returns the line without its prefix."""
        text = strip_prefix(line)
        if is_status(text):
            self.latest[child.name] = text
        elif child is self.exchange and text.startswith(_LISTENING):
            self.address = text[len(_LISTENING):].split(",")[0].strip()
        return text

    def _poll(self) -> None:
        for child in self.children():
            for line in child.read_lines():
                self._handle(child, line)

    def _wait_ready(self, child: Child, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        ready = False
        seen: List[str] = []
        while not ready:
            for line in child.read_lines():
                seen.append(line)
                if self._handle(child, line) == "ready":
                    ready = True
            if ready:
                break
            if not child.alive():
                seen += child.read_lines()
                errors = _error_lines(seen)
                headline = ("\n  " + "\n  ".join(errors)) if errors else ""
                raise DemoError(f"{what} {describe_exit(child.returncode)} before it was ready:{headline}\n"
                                f"{child.describe(TAIL_LINES)}")
            if time.monotonic() >= deadline:
                raise DemoError(f"{what} did not log 'ready' within {timeout:.0f} s (stopped it)\n"
                                f"{child.describe(TAIL_LINES)}")
            time.sleep(0.02)

    def _start_exchange(self) -> None:
        p = self.plan
        args = [str(p.exchange_bin), "--config", str(p.exchange_copy), "--status", "1",
                "--counters", str(self._counters_file("exchange"))]
        exchange = self._start("exchange", args + self._telemetry_args(p.exchange_bin),
                               lambda c: setattr(self, "exchange", c))
        self._write_state()
        self._wait_ready(exchange, "the exchange", EXCHANGE_READY_S)
        if self.address is None:
            raise DemoError(f"the exchange logged 'ready' but no 'order entry listening on' line: cannot point the "
                            f"traders at it\n{exchange.describe(TAIL_LINES)}")
        where = (f"{self.address}; shared-memory sessions at {shm_path_for(self.plan.run_dir)}, market data ring at "
                 f"{shm_path_for(self.plan.run_dir, MD_SHM_SOCKET)}"
                 if self.plan.transport == "shm" else self.address)
        self.say(f"  {'exchange':<10} ready, order entry on {where} (pid {exchange.pid})")

    def _start_floor(self) -> None:
        p = self.plan
        if p.floor_bin is None:
            return
        layout_traders = (p.layout.traders if p.layout is not None and p.layout.name != "compact"
                          else [None] * len(p.traders))
        idle = traders_idle([trader_engine_idle(spec.data, t) for spec, t in zip(p.traders, layout_traders)])
        floor = self._start("floor", floor_args(p.floor_bin, p.exchange_copy, p.transport, idle),
                            lambda c: setattr(self, "floor", c))
        self._write_state()
        self._wait_ready(floor, "the floor (nanotick-floor)", FLOOR_READY_S)
        self.say(f"  {'floor':<10} ready, loopback floor beside the traders (pid {floor.pid})")

    def _start_traders(self) -> None:
        p = self.plan
        connect_to = trader_address(self.address or "")
        for i, spec in enumerate(p.traders):
            threads = p.layout.traders[i] if p.layout is not None and p.layout.name != "compact" else None
            copy = write_trader_copy(spec, p.run_dir / "configs", p.exchange, connect_to, p.transport, threads)
            args = ([str(p.trader_bin), "--config", str(copy), "--counters", str(self._counters_file(spec.process))]
                    + self._telemetry_args(p.trader_bin))
            child = self._start(spec.process, args, lambda c, s=spec: self.traders.append((s, c)))
            self._write_state()
            self._wait_ready(child, f"trader {spec.name}", TRADER_READY_S)
            self.say(f"  {spec.name:<10} ready, client {spec.client_id} (pid {child.pid})")

    def _counters_file(self, process: str) -> pathlib.Path:
        """Where `process` keeps its counters (its --counters FILE): the console and the summary read them."""
        return self.plan.run_dir / "counters" / f"{process}.counters"

    def _rows(self) -> List[str]:
        rows = []
        names = ([("exchange", "exchange", "exchange")] + ([("floor", "floor", "")] if self.plan.floor_bin else [])
                 + [(s.process, s.name, "trader") for s, _ in self.traders])
        by_name = {c.name: c for c in self.children()}
        for process, label, kind in names:
            child = by_name.get(process)
            if child is not None and not child.alive():  # its last reading would hide that
                rows.append(format_row(label, None, describe_exit(child.returncode)))
            elif kind:
                row = self.counter_rows.row(label, kind, self._counters_file(process))
                rows.append(row if row is not None else format_row(label, None, "no counters yet"))
            else:
                rows.append(format_row(label, self.latest.get(process)))
        return rows

    def _show(self, elapsed: float, force: bool = False) -> None:
        header = f"nanotick demo: {elapsed:5.1f} s of {self.plan.duration:g} s (Ctrl-C stops early)"
        self.view.show(header, self._rows(), force)

    def _run(self) -> None:
        start = time.monotonic()
        end = start + self.plan.duration
        queues = QueueSampler(self.plan.run_dir / "counters" / "queue_depths.csv")
        while True:
            self._poll()
            now = time.monotonic()
            self.ran_s = now - start
            queues.sample(self.ran_s, {c.name: self._counters_file(c.name) for c in self.children()
                                       if c.name != "floor"})
            for child in self.children():
                if not child.alive():
                    self._show(self.ran_s, force=True)
                    self.view.detach()
                    raise DemoError(f"{self._label(child)} {describe_exit(child.returncode)} during the run\n"
                                    f"{child.describe(TAIL_LINES)}")
            self._show(self.ran_s)
            if now >= end:
                break
            time.sleep(min(0.1, end - now))
        self._show(self.ran_s, force=True)
        self.view.detach()

    def _stop(self, children: List[Child], timeout: float) -> List[str]:
        """SIGINT to each, then a bounded wait; SIGKILL for whoever is still running."""
        problems = []
        for child in children:
            child.signal(signal.SIGINT)
        deadline = time.monotonic() + timeout
        for child in children:
            if child.wait(max(0.0, deadline - time.monotonic()), lambda: self.hurry) is None:
                why = "a second interrupt" if self.hurry else f"{timeout:.0f} s"
                problems.append(f"{child.name} did not stop within {why} of SIGINT: killed it")
                child.kill()
                self.killed.add(child.name)
        return problems

    def stop_all(self) -> List[str]:
        """Traders and the floor first (the traders cancel and log out while the exchange serves),
        then the exchange. Idempotent; bounded in time; never leaves a child running."""
        first = [c for _, c in self.traders] + ([self.floor] if self.floor else [])
        problems = self._stop([c for c in first if c.alive()], TRADER_STOP_S)
        if self.exchange is not None and self.exchange.alive():
            problems += self._stop([self.exchange], EXCHANGE_STOP_S)
        for child in self.children():  # belt and braces: nothing survives this function
            if child.alive():
                child.kill()
        self._poll()
        return problems

    # ------------------------------------------------------------ results
    def _write_state(self) -> None:
        p = self.plan
        run = p.run_dir

        processes = []
        for child in self.children():
            spec = next((s for s, c in self.traders if c is child), None)
            role = "exchange" if child is self.exchange else "floor" if child is self.floor else "trader"
            config = run / "configs" / ("exchange.toml" if spec is None else f"{spec.process}.toml")
            counters_file = self._counters_file(child.name) if child.name != "floor" else None
            processes.append(child.state(run, role, spec and spec.name, spec and spec.client_id, config, counters_file))
        state = {
            "run_dir": str(run),
            "started_at": self.started_at,
            "duration_s": p.duration,
            "ran_s": round(self.ran_s, 3),
            "traders": [t.name for t in p.traders],
            "floor": p.floor_bin is not None,
            "transport": p.transport,
            "layout": None if p.layout is None else {"name": p.layout.name, "reason": p.layout.reason},
            "exchange_config": str(p.exchange.path),
            "exchange_address": self.address,
            "processes": processes,
            "result": self.result,
            "message": self.message,
        }
        tmp = run / "demo.json.tmp"
        tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        tmp.replace(run / "demo.json")

    def _exit_problems(self) -> List[str]:
        return [f"{c.name} {describe_exit(c.returncode)} when stopped\n{c.describe(TAIL_LINES)}"
                for c in self.children() if c.returncode not in (0, None) and c.name not in self.killed]

    def _summarise(self) -> List[str]:
        """Prints the summary table (and writes summary.txt); returns the problems it found."""
        run = self.plan.run_dir
        problems: List[str] = []
        results = []
        for s, _ in self.traders:
            values, problem = read_counters_file(self._counters_file(s.process))
            results.append(TraderResult(s.name, s.client_id, values))
            problems += [f"trader {s.name}: {problem}"] if problem else []
        exchange, problem = read_counters_file(self._counters_file("exchange"))
        problems += [f"the exchange: {problem}"] if problem else []
        problems += check(results, exchange)
        exchange_out = read_counters(run / "counters" / "exchange.txt")  # its stdout: the accounts' balances
        problems += account_checks(results, exchange_out)
        if self.plan.floor_bin is not None:
            problems += check_floor(read_counters(run / "counters" / "floor.txt"))
        names = {cid: str(c.get("name", "?")) for cid, c in self.plan.exchange.clients.items()}
        text = summary_text(results, exchange, names, problems)
        accounts = account_lines(exchange_out, names)
        if accounts:
            text += "\n" + "\n".join(accounts)
        if self.plan.floor_bin is not None:
            beside = beside_floor_text(run)
            text += "\n\n" + (beside if beside is not None else "beside the loopback floor: no counters/floor.txt")
        (run / "summary.txt").write_text(text + "\n", encoding="utf-8")
        self.say("")
        self.say(text)
        return problems

    # ------------------------------------------------------------ the run
    def execute(self) -> int:
        previous = {s: signal.signal(s, self._on_signal) for s in _HANDLED_SIGNALS}
        failure: Optional[str] = None
        interrupted: Optional[Interrupted] = None
        try:
            try:
                self.say(f"nanotick demo: run dir {self.plan.run_dir}")
                if self.plan.layout is not None:
                    self.say(f"layout: {self.plan.layout.name}: {self.plan.layout.reason}")
                offered = [b for b, on in sorted(self.plan.telemetry.items()) if on]
                self.say(f"telemetry: {', '.join(offered) if offered else 'not offered by this build'}"
                         + (f" -> {self.plan.run_dir / 'telemetry'}" if offered else ""))
                self._start_exchange()
                self._start_floor()
                self._start_traders()
                self.say(f"running for {self.plan.duration:g} s (Ctrl-C stops early)")
                self._run()
            except Interrupted as e:
                interrupted = e
            except DemoError as e:
                failure = str(e)
            except Exception as e:  # a bug of the demo itself: still stop everything below
                failure = f"internal error: {type(e).__name__}: {e}"
            finally:
                self.on_signal = "hurry"
                self.view.detach()
                if any(c.alive() for c in self.children()):
                    why = (f"interrupted by {interrupted}; stopping" if interrupted
                           else "stopping after the error below" if failure else "stopping")
                    self.say(f"{why}: the traders{' and the floor' if self.floor else ''} first (SIGINT: the "
                             f"traders cancel their orders and log out), then the exchange")
                while True:
                    try:
                        stop_problems = self.stop_all()
                        break
                    except Interrupted:  # raced the switch above: stop harder
                        self.hurry = True
            return self._finish(failure, interrupted, stop_problems)
        finally:
            self.on_signal = "hurry"
            for child in self.children():  # whatever happened in _finish, nothing stays
                if child.alive():
                    child.kill()
            try:
                self._write_state()
            except OSError as e:
                self.complain(f"cannot write {self.plan.run_dir / 'demo.json'}: {e}")
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _finish(self, failure: Optional[str], interrupted: Optional[Interrupted], stop_problems: List[str]) -> int:
        run = self.plan.run_dir
        if failure is not None:
            self.result, self.message = "failed", failure
            self.complain(f"error: {failure}")
            for p in stop_problems:
                self.complain(f"also: {p}")
            self.complain(f"stopped every process; run dir {run}")
            return EXIT_FAILED
        started_all = len(self.traders) == len(self.plan.traders) and self.ran_s > 0
        if interrupted is not None and not started_all:
            self.result, self.message = "interrupted", f"{interrupted} before the run began"
            self.complain(f"interrupted ({interrupted}) while starting; stopped every process; run dir {run}")
            return interrupted.exit_code
        problems = stop_problems + self._exit_problems() + self._summarise()
        if interrupted is not None:
            self.result = "interrupted"
            self.message = f"{interrupted} after {self.ran_s:.1f} s"
            for p in problems:
                self.complain(f"problem: {p}")
            self.say(f"interrupted ({signal_name(interrupted.signum)}) after {self.ran_s:.1f} s; every process "
                     f"stopped; no report")
            self.say(f"run dir: {run}")
            return interrupted.exit_code
        if problems:
            self.result, self.message = "failed", "; ".join(problems)
            for p in problems:
                self.complain(f"error: {p}")
            self.say(f"run dir: {run}")
            return EXIT_FAILED
        code = EXIT_OK
        if self.plan.report:
            self.on_signal = "raise"  # Ctrl-C ends the report generator too
            try:
                outcome = make_report(self.plan.root / "tools" / "report" / "report.py", run)
            except Interrupted as e:
                self.on_signal = "hurry"
                self.result, self.message = "interrupted", f"{e} while writing the report"
                self.complain(f"interrupted ({e}) while writing the report; run dir {run}")
                return e.exit_code
            self.on_signal = "hurry"
            if outcome.text:
                self.say("")
                self.say(outcome.text)
            self.say(outcome.line)
            if not outcome.ok:
                self.result, self.message = "failed", outcome.line
                code = EXIT_FAILED
        else:
            self.say("report: skipped (--no-report)")
        if code == EXIT_OK:
            self.result, self.message = "ok", ""
        self.say(f"run dir: {run}")
        return code


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    try:
        plan = prepare(args)
    except DemoError as e:
        sys.stderr.write(f"nanotick demo: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:  # Ctrl-C before any process started: nothing to stop
        sys.stderr.write("nanotick demo: interrupted before anything started\n")
        return 128 + signal.SIGINT
    return DemoRun(plan).execute()


if __name__ == "__main__":
    sys.exit(main())
