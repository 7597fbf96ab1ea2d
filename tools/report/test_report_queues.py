"""The report's queue depths (RUN_DIR/counters/queue_depths.csv from the
demo): read, drawn one line per queue, and anything else refused quietly."""

from __future__ import annotations

from . import queues


def test_samples_are_drawn_per_queue_with_their_peaks(tmp_path):
    (tmp_path / "counters").mkdir()
    rows = ["t_s,process,queue,depth"] + [f"{t / 10:.1f},exchange,sequencer_to_engine,{t % 7}" for t in range(50)] \
        + [f"{t / 10:.1f},exchange,gateway_to_sequencer,0" for t in range(50)]
    (tmp_path / "counters" / "queue_depths.csv").write_text("\n".join(rows) + "\n")
    frame = queues.read(tmp_path)
    assert len(frame) == 100
    fig = queues.figure(frame)
    assert sorted(t.name for t in fig.data) == ["exchange gateway_to_sequencer", "exchange sequencer_to_engine"]
    assert all(len(t.x) == 50 for t in fig.data)
    html = queues.section(frame)
    assert 'id="queue-depths"' in html and "<td>6</td>" in html  # the peak of t % 7


def test_a_missing_empty_or_foreign_file_gives_no_section(tmp_path):
    assert queues.read(tmp_path) is None and queues.section(None) == ""
    (tmp_path / "counters").mkdir()
    path = tmp_path / "counters" / "queue_depths.csv"
    for text in ("t_s,process,queue,depth\n", "a,b\n1,2\n", "\x00\xff\x00garbage", '"unterminated\n1,2'):
        path.write_text(text, errors="surrogateescape")
        assert queues.read(tmp_path) is None, text
