"""SQL for the project ↔ folder mapping (``projects``) that tags terminal captures."""

from __future__ import annotations

import apsw

from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.writer import Change


def add_project(conn: apsw.Connection, change: Change, name: str, path: str | None) -> None:
    conn.execute(
        "INSERT INTO projects(name, path, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT(name) DO UPDATE SET path = excluded.path",
        (name, path, now_iso()),
    )
    change.touch("projects")


def remove_project(conn: apsw.Connection, change: Change, name: str) -> bool:
    conn.execute("DELETE FROM projects WHERE name = ?", (name,))
    change.touch("projects")
    return conn.changes() > 0


def all_projects(conn: apsw.Connection) -> list[tuple[str, str | None]]:
    return [(str(r[0]), r[1]) for r in conn.execute("SELECT name, path FROM projects ORDER BY name")]
