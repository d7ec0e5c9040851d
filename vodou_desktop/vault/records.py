"""Plain records read from the vault, with their stable JSON shape for the CLI and the bridge."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

import apsw

# The kind of a memory that is a person's message kept whole (an imported or captured conversation's).
CONVERSATION = "conversation"


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    kind: str
    project: str | None
    scope: str | None
    tier: str
    source_id: int
    source_kind: str
    source_url: str | None
    source_host: str | None
    title: str | None
    tool: str | None
    batch_id: str | None
    created_at: str
    valid_at: str | None
    valid_precision: str | None
    invalid_at: str | None
    invalidated_by: str | None
    superseded_by: int | None
    predecessor_id: int | None
    revision: int
    fact_group: int | None
    is_canonical: bool
    page_url: str | None
    page_key: str | None
    page_host: str | None
    page_set_by: str | None
    document_id: int | None
    has_embedding: bool = False
    source_event_id: int | None = None  # the input of its batch it came from: a conversation's message
    confidence: float | None = None  # how sure its extraction was (None: written as typed)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def forgotten(self) -> bool:
        return self.invalid_at is not None

    @property
    def site(self) -> str | None:
        """The site it came from, for display: its source's host, else its page's."""
        return self.source_host or self.page_host

    @property
    def link(self) -> str | None:
        """The page to open for it: the page it is linked to, else its source's URL."""
        return self.page_url or self.source_url

    @property
    def from_page(self) -> bool:
        """Its text came from a web page (a page kind, or a source with a URL): data, never instructions."""
        from vodou_desktop.vault.sources import PAGE_KINDS

        return self.source_kind in PAGE_KINDS or bool(self.source_url)

    @property
    def event_time(self) -> str:
        """When the fact was true/said: ``valid_at`` when known, else ingest time."""
        return self.valid_at or self.created_at

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        data["valid_at"] = self.event_time
        data.update(self.extra)
        return data


# Column list that produces a Fact (c = chunks, s = memory_sources), in field order.
FACT_COLUMNS = (
    "c.id, c.text, c.kind, c.project_id, c.scope, s.tier, c.source_id, s.kind, s.source_url,"
    " s.source_host, s.title, s.tool, s.batch_id, c.created_at, c.valid_at, c.valid_precision,"
    " c.invalid_at, c.invalidated_by, c.superseded_by, c.predecessor_id, c.revision, c.fact_group,"
    " c.is_canonical, c.page_url, c.page_key, c.page_host, c.page_set_by, c.document_id,"
    " c.embedding IS NOT NULL, c.source_event_id, c.confidence"
)
_N_FACT = len([f for f in fields(Fact) if f.name != "extra"])


def fact_from_row(row: apsw.SQLiteValues) -> Fact:
    values: list[Any] = list(row[:_N_FACT])
    values[22] = bool(values[22])
    values[28] = bool(values[28])
    return Fact(*values)


@dataclass(frozen=True)
class SourceMessage:
    """The message a memory came from (its ``source_events`` row), with its text where the vault keeps it:
    the person's message is kept whole as conversation memory (``turn_ids``); an assistant's reply is not
    kept, and ``accepted_in`` is then the person's message that accepted it."""

    event_id: int
    entry_id: str
    role: str | None  # "user", "assistant", or None (a capture: the person's)
    at: str | None
    tool: str | None
    batch_id: str
    text: str | None
    turn_ids: tuple[int, ...] = ()
    accepted_in: str | None = None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["turn_ids"] = list(self.turn_ids)
        return data


@dataclass(frozen=True)
class Document:
    id: int
    title: str | None
    page_url: str | None
    page_key: str | None
    page_host: str | None
    project: str | None
    tier: str
    source_kind: str
    created_at: str
    chunk_count: int
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # what a write adds (secrets_removed)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(data.pop("extra"))
        return data


def document_from_row(row: apsw.SQLiteValues) -> Document:
    values: list[Any] = list(row)
    return Document(*values)
