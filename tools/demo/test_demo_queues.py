"""The demo's queue sampler: rate-limited, and a counters file that is not
there yet (or not a counters file) costs a sample, never the run."""

from __future__ import annotations

from tools.demo import demo_queues


def test_the_sampler_writes_its_header_and_skips_what_it_cannot_read(tmp_path):
    out = tmp_path / "queue_depths.csv"
    s = demo_queues.QueueSampler(out, every_s=0.1)
    assert out.read_text() == demo_queues.HEADER
    bogus = tmp_path / "bogus.counters"
    bogus.write_bytes(b"\x00" * 100)
    assert s.sample(0.0, {"exchange": tmp_path / "missing.counters", "mm1": bogus}) == 0
    assert s.last_t == 0.0
    assert s.sample(0.05, {}) == 0 and s.last_t == 0.0  # too soon: not sampled
    assert s.sample(0.2, {}) == 0 and s.last_t == 0.2
    assert out.read_text() == demo_queues.HEADER
