"""The commands that build one release program and run it with the user's
arguments, unchanged: gen, replay, credential, exchange, fix-gateway,
journal, ledger, admin, trader. --help as the first argument is the
launcher's text; anywhere else it is the program's."""

from __future__ import annotations

from typing import Callable, Dict, List

from .. import presets, provision
from ..context import BUILD_ROOT, ROOT, die, exec_program
from ..options import print_help, wants_help

USAGE: Dict[str, str] = {}

USAGE["gen"] = """\
usage: ./nanotick gen --out FILE.bin [--workload KIND] [--seed N] [--scale X] [--csv FILE.csv]

Builds the release preset, then writes a deterministic workload (same options,
same bytes) in the binary format of docs/WORKLOADS.md:
  --workload KIND   cancel-heavy, mixed (default), deep, crash, or one of the
                    regimes (issue 13's methodology): regime-static,
                    regime-normal, regime-swing-25, regime-swing-40,
                    regime-flash-crash
  --seed N          random seed (default 1)
  --scale X         multiplies every count, in (0, 100] (default 1)
  --out FILE        binary workload file to write (required)
  --csv FILE        also write the workload as CSV
  --quiet           print nothing on success
Examples: ./nanotick gen --workload mixed --seed 7 --out build/mixed.bin
          ./nanotick gen --workload regime-flash-crash --seed 1 --out build/flash.bin"""

USAGE["replay"] = """\
usage: ./nanotick replay FILE.bin [--reports out.csv] [--market-data md.csv] [--repeat N]

Builds the release preset, then runs a workload file (from './nanotick gen')
through the matching engine and prints the message count, throughput,
per-message latency percentiles (p50/p90/p99/p99.9/max) and counts of reports
by type and reject reason. The CSV outputs are deterministic: the same file
always gives the same bytes.
  --reports FILE       write every execution report as CSV
  --market-data FILE   write every market data event as CSV
  --repeat N           replay N times, each on a fresh engine (CSV from the first)"""

USAGE["credential"] = """\
usage: ./nanotick credential [--key KEY]

Builds the release preset, then prints a new random client API key (or hashes
the one given: 16-32 printable ASCII characters) and the salted SHA-256 form
that goes into the exchange config's [[clients]] credential key. The key goes
to the client (its trader config). See docs/EXCHANGE.md "Config"."""

USAGE["exchange"] = """\
usage: ./nanotick exchange [--config FILE] [--journal-dir DIR] [--status SECONDS]

Builds the release preset, then runs the exchange server: order entry over
TCP, market data over UDP multicast, journal and recovery (docs/EXCHANGE.md,
docs/PROTOCOL.md). Ctrl-C (SIGINT) or SIGTERM shuts it down cleanly and
prints its counters.
  --config FILE       exchange config (default config/exchange.toml)
  --journal-dir DIR   overrides [journal] dir (where the journal and engine snapshots live)
  --status SECONDS    print a status line every SECONDS"""

USAGE["fix-gateway"] = """\
usage: ./nanotick fix-gateway [--config FILE] [--exchange IP:PORT] [--transport tcp|shm]
                              [--idle spin|backoff] [--message-log DIR] [--logon-timeout-ms MS]

Builds the release preset, then runs the FIX 4.4 gateway (docs/FIX.md): a
QuickFIX acceptor whose sessions each trade as one nanotick client, over
their own order-entry session to a running exchange. Ctrl-C (SIGINT) or
SIGTERM logs every session out and stops it.
  --config FILE        the gateway's config (default config/fix-gateway.toml: FIX
                       client CLIENT1 -> NANOTICK on port 9878, trading as client 5 "test")
  --exchange IP:PORT   the exchange's order-entry address (default: its config's)
  --transport          to the exchange: tcp (default) or shm (its server.shm_path)
  --idle               spin (a CPU of its own) or backoff (waits up to 200 us when idle); default: the config's [threads]
  --message-log DIR    QuickFIX's log of every FIX message in and out"""

USAGE["journal"] = """\
usage: ./nanotick journal verify DIR [--config EXCHANGE_TOML]
       ./nanotick journal dump DIR [--from SEQ] [--to SEQ] [--problems]
       ./nanotick journal repair DIR [--dry-run]

Builds the release preset, then looks at an exchange journal directory
(docs/EXCHANGE.md "When the journal is damaged"):
  verify   lists the segments and their records and names the first problem;
           exit 0 clean, 3 a torn tail (the exchange cuts it at start-up),
           4 damage the exchange refuses to start on
  dump     every record as CSV: seq, status (good, after-break, bad), where,
           and the engine request it holds
  repair   cuts the journal at its first problem after copying everything it
           removes into DIR/repair-<time>/ and says which records that pass
           their CRC are lost; refuses while an exchange runs on DIR"""

USAGE["ledger"] = """\
usage: ./nanotick ledger list LEDGER [--config EXCHANGE_TOML] [--client ID] [--instrument ID] [--from N] [--to N]
       ./nanotick ledger balances LEDGER [same filters]
       ./nanotick ledger verify LEDGER
       ./nanotick ledger repair LEDGER [--dry-run]

Builds release, then reads the venue's trade ledger (docs/CONTROLS.md "Trade
ledger"): LEDGER is <journal dir>/trades.ledger or the journal directory.
  list       every trade as CSV: both sides, price, quantity, time, the
             request and the two execution report seqs
  balances   per client and instrument: bought, sold, position change and
             cash moved (what the venue's end-of-run balances must equal)
  verify     clean (exit 0), a torn tail the exchange cuts at its next start
             (3), or damage in the middle that it refuses to start on (4)
  repair     cuts a damaged ledger at its first bad record after copying it
             into repair-<time>/ beside it (never while an exchange runs)
Every record's CRC and the trade_seq chain are checked; list and balances
exit 3 on a torn tail and 4 on damage in the middle."""

USAGE["admin"] = """\
usage: ./nanotick admin --config EXCHANGE_TOML --admin-id ID [--exchange IP:PORT] [--key-file FILE] [--timeout-ms N] ACTION ARGS

Builds release, then logs on to the exchange named by EXCHANGE_TOML as ID, a
client whose role is "admin" there, and sends one action (docs/CONTROLS.md
"Admin"); the API key comes from FILE or $NANOTICK_ADMIN_KEY:
  halt SYMBOL        the instrument takes no new orders or modifies (cancels pass);
                     its state goes out on the market data feed
  resume SYMBOL      it trades again
  block CLIENT       the client's new orders and modifies are refused
  unblock CLIENT     they are taken again
  cancel-all CLIENT [--instrument SYMBOL]   cancels the client's working orders
  kill CLIENT        the kill switch: block, then cancel-all
  adjust CLIENT DELTA [--instrument SYMBOL]   adds DELTA to the client's cash (or its
                     position in SYMBOL); refused below what its working orders hold
CLIENT is an id or a name from the config. Exit 0 done, 1 refused (the reason
is printed), 2 bad usage or config, 3 no answer."""

USAGE["trader"] = """\
usage: ./nanotick trader --config FILE [OPTIONS...]

Builds the release preset, then runs the trading client (docs/TRADER.md): it
connects to the exchange named by FILE's exchange_config, keeps the books from
the market data feeds, trades the configured strategy under its risk limits
and reports positions and PnL. Ctrl-C (SIGINT) or SIGTERM stops it cleanly.
  --config FILE   trader config (TOML; docs/TRADER.md "Config"). Demo configs:
                  config/trader-mm1.toml, config/trader-mm2.toml (market makers),
                  config/trader-taker.toml (liquidity taker),
                  config/trader-random.toml (random load)
Every other option is passed to build/release/bin/nanotick-trader unchanged
(its own --help lists them). Start the exchange first: ./nanotick exchange"""

# What a program's command says when it is given no argument at all (the
# programs that have nothing to do without one).
NEEDS_ARGUMENTS = {
    "gen": "gen needs at least --out FILE (see ./nanotick gen --help)",
    "replay": "replay needs a workload file (see ./nanotick replay --help)",
    "journal": "journal needs verify, dump or repair and a directory (see ./nanotick journal --help)",
    "ledger": "ledger needs list, balances, verify or repair and a ledger (see ./nanotick ledger --help)",
    "admin": "admin needs --config, --admin-id and an action (see ./nanotick admin --help)",
}


def has_option(args: List[str], *names: str) -> bool:
    return any(a in names or any(a.startswith(n + "=") for n in names if n.startswith("--")) for a in args)


def run_app(app: str, args: List[str]) -> int:
    """Builds release (the scope the program needs), then becomes the program;
    paths in args stay relative to the caller's directory."""
    profile = "fix" if app == "fix-gateway" else "run"  # QuickFIX, and FIX44.xml through Maven
    provision.setup_for(profile)
    presets.build_preset("release", [f"nanotick-{app}"], scope=profile)
    program = BUILD_ROOT / "release" / "bin" / f"nanotick-{app}"
    if not program.is_file():
        die(f"{program} was not built (see the build output above)")
    exec_program(program, args)


def _command(app: str) -> Callable[[List[str]], int]:
    def run(args: List[str]) -> int:
        if wants_help(args):
            print_help(USAGE[app])
            return 0
        if not args and app in NEEDS_ARGUMENTS:
            die(NEEDS_ARGUMENTS[app])
        if app == "trader" and not has_option(args, "--config", "-c"):
            die("trader needs --config FILE (e.g. config/trader-mm1.toml; see ./nanotick trader --help)")
        if app == "fix-gateway" and not has_option(args, "--config"):
            args = ["--config", str(ROOT / "config" / "fix-gateway.toml"), *args]
        return run_app(app, args)

    run.__name__ = f"run_{app.replace('-', '_')}"
    return run


run_gen = _command("gen")
run_replay = _command("replay")
run_credential = _command("credential")
run_exchange = _command("exchange")
run_fix_gateway = _command("fix-gateway")
run_journal = _command("journal")
run_ledger = _command("ledger")
run_admin = _command("admin")
run_trader = _command("trader")
