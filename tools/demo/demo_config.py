"""Configs of a demo run: the exchange config and the trader configs the demo
runs, checked against each other before anything starts, and the copies it
writes into the run directory (configs/), which are what the processes read.

The copies are the originals with a few keys rewritten in place (comments and
layout kept, each changed line marked "set by the demo"): the exchange's
[journal] dir moves into the run directory; each trader's exchange_config
points at the exchange copy, its [session] exchange is the address the
running exchange reported (so an exchange config with port 0 works), and
market data addresses a trader config names itself follow the exchange copy.
Every rewrite is verified by parsing the result: anything but the expected
change is an error, never a silently wrong config.

The venue-side checks here (client id known, API key matching the stored
credential, symbols known, one trader per client) are the ones that break
when --config names another exchange config; everything else is checked by
the binaries' own loaders, whose errors the demo shows.

Pure functions and plain data: thread-safe.
"""

from __future__ import annotations

import copy
import os
import pathlib
import re
import tomllib
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tools.binaries import BinaryMissing, PathLike
from tools.credential import credential_matches
from tools.demo.demo_errors import EXIT_CANNOT_START, DemoError

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TABLE_RE = re.compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_ARRAY_TABLE_RE = re.compile(r"^\s*\[\[([^\[\]]+)\]\]\s*(?:#.*)?$")
MARK = "# set by the demo"
EXCHANGE_COPY = "exchange.toml"


def _fail(message: str) -> DemoError:
    return DemoError(message, EXIT_CANNOT_START)


def load_toml(path: pathlib.Path, what: str) -> Tuple[str, dict]:
    """The text and the parsed tables of a TOML file; DemoError naming `what` and the file otherwise."""
    if not path.is_file():
        raise _fail(f"{what}: {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(f"{what}: cannot read {path}: {e}") from e
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _fail(f"{what}: {path} is not valid TOML: {e}") from e


@dataclass
class ExchangeSpec:
    """The exchange config the demo runs (its clients and instruments as the traders need them)."""

    path: pathlib.Path
    text: str
    data: dict

    @property
    def clients(self) -> Dict[int, dict]:
        return {c["id"]: c for c in self.data.get("clients", [])}

    @property
    def symbols(self) -> List[str]:
        return [i["symbol"] for i in self.data.get("instruments", [])]

    @property
    def market_data(self) -> Dict[str, object]:
        return dict(self.data.get("market_data", {}))


def load_exchange(path: pathlib.Path) -> ExchangeSpec:
    """Reads the exchange config and checks the parts the demo itself relies on."""
    text, data = load_toml(path, "exchange config")
    clients = data.get("clients")
    if not isinstance(clients, list) or not clients:
        raise _fail(f"{path}: no [[clients]]: the traders could not log on (see config/exchange.toml)")
    for n, c in enumerate(clients):
        if not isinstance(c, dict) or not isinstance(c.get("id"), int) or isinstance(c.get("id"), bool):
            raise _fail(f"{path}: clients[{n}].id: missing or not an integer")
    instruments = data.get("instruments")
    if not isinstance(instruments, list) or not instruments:
        raise _fail(f"{path}: no [[instruments]]: there is nothing to trade (see config/exchange.toml)")
    for n, i in enumerate(instruments):
        if not isinstance(i, dict) or not isinstance(i.get("symbol"), str):
            raise _fail(f"{path}: instruments[{n}].symbol: missing or not a string")
    return ExchangeSpec(path, text, data)


@dataclass
class TraderSpec:
    """One trader of the run: its name (logs/trader-<name>.log ...) and its original config."""

    name: str
    path: pathlib.Path
    text: str
    data: dict

    @property
    def process(self) -> str:
        return f"trader-{self.name}"

    @property
    def client_id(self) -> int:
        return self.data["session"]["client_id"]

    @property
    def process_name(self) -> str:
        """The name the trader logs (and names its telemetry file) with: [trader] name, by
        default the stem of the config copy's file, which is the process name."""
        trader = self.data.get("trader")
        name = trader.get("name") if isinstance(trader, dict) else None
        return name if isinstance(name, str) else self.process


def trader_source(root: pathlib.Path, item: str) -> Tuple[str, pathlib.Path]:
    """(name, config path) of one --traders item: a name of config/trader-<name>.toml, or a path
    to a trader config (then named after its file, without a "trader-" prefix)."""
    if "/" in item or item.endswith(".toml"):
        path = pathlib.Path(item).expanduser().resolve()
        stem = path.stem
        name = stem[len("trader-"):] if stem.startswith("trader-") and len(stem) > len("trader-") else stem
    else:
        name, path = item, root / "config" / f"trader-{item}.toml"
    if not _NAME_RE.fullmatch(name):
        raise _fail(f"--traders: '{item}' is not a trader name (letters, digits, '_', '-', '.') or a config path")
    return name, path


def known_traders(root: pathlib.Path) -> List[str]:
    return sorted(p.stem[len("trader-"):] for p in (root / "config").glob("trader-*.toml"))


def load_traders(root: pathlib.Path, items: List[str], exchange: ExchangeSpec,
                 build: Optional[PathLike] = None) -> List[TraderSpec]:
    """Every trader of --traders, loaded and checked against the exchange config and each other
    (`build`: the build directory whose nanotick-credential checks the API keys)."""
    if not items:
        raise _fail("--traders: the list is empty (default: mm1,mm2,taker,random)")
    traders: List[TraderSpec] = []
    for item in items:
        name, path = trader_source(root, item)
        if any(t.name == name for t in traders):
            raise _fail(f"--traders: '{name}' is listed twice (each trader is one client of the exchange)")
        if not path.is_file():
            known = ", ".join(known_traders(root)) or "none"
            raise _fail(f"trader '{name}': {path} does not exist (traders in {root / 'config'}: {known})")
        text, data = load_toml(path, f"trader '{name}'")
        trader = TraderSpec(name, path, text, data)
        check_trader(trader, exchange, build)
        other = next((t for t in traders if t.client_id == trader.client_id), None)
        if other is not None:
            raise _fail(f"traders '{other.name}' and '{name}' are both client {trader.client_id} "
                        f"({other.path}, {path}): the exchange takes one session per client")
        other = next((t for t in traders if t.process_name == trader.process_name), None)
        if other is not None:
            raise _fail(f"traders '{other.name}' and '{name}' both have [trader] name = \"{trader.process_name}\" "
                        f"({other.path}, {path}): their logs and telemetry files could not be told apart")
        traders.append(trader)
    return traders


def check_trader(trader: TraderSpec, exchange: ExchangeSpec, build: Optional[PathLike] = None) -> None:
    """The venue side of a trader config agrees with the exchange config the demo runs."""
    where = f"trader '{trader.name}' ({trader.path})"
    session = trader.data.get("session")
    if not isinstance(session, dict):
        raise _fail(f"{where}: no [session] table")
    client_id = session.get("client_id")
    if not isinstance(client_id, int) or isinstance(client_id, bool):
        raise _fail(f"{where}: session.client_id: missing or not an integer")
    clients = exchange.clients
    if client_id not in clients:
        listed = ", ".join(f"{i} {c.get('name', '?')}" for i, c in sorted(clients.items()))
        raise _fail(f"{where}: session.client_id: client {client_id} is not in the exchange config "
                    f"{exchange.path} (its clients: {listed})")
    key, stored = session.get("api_key"), clients[client_id].get("credential")
    try:  # the venue's own hash, through nanotick-credential: a wrong key is refused before anything starts
        matches = credential_matches(stored, key, build) if isinstance(key, str) and isinstance(stored, str) else None
    except BinaryMissing:
        # A build of the demo's programs only: this early check is skipped, and the
        # exchange's own check at logon refuses a wrong key (the trader's log says so).
        matches = None
    if matches is False:
        raise _fail(f"{where}: session.api_key does not match client {client_id}'s credential in {exchange.path}: "
                    f"the exchange would refuse the logon (use an exchange config with the demo's clients, "
                    f"as config/exchange.toml)")
    instruments = trader.data.get("instruments")
    if not isinstance(instruments, list) or not instruments:
        raise _fail(f"{where}: no [[instruments]]: the trader would have nothing to trade")
    symbols = exchange.symbols
    for n, ins in enumerate(instruments):
        symbol = ins.get("symbol") if isinstance(ins, dict) else None
        if symbol not in symbols:
            raise _fail(f"{where}: instruments[{n}].symbol: \"{symbol}\" is not an instrument of "
                        f"{exchange.path} (it has {', '.join(symbols)})")


def toml_literal(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"no TOML literal for {value!r}")


def _table_spans(lines: List[str]) -> List[Tuple[str, int, int]]:
    """(name, header line, end) of every table; arrays of tables are named "[[name]]", the root ""."""
    spans: List[Tuple[str, int, int]] = []
    name, start = "", -1
    for i, line in enumerate(lines):
        m = _ARRAY_TABLE_RE.match(line)
        header = f"[[{m.group(1).strip()}]]" if m else None
        if header is None:
            m = _TABLE_RE.match(line)
            header = m.group(1).strip() if m else None
        if header is not None:
            spans.append((name, start, i))
            name, start = header, i
    spans.append((name, start, len(lines)))
    return spans


def _set_line(lines: List[str], table: str, key: str, value: object) -> None:
    entry = f"{key} = {toml_literal(value)}  {MARK}"
    span = next((s for s in _table_spans(lines) if s[0] == table), None)
    if span is None:
        lines += ["", f"[{table}]", entry]
        return
    _, header, end = span
    key_re = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i in range(header + 1, end):
        if key_re.match(lines[i]):
            lines[i] = entry
            return
    last = header
    for i in range(header + 1, end):
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            last = i
    lines.insert(last + 1, entry)


def rewrite(text: str, data: dict, changes: Dict[Tuple[str, str], object], source: pathlib.Path) -> str:
    """`text` with each (table, key) of `changes` set; the result must parse to `data` plus
    exactly those changes (DemoError naming `source` otherwise)."""
    lines = text.splitlines()
    expected = copy.deepcopy(data)
    for (table, key), value in changes.items():
        _set_line(lines, table, key, value)
        section = expected.setdefault(table, {})
        if not isinstance(section, dict):
            raise _fail(f"{source}: '{table}' is not a table: cannot set {table}.{key}")
        section[key] = value
    out = "\n".join(lines) + "\n"
    try:
        parsed = tomllib.loads(out)
    except tomllib.TOMLDecodeError as e:
        raise _fail(f"{source}: cannot rewrite {', '.join(f'{t}.{k}' for t, k in changes)} in a copy "
                    f"(the result does not parse: {e}); write the keys as plain 'key = value' lines") from e
    if parsed != expected:
        raise _fail(f"{source}: cannot rewrite {', '.join(f'{t}.{k}' for t, k in changes)} in a copy: "
                    f"the copy would differ from the original elsewhere; write the keys as plain 'key = value' lines")
    return out


def _header(source: pathlib.Path) -> str:
    return f"# The nanotick demo's copy of {source}; the lines marked \"{MARK}\" differ from it.\n"


TRANSPORTS = ("tcp", "shm")
SHM_SOCKET = "order-entry.sock"
MD_SHM_SOCKET = "market-data.sock"
UNIX_PATH_MAX = 107  # bytes of a UNIX socket path (sun_path less its terminating NUL)


def shm_path_for(run_dir: pathlib.Path, name: str = SHM_SOCKET) -> str:
    """Where the exchange of a shared-memory demo offers its sessions (SHM_SOCKET) or its market
    data ring (MD_SHM_SOCKET): in the run directory when the path fits a UNIX socket address,
    else a short one in /tmp named after the run."""
    path = str(run_dir / name)
    if len(path.encode()) <= UNIX_PATH_MAX:
        return path
    return f"/tmp/nanotick-demo-{os.getpid()}-{run_dir.name[:30]}-{name}"


def thread_changes(data: dict, threads: Dict[str, object], source: pathlib.Path) -> Dict[Tuple[str, str], object]:
    """The [threads] keys of a layout (tools/doctor/layout.py) as rewrite() changes; {} for none. A config
    with its own per-runner tables ([threads.<role>]) would conflict with them: DemoError."""
    if not threads:
        return {}
    own = data.get("threads", {})
    roles = [k for k, v in own.items() if isinstance(v, dict)] if isinstance(own, dict) else []
    if roles:
        raise _fail(f"{source}: has its own [threads.{roles[0]}]: run the demo with --layout compact, or remove "
                    f"the table to let the demo pin this process")
    return {("threads", k): v for k, v in threads.items()}


def write_exchange_copy(exchange: ExchangeSpec, configs_dir: pathlib.Path, journal_dir: pathlib.Path,
                        shm_paths: Optional[Tuple[str, str]] = None,
                        threads: Optional[Dict[str, object]] = None) -> pathlib.Path:
    """configs/exchange.toml: the exchange config with its journal in the run directory,
    for a shared-memory run its server.shm_path and market_data.shm_path (`shm_paths`), and
    the [threads] keys of the demo's layout (`threads`; none: as the config says)."""
    changes: Dict[Tuple[str, str], object] = {("journal", "dir"): str(journal_dir)}
    changes.update(thread_changes(exchange.data, threads or {}, exchange.path))
    if shm_paths is not None:
        changes[("server", "shm_path")] = shm_paths[0]
        changes[("market_data", "shm_path")] = shm_paths[1]
    text = rewrite(exchange.text, exchange.data, changes, exchange.path)
    out = configs_dir / EXCHANGE_COPY
    out.write_text(_header(exchange.path) + text, encoding="utf-8")
    return out


def trader_address(listen_address: str) -> str:
    """Where a trader connects to reach an exchange listening on `listen_address` (ip:port)."""
    host, _, port = listen_address.rpartition(":")
    return f"{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"


def write_trader_copy(trader: TraderSpec, configs_dir: pathlib.Path, exchange: ExchangeSpec,
                      order_entry: str, transport: str = "tcp",
                      threads: Optional[Dict[str, object]] = None) -> pathlib.Path:
    """configs/trader-<name>.toml: the trader config pointed at the exchange copy and the
    running exchange's order-entry address (tcp), or told to use its shared-memory sessions
    (shm: the trader reads server.shm_path from the exchange copy)."""
    changes: Dict[Tuple[str, str], object] = {("trader", "exchange_config"): EXCHANGE_COPY}
    changes.update(thread_changes(trader.data, threads or {}, trader.path))
    if transport == "shm":
        changes[("trader", "transport")] = "shm"
        session = trader.data.get("session", {})
        if isinstance(session, dict) and "exchange" in session:
            raise _fail(f"{trader.path}: session.exchange is a TCP address: remove it to run with --transport shm")
    else:
        changes[("session", "exchange")] = order_entry
    own_md, venue_md = trader.data.get("market_data", {}), exchange.market_data
    for key in ("interface", "incremental", "snapshot"):
        if isinstance(own_md, dict) and key in own_md and key in venue_md:
            changes[("market_data", key)] = venue_md[key]
    text = rewrite(trader.text, trader.data, changes, trader.path)
    out = configs_dir / f"{trader.process}.toml"
    out.touch(mode=0o600)  # it holds the trader's API key: the trader warns about one others may read
    out.write_text(_header(trader.path) + text, encoding="utf-8")
    return out
