"""THE provenance writer. Every entry point that creates memory calls ``stamp_source``.

Seed 000, defect 3: two entry points wrote ``memory_sources`` and only one stamped the URL.
Here there is one function; kinds that come from a web page must carry their URL (and so
their host), and the host is always derived from the URL by ``pages.host_of`` — never passed in.
"""

from __future__ import annotations

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import host_of
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.secret_filter import scrub
from vodou_desktop.vault.writer import Change

TIERS = ("pinned", "first_party", "capture", "import")

# Kinds whose content comes from a page in the browser: a source without a URL is a defect.
PAGE_KINDS = frozenset({"note", "link", "selection", "library", "page_turn"})
KINDS = PAGE_KINDS | frozenset(
    {"cli", "panel", "turn", "import_chatgpt", "import_claude", "capture", "inbox", "mcp", "opm", "bench"}
)


def stamp_source(
    conn: apsw.Connection,
    change: Change,
    *,
    kind: str,
    tier: str,
    url: str | None = None,
    title: str | None = None,
    tool: str | None = None,
    batch_id: str | None = None,
    created_at: str | None = None,
    source_id: int | None = None,
) -> int:
    """Insert one ``memory_sources`` row and return its id (``source_id``: this id, for an import
    that keeps the exported ids; otherwise SQLite's next one)."""
    if kind not in KINDS:
        raise InvalidInput(f"unknown source kind {kind!r}")
    if tier not in TIERS:
        raise InvalidInput(f"unknown tier {tier!r}; use one of {', '.join(TIERS)}")
    url = url.strip() if url else None
    if kind in PAGE_KINDS and not url:
        raise InvalidInput(f"a {kind} comes from a page: its URL is required")
    host = host_of(url) if url else None
    title = scrub(conn, change, title.strip(), kind) if title else None  # DATA-8: a page title too
    conn.execute(
        "INSERT INTO memory_sources(id, kind, tier, source_url, source_host, title, tool, batch_id, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (source_id, kind, tier, url, host, title, tool, batch_id, created_at or now_iso()),
    )
    change.touch("memory_sources", hosts=[host] if host else [])
    return int(conn.last_insert_rowid())
