"""SQL for user site rules (``site_rules``). Resolution logic lives in governance/sitemodes.py."""

from __future__ import annotations

from typing import Any

import apsw

from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.writer import Change


def all_rules(conn: apsw.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT host, mode, created_at, updated_at FROM site_rules ORDER BY host")
    return [{"host": r[0], "mode": r[1], "created_at": r[2], "updated_at": r[3]} for r in rows]


def rules_for_hosts(conn: apsw.Connection, hosts: list[str]) -> dict[str, str]:
    """Rules whose host is one of ``hosts`` (the host and its parent domains), host → mode."""
    if not hosts:
        return {}
    marks = ",".join("?" * len(hosts))
    rows = conn.execute(f"SELECT host, mode FROM site_rules WHERE host IN ({marks})", hosts)
    return {r[0]: r[1] for r in rows}


def upsert_rule(conn: apsw.Connection, change: Change, host: str, mode: str) -> None:
    now = now_iso()
    conn.execute(
        "INSERT INTO site_rules(host, mode, created_at, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(host) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at",
        (host, mode, now, now),
    )
    change.touch("site_rules", hosts=[host])


def delete_rule(conn: apsw.Connection, change: Change, host: str) -> bool:
    conn.execute("DELETE FROM site_rules WHERE host = ?", (host,))
    removed = conn.changes() > 0
    if removed:
        change.touch("site_rules", hosts=[host])
    return removed
