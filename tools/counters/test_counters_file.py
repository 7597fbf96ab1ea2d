"""The counters file reader against the documented layout (docs/TELEMETRY.md
"The counters file"), and as an attacker would feed it: every damaged field
gets a specific CountersFileError, never an exception of another kind or a
wrong value. (Files written by the real processes are read in
tests/integration/exchange/test_counters.py.)"""

from __future__ import annotations

import io
import os
import pathlib
import random
import struct

import pytest

from tools.counters import __main__ as stat
from tools.counters.counters_file import CountersFileError, parse, read

HEADER = struct.Struct("<8sIIIIQQqq64sII")


def make(counters, capacity=16, state=1, pid=None, process=b"unit"):
    """Bytes of a counters file holding `counters` [(label, kind, raw value) or None for padding]."""
    values_offset = (4096 + 128 * capacity + 63) // 64 * 64
    data = bytearray(values_offset + 8 * capacity)
    HEADER.pack_into(data, 0, b"NTCOUNT1", 1, 4096, capacity, 128, 4096, values_offset,
                     os.getpid() if pid is None else pid, 123, process, len(counters), state)
    for i, c in enumerate(counters):
        if c is None:
            continue
        label, kind, raw = c
        struct.pack_into("<IHH120s", data, 4096 + 128 * i, i, kind, len(label), label.encode())
        struct.pack_into("<Q", data, values_offset + 8 * i, raw)
    return bytes(data)


def test_reads_each_kind_and_skips_padding():
    f = parse(make([("a", 1, 7), None, ("b", 2, (1 << 64) - 3), ("c", 3, struct.unpack("<Q", struct.pack("<d", 2.5))[0])]))
    assert f.process == "unit" and f.state == "running" and f.status == "running"
    assert [(c.id, c.label, c.kind, c.value) for c in f.counters] == [
        (0, "a", "count", 7), (2, "b", "gauge", -3), (3, "c", "real", 2.5)]


def test_a_running_file_whose_process_is_gone_died():
    assert parse(make([], pid=2 ** 22 + 12345)).status == "died"  # above pid_max's usual 2^22
    assert parse(make([], state=2, pid=2 ** 22 + 12345)).status == "stopped"


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:100], "too short"),
    (lambda d: b"XXXXXXXX" + d[8:], "not a counters file"),
    (lambda d: d[:8] + struct.pack("<I", 9) + d[12:], "version 9"),
    (lambda d: d[:16] + struct.pack("<I", 0) + d[20:], "capacity 0"),
    (lambda d: d[:16] + struct.pack("<I", 1 << 30) + d[20:], "capacity"),
    (lambda d: d[:20] + struct.pack("<I", 64) + d[24:], "metadata records of 64"),
    (lambda d: d[:32] + struct.pack("<Q", 4096) + d[40:], "overlap"),
    (lambda d: d[:32] + struct.pack("<Q", 2 ** 40) + d[40:], "need"),
    (lambda d: d[:-1], "need"),
    (lambda d: d[:120] + struct.pack("<I", 17) + d[124:], "capacity 16"),
    (lambda d: d[:124] + struct.pack("<I", 7) + d[128:], "unknown state"),
    (lambda d: d[:4096 + 4] + struct.pack("<H", 9) + d[4096 + 6:], "unknown kind 9"),
    (lambda d: d[:4096] + struct.pack("<I", 5) + d[4100:], "says id 5"),
    (lambda d: d[:4096 + 6] + struct.pack("<H", 0) + d[4096 + 8:], "label length 0"),
    (lambda d: d[:4096 + 6] + struct.pack("<H", 200) + d[4096 + 8:], "label length 200"),
    (lambda d: d[:4096 + 8] + b" " + d[4096 + 9:], "space-padded"),
    (lambda d: d[:4096 + 9] + b"\t" + d[4096 + 10:], "non-printable"),
])
def test_each_damage_gets_its_own_error(damage, message):
    with pytest.raises(CountersFileError, match=message):
        parse(damage(make([("label", 1, 1)])))


def test_random_garbage_never_escapes_as_another_exception():
    rng = random.Random(7)
    good = make([("a", 1, 1), ("b", 2, 2), None, ("c", 3, 3)])
    for _ in range(3000):
        d = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            d[rng.randrange(0, 4096 + 128 * 4 + 8)] = rng.randrange(256)
        try:
            f = parse(bytes(d))
        except CountersFileError:
            continue
        for c in f.counters:  # what parses is within the format's limits
            assert 1 <= len(c.label) <= 119 and c.kind in ("count", "gauge", "real")


def test_read_names_a_missing_file(tmp_path):
    with pytest.raises(CountersFileError, match="cannot read"):
        read(tmp_path / "none.counters")


def test_stat_shows_a_directory_and_rates(tmp_path):
    (tmp_path / "exchange.counters").write_bytes(make([("messages_in", 1, 10), ("sessions_live", 2, 2)]))
    (tmp_path / "bad.counters").write_bytes(b"garbage")
    out, err = io.StringIO(), io.StringIO()
    assert stat.main([str(tmp_path), "--nonzero"], out, err) == 1  # one file could not be read
    assert "  messages_in    10\n  sessions_live   2\n" in out.getvalue()
    assert "bad.counters: 7 bytes: too short" in err.getvalue()
    out = io.StringIO()
    assert stat.main([str(tmp_path / "exchange.counters"), "--json", "--filter", "messages"], out, io.StringIO()) == 0
    assert '"counters": {"messages_in": 10}' in out.getvalue()


def test_stat_refuses_bad_options(capsys):
    for argv in (["--watch", "0"], ["--count", "-1"], ["--bogus"]):
        with pytest.raises(SystemExit) as e:
            stat.main(argv + [os.devnull])
        assert e.value.code == 2


def test_read_takes_only_the_slots_in_use_and_checks_the_rest(tmp_path):
    p = tmp_path / "f.counters"
    p.write_bytes(make([("a", 1, 1), None, ("b", 2, 5)], capacity=4096))
    assert read(p).values() == {"a": 1, "b": 5}
    p.write_bytes(make([("a", 1, 1)])[:5000])  # cut short: the header promises more
    with pytest.raises(CountersFileError, match="need"):
        read(p)
    p.write_bytes(b"")
    with pytest.raises(CountersFileError, match="too short"):
        read(p)
