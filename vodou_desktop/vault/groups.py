"""SQL for fact groups (near-duplicates, one canonical copy) and reversible supersession.

Decisions are made in ``ingest/dedupe.py`` and ``ingest/supersede.py``; this module only writes
them. Nothing here deletes a fact: a duplicate is demoted (``is_canonical = 0``) and a
contradicted fact is hidden under its winner (``superseded_by``), and both can be undone.
"""

from __future__ import annotations

from collections.abc import Iterable

import apsw

from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.writer import Change

GROUPS_TABLE = "fact_groups"  # what ``set_groups`` reports touching: the group columns of ``chunks``


def set_groups(conn: apsw.Connection, change: Change, rows: Iterable[tuple[int, int | None, bool]]) -> int:
    """Apply (chunk id, group id or None, canonical) for each row; returns rows changed."""
    n = 0
    ids = []
    for chunk_id, group_id, canonical in rows:
        conn.execute(
            "UPDATE chunks SET fact_group = ?, is_canonical = ? WHERE id = ? AND document_id IS NULL"
            " AND (fact_group IS NOT ? OR is_canonical IS NOT ?)",
            (group_id, int(canonical), chunk_id, group_id, int(canonical)),
        )
        if conn.changes():
            n += 1
            ids.append(chunk_id)
    if ids:  # only a group's columns change: no text, no vector (the embedding backfill need not wake)
        change.touch(GROUPS_TABLE, chunk_ids=ids)
    return n


def supersede(conn: apsw.Connection, change: Change, loser: int, winner: int) -> None:
    if loser == winner:
        raise InvalidInput("a fact cannot supersede itself")
    conn.execute(
        "UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ? AND superseded_by IS NULL",
        (winner, now_iso(), loser),
    )
    if not conn.changes():
        raise NotFound(f"no live memory with id {loser} to supersede")
    change.touch("chunks", chunk_ids=[loser, winner])


def unsupersede(conn: apsw.Connection, change: Change, chunk_id: int) -> None:
    """Bring a superseded fact back (its winner stays as it is)."""
    conn.execute(
        "UPDATE chunks SET superseded_by = NULL, superseded_at = NULL WHERE id = ? AND superseded_by IS NOT NULL",
        (chunk_id,),
    )
    if not conn.changes():
        raise NotFound(f"memory {chunk_id} does not exist or is not superseded")
    change.touch("chunks", chunk_ids=[chunk_id])
