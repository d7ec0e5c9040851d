"""bench.sync at a tiny size: every figure is reported (timings are never asserted)."""

from __future__ import annotations

from pathlib import Path

from bench.sync import run


def test_sync_bench_reports_every_figure(tmp_path: Path) -> None:
    report = run(60, 3, tmp_path, apply=40, per_run=10, junk_mib=1, only=None)
    join = report["first_join"]
    assert join["memories"] == join["joined_memories"] == 60
    for name in ("setup_and_first_run_s", "join_s", "backup_s", "restore_s", "join/(backup+restore)"):
        assert join[name] > 0
    arrival = report["arrival"]
    assert arrival["found"] == 3
    assert 0 < arrival["arrival_to_searchable_p50_ms"] <= arrival["arrival_to_searchable_p95_ms"]
    applied = report["apply"]
    assert applied["changes"] == 40 and applied["files"] > 0 and applied["bytes_per_change"] > 0
    assert applied["one_per_file"]["files"] > 0
    junk = report["junk"]
    assert junk["junk_mib"] == 1 and junk["baseline_peak_rss_mib"] > 0
