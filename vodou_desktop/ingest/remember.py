"""Writing memory: every entry point (CLI, bridge, MCP, importers, captures) ends here.

Each call stamps its source through the one provenance writer and inserts the fact in the same
transaction, so a fact never exists without its source. Secrets are removed on the way in by the
vault's write path (``vault/secret_filter.py``); each call returns the new id as a ``Saved``, which
also says which secrets were removed, so every door can tell the person.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import journal_store as journal
from vodou_desktop.vault.facts import insert_document, insert_fact, split_document
from vodou_desktop.vault.secret_filter import removed_note, scrub
from vodou_desktop.vault.sources import stamp_source


class Saved(int):
    """A new memory's (or document's) id, and the kinds of the secrets removed from it before it was
    stored. An ``int``, so a caller that wants only the id uses it as one."""

    secrets_removed: tuple[str, ...]

    def __new__(cls, value: int, secrets_removed: Iterable[str] = ()) -> Saved:
        saved = super().__new__(cls, value)
        saved.secrets_removed = tuple(secrets_removed)
        return saved

    @property
    def note(self) -> str | None:
        """"1 secret removed before saving (GitHub Token)", or None."""
        return removed_note(self.secrets_removed)


def _saved(job: Callable[[Any, Change], int]) -> Callable[[Any, Change], Saved]:
    def run(conn: Any, change: Change) -> Saved:
        return Saved(job(conn, change), change.secrets_removed)

    return run


@dataclass(frozen=True)
class Origin:
    """Where a memory came from: passed to ``stamp_source`` unchanged."""

    kind: str
    tier: str = "first_party"
    url: str | None = None
    title: str | None = None
    tool: str | None = None
    batch_id: str | None = None


def remember(vault: Vault, text: str, origin: Origin, *, kind: str = "fact", project: str | None = None,
             scope: str | None = None, valid_at: str | None = None, valid_precision: str | None = None) -> Saved:
    """Store one fact with its source; returns the fact id. Fenced page text is stripped first."""
    text = strip_context(text)

    def job(conn, change):  # type: ignore[no-untyped-def]
        source_id = stamp_source(conn, change, kind=origin.kind, tier=origin.tier, url=origin.url,
                                 title=origin.title, tool=origin.tool, batch_id=origin.batch_id)
        return insert_fact(conn, change, text=text, source_id=source_id, kind=kind, project=project,
                           scope=scope, valid_at=valid_at, valid_precision=valid_precision)

    return vault.write(_saved(job))  # type: ignore[no-any-return]


def save_document(vault: Vault, text: str, origin: Origin, *, project: str | None = None) -> Saved:
    """Store a Library document (chunked) with its source; returns the document id. The text is
    scrubbed whole before it is cut into chunks (a cut inside a key would hide it from the filter)."""
    text = strip_context(text)
    split_document(text)  # refuses an empty or oversized text before anything is written

    def job(conn, change):  # type: ignore[no-untyped-def]
        source_id = stamp_source(conn, change, kind=origin.kind, tier=origin.tier, url=origin.url,
                                 title=origin.title, tool=origin.tool, batch_id=origin.batch_id)
        chunks = split_document(scrub(conn, change, text, origin.kind))
        return insert_document(conn, change, source_id=source_id, title=origin.title, chunks=chunks,
                               project=project)

    return vault.write(_saved(job))  # type: ignore[no-any-return]


def correct(vault: Vault, fact_id: int, text: str) -> Saved:
    """Correct a memory in place: it keeps its id (returned, with the secrets removed from the new
    text) and the old text stays in its history, never recalled. Journaled: ``vodou undo`` brings the
    old text back."""
    clean = strip_context(text)
    return vault.write(_saved(lambda conn, change: int(journal.correct(conn, change, fact_id, clean)["id"])))  # type: ignore[no-any-return]


def pin(vault: Vault, fact_id: int, pinned: bool = True) -> bool:
    """Pin (tier ``pinned``: it outranks everything) or unpin; returns whether anything changed."""
    return bool(vault.write(lambda conn, change: journal.pin(conn, change, [fact_id], pinned))["changed"])


def move(vault: Vault, fact_id: int, project: str | None, *, new_project: bool | None = None) -> int:
    """Move a memory to another project (``None``: global) as its next revision; it keeps its id
    (returned). The write entry lets ``project`` be new or not (``None``); the doors a person uses
    (``governance.edits.Edits.move``, ``vodou mem move``) ask for an existing one unless it is named
    as new on purpose (``new_project``)."""
    done = vault.write(lambda conn, change: journal.move(conn, change, [fact_id], project, new_project=new_project))
    return int(done["ids"][0])
