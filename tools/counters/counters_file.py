"""Reads one counters file (src/core/counters_file.hpp; layout in
docs/TELEMETRY.md "The counters file"): the process's name, pid, state and
every counter's label, kind and value, as of the moment of the read.

A counters file comes from another process, possibly one that is still
writing it, one that died, or something else entirely: every field is checked
against the file's size and the format's limits, and anything that does not
fit raises CountersFileError with what is wrong and where. Values are read
from one copy of the file: each is a whole 8-byte word (the writer stores
whole aligned words), but two counters may be a few nanoseconds apart.

Not thread-safe, and needs not be: read() shares nothing.
"""

from __future__ import annotations

import os
import pathlib
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Union

MAGIC = b"NTCOUNT1"
VERSION = 1
HEADER_MIN_BYTES = 128  # the fields below end at 128
METADATA_BYTES = 128
MAX_LABEL_BYTES = 119
MAX_CAPACITY = 1 << 20

KINDS = {1: "count", 2: "gauge", 3: "real"}
STATES = {0: "creating", 1: "running", 2: "stopped"}

# magic, version, header_bytes, capacity, metadata_bytes, metadata_offset, values_offset, pid,
# start_unix_ns, process[64], count, state
_HEADER = struct.Struct("<8sIIIIQQqq64sII")
_METADATA = struct.Struct("<IHH120s")
assert _HEADER.size == 128 and _METADATA.size == METADATA_BYTES

Value = Union[int, float]


class CountersFileError(Exception):
    """The file is not a readable counters file; the message says why."""


@dataclass
class Counter:
    id: int
    kind: str  # "count" (unsigned), "gauge" (signed), "real" (a double)
    label: str
    value: Value


@dataclass
class CountersFile:
    path: pathlib.Path
    process: str
    pid: int
    start_unix_ns: int
    state: str  # "creating", "running" or "stopped" (ended cleanly)
    counters: List[Counter] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        """Whether the writing process still runs (a "running" file whose pid is gone died)."""
        if self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @property
    def status(self) -> str:
        """running / stopped / died (running, but its process is gone)."""
        if self.state == "running" and not self.alive:
            return "died"
        return self.state

    def values(self) -> Dict[str, Value]:
        return {c.label: c.value for c in self.counters}


def _decode_value(kind: int, raw: int) -> Value:
    if kind == 2:
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if kind == 3:
        return struct.unpack("<d", struct.pack("<Q", raw))[0]
    return raw


def parse(data, path: pathlib.Path = pathlib.Path("<bytes>")) -> CountersFile:
    """Decodes the bytes of a counters file; raises CountersFileError naming the problem."""
    where = str(path)
    if len(data) < HEADER_MIN_BYTES:
        raise CountersFileError(f"{where}: {len(data)} bytes: too short for a counters file header")
    (magic, version, header_bytes, capacity, metadata_bytes, metadata_offset, values_offset, pid, start_ns,
     process, count, state) = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise CountersFileError(f"{where}: not a counters file (magic {magic!r}, expected {MAGIC!r}; "
                                f"or its writer is still creating it)")
    if version != VERSION:
        raise CountersFileError(f"{where}: format version {version}, this reader knows {VERSION}")
    if metadata_bytes != METADATA_BYTES:
        raise CountersFileError(f"{where}: metadata records of {metadata_bytes} bytes, expected {METADATA_BYTES}")
    if not 1 <= capacity <= MAX_CAPACITY:
        raise CountersFileError(f"{where}: capacity {capacity} outside 1..{MAX_CAPACITY}")
    if header_bytes < HEADER_MIN_BYTES or metadata_offset < header_bytes:
        raise CountersFileError(f"{where}: header of {header_bytes} bytes, metadata at {metadata_offset}: inconsistent")
    metadata_end = metadata_offset + capacity * METADATA_BYTES
    if values_offset < metadata_end or values_offset % 8 != 0:
        raise CountersFileError(f"{where}: values at {values_offset} overlap the metadata (ending at {metadata_end}) "
                                f"or are not 8-byte aligned")
    if values_offset + 8 * capacity > len(data):
        raise CountersFileError(f"{where}: {len(data)} bytes, but {capacity} counters need "
                                f"{values_offset + 8 * capacity}")
    if count > capacity:
        raise CountersFileError(f"{where}: {count} counters in use, capacity {capacity}")
    if state not in STATES:
        raise CountersFileError(f"{where}: unknown state {state}")
    name = process.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    out = CountersFile(pathlib.Path(path), name, pid, start_ns, STATES[state])
    for i in range(count):
        cid, kind, length, label = _METADATA.unpack_from(data, metadata_offset + i * METADATA_BYTES)
        if kind == 0:
            continue  # padding: the next owner's counters start a new cache line
        if kind not in KINDS:
            raise CountersFileError(f"{where}: counter {i}: unknown kind {kind}")
        if cid != i:
            raise CountersFileError(f"{where}: counter {i}: its record says id {cid}")
        if not 1 <= length <= MAX_LABEL_BYTES:
            raise CountersFileError(f"{where}: counter {i}: label length {length} outside 1..{MAX_LABEL_BYTES}")
        text = bytes(label[:length])
        if any(b < 0x20 or b > 0x7E for b in text) or text[:1] == b" " or text[-1:] == b" ":
            raise CountersFileError(f"{where}: counter {i}: label {text!r} has a non-printable byte or is space-padded")
        (raw,) = struct.unpack_from("<Q", data, values_offset + 8 * i)
        out.counters.append(Counter(i, KINDS[kind], text.decode("ascii"), _decode_value(kind, raw)))
    return out


def read(path: Union[str, os.PathLike]) -> CountersFile:
    """Reads the counters file at `path`: the header, then only the records and values in
    use (a file has room for thousands of counters; a process uses hundreds), each with
    pread -- never a mapping, which a writer truncating the file (a restart) would turn
    into a SIGBUS here."""
    p = pathlib.Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise CountersFileError(f"{p}: cannot read: {e.strerror or e}") from e
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, HEADER_MIN_BYTES, 0)
        if len(head) < HEADER_MIN_BYTES or size < HEADER_MIN_BYTES:
            return parse(head, p)  # raises: too short
        fields = _HEADER.unpack_from(head, 0)
        capacity, metadata_offset, values_offset, count = fields[3], fields[5], fields[6], fields[10]
        if not (1 <= capacity <= MAX_CAPACITY and count <= capacity and metadata_offset + capacity * METADATA_BYTES
                <= values_offset and values_offset + 8 * capacity <= size):
            return parse(head + bytes(max(0, min(size, 1 << 24) - HEADER_MIN_BYTES)), p)  # raises, naming the field
        data = bytearray(values_offset + 8 * capacity)
        data[:HEADER_MIN_BYTES] = head
        records = os.pread(fd, count * METADATA_BYTES, metadata_offset)
        data[metadata_offset:metadata_offset + len(records)] = records
        values = os.pread(fd, count * 8, values_offset)
        data[values_offset:values_offset + len(values)] = values
        return parse(bytes(data), p)
    except OSError as e:
        raise CountersFileError(f"{p}: cannot read: {e.strerror or e}") from e
    finally:
        os.close(fd)


def find(paths: List[pathlib.Path]) -> List[pathlib.Path]:
    """The counters files named, a directory standing for its *.counters files (sorted)."""
    out: List[pathlib.Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.glob("*.counters")))
        else:
            out.append(p)
    return out
