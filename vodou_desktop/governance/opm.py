"""Operator memory: a few standing notes the person keeps for their assistant (OPM-1..6, seed 001).

The policy is small on purpose, so it can be read in one sitting:

- Three categories with fixed salience and storage ceilings (current rows, expired ones included):
  standing initiative (salience 3, ceiling 1, expires after 30 days), preference (salience 2,
  ceiling 12, 365 days), pinned context (salience 1, ceiling 8, 90 days). Salience orders recall.
- Each memory has a stable id. A correction archives the exact prior revision (history row with
  successor and supersession time) and bumps the revision; the id never changes.
- Equivalent content (same text ignoring case, whitespace and punctuation) may live in only one
  slot of a category: adding or correcting to it elsewhere is refused. Confirming unchanged
  content reauthorizes it instead: new source ref, renewed expiry, last use cleared, same revision
  and the same original provenance.
- Expiry excludes a row from recall; it does not delete it. The owner still lists, corrects,
  reauthorizes or erases it.
- Recall (``vault.opm_store.recall_rows``) reads only current rows, filters expiry in SQL, orders
  by salience then recency, takes at most 8 and stamps last use on exactly those.
- Erase deletes a memory with its whole lineage; erase-all deletes every row of both tables;
  both scrub the freed pages and fold the WAL so the text is gone from the files. There is no
  forget (hide and undo) here: operator memory is a few notes the person edits by hand, so removing
  one is always the deliberate, final erase, in the same words as everywhere else.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.vault import Vault
from vodou_desktop.vault import opm_store as store
from vodou_desktop.vault.clock import to_iso
from vodou_desktop.vault.opm_store import HistoryRow, MemoryRow, canonical_key
from vodou_desktop.vault.writer import Change

Clock = Callable[[], datetime]

RECALL_LIMIT = 8
MAX_CONTENT_CHARS = 2_000
MAX_SOURCE_REF_CHARS = 300
DEFAULT_SOURCE_REF = "operator"
EXPORT_FORMAT = "vodou-operator-memory/1"


@dataclass(frozen=True)
class Category:
    name: str
    label: str
    plural: str
    salience: int
    ceiling: int
    expiry: timedelta


CATEGORIES: dict[str, Category] = {
    c.name: c
    for c in (
        Category("initiative", "standing initiative", "standing initiatives", 3, 1, timedelta(days=30)),
        Category("preference", "preference", "preferences", 2, 12, timedelta(days=365)),
        Category("pinned_context", "pinned context", "pinned contexts", 1, 8, timedelta(days=90)),
    )
}
_ALIASES = {
    "initiative": "initiative", "initiatives": "initiative", "standing initiative": "initiative",
    "standing_initiative": "initiative", "standing-initiative": "initiative",
    "preference": "preference", "preferences": "preference", "pref": "preference",
    "pinned_context": "pinned_context", "pinned context": "pinned_context", "pinned-context": "pinned_context",
    "pinned": "pinned_context", "pinned_contexts": "pinned_context", "pinned contexts": "pinned_context",
}


def category_of(name: str) -> Category:
    """The category named ``name`` (a few spellings accepted), or a clear refusal."""
    key = " ".join(str(name).strip().lower().split())
    if key not in _ALIASES:
        raise InvalidInput(f"unknown operator-memory category {name!r}; use preference, initiative or pinned_context")
    return CATEGORIES[_ALIASES[key]]


def clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("memory text must be a string")
    text = replace_lone_surrogates(content).replace("\x00", "").strip()
    if not text:
        raise InvalidInput("memory text is empty")
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"memory text is too long ({len(text)} characters; the limit is {MAX_CONTENT_CHARS})")
    if not canonical_key(text):
        raise InvalidInput("memory text has no words in it")
    return text


def clean_source_ref(source_ref: object | None) -> str:
    if source_ref is None:
        return DEFAULT_SOURCE_REF
    if not isinstance(source_ref, str):
        raise InvalidInput("source ref must be a string")
    ref = replace_lone_surrogates(source_ref).strip()
    if not ref:
        raise InvalidInput("source ref is empty")
    if len(ref) > MAX_SOURCE_REF_CHARS or any(ord(c) < 32 for c in ref):
        raise InvalidInput(f"source ref must be one line of at most {MAX_SOURCE_REF_CHARS} characters")
    return ref


def replace_lone_surrogates(text: str) -> str:
    """Lone surrogates cannot be stored as UTF-8: replace them rather than fail deep in SQLite."""
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


@dataclass(frozen=True)
class Outcome:
    """What an add or a correction did: ``added``, ``corrected`` or ``reauthorized``."""

    action: str
    memory: MemoryRow
    secrets_removed: tuple[str, ...] = ()  # kinds removed before saving (vault/secret_filter.py)


@dataclass(frozen=True)
class OwnedMemory:
    """A current row as its owner sees it: with its status and, on request, its lineage."""

    memory: MemoryRow
    status: str  # "active" or "expired"
    history: tuple[HistoryRow, ...] = ()

    def as_json(self, with_history: bool = False) -> dict[str, Any]:
        data = self.memory.as_json()
        data["status"] = self.status
        if with_history:
            data["history"] = [h.as_json() for h in self.history]
        return data


class OperatorMemory:
    """The lifecycle service. ``clock`` returns an aware ``datetime`` (tests inject one)."""

    def __init__(self, vault: Vault, *, clock: Clock | None = None,
                 expiry: Mapping[str, timedelta] | None = None) -> None:
        self.vault = vault
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.expiry = {name: c.expiry for name, c in CATEGORIES.items()}
        self.expiry.update({category_of(name).name: delta for name, delta in (expiry or {}).items()})

    def now(self) -> str:
        return to_iso(self.clock())

    def _expires_at(self, category: str, moment: datetime) -> str:
        return to_iso(moment + self.expiry[category])

    def status(self, row: MemoryRow, now: str | None = None) -> str:
        now = now or self.now()
        return "expired" if row.expires_at is not None and row.expires_at <= now else "active"

    # -- writes --------------------------------------------------------------------------------
    def add(self, category: str, content: str, source_ref: str | None = None) -> Outcome:
        """Store a new memory; unchanged content already there is reauthorized instead."""
        cat = category_of(category)
        text, ref = clean_content(content), clean_source_ref(source_ref)
        moment = self.clock()
        key, now, expires = canonical_key(text), to_iso(moment), self._expires_at(cat.name, moment)

        def job(conn: apsw.Connection, change: Change) -> Outcome:
            same = store.find_canonical(conn, cat.name, key)
            if same is not None and same.content == text:
                store.reauthorize_row(conn, change, same.id, source_ref=ref, now=now, expires_at=expires)
                return Outcome("reauthorized", _require(conn, same.id))
            if same is not None:
                raise _duplicate(cat, same)
            _check_ceiling(conn, cat)
            row = MemoryRow(
                id=_new_id(conn), category=cat.name, content=text, canonical_key=key, salience=cat.salience,
                revision=1, predecessor=None, source_ref=ref, original_source_ref=ref, reauthorized_at=None,
                expires_at=expires, last_used_at=None, created_at=now, updated_at=now,
            )
            store.insert_row(conn, change, row)
            return Outcome("added", _require(conn, row.id), tuple(change.secrets_removed))

        return self.vault.write(job)  # type: ignore[no-any-return]

    def correct(self, memory_id: str, content: str, source_ref: str | None = None) -> Outcome:
        """Replace the content as a new revision of the same id; the prior revision goes to history."""
        text, ref = clean_content(content), clean_source_ref(source_ref)
        moment = self.clock()
        key, now = canonical_key(text), to_iso(moment)

        def job(conn: apsw.Connection, change: Change) -> Outcome:
            old = _require(conn, memory_id)
            expires = self._expires_at(old.category, moment)
            if old.content == text:
                store.reauthorize_row(conn, change, old.id, source_ref=ref, now=now, expires_at=expires)
                return Outcome("reauthorized", _require(conn, old.id))
            same = store.find_canonical(conn, old.category, key)
            if same is not None and same.id != old.id:
                raise _duplicate(CATEGORIES[old.category], same)
            store.archive_and_revise(conn, change, old, content=text, canonical_key=key, source_ref=ref,
                                     now=now, expires_at=expires)
            return Outcome("corrected", _require(conn, old.id), tuple(change.secrets_removed))

        return self.vault.write(job)  # type: ignore[no-any-return]

    def reauthorize(self, memory_id: str, source_ref: str | None = None) -> MemoryRow:
        """Confirm unchanged content: new source ref, renewed expiry, last use cleared, no new revision."""
        ref, moment = clean_source_ref(source_ref), self.clock()

        def job(conn: apsw.Connection, change: Change) -> MemoryRow:
            row = _require(conn, memory_id)
            store.reauthorize_row(conn, change, row.id, source_ref=ref, now=to_iso(moment),
                                  expires_at=self._expires_at(row.category, moment))
            return _require(conn, row.id)

        return self.vault.write(job)  # type: ignore[no-any-return]

    def erase(self, memory_id: str) -> dict[str, Any]:
        """Delete one memory and every revision of its lineage, for good."""

        def job(conn: apsw.Connection, change: Change) -> tuple[int, int]:
            return store.delete_lineage(conn, change, _require(conn, memory_id).id)

        current, history = self.vault.write(job)
        self.vault.checkpoint()
        return {"id": memory_id, "current": current, "history": history}

    def erase_all(self) -> dict[str, Any]:
        """Delete every current and historical row, for good."""

        current, history = self.vault.write(store.delete_all)
        self.vault.checkpoint()
        return {"current": current, "history": history}

    # -- reads ---------------------------------------------------------------------------------
    def get(self, memory_id: str) -> OwnedMemory:
        def read(conn: apsw.Connection) -> tuple[MemoryRow, list[HistoryRow]]:
            row = _require(conn, memory_id)
            return row, store.history_rows(conn, row.id)

        row, history = self.vault.read(read)
        return OwnedMemory(row, self.status(row), tuple(history))

    def list_memories(self, include_history: bool = False) -> list[OwnedMemory]:
        """Every current row for its owner, expired ones too, each with its status."""
        now = self.now()

        def read(conn: apsw.Connection) -> list[OwnedMemory]:
            history = _by_memory(store.history_rows(conn)) if include_history else {}
            return [OwnedMemory(r, self.status(r, now), tuple(history.get(r.id, ()))) for r in store.list_rows(conn)]

        return self.vault.read(read)

    def recall(self, limit: int = RECALL_LIMIT) -> list[MemoryRow]:
        """What the prompt may see: unexpired current rows, at most 8, marked as used."""
        limit = max(0, min(int(limit), RECALL_LIMIT))
        now = self.now()
        return self.vault.write(lambda conn, change: store.recall_rows(conn, change, now, limit))  # type: ignore[no-any-return]

    def export(self) -> dict[str, Any]:
        """Current and superseded rows from ONE read transaction, as a JSON-ready dict."""
        now = self.now()
        rows, history = self.vault.read(store.export_snapshot)
        return {
            "format": EXPORT_FORMAT,
            "exported_at": now,
            "memories": [OwnedMemory(r, self.status(r, now)).as_json() for r in rows],
            "history": [h.as_json() for h in history],
        }


def _require(conn: apsw.Connection, memory_id: str) -> MemoryRow:
    row = store.get_row(conn, str(memory_id).strip())
    if row is None:
        raise NotFound(f"no operator memory with id {memory_id!r}")
    return row


def _duplicate(cat: Category, existing: MemoryRow) -> Conflict:
    return Conflict(f"an equivalent {cat.label} is already stored as {existing.id}; correct or reauthorize that one")


def _check_ceiling(conn: apsw.Connection, cat: Category) -> None:
    held = store.count_in_category(conn, cat.name)
    if held >= cat.ceiling:
        raise Conflict(
            f"operator memory already holds {held} {cat.plural if held != 1 else cat.label} (the ceiling is "
            f"{cat.ceiling}); correct or erase one first"
        )


def _new_id(conn: apsw.Connection) -> str:
    while True:
        candidate = "opm-" + secrets.token_hex(5)
        if store.get_row(conn, candidate) is None:
            return candidate


def _by_memory(history: list[HistoryRow]) -> dict[str, list[HistoryRow]]:
    out: dict[str, list[HistoryRow]] = {}
    for h in history:
        out.setdefault(h.memory_id, []).append(h)
    return out
