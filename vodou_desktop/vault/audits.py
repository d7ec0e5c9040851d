"""SQL audits run by ``vodou doctor`` (seeds 000 and 004). Each returns its offending rows.

The mixed-batch audit and the unembedded count read ``chunks`` and therefore live in
``query.py``; this module holds the ones over other tables and the FTS self-check.
"""

from __future__ import annotations

from typing import Any

import apsw

from vodou_desktop.vault.sources import PAGE_KINDS
from vodou_desktop.vault.writer import Change


def sources_without_url(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Seed 000: per source kind, rows and rows with no URL; offending = page kinds with no_url > 0."""
    rows = conn.execute(
        "SELECT kind, COUNT(*) AS n,"
        " SUM(CASE WHEN source_url IS NULL OR source_url = '' THEN 1 ELSE 0 END) AS no_url,"
        " group_concat(CASE WHEN source_url IS NULL OR source_url = '' THEN id END) AS ids"
        " FROM memory_sources GROUP BY kind ORDER BY kind"
    )
    out = []
    for kind, n, no_url, ids in rows:
        if kind in PAGE_KINDS and no_url:
            out.append({"kind": kind, "rows": int(n), "no_url": int(no_url),
                        "source_ids": [int(i) for i in str(ids).split(",")][:50]})
    return out


def fts_integrity(conn: apsw.Connection, change: Change) -> str | None:
    """FTS5's own check of the index against the chunks table; ``None`` when it is sound.

    Run as a write job: the check is issued as an INSERT, although it changes nothing.
    """
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    except (apsw.CorruptError, apsw.SQLError) as exc:
        return str(exc)
    return None
