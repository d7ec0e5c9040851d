"""Applying the named migrations of ``schema.py`` on open."""

from __future__ import annotations

from datetime import UTC, datetime

import apsw

from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.schema import MIGRATIONS, Migration

APPLICATION_ID = 0x566F646F  # "Vodo": marks the file as a Vodou vault


def applied_migrations(conn: apsw.Connection) -> list[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY id")]


def migrate(conn: apsw.Connection, path: object, migrations: list[Migration] | None = None) -> list[str]:
    """Bring the vault up to date; returns the names applied now. Refuses a newer vault."""
    steps = MIGRATIONS if migrations is None else migrations
    known = [name for name, _ in steps]
    _check_application_id(conn, path)
    done = applied_migrations(conn)
    unknown = [name for name in done if name not in known]
    if unknown:
        raise VaultUnavailable(
            f"The vault {path} was written by a newer version of Vodou (it has schema step "
            f"{unknown[-1]!r}). Upgrade Vodou to open it; the vault was not changed."
        )
    applied: list[str] = []
    for name, step in steps:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")  # one transaction: the step and its record land together
        try:
            if name in applied_migrations(conn):  # another process got there first
                conn.execute("COMMIT")
                continue
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
            )
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            step(conn)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat()),
            )
            conn.execute(f"PRAGMA user_version={known.index(name) + 1}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(name)
    return applied


def _check_application_id(conn: apsw.Connection, path: object) -> None:
    app_id = scalar(conn, "PRAGMA application_id")
    if app_id in (0, APPLICATION_ID):
        if app_id == 0 and scalar(conn, "SELECT count(*) FROM sqlite_schema"):
            if not applied_migrations(conn):
                raise VaultUnavailable(
                    f"{path} is an SQLite database but not a Vodou vault; it was left untouched."
                )
        return
    raise VaultUnavailable(f"{path} is an SQLite database of another program; it was left untouched.")
