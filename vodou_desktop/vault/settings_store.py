"""Key/value settings stored in the vault (global site-mode default, pause).

They live in the vault rather than the config file because the app, the CLI and the bridge must
agree on them at once: a pause set from the tray is in force for the next bridge request.
"""

from __future__ import annotations

import apsw

from vodou_desktop.vault.writer import Change


def get_setting(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_setting(conn: apsw.Connection, change: Change, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
    change.touch("settings")
