"""bench.encryption at a tiny size: every figure and ratio is reported (timings never asserted)."""

from __future__ import annotations

from pathlib import Path

from bench.encryption import run


def test_encryption_bench_reports_every_ratio(tmp_path: Path) -> None:
    result = run(300, tmp_path, 12)
    keys = {"keyword_p50_ms", "keyword_p95_ms", "hybrid_p50_ms", "hybrid_p95_ms", "index_load_s", "open_ms"}
    assert set(result["plain"]) == set(result["encrypted"]) == set(result["ratio_encrypted_over_plain"]) == keys
    assert all(v > 0 for v in result["ratio_encrypted_over_plain"].values())
    assert result["passphrase_open_ms"] > 0 and len(result["load_average_1min"]) == 2
    assert b"SQLite format 3" not in (tmp_path / "encrypted-300.sqlite").read_bytes()[:16]
