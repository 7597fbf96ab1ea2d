"""Reader of nanotick telemetry files (.ntt, format version 1).

Written from docs/TELEMETRY.md (the format's specification), independently
of the C++ reader in src/telemetry/file_reader.cpp. Every check that fails
raises NttError naming the file, the offset and what is wrong. A file with
no valid footer was cut short (its process did not stop cleanly): its header,
point table and whole records are still read, and ``trailer`` is None.
Pure functions over immutable results: safe to use from any thread.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

MAGIC = b"NTTELEM1"
TRAILER_MAGIC = b"NTTTRAIL"
FOOTER_MAGIC = b"NTTEND01"
VERSION = 1
HEADER_BYTES = 128
POINT_ENTRY_BYTES = 32
RECORD_BYTES = 32
TRAILER_FIXED_BYTES = 48
RECORDER_ENTRY_BYTES = 48
FOOTER_BYTES = 16

KIND_HOP = 1
KIND_TIMER = 2

# One record, as laid out in the file (little-endian, 32 bytes).
RECORD_DTYPE = np.dtype(
    [
        ("tsc", "<u8"),
        ("key", "<u8"),
        ("aux", "<u8"),
        ("point", "<u2"),
        ("reserved", "<u2"),
        ("cycles", "<u4"),
    ]
)
assert RECORD_DTYPE.itemsize == RECORD_BYTES


class NttError(Exception):
    """A telemetry file that cannot be read or breaks the format."""


@dataclass(frozen=True)
class PointDef:
    id: int
    kind: int  # KIND_HOP or KIND_TIMER
    name: str


@dataclass(frozen=True)
class RecorderTotals:
    name: str
    records: int
    dropped: int


@dataclass(frozen=True)
class Trailer:
    end_tsc: int
    end_epoch_ns: int
    records: int
    dropped: int
    recorders: List[RecorderTotals]


@dataclass
class TelemetryFile:
    path: Path
    process_name: str
    pid: int
    ticks_per_ns: float
    clock_source: str  # "tsc" or "steady_ns"
    start_tsc: int
    start_epoch_ns: int
    points: Dict[int, PointDef]
    records: np.ndarray  # RECORD_DTYPE
    trailer: Optional[Trailer] = field(default=None)

    @property
    def complete(self) -> bool:
        return self.trailer is not None


def _fail(path: Path, problem: str) -> NttError:
    return NttError(f"telemetry file '{path}': {problem}")


def _name(path: Path, data: bytes, offset: int, length: int, width: int, what: str) -> str:
    if length == 0 or length > width:
        raise _fail(path, f"{what} at offset {offset} has length {length} (must be 1..{width})")
    raw = data[offset : offset + length]
    if any(b < 0x20 or b > 0x7E for b in raw):
        raise _fail(path, f"{what} at offset {offset} is not printable ASCII")
    if any(b != 0 for b in data[offset + length : offset + width]):
        raise _fail(path, f"{what} at offset {offset} is not NUL-padded")
    return raw.decode("ascii")


def _parse_trailer(path: Path, data: bytes, records_start: int) -> Optional[Trailer]:
    size = len(data)
    if size < records_start + FOOTER_BYTES or data[size - 8 :] != FOOTER_MAGIC:
        return None
    (offset,) = struct.unpack_from("<Q", data, size - FOOTER_BYTES)
    if offset < records_start or offset + TRAILER_FIXED_BYTES + FOOTER_BYTES > size:
        raise _fail(path, f"footer points to a trailer at offset {offset}, outside the file")
    if (offset - records_start) % RECORD_BYTES != 0:
        raise _fail(path, f"trailer offset {offset} does not end a whole record")
    if data[offset : offset + 8] != TRAILER_MAGIC:
        raise _fail(path, f'no "NTTTRAIL" at the trailer offset {offset}')
    count, entry_bytes, end_tsc, end_epoch_ns, records, dropped = struct.unpack_from("<IIQqQQ", data, offset + 8)
    if entry_bytes != RECORDER_ENTRY_BYTES:
        raise _fail(path, f"recorder entry size {entry_bytes} (version 1 has 48)")
    if offset + TRAILER_FIXED_BYTES + count * RECORDER_ENTRY_BYTES + FOOTER_BYTES != size:
        raise _fail(path, f"trailer of {count} recorders does not end where the footer starts")
    recorders = []
    for i in range(count):
        at = offset + TRAILER_FIXED_BYTES + i * RECORDER_ENTRY_BYTES
        raw = data[at : at + 32]
        length = raw.find(b"\0")
        if length < 0:
            raise _fail(path, f"recorder name at offset {at} is not NUL-terminated")
        name = _name(path, data, at, length, 32, "recorder name")
        rec_records, rec_dropped = struct.unpack_from("<QQ", data, at + 32)
        recorders.append(RecorderTotals(name, rec_records, rec_dropped))
    if sum(r.records for r in recorders) != records or sum(r.dropped for r in recorders) != dropped:
        raise _fail(path, f"trailer totals ({records} records, {dropped} dropped) differ from the sum of its recorders")
    in_file = (offset - records_start) // RECORD_BYTES
    if in_file != records:
        raise _fail(path, f"trailer counts {records} records but the file holds {in_file}")
    return Trailer(end_tsc, end_epoch_ns, records, dropped, recorders)


def read_file(path: Path) -> TelemetryFile:
    """Reads and validates one .ntt file; raises NttError on any problem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _fail(path, f"cannot read it: {e.strerror}") from e
    if len(data) < HEADER_BYTES:
        raise _fail(path, f"only {len(data)} bytes: too short for the 128-byte header")
    if data[:8] != MAGIC:
        raise _fail(path, 'bad magic (expected "NTTELEM1"): not a telemetry file')
    version, header_bytes, entry_bytes, point_count, record_bytes, pid = struct.unpack_from("<HHHHII", data, 8)
    if version != VERSION:
        raise _fail(path, f"format version {version}; this reader knows version 1")
    if header_bytes != HEADER_BYTES:
        raise _fail(path, f"header size {header_bytes} (version 1 has 128)")
    if entry_bytes != POINT_ENTRY_BYTES:
        raise _fail(path, f"point entry size {entry_bytes} (version 1 has 32)")
    if record_bytes != RECORD_BYTES:
        raise _fail(path, f"record size {record_bytes} (version 1 has 32)")
    ticks_per_ns, start_tsc, start_epoch_ns, source, name_len = struct.unpack_from("<dQqBB", data, 24)
    if not math.isfinite(ticks_per_ns) or ticks_per_ns <= 0:
        raise _fail(path, f"ticks per ns is {ticks_per_ns} (must be a positive number)")
    if source not in (0, 1):
        raise _fail(path, f"clock source {source} (0 = steady ns, 1 = TSC)")
    process_name = _name(path, data, 64, name_len, 63, "process name")

    records_start = HEADER_BYTES + point_count * POINT_ENTRY_BYTES
    if len(data) < records_start:
        raise _fail(path, f"the header announces {point_count} points but the file ends inside the point table")
    points: Dict[int, PointDef] = {}
    for i in range(point_count):
        at = HEADER_BYTES + i * POINT_ENTRY_BYTES
        point_id, kind, plen = struct.unpack_from("<HBB", data, at)
        if kind not in (KIND_HOP, KIND_TIMER):
            raise _fail(path, f"point table entry {i} has kind {kind} (1 = hop, 2 = timer)")
        pname = _name(path, data, at + 4, plen, 28, "point name")
        if point_id in points:
            raise _fail(path, f"point id {point_id} appears twice in the point table")
        points[point_id] = PointDef(point_id, kind, pname)

    trailer = _parse_trailer(path, data, records_start)
    if trailer is None:  # cut short: every whole record present
        count = (len(data) - records_start) // RECORD_BYTES
    else:
        count = trailer.records
    records = np.frombuffer(data, dtype=RECORD_DTYPE, count=count, offset=records_start).copy()
    if count:
        unknown = np.setdiff1d(np.unique(records["point"]), np.array(sorted(points), dtype=np.uint16))
        if unknown.size:
            first = int(np.flatnonzero(records["point"] == unknown[0])[0])
            raise _fail(path, f"record {first} names point id {int(unknown[0])}, which the file's point table lacks")
    return TelemetryFile(
        path=path,
        process_name=process_name,
        pid=pid,
        ticks_per_ns=ticks_per_ns,
        clock_source="tsc" if source == 1 else "steady_ns",
        start_tsc=start_tsc,
        start_epoch_ns=start_epoch_ns,
        points=points,
        records=records,
        trailer=trailer,
    )


def read_run(run_dir: Path) -> List[TelemetryFile]:
    """Every RUN_DIR/telemetry/*.ntt, sorted by file name."""
    tdir = Path(run_dir) / "telemetry"
    if not Path(run_dir).is_dir():
        raise NttError(f"run directory '{run_dir}' does not exist")
    paths = sorted(tdir.glob("*.ntt")) if tdir.is_dir() else []
    if not paths:
        raise NttError(
            f"no telemetry files in '{tdir}': expected one <process>.ntt per process "
            "(was the run made with the build option NANOTICK_TELEMETRY=ON?)"
        )
    return [read_file(p) for p in paths]
