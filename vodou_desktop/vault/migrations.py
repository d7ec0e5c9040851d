"""Applying the named migrations of ``schema.py`` on open."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

import apsw

from vodou_desktop.errors import newer_vault
from vodou_desktop.vault.connection import APPLICATION_ID
from vodou_desktop.vault.schema import MIGRATIONS, Migration

log = logging.getLogger(__name__)


def applied_migrations(conn: apsw.Connection) -> list[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY id")]


def vault_made_at(conn: apsw.Connection) -> str | None:
    """When this vault was made (its first schema step): how long it has existed, whatever the age of
    the memories imported into it."""
    if not applied_migrations(conn):
        return None
    row = conn.execute("SELECT min(applied_at) FROM schema_migrations").fetchone()
    return None if row is None or row[0] is None else str(row[0])


def migrate(conn: apsw.Connection, path: object, migrations: list[Migration] | None = None,
            before_write: Callable[[], object] | None = None) -> list[str]:
    """Bring the vault up to date; returns the names applied now. Refuses a newer vault.

    ``before_write`` runs once before the first step is written (the writer's integrity check).
    (A vault whose schema holds anything its migrations do not make never gets here: the connection
    refuses it as it opens, ``connection.open_connection``.)
    """
    steps = MIGRATIONS if migrations is None else migrations
    known = [name for name, _ in steps]
    done = applied_migrations(conn)
    unknown = [name for name in done if name not in known]
    if unknown:
        log.info("%s has schema steps this version does not know: %s", path, unknown)
        raise newer_vault(path)
    applied: list[str] = []
    for name, step in steps:
        if name in done:
            continue
        if before_write is not None:
            before_write()
            before_write = None
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
