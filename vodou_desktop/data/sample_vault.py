"""A generated vault of many memories, for the screenshot gallery, the memory browser's tests at
scale and ``bench/gui_stall.py``.

The memories are written as a Vodou export (``export.import_records``: one transaction, the same
path as ``vodou import vodou``), so 20,000 memories take seconds, not one ``remember`` each. Every
memory has its own source and an event time one hour older than the next one's, so the oldest is
the first written: ``sample_text(0)``. About one in ten mentions a heron (a search with many
matches).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from vodou_desktop.data.export import FORMAT, FORMAT_VERSION, import_records
from vodou_desktop.vault import Vault

PROJECTS = ("atlas", "garden", "infra", "kitchen", "thesis", "web")
KINDS = ("fact", "note", "decision", "preference")
SITES = ("docs.python.org", "en.wikipedia.org", "wiki.example.com", "developer.mozilla.org", None, None)
TOPICS = ("the staging database", "the sourdough starter", "the quarterly report", "the garden beds",
          "the release checklist", "the reading list", "the thesis chapter", "the backup drive")
VERBS = ("needs checking", "was moved", "is due", "changed", "works better", "should wait")
START = datetime(2024, 1, 1, tzinfo=UTC)


def sample_text(n: int, heron_every: int = 10) -> str:
    """Memory ``n``'s words (memory 0 is the oldest); long enough to show what a column cuts. One
    in ``heron_every`` mentions a heron."""
    topic, verb = TOPICS[n % len(TOPICS)], VERBS[(n // len(TOPICS)) % len(VERBS)]
    heron = " The grey heron was back by the pond this morning." if n % heron_every == 3 % heron_every else ""
    return (f"Memory {n}: {topic} {verb} — noted while going through the week's list, "
            f"with the details kept for later.{heron}")


def sample_records(count: int, projects: tuple[str, ...] = PROJECTS, heron_every: int = 10) -> list[dict[str, Any]]:
    """An export of ``count`` memories spread over ``projects`` (every seventh one global)."""
    records: list[dict[str, Any]] = [{"type": "header", "format": FORMAT, "version": FORMAT_VERSION}]
    for n in range(count):
        when = (START + timedelta(hours=n)).isoformat()
        site = SITES[n % len(SITES)]
        url = f"https://{site}/page/{n % 97}" if site else None
        source = {"kind": "note" if site else "cli", "tier": "first_party", "url": url, "title": None,
                  "tool": None if site else "cli", "batch_id": None, "created_at": when}
        records.append({
            "type": "memory", "ref": n + 1, "text": sample_text(n, heron_every), "kind": KINDS[n % len(KINDS)],
            "project": None if n % 7 == 6 else projects[n % len(projects)], "scope": None,
            "created_at": when, "valid_at": None, "valid_precision": "instant", "forgotten_at": None,
            "forgotten_by": None, "revision": 1, "predecessor": None, "superseded_by": None,
            "superseded_at": None, "group": None, "canonical": True, "pinned": False,
            "page": {"url": None, "key": None, "host": None, "set_by": None},
            "source": source, "pinned_from": None, "entities": [],
        })
    return records


def fill_vault(vault: Vault, count: int, projects: tuple[str, ...] = PROJECTS,
               heron_every: int = 10) -> dict[str, int]:
    """Write ``count`` generated memories into an empty vault (one transaction)."""
    return import_records(vault, sample_records(count, projects, heron_every)).counts
