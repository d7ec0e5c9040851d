"""SQL for the page lane: conversation turns (``messages``) and parked actions (``approvals``).

A message row holds only what the person typed (PAGE-1): callers pass ``content`` and nothing
else, so there is no parameter through which page text could reach this table.
"""

from __future__ import annotations

import json
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, NotFound
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.secret_filter import scrub, scrub_value
from vodou_desktop.vault.writer import Change

SOURCE = "turn"  # the source kind of what the page lane stores (the secret filter's setting)
STATUSES = ("pending", "approved", "denied", "failed")
_COLUMNS = "id, tool, arguments, reason, message_id, status, result, created_at, decided_at"


def insert_message(conn: apsw.Connection, change: Change, role: str, content: str, project: str | None) -> int:
    conn.execute("INSERT INTO messages(role, content, project_id, created_at) VALUES (?, ?, ?, ?)",
                 (role, scrub(conn, change, content, SOURCE), project, now_iso()))
    change.touch("messages")
    return int(conn.last_insert_rowid())


def insert_approval(conn: apsw.Connection, change: Change, tool: str, arguments: dict[str, Any], reason: str,
                    message_id: int | None) -> int:
    conn.execute("INSERT INTO approvals(tool, arguments, reason, message_id, created_at) VALUES (?, ?, ?, ?, ?)",
                 (tool, json.dumps(scrub_value(conn, change, arguments, SOURCE), sort_keys=True), reason, message_id,
                  now_iso()))
    change.touch("approvals")
    return int(conn.last_insert_rowid())


def _row(row: apsw.SQLiteValues) -> dict[str, Any]:
    return {
        "id": row[0], "tool": row[1], "arguments": json.loads(str(row[2])), "reason": row[3], "message_id": row[4],
        "status": row[5], "result": json.loads(str(row[6])) if row[6] else None, "created_at": row[7],
        "decided_at": row[8],
    }


def get_approval(conn: apsw.Connection, approval_id: int) -> dict[str, Any]:
    row = conn.execute(f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (approval_id,)).fetchone()
    if row is None:
        raise NotFound(f"no approval with id {approval_id}")
    return _row(row)


def list_approvals(conn: apsw.Connection, pending_only: bool = True, limit: int = 200) -> list[dict[str, Any]]:
    where = "WHERE status = 'pending'" if pending_only else ""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM approvals {where} ORDER BY id DESC LIMIT ?", (limit,))
    return [_row(r) for r in rows]


def count_pending(conn: apsw.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM approvals WHERE status = 'pending'").fetchone()
    return int(row[0]) if row else 0


def claim_pending(conn: apsw.Connection, change: Change, approval_id: int, status: str) -> dict[str, Any]:
    """Move a pending approval to ``status`` (once: a second decision is a conflict).

    A denied approval also loses its arguments: "deny drops it", including any text a page put there.
    """
    current = get_approval(conn, approval_id)
    if current["status"] != "pending":
        raise Conflict(f"approval {approval_id} was already {current['status']}")
    if status == "denied":
        conn.execute("UPDATE approvals SET status = ?, arguments = '{}', decided_at = ? WHERE id = ?",
                     (status, now_iso(), approval_id))
    else:
        conn.execute("UPDATE approvals SET status = ?, decided_at = ? WHERE id = ?", (status, now_iso(), approval_id))
    change.touch("approvals")
    return current


def set_result(conn: apsw.Connection, change: Change, approval_id: int, status: str, result: Any,
               *, clear_arguments: bool = False) -> None:
    """Record the outcome; ``clear_arguments`` drops what the action named (an erase keeps no host)."""
    conn.execute("UPDATE approvals SET status = ?, result = ? WHERE id = ?",
                 (status, json.dumps(result, sort_keys=True, default=str), approval_id))
    if clear_arguments:
        conn.execute("UPDATE approvals SET arguments = '{}' WHERE id = ?", (approval_id,))
    change.touch("approvals")
