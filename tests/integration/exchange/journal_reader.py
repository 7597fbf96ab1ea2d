"""A reader of the exchange journal written from docs/EXCHANGE.md "Journal"
(plus the record layout of src/engine/request.hpp, which the doc points to):
segments and the staging ring, each record's CRC32C checked, and
replay_journal, which runs the requests through the matching model of
engine_model.py. The recovery tests compare its result with what a restarted
exchange publishes. Not thread-safe (one test thread).
"""

from __future__ import annotations

import os
import pathlib
import struct
from dataclasses import dataclass
from typing import List, Tuple

from tests.integration.exchange.engine_model import EngineModel, Request

SEGMENT_HEADER = 64
RECORD = 64
_RECORD_HEAD = struct.Struct("<HBBIQ")  # length, type, reserved, crc, seq
_REQUEST = struct.Struct("<BBBBIIIQqqQ")  # type, side, order_type, stp, instrument, client, reserved, coid, price, qty, event_id
assert _REQUEST.size == 48


def _crc32c_table() -> List[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    c = crc ^ 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value


@dataclass
class JournalScan:
    requests: List[Request]
    stopped_because: str


def read_journal(directory: pathlib.Path, with_staging: bool = True) -> JournalScan:
    """Every good record in seq order, stopping where the recovery scan would (end, torn or corrupt);
    then (with_staging) what the staging ring holds after the files' end, as start-up replays it."""
    segments = sorted(p for p in pathlib.Path(directory).iterdir() if p.name.startswith("journal-") and p.name.endswith(".log"))
    requests: List[Request] = []
    expected = 1
    for seg in segments:
        data = seg.read_bytes()
        if data[:8] != b"NTJRNL01":
            return JournalScan(requests, f"{seg.name}: bad magic {data[:8]!r}")
        first_seq = struct.unpack_from("<Q", data, 16)[0]
        if first_seq != expected:
            return JournalScan(requests, f"{seg.name}: first seq {first_seq}, expected {expected}")
        for off in range(SEGMENT_HEADER, len(data) - RECORD + 1, RECORD):
            length, rtype, _, crc, seq = _RECORD_HEAD.unpack_from(data, off)
            if length == 0:
                break  # end of this segment's data
            rec = data[off : off + RECORD]
            if length != RECORD or rtype != 1:
                return JournalScan(requests, f"{seg.name}+{off}: length {length} type {rtype}")
            # The CRC covers the record without its own field: bytes [0, 4) then [8, 64).
            if crc32c(rec[8:], crc32c(rec[:4])) != crc:
                return JournalScan(requests, f"{seg.name}+{off}: bad CRC")
            if seq != expected:
                return JournalScan(requests, f"{seg.name}+{off}: seq {seq}, expected {expected}")
            requests.append(Request(seq, *_REQUEST.unpack_from(rec, 16)))
            expected += 1
    if with_staging:
        for rec in read_staging_ring(directory, expected):
            requests.append(Request(expected, *_REQUEST.unpack_from(rec, 16)))
            expected += 1
    return JournalScan(requests, "end")


def staging_ring_path(directory: pathlib.Path) -> pathlib.Path:
    """Where the exchange keeps the journal's staging ring (src/exchange/journal_staging.hpp)."""
    st = os.stat(directory)
    base = os.environ.get("NANOTICK_STAGING_DIR") or "/dev/shm"
    return pathlib.Path(base) / f"nanotick-journal-{st.st_dev:x}-{st.st_ino:x}"


def read_staging_ring(directory: pathlib.Path, from_seq: int) -> List[bytes]:
    """The records a killed exchange published into its staging ring after the files' end (from_seq on),
    as start-up will write them: only a ring of this journal's id, only whole records of the right seq."""
    ring = staging_ring_path(directory)
    id_file = pathlib.Path(directory) / "journal.id"
    if not ring.exists() or not id_file.exists():
        return []
    journal_id = int(id_file.read_text().strip(), 16)
    data = ring.read_bytes()
    magic, version, record_size, capacity, ring_id = struct.unpack_from("<8sIIQQ", data, 0)
    if magic != b"NTSTAGE1" or version != 1 or record_size != RECORD or ring_id != journal_id:
        return []
    published = struct.unpack_from("<Q", data, 64)[0]
    out = []
    for seq in range(from_seq, published + 1):
        off = 4096 + (seq & (capacity - 1)) * RECORD
        rec = data[off : off + RECORD]
        length, rtype, _, crc, rseq = _RECORD_HEAD.unpack_from(rec, 0)
        if length != RECORD or rtype != 1 or rseq != seq or crc32c(rec[8:], crc32c(rec[:4])) != crc:
            break
        out.append(rec)
    return out


def replay_journal(directory: pathlib.Path, instruments) -> Tuple[EngineModel, JournalScan]:
    model = EngineModel(instruments)
    scan = read_journal(directory)
    for r in scan.requests:
        model.apply(r)
    return model, scan
