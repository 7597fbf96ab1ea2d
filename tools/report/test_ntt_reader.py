"""The Python reader of telemetry files against files written by the C++
Writer: it reads them exactly, and names what is wrong with a broken one."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from . import ntt, synthetic
from .conftest import write_run


@pytest.fixture
def one_file(fixture_binary, tmp_path) -> Path:
    run_dir = tmp_path / "run"
    scenario = synthetic.make(run_dir, packets=10)
    write_run(fixture_binary, run_dir, scenario)
    return Path(scenario.files[0])


def test_reads_header_points_records_and_trailer(fixture_binary, tmp_path):
    script = (f"process exch-1 {tmp_path}/a.ntt\nrecorder gw\n"
              "record 10 ex_tcp_read 4294967297 0 0\nrecord 25 fn_book_add 7 0 99\n"
              "recorder md\nrecord 40 ex_md_write 11 12 0\n")
    done = subprocess.run([str(fixture_binary)], input=script, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    f = ntt.read_file(tmp_path / "a.ntt")
    assert f.process_name == "exch-1" and f.pid > 0 and f.clock_source in ("tsc", "steady_ns")
    assert f.points[1].name == "ex_tcp_read" and f.points[1].kind == ntt.KIND_HOP
    assert f.points[32].name == "fn_book_add" and f.points[32].kind == ntt.KIND_TIMER
    r = f.records
    assert r.size == 3
    base = int(r["tsc"][0]) - 10
    assert [int(x) - base for x in r["tsc"]] == [10, 25, 40]
    assert list(r["key"]) == [(1 << 32) | 1, 7, 11]
    assert list(r["aux"]) == [0, 0, 12]
    assert list(r["cycles"]) == [0, 99, 0]
    assert f.trailer is not None and f.trailer.records == 3 and f.trailer.dropped == 0
    assert [(x.name, x.records) for x in f.trailer.recorders] == [("gw", 2), ("md", 1)]
    assert f.start_tsc <= base + 10


@pytest.mark.parametrize(
    "offset, fmt, value, message",
    [
        (8, "<H", 2, "format version 2"),
        (16, "<I", 24, "record size 24"),
        (24, "<d", -1.0, "ticks per ns"),
        (48, "<B", 5, "clock source 5"),
        (49, "<B", 0, "process name"),
        (128 + 2, "<B", 9, "has kind 9"),
        (128 + 32, "<H", 1, "appears twice"),
    ],
)
def test_names_what_is_wrong(one_file, offset, fmt, value, message):
    data = bytearray(one_file.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    one_file.write_bytes(bytes(data))
    with pytest.raises(ntt.NttError, match=message):
        ntt.read_file(one_file)


def test_rejects_short_and_foreign_files(tmp_path):
    short = tmp_path / "short.ntt"
    short.write_bytes(b"NTTELEM1" + bytes(50))
    with pytest.raises(ntt.NttError, match="too short"):
        ntt.read_file(short)
    foreign = tmp_path / "foreign.ntt"
    foreign.write_bytes(bytes(300))
    with pytest.raises(ntt.NttError, match="bad magic"):
        ntt.read_file(foreign)
    with pytest.raises(ntt.NttError, match="cannot read"):
        ntt.read_file(tmp_path / "absent.ntt")


def test_rejects_a_trailer_that_disagrees_with_the_records(one_file):
    data = bytearray(one_file.read_bytes())
    (trailer,) = struct.unpack_from("<Q", data, len(data) - 16)
    struct.pack_into("<Q", data, trailer + 32, 1 + struct.unpack_from("<Q", data, trailer + 32)[0])
    one_file.write_bytes(bytes(data))
    with pytest.raises(ntt.NttError, match="differ from the sum"):
        ntt.read_file(one_file)


def test_rejects_a_record_of_an_unknown_point(one_file):
    data = bytearray(one_file.read_bytes())
    (count,) = struct.unpack_from("<H", data, 14)
    struct.pack_into("<H", data, 128 + 32 * count + 24, 999)
    one_file.write_bytes(bytes(data))
    with pytest.raises(ntt.NttError, match="point id 999"):
        ntt.read_file(one_file)
