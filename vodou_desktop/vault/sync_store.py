"""SQL for sync (docs/sync.md): reading the journal into change records, and applying records.

A record is ``{"e": entity, "k": key, "f": field, "h": stamp, "v": value}``. Entities: ``fact`` (key: the
memory's ``sync_id``), ``doc`` (a Library document's ``sync_id``), ``op`` (an operation's id), ``site`` (a
host), ``opm`` (an operator memory's id). Fields: ``create`` (a row's unchanging part, once), ``forget``,
``supersede``, ``pin``, ``page``, ``undo``, ``target``, ``mode``, ``body``, and ``erase``. Records are checked
before they come here (``sync.validate``). Applying is idempotent and commutative:

- a ``create`` inserts a row once (union); ``forget`` is the set of operations that cover a row (union:
  the row is hidden while any of them hides it, ``retraction.settle_hidden``); every other field is
  last-writer-wins by its stamp (compared as numbers, ``hlc.key``), kept per field in ``sync_clock``; a
  local change not yet exported wins over an older stamp;
- ``erase`` leaves a tombstone (no text) that beats every other record of that key, for ever, and
  takes the memory's whole lineage with it, here and wherever a revision of it arrives later;
- a record that refers to a row not here yet waits in ``sync_parked`` and is retried after each file;
- after a file, ``normalize`` derives what follows from the merged state, the same on every device:
  a forget covers the revisions made concurrently with it, concurrent revisions of one memory leave one
  visible (the one its predecessor's last-writer-wins successor names), groups re-elect canonicals.

The triggers of migrations ``0005_sync_ids`` and ``0006_sync_operations`` fill ``sync_journal`` while
``sync_capture`` is '1'; the applier sets it to '0' for its own transaction so applied changes are never sent
back as this device's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import apsw

from vodou_desktop.vault import retraction as r
from vodou_desktop.vault.connection import batched, marks, scalar
from vodou_desktop.vault.facts import insert_document, insert_fact
from vodou_desktop.vault.hlc import ZERO, later, ms_of, stamp_ms
from vodou_desktop.vault.opm_store import MEMORY_COLUMNS
from vodou_desktop.vault.revisions import settle_heads
from vodou_desktop.vault.schema import SYNC_CAPTURE_SETTING
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

Record = dict[str, Any]
ENTITIES = ("fact", "doc", "op", "site", "opm")
FIELDS = {"fact": ("create", "forget", "supersede", "pin", "page", "erase"), "doc": ("create", "forget", "erase"),
          "op": ("create", "undo", "target"), "site": ("mode",), "opm": ("body", "erase")}
UNION_FIELDS = frozenset({"create", "forget"})  # merged as sets; every other field is last-writer-wins
TABLES = {"fact": "chunks", "doc": "documents"}
OPM_BODY = [c.strip() for c in MEMORY_COLUMNS.split(",") if c.strip() != "last_used_at"]
SOURCE_COLS = "kind, tier, source_url, title, tool, batch_id, created_at"


# -- capture -------------------------------------------------------------------------------------------

def set_capture(conn: apsw.Connection, change: Change, on: bool) -> None:
    set_setting(conn, change, SYNC_CAPTURE_SETTING, "1" if on else "0")


def capturing(conn: apsw.Connection) -> bool:
    return get_setting(conn, SYNC_CAPTURE_SETTING) == "1"


def journal_everything(conn: apsw.Connection) -> int:
    """Put every row that syncs into the journal, as if written now (a device's first sync)."""
    now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    facts = "FROM chunks WHERE document_id IS NULL"
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'fact', sync_id, 'create', {now} {facts}"
                 " ORDER BY id")
    for fld, changed in (("forget", "invalid_at IS NOT NULL"), ("supersede", "superseded_by IS NOT NULL"),
                         ("pin", "pinned_from IS NOT NULL")):  # a field still at its default travels in create
        conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'fact', sync_id, '{fld}', {now}"
                     f" {facts} AND {changed} ORDER BY id")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'doc', sync_id, 'create', {now}"
                 " FROM documents ORDER BY id")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'doc', sync_id, 'forget', {now}"
                 " FROM documents WHERE invalid_at IS NOT NULL ORDER BY id")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'op', id, 'create', {now} FROM operations"
                 " ORDER BY created_at")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'op', id, 'undo', {now} FROM operations"
                 " WHERE undone_at IS NOT NULL")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'site', host, 'mode', {now} FROM site_rules")
    conn.execute(f"INSERT INTO sync_journal(entity, key, field, at) SELECT 'opm', id, 'body', {now}"
                 " FROM operator_memory")
    return int(scalar(conn, "SELECT count(*) FROM sync_journal"))


def pending_journal(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT count(*) FROM sync_journal"))


def take_journal(conn: apsw.Connection, stamp: Callable[[str], str]) -> tuple[list[Record], int]:
    """The journal as change records (current values; ``stamp(at)`` gives each its clock stamp), and the
    last journal id read. Later entries of one field fold into one record."""
    rows = list(conn.execute(
        "SELECT entity, key, field, max(at), min(id), max(id) FROM sync_journal GROUP BY entity, key, field"
        " ORDER BY min(id)"))
    if not rows:
        return [], 0
    last = max(int(row[5]) for row in rows)
    erased = {(e, k) for e, k, f, *_ in rows if f == "erase"}
    records: list[Record] = []
    for entity, key, fld, at, _first, _last in rows:
        if key is None:
            continue
        if fld != "erase" and (entity, key) in erased and not exists(conn, entity, key):
            continue
        value = read_value(conn, entity, key, fld) if fld != "erase" else None
        if value is _GONE:
            continue
        records.append({"e": entity, "k": key, "f": fld, "h": stamp(at), "v": value})
    return records, last


def drop_journal(conn: apsw.Connection, through: int) -> None:
    conn.execute("DELETE FROM sync_journal WHERE id <= ?", (through,))


_GONE = object()
# a fact's fields as ``create`` leaves them (``page`` is in ``create`` itself)
_DEFAULTS: dict[str, Any] = {"forget": {"at": None, "by": None, "covers": []},
                             "supersede": {"by": None, "at": None}, "pin": {"pinned": False, "at": None}}


def exists(conn: apsw.Connection, entity: str, key: str) -> bool:
    sql = {"fact": "SELECT 1 FROM chunks WHERE sync_id = ?", "doc": "SELECT 1 FROM documents WHERE sync_id = ?",
           "op": "SELECT 1 FROM operations WHERE id = ?",
           "site": "SELECT 1 FROM site_rules WHERE host = ?", "opm": "SELECT 1 FROM operator_memory WHERE id = ?"}
    return conn.execute(sql[entity], (key,)).fetchone() is not None


def _source(conn: apsw.Connection, source_id: int) -> dict[str, Any]:
    row = conn.execute(f"SELECT {SOURCE_COLS} FROM memory_sources WHERE id = ?", (source_id,)).fetchone()
    assert row is not None, f"no source {source_id}"
    return dict(zip(("kind", "tier", "url", "title", "tool", "batch_id", "created_at"), row, strict=True))


# Operations whose target (and, for a correction, ``replaces`` in the detail) is a memory's row id, which
# differs between devices: they travel as the memory's global id and are translated back on arrival.
FACT_TARGET_KINDS = (r.FORGET_FACT_KIND, r.CORRECT_FACT_KIND)
DOC_TARGET_KINDS = (r.FORGET_DOCUMENT_KIND,)  # a Library document's row id: sent as its global id
ROW_TARGET_KINDS = FACT_TARGET_KINDS + DOC_TARGET_KINDS


def _sync_id_of(conn: apsw.Connection, value: Any) -> str | None:
    if value is None:
        return None
    found = scalar(conn, "SELECT sync_id FROM chunks WHERE id = ? AND document_id IS NULL", (int(value),))
    return None if found is None else str(found)


def _row_id_of(conn: apsw.Connection, value: Any) -> str | None:
    if value is None:
        return None
    found = scalar(conn, "SELECT id FROM chunks WHERE sync_id = ? AND document_id IS NULL", (str(value),))
    return None if found is None else str(found)


def _doc_sync_id_of(conn: apsw.Connection, value: Any) -> str | None:
    if value is None:
        return None
    found = scalar(conn, "SELECT sync_id FROM documents WHERE id = ?", (int(value),))
    return None if found is None else str(found)


def _doc_row_id_of(conn: apsw.Connection, value: Any) -> str | None:
    if value is None:
        return None
    found = scalar(conn, "SELECT id FROM documents WHERE sync_id = ?", (str(value),))
    return None if found is None else str(found)


def _op_fact_ids(conn: apsw.Connection, kind: str, target: Any, detail: str | None,
                 translate: Callable[[apsw.Connection, Any], str | None]) -> tuple[str | None, str | None]:
    """``target`` and ``detail`` of an operation with its memory ids translated (None where a memory is not here)."""
    if kind in DOC_TARGET_KINDS:
        to_doc = _doc_sync_id_of if translate is _sync_id_of else _doc_row_id_of
        return to_doc(conn, target), detail
    target = translate(conn, target)
    if kind == r.CORRECT_FACT_KIND and detail:
        parsed = json.loads(detail)
        if "replaces" in parsed:
            replaces = translate(conn, parsed["replaces"])
            parsed["replaces"] = None if replaces is None else (
                int(replaces) if translate is _row_id_of else replaces)
            detail = json.dumps(parsed, sort_keys=True)
    return target, detail


def read_value(conn: apsw.Connection, entity: str, key: str, fld: str) -> Any:
    """The current value of one field, as sent in a change record (``_GONE`` when the row is not here)."""
    if entity == "fact":
        row = conn.execute(
            "SELECT c.text, c.kind, c.project_id, c.scope, c.created_at, c.valid_at, c.valid_precision, c.revision,"
            " (SELECT p.sync_id FROM chunks p WHERE p.id = c.predecessor_id), coalesce(c.pinned_from, c.source_id),"
            " c.page_url, c.page_key, c.page_host, c.page_set_by, c.invalid_at, c.invalidated_by,"
            " (SELECT w.sync_id FROM chunks w WHERE w.id = c.superseded_by), c.superseded_at, c.pinned_from,"
            " c.source_id FROM chunks c WHERE c.sync_id = ? AND c.document_id IS NULL", (key,)).fetchone()
        if row is None:
            return _GONE
        page = {"url": row[10], "key": row[11], "host": row[12], "set_by": row[13]}
        if fld == "create":
            return {"text": row[0], "kind": row[1], "project": row[2], "scope": row[3], "created_at": row[4],
                    "valid_at": row[5], "valid_precision": row[6], "revision": row[7], "predecessor": row[8],
                    "source": _source(conn, row[9]), "page": page}
        if fld == "forget":
            fact_id = int(scalar(conn, "SELECT id FROM chunks WHERE sync_id = ?", (key,)))
            return {"at": row[14], "by": row[15], "covers": r.covers_of(conn, "chunks", fact_id)}
        if fld == "supersede":
            return {"by": row[16], "at": row[17]}
        if fld == "pin":
            return {"pinned": row[18] is not None,
                    "at": _source(conn, row[19])["created_at"] if row[18] is not None else None}
        if fld == "page":
            return page
    if entity == "op":
        row = conn.execute("SELECT kind, target, detail, created_at, undone_at FROM operations WHERE id = ?",
                           (key,)).fetchone()
        if row is None:
            return _GONE
        kind, target, detail = row[0], row[1], row[2]
        if kind in ROW_TARGET_KINDS:  # a row id here: sent as the memory's (or document's) global id
            target, detail = _op_fact_ids(conn, kind, target, detail, _sync_id_of)
        if fld == "create":
            return {"kind": kind, "target": target, "detail": detail, "created_at": row[3]}
        return row[4] if fld == "undo" else target
    if entity == "doc":
        return _read_document(conn, key, fld)
    if entity == "site":
        row = conn.execute("SELECT mode, created_at, updated_at FROM site_rules WHERE host = ?", (key,)).fetchone()
        return None if row is None else {"mode": row[0], "created_at": row[1], "updated_at": row[2]}
    if entity == "opm":
        cols = ", ".join(OPM_BODY)
        row = conn.execute(f"SELECT {cols} FROM operator_memory WHERE id = ?", (key,)).fetchone()
        if row is None:
            return _GONE
        history = [list(h) for h in conn.execute(
            "SELECT category, revision, content, source_ref, successor_revision, superseded_at"
            " FROM operator_memory_history WHERE memory_id = ? ORDER BY revision", (key,))]
        return {**dict(zip(OPM_BODY, row, strict=True)), "history": history}
    raise ValueError(f"unknown sync field {entity}.{fld}")


def _read_document(conn: apsw.Connection, key: str, fld: str) -> Any:
    row = conn.execute("SELECT id, source_id, title, project_id, created_at, invalid_at, invalidated_by FROM documents"
                       " WHERE sync_id = ?", (key,)).fetchone()
    if row is None:
        return _GONE
    if fld == "create":
        chunks = [str(t[0]) for t in conn.execute("SELECT text FROM chunks WHERE document_id = ? ORDER BY seq, id",
                                                  (row[0],))]
        return {"title": row[2], "project": row[3], "created_at": row[4], "source": _source(conn, row[1]),
                "chunks": chunks}
    if fld == "forget":
        return {"at": row[5], "by": row[6], "covers": r.covers_of(conn, "documents", int(row[0]))}
    raise ValueError(f"unknown sync field doc.{fld}")


def sent_targets(conn: apsw.Connection) -> dict[str, str]:
    """Every operation's target as its change records carry it now (after a redaction, the redacted form).
    Operations that name a memory are left out: they carry its global id, which a redaction never changes,
    and their row id here must never replace it."""
    kinds = ",".join("?" * len(ROW_TARGET_KINDS))
    return {str(k): t for k, t in conn.execute(
        f"SELECT id, target FROM operations WHERE kind NOT IN ({kinds})", ROW_TARGET_KINDS)}


# -- clocks and tombstones -----------------------------------------------------------------------------

def clock_of(conn: apsw.Connection, entity: str, key: str, fld: str) -> str | None:
    value = scalar(conn, "SELECT hlc FROM sync_clock WHERE entity = ? AND key = ? AND field = ?", (entity, key, fld))
    return None if value is None else str(value)


def set_clock(conn: apsw.Connection, entity: str, key: str, fld: str, stamp: str) -> None:
    """Keep the later of the stamp held and ``stamp`` (compared as numbers, never as text)."""
    if later(stamp, clock_of(conn, entity, key, fld)):
        conn.execute("INSERT INTO sync_clock(entity, key, field, hlc) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE"
                     " SET hlc = excluded.hlc", (entity, key, fld, stamp))


def tombstoned(conn: apsw.Connection, entity: str, key: str) -> bool:
    return conn.execute("SELECT 1 FROM sync_tombstones WHERE entity = ? AND key = ?", (entity, key)).fetchone() \
        is not None


def tombstones(conn: apsw.Connection) -> set[tuple[str, str]]:
    return {(str(e), str(k)) for e, k in conn.execute("SELECT entity, key FROM sync_tombstones")}


def add_tombstone(conn: apsw.Connection, entity: str, key: str, stamp: str) -> bool:
    """Record that ``key`` was erased; forget every trace of it kept for sync. True when it is new."""
    conn.execute("INSERT OR IGNORE INTO sync_tombstones(entity, key, hlc) VALUES (?, ?, ?)", (entity, key, stamp))
    new = conn.changes() > 0
    conn.execute("DELETE FROM sync_clock WHERE entity = ? AND key = ?", (entity, key))
    conn.execute("DELETE FROM sync_parked WHERE entity = ? AND key = ?", (entity, key))
    conn.execute("DELETE FROM sync_waiting WHERE entity = ? AND key = ?", (entity, key))
    return new


# -- applying ------------------------------------------------------------------------------------------

@dataclass
class Applied:
    """What applying some records did (for the caller's report and its next steps)."""

    applied: int = 0
    stale: int = 0
    parked: int = 0
    erased: set[tuple[str, str]] = field(default_factory=set)  # tombstones new here
    facts: set[int] = field(default_factory=set)  # local ids of facts touched
    documents: set[int] = field(default_factory=set)  # local ids of documents touched
    opm: bool = False
    redacted: bool = False  # an operation's target was redacted here (an erased host)
    max_stamp: str = ""


class Applier:
    """Applies records inside the caller's write transaction (capture off for its duration)."""

    def __init__(self, conn: apsw.Connection, change: Change, ceilings: dict[str, int]) -> None:
        self.conn = conn
        self.change = change
        self.ceilings = ceilings
        self.out = Applied()
        self.created: set[int] = set()  # facts inserted by this apply

    def run(self, records: Iterable[Record]) -> Applied:
        was = capturing(self.conn)
        set_capture(self.conn, self.change, False)
        try:
            for record in records:
                self._one(record, park=True)
            self._retry_parked()
            self._erased_hosts_of(self.created)
            r.settle_hidden(self.conn, self.change, "documents", self.out.documents)
            normalize(self.conn, self.change, self.out.facts)
            if self.out.opm:
                enforce_ceilings(self.conn, self.change, self.ceilings)
        finally:
            set_capture(self.conn, self.change, was)
        return self.out

    def _retry_parked(self) -> None:
        while True:
            rows = list(self.conn.execute("SELECT id, record FROM sync_parked ORDER BY id"))
            progress = False
            for row_id, text in rows:
                if self.conn.execute("SELECT 1 FROM sync_parked WHERE id = ?", (row_id,)).fetchone() is None:
                    continue  # purged by an erase meanwhile
                self.conn.execute("DELETE FROM sync_parked WHERE id = ?", (row_id,))
                self.out.parked -= 1
                if self._one(json.loads(text), park=True) != "parked":
                    progress = True
            if not progress:
                return

    def _one(self, rec: Record, *, park: bool) -> str:
        entity, key, fld, stamp = rec["e"], rec["k"], rec["f"], rec["h"]
        if later(stamp, self.out.max_stamp or None):
            self.out.max_stamp = stamp
        if tombstoned(self.conn, entity, key):
            return "stale"
        if fld == "erase":
            self._erase(entity, key, stamp)
            self.out.applied += 1
            return "applied"
        if fld not in UNION_FIELDS and not self._newer(entity, key, fld, stamp):
            self.out.stale += 1
            return "stale"
        handler = getattr(self, f"_{entity}_{fld}")
        outcome = handler(key, rec["v"], stamp)
        if outcome == "parked":
            if park:
                self.conn.execute("INSERT INTO sync_parked(entity, key, record) VALUES (?, ?, ?)",
                                  (entity, key, json.dumps(rec, sort_keys=True)))
                self.out.parked += 1
            return "parked"
        if fld not in UNION_FIELDS and outcome == "applied":
            set_clock(self.conn, entity, key, fld, stamp)
        self.out.applied += outcome == "applied"
        return str(outcome)

    def _newer(self, entity: str, key: str, fld: str, stamp: str) -> bool:
        """Does ``stamp`` win over what this device holds for the field: the stamp it applied or sent, and a
        change made here that is not sent yet (it was made after everything this device had seen, so it
        wins unless the other device's change is later still; then it is dropped from the journal)?"""
        known = clock_of(self.conn, entity, key, fld)
        if known is not None and not later(stamp, known):
            return False
        local = scalar(self.conn, "SELECT max(at) FROM sync_journal WHERE entity = ? AND key = ? AND field = ?",
                       (entity, key, fld))
        if local is not None:
            if ms_of(str(local)) >= stamp_ms(stamp):
                return False
            self.conn.execute("DELETE FROM sync_journal WHERE entity = ? AND key = ? AND field = ?",
                              (entity, key, fld))
        return True

    # -- facts
    def _fact_id(self, key: str | None) -> int | None:
        if key is None:
            return None
        value = scalar(self.conn, "SELECT id FROM chunks WHERE sync_id = ? AND document_id IS NULL", (key,))
        return None if value is None else int(value)

    def _fact_create(self, key: str, v: dict[str, Any], stamp: str) -> str:
        if self._fact_id(key) is not None:
            return "stale"
        predecessor = None
        if v["predecessor"] is not None:
            if tombstoned(self.conn, "fact", v["predecessor"]):
                self._tomb("fact", key, stamp)  # a revision of an erased memory is erased too
                return "applied"
            predecessor = self._fact_id(v["predecessor"])
            if predecessor is None:
                return "parked"
        source_id = self._stamp(v["source"])
        fact_id = insert_fact(self.conn, self.change, text=v["text"], source_id=source_id, kind=v["kind"],
                              project=v["project"], scope=v["scope"], valid_at=v["valid_at"],
                              valid_precision=v["valid_precision"], created_at=v["created_at"],
                              predecessor_id=predecessor, revision=int(v["revision"]), infer_thread=False,
                              sync_id=key)
        self._set_page(fact_id, v["page"])
        self.out.facts.add(fact_id)
        self.created.add(fact_id)
        return "applied"

    def _stamp(self, src: dict[str, Any]) -> int:
        return stamp_source(self.conn, self.change, kind=src["kind"], tier=src["tier"], url=src["url"],
                            title=src["title"], tool=src["tool"], batch_id=src["batch_id"],
                            created_at=src["created_at"])

    def _set_page(self, fact_id: int, page: dict[str, Any]) -> None:
        values = (page["url"], page["key"], page["host"], page["set_by"])
        self.conn.execute("UPDATE chunks SET page_url = ?, page_key = ?, page_host = ?, page_set_by = ? WHERE id = ?"
                          " AND (page_url IS NOT ? OR page_key IS NOT ? OR page_host IS NOT ? OR page_set_by IS NOT ?)",
                          (*values, fact_id, *values))

    def _covers(self, table: str, row_id: int, v: dict[str, Any]) -> str:
        """Add the operations that cover a row (a set that only grows; the row is hidden while one of them
        hides it). An operation not here yet: the record waits for it."""
        covers = [(str(op), str(at)) for op, at in v.get("covers") or []]
        if v.get("by") is not None and v.get("at") is not None:  # what every release has sent
            covers.append((str(v["by"]), str(v["at"])))
        if any(not exists(self.conn, "op", op) and not tombstoned(self.conn, "op", op) for op, _ in covers):
            return "parked"  # the operation's own record comes with it, maybe in a later file
        for op, at in covers:
            if exists(self.conn, "op", op):
                r.add_cover(self.conn, table, op, row_id, at)
        return "applied"

    def _fact_forget(self, key: str, v: dict[str, Any], stamp: str) -> str:
        fact_id = self._fact_id(key)
        if fact_id is None:
            return "parked"
        outcome = self._covers("chunks", fact_id, v)
        if outcome == "applied":
            self.out.facts.add(fact_id)
        return outcome

    def _fact_supersede(self, key: str, v: dict[str, Any], stamp: str) -> str:
        fact_id = self._fact_id(key)
        if fact_id is None:
            return "parked"
        winner = None
        if v["by"] is not None and not tombstoned(self.conn, "fact", v["by"]):
            winner = self._fact_id(v["by"])
            if winner is None:
                return "parked"
        self.conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?",
                          (winner, v["at"] if winner is not None else None, fact_id))
        self.out.facts.update({fact_id} | ({winner} if winner else set()))
        return "applied"

    def _fact_pin(self, key: str, v: dict[str, Any], stamp: str) -> str:
        fact_id = self._fact_id(key)
        if fact_id is None:
            return "parked"
        row = self.conn.execute("SELECT source_id, pinned_from FROM chunks WHERE id = ?", (fact_id,)).fetchone()
        assert row is not None
        source_id, pinned_from = row
        if bool(v["pinned"]) == (pinned_from is not None):
            return "applied"
        if v["pinned"]:
            src = _source(self.conn, source_id)
            copy = stamp_source(self.conn, self.change, kind=src["kind"], tier="pinned", url=src["url"],
                                title=src["title"], tool=src["tool"], batch_id=src["batch_id"], created_at=v["at"])
            self.conn.execute("UPDATE chunks SET source_id = ?, pinned_from = ? WHERE id = ?",
                              (copy, source_id, fact_id))
        else:
            self.conn.execute("UPDATE chunks SET source_id = ?, pinned_from = NULL WHERE id = ?",
                              (pinned_from, fact_id))
            self.conn.execute("DELETE FROM memory_sources WHERE id = ? AND NOT EXISTS"
                              " (SELECT 1 FROM chunks WHERE source_id = memory_sources.id)", (source_id,))
        self.out.facts.add(fact_id)
        return "applied"

    def _fact_page(self, key: str, v: dict[str, Any], stamp: str) -> str:
        fact_id = self._fact_id(key)
        if fact_id is None:
            return "parked"
        self._set_page(fact_id, v)
        self.out.facts.add(fact_id)
        return "applied"

    # -- Library documents
    def _doc_id(self, key: str) -> int | None:
        value = scalar(self.conn, "SELECT id FROM documents WHERE sync_id = ?", (key,))
        return None if value is None else int(value)

    def _doc_create(self, key: str, v: dict[str, Any], stamp: str) -> str:
        if self._doc_id(key) is not None:
            return "stale"
        doc_id = insert_document(self.conn, self.change, source_id=self._stamp(v["source"]), title=v["title"],
                                 chunks=list(v["chunks"]), project=v["project"], created_at=v["created_at"],
                                 sync_id=key)
        self.out.documents.add(doc_id)
        return "applied"

    def _doc_forget(self, key: str, v: dict[str, Any], stamp: str) -> str:
        doc_id = self._doc_id(key)
        if doc_id is None:
            return "parked"
        outcome = self._covers("documents", doc_id, v)
        if outcome == "applied":
            self.out.documents.add(doc_id)
        return outcome

    # -- operations
    def _op_create(self, key: str, v: dict[str, Any], stamp: str) -> str:
        target, detail = v["target"], v["detail"]
        if exists(self.conn, "op", key) or _stale_op(self.conn, v):
            return "stale"  # its memory was erased: so is everything this operation could hide or undo
        if v["kind"] in FACT_TARGET_KINDS:
            wanted = [target] + ([json.loads(detail).get("replaces")] if v["kind"] == r.CORRECT_FACT_KIND
                                 and detail else [])
            if any(w is not None and self._fact_id(w) is None and not tombstoned(self.conn, "fact", w)
                   for w in wanted):
                return "parked"  # the memory comes with it, maybe in a later file
            target, detail = _op_fact_ids(self.conn, v["kind"], target, detail, _row_id_of)
        elif v["kind"] in DOC_TARGET_KINDS:
            if self._doc_id(target) is None:
                return "parked"
            target, detail = _op_fact_ids(self.conn, v["kind"], target, detail, _row_id_of)
        elif v["kind"] == r.FORGET_KIND and isinstance(target, str) and not target.startswith("host-hmac:"):
            redacted = self._redacted(target, v["created_at"])  # a host erased since, on another computer
            if redacted is not None:
                target = redacted
                self.out.redacted = True
        self.conn.execute("INSERT OR IGNORE INTO operations(id, kind, target, detail, created_at) VALUES (?,?,?,?,?)",
                          (key, v["kind"], target, detail, v["created_at"]))
        self.change.touch("operations")
        if v["kind"] == r.ERASE_HOST_KIND:
            self._erase_host_here(key, v, stamp)
        return "applied" if self.conn.changes() or v["kind"] == r.ERASE_HOST_KIND else "stale"

    def _erase_host_here(self, op: str, v: dict[str, Any], stamp: str) -> None:
        """Another device erased a host: its memories made before the erase go here too (those this device
        holds and the eraser did not), and this device's operations stop naming it. The host travels only
        as a keyed hash under the synced vault's host key (``detail.sync_host``)."""
        detail = json.loads(v["detail"] or "{}")
        mac = detail.get("sync_host")
        if not isinstance(mac, str):
            return
        for host in r.hosts_matching(self.conn, mac):
            facts = [i for i in r.all_host_fact_ids(self.conn, host) if str(scalar(
                self.conn, "SELECT created_at FROM chunks WHERE id = ?", (i,))) <= v["created_at"]]
            for sync_id in [str(x[0]) for x in self.conn.execute(
                    f"SELECT sync_id FROM chunks WHERE id IN ({','.join('?' * len(facts))})", facts)] if facts else []:
                self._erase("fact", sync_id, stamp)
            if detail.get("documents_too"):
                for doc_id in r.host_document_ids(self.conn, host, live_only=False):
                    doc_key = scalar(self.conn, "SELECT sync_id FROM documents WHERE id = ?", (doc_id,))
                    created = scalar(self.conn, "SELECT created_at FROM documents WHERE id = ?", (doc_id,))
                    if doc_key is not None and str(created) <= v["created_at"]:
                        self._erase("doc", str(doc_key), stamp)
            if r.redact_host_targets(self.conn, self.change, host, str(v["target"])):
                self.out.redacted = True

    def _erased_hosts_of(self, fact_ids: set[int]) -> None:
        """A memory that arrives after an erase of its host (on any computer), made before it: erased too, as it
        would have been on one computer."""
        if not fact_ids:
            return
        erases = self._host_erases()
        if not erases:
            return
        for fact_id in sorted(fact_ids):
            row = self.conn.execute("SELECT c.sync_id, c.created_at, c.page_host, s.source_host FROM chunks c JOIN"
                                    " memory_sources s ON s.id = c.source_id WHERE c.id = ?", (fact_id,)).fetchone()
            if row is None:
                continue
            macs = {r.sync_keyed_host(self.conn, h) for host in (row[2], row[3]) if host
                    for h in r.parent_hosts(str(host))}
            if any(mac in macs and str(row[1]) <= created for _, created, mac in erases):
                self._erase("fact", str(row[0]), ZERO)

    def _host_erases(self) -> list[tuple[str, str, str]]:
        """``(keyed target, time, synced keyed host)`` of every host erase known here."""
        rows = self.conn.execute("SELECT target, created_at, detail FROM operations WHERE kind = ?",
                                 (r.ERASE_HOST_KIND,))
        erases = [(str(t), str(c), json.loads(d or "{}").get("sync_host")) for t, c, d in rows]
        return [e for e in erases if isinstance(e[2], str)]

    def _redacted(self, host: str, created_at: str) -> str | None:
        """What an operation made before an erase of its host names instead of it (None: not erased)."""
        macs = {r.sync_keyed_host(self.conn, h) for h in r.parent_hosts(host)}
        found = [(created, target) for target, created, mac in self._host_erases() if mac in macs
                 and created_at <= created]
        return min(found)[1] if found else None

    def _op_undo(self, key: str, v: str | None, stamp: str) -> str:
        if not exists(self.conn, "op", key):
            return "parked"
        self.conn.execute("UPDATE operations SET undone_at = ? WHERE id = ?", (v, key))
        # what the operation covers is hidden or shown again by what still covers it (another forget keeps a
        # row hidden); an undone correction hides its revision (its predecessor's ``supersede`` field brings
        # the old one back)
        self.out.facts.update(r.covered_by(self.conn, "chunks", key))
        self.out.documents.update(r.covered_by(self.conn, "documents", key))
        self.change.touch("operations")
        return "applied"

    def _op_target(self, key: str, v: str, stamp: str) -> str:
        if not exists(self.conn, "op", key):
            return "parked"
        kind = scalar(self.conn, "SELECT kind FROM operations WHERE id = ?", (key,))
        if kind in ROW_TARGET_KINDS:
            translate = _doc_row_id_of if kind in DOC_TARGET_KINDS else _row_id_of
            v = translate(self.conn, v) or scalar(self.conn, "SELECT target FROM operations WHERE id = ?", (key,))
        self.conn.execute("UPDATE operations SET target = ? WHERE id = ?", (v, key))
        return "applied"

    # -- site rules
    def _site_mode(self, key: str, v: dict[str, Any] | None, stamp: str) -> str:
        if v is None:
            self.conn.execute("DELETE FROM site_rules WHERE host = ?", (key,))
        else:
            self.conn.execute("INSERT INTO site_rules(host, mode, created_at, updated_at) VALUES (?, ?, ?, ?)"
                              " ON CONFLICT(host) DO UPDATE SET mode = excluded.mode, created_at = excluded.created_at,"
                              " updated_at = excluded.updated_at", (key, v["mode"], v["created_at"], v["updated_at"]))
        self.change.touch("site_rules", hosts=[key])
        return "applied"

    # -- operator memory
    def _opm_body(self, key: str, v: dict[str, Any], stamp: str) -> str:
        values = [v[c] for c in OPM_BODY]
        if exists(self.conn, "opm", key):
            sets = ", ".join(f"{c} = ?" for c in OPM_BODY if c != "id")
            self.conn.execute(f"UPDATE operator_memory SET {sets} WHERE id = ?",
                              [v[c] for c in OPM_BODY if c != "id"] + [key])
        else:
            cols = ", ".join(OPM_BODY)
            self.conn.execute(f"INSERT INTO operator_memory({cols}) VALUES ({','.join('?' * len(OPM_BODY))})", values)
        for category, revision, content, source_ref, successor, superseded_at in v["history"]:
            if self.conn.execute("SELECT 1 FROM operator_memory_history WHERE memory_id = ? AND revision = ?",
                                 (key, revision)).fetchone() is None:
                self.conn.execute("INSERT INTO operator_memory_history(memory_id, category, revision, content,"
                                  " source_ref, successor_revision, superseded_at) VALUES (?,?,?,?,?,?,?)",
                                  (key, category, revision, content, source_ref, successor, superseded_at))
        self.change.touch("operator_memory")
        self.change.touch("operator_memory_history")
        self.out.opm = True
        return "applied"

    # -- erase
    def _tomb(self, entity: str, key: str, stamp: str) -> None:
        if add_tombstone(self.conn, entity, key, stamp):
            self.out.erased.add((entity, key))

    def _erase(self, entity: str, key: str, stamp: str) -> None:
        if entity == "fact":
            fact_id = self._fact_id(key)
            if fact_id is not None:
                ids = sorted(r.lineage(self.conn, [fact_id]))
                keys = [str(x[0]) for x in self.conn.execute(
                    f"SELECT sync_id FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids)]
                r.delete_facts(self.conn, self.change, ids)
                self.out.facts.difference_update(ids)
                for other in keys:
                    self._tomb("fact", other, stamp)
        elif entity == "doc":
            doc_id = self._doc_id(key)
            if doc_id is not None:
                r.delete_documents(self.conn, self.change, [doc_id])
                self.out.documents.discard(doc_id)
        elif entity == "opm":
            self.conn.execute("DELETE FROM operator_memory_history WHERE memory_id = ?", (key,))
            self.conn.execute("DELETE FROM operator_memory WHERE id = ?", (key,))
            self.change.touch("operator_memory")
        self._tomb(entity, key, stamp)


def erase_keys(conn: apsw.Connection, change: Change, gone: Iterable[tuple[str, str, str]],
               ceilings: dict[str, int]) -> Applied:
    """Erase ``(entity, key, stamp)`` here as an erase record from another device would (a copy of this vault
    the person keeps: a backup, a copy from before a restore)."""
    return Applier(conn, change, ceilings).run({"e": e, "k": k, "f": "erase", "h": h, "v": None} for e, k, h in gone)


def holds_any(conn: apsw.Connection, gone: Iterable[tuple[str, str]]) -> bool:
    """Does this vault (or a copy of it) hold any row of ``gone``?"""
    keys: dict[str, list[str]] = {}
    for entity, key in gone:
        keys.setdefault(entity, []).append(key)
    tables = {"fact": "SELECT 1 FROM chunks WHERE sync_id IN ({}) LIMIT 1",
              "opm": "SELECT 1 FROM operator_memory WHERE id IN ({}) LIMIT 1"}
    if any(r_[1] == "sync_id" for r_ in conn.execute("PRAGMA table_info(documents)")):  # 0006 and later
        tables["doc"] = "SELECT 1 FROM documents WHERE sync_id IN ({}) LIMIT 1"
    for entity, sql in tables.items():
        for part in batched(keys.get(entity, [])):
            if conn.execute(sql.format(marks(part)), part).fetchone() is not None:
                return True
    return False


def _stale_op(conn: apsw.Connection, v: Any) -> bool:
    """An operation record whose memory (or document) is erased here, or was redacted away: never applied
    (``Applier._op_create``), so a rewritten file that still holds it holds nothing new (``nothing_new``)."""
    if not isinstance(v, dict):
        return False
    kind, target = v.get("kind"), v.get("target")
    if kind in FACT_TARGET_KINDS:
        return target is None or tombstoned(conn, "fact", target)
    if kind in DOC_TARGET_KINDS:
        return target is None or tombstoned(conn, "doc", target)
    return False


def nothing_new(conn: apsw.Connection, records: Iterable[Record]) -> bool:
    """Is every record already here? What a later generation of a file already applied must hold: the
    writer rewrote it after an erase, leaving records out and redacting targets, never adding one. A row
    created here or erased, a field whose stamp this device holds or passed, covers it has, a record
    waiting for its row."""
    for rec in records:
        entity, key, fld, stamp = rec["e"], rec["k"], rec["f"], rec["h"]
        if tombstoned(conn, entity, key) or entity not in ENTITIES:
            continue
        if conn.execute("SELECT 1 FROM sync_parked WHERE entity = ? AND key = ? AND record = ?",
                        (entity, key, json.dumps(rec, sort_keys=True))).fetchone():
            continue
        if entity == "op" and fld == "create" and not exists(conn, entity, key) and _stale_op(conn, rec["v"]):
            continue  # an operation on a memory erased here is never applied (``_op_create``): nothing new
        if fld == "erase" or not exists(conn, entity, key):
            return False
        if fld == "forget":
            row_id = scalar(conn, f"SELECT id FROM {TABLES[entity]} WHERE sync_id = ?", (key,))
            held = {op for op, _ in r.covers_of(conn, TABLES[entity], int(row_id))}
            if not {str(op) for op, _ in rec["v"].get("covers") or []} <= held:
                return False
        elif fld != "create" and later(stamp, clock_of(conn, entity, key, fld)):
            return False
    return True


# -- records of a kind this version does not know (from a newer Vodou) ---------------------------------

def keep_waiting(conn: apsw.Connection, records: Iterable[Record]) -> int:
    """Keep records of an unknown entity, unapplied, until a version that knows it runs (``waiting``). An
    erase of one is a tombstone at once: the records of its key go, and later ones are dropped."""
    kept = 0
    for rec in records:
        if rec["f"] == "erase" and rec["e"] not in ENTITIES:
            add_tombstone(conn, rec["e"], rec["k"], rec["h"])
            continue
        if tombstoned(conn, rec["e"], rec["k"]):
            continue
        conn.execute("INSERT INTO sync_waiting(entity, key, record) VALUES (?, ?, ?)",
                     (rec["e"], rec["k"], json.dumps(rec, sort_keys=True)))
        kept += 1
    return kept


def waiting(conn: apsw.Connection) -> list[Record]:
    return [json.loads(t) for (t,) in conn.execute("SELECT record FROM sync_waiting ORDER BY id")]


def waiting_rows(conn: apsw.Connection) -> list[tuple[int, Record]]:
    return [(int(i), json.loads(t)) for i, t in conn.execute("SELECT id, record FROM sync_waiting ORDER BY id")]


def drop_waiting(conn: apsw.Connection, ids: Iterable[int]) -> None:
    conn.executemany("DELETE FROM sync_waiting WHERE id = ?", [(i,) for i in ids])


def record_own_erasures(conn: apsw.Connection, records: Iterable[Record]) -> set[tuple[str, str]]:
    """Tombstones for this device's own erase records (their rows are already gone here)."""
    new: set[tuple[str, str]] = set()
    for rec in records:
        if rec["f"] == "erase" and add_tombstone(conn, rec["e"], rec["k"], rec["h"]):
            new.add((rec["e"], rec["k"]))
    return new


# -- what follows from the merged state ------------------------------------------------------------------

def normalize(conn: apsw.Connection, change: Change, fact_ids: set[int]) -> None:
    """Derive, from the merged state alone (so every device derives the same): a memory is hidden while an
    operation covers it (the earliest such one shows); a forget hides the revisions written concurrently
    with it; of concurrent revisions of one memory only the one its predecessor names stays visible; fact
    groups re-elect their canonical. Then each memory's current revision takes the memory's id on this
    device (row ids are local: sync never sees them)."""
    touched = {i for i in fact_ids if conn.execute("SELECT 1 FROM chunks WHERE id = ?", (i,)).fetchone()}
    if not touched:
        return
    r.settle_hidden(conn, change, "chunks", touched)  # hidden while an operation covers it
    predecessors = {int(p[0]) for i in touched for p in conn.execute(
        "SELECT predecessor_id FROM chunks WHERE id = ? AND predecessor_id IS NOT NULL", (i,))}
    for parent in sorted(predecessors | touched):
        _settle_forks(conn, parent)
    frontier = sorted(predecessors | touched)
    seen: set[int] = set()
    while frontier:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        frontier += _carry_forget(conn, current)
    r.reelect_canonicals(conn, change, r.group_ids(conn, sorted(touched | predecessors)))
    change.touch("chunks", chunk_ids=touched)
    settle_heads(conn, change, touched | predecessors)  # each memory under its own id here too (revisions.py)


def _settle_forks(conn: apsw.Connection, parent: int) -> None:
    row = conn.execute("SELECT superseded_by, superseded_at FROM chunks WHERE id = ?", (parent,)).fetchone()
    if row is None:
        return
    winner, at = row
    children = [int(c[0]) for c in conn.execute("SELECT id FROM chunks WHERE predecessor_id = ?", (parent,))]
    if len(children) < 2 or winner not in children:
        return
    siblings = set(children)
    for child in children:
        current = scalar(conn, "SELECT superseded_by FROM chunks WHERE id = ?", (child,))
        if child == winner:
            if current in siblings:
                conn.execute("UPDATE chunks SET superseded_by = NULL, superseded_at = NULL WHERE id = ?", (child,))
        elif current is None or current in siblings:
            conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (winner, at, child))


def _carry_forget(conn: apsw.Connection, fact_id: int) -> list[int]:
    """A memory hidden by an active forget hides its later revisions that are still visible."""
    row = conn.execute("SELECT c.invalid_at, c.invalidated_by FROM chunks c JOIN operations o"
                       " ON o.id = c.invalidated_by AND o.undone_at IS NULL WHERE c.id = ?", (fact_id,)).fetchone()
    if row is None:
        return []
    children = [int(c[0]) for c in conn.execute(
        "SELECT id FROM chunks WHERE predecessor_id = ? AND invalid_at IS NULL", (fact_id,))]
    for child in children:
        conn.execute("UPDATE chunks SET invalid_at = ?, invalidated_by = ? WHERE id = ?", (row[0], row[1], child))
    return children


def enforce_ceilings(conn: apsw.Connection, change: Change, ceilings: dict[str, int]) -> int:
    """Operator memory merged from two devices may hold more than a category's ceiling: the rows past it
    (the latest created) expire at once, so recall never sees more than the ceiling; the person sees them
    and decides. Returns how many expired."""
    expired = 0
    for category, ceiling in ceilings.items():
        rows = list(conn.execute("SELECT id, updated_at, expires_at FROM operator_memory WHERE category = ?"
                                 " ORDER BY created_at, id", (category,)))
        for memory_id, updated_at, expires_at in rows[ceiling:]:
            if expires_at is None or expires_at > updated_at:
                conn.execute("UPDATE operator_memory SET expires_at = ? WHERE id = ?", (updated_at, memory_id))
                expired += 1
    if expired:
        change.touch("operator_memory")
    return expired


# -- device-local bookkeeping --------------------------------------------------------------------------

def peers(conn: apsw.Connection) -> dict[str, dict[str, Any]]:
    rows = conn.execute("SELECT device_id, name, last_seq, last_change_at, left_at, removed_at FROM sync_peers")
    return {str(r[0]): {"name": r[1], "last_seq": int(r[2]), "last_change_at": r[3], "left_at": r[4],
                        "removed_at": r[5]} for r in rows}


def mark_removed(conn: apsw.Connection, device: str, at: str) -> None:
    """A computer removed from the synced vault (``vodou sync remove``): its files are ignored from now on."""
    conn.execute("INSERT INTO sync_peers(device_id, removed_at) VALUES (?, ?) ON CONFLICT DO UPDATE"
                 " SET removed_at = coalesce(sync_peers.removed_at, excluded.removed_at)", (device, at))


def upsert_peer(conn: apsw.Connection, device: str, name: str | None, left_at: str | None) -> None:
    conn.execute("INSERT INTO sync_peers(device_id, name, left_at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE"
                 " SET name = excluded.name, left_at = excluded.left_at", (device, name, left_at))


def applied_file(conn: apsw.Connection, device: str, seq: int) -> tuple[int, str] | None:
    row = conn.execute("SELECT gen, digest FROM sync_applied WHERE device_id = ? AND seq = ?", (device, seq)).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def mark_applied(conn: apsw.Connection, device: str, seq: int, gen: int, digest: str, at: str | None) -> None:
    conn.execute("INSERT INTO sync_applied(device_id, seq, gen, digest) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE"
                 " SET gen = excluded.gen, digest = excluded.digest", (device, seq, gen, digest))
    conn.execute("UPDATE sync_peers SET last_seq = max(last_seq, ?), last_change_at = coalesce(?, last_change_at)"
                 " WHERE device_id = ?", (seq, at, device))


def set_last_seq(conn: apsw.Connection, device: str, seq: int) -> None:
    conn.execute("INSERT INTO sync_peers(device_id, last_seq) VALUES (?, ?) ON CONFLICT DO UPDATE"
                 " SET last_seq = max(last_seq, excluded.last_seq)", (device, seq))


# -- the outbox: a change file between its commit and its rename ----------------------------------------

def put_outbox(conn: apsw.Connection, seq: int, records: list[Record]) -> None:
    conn.execute("INSERT INTO sync_outbox(seq, records) VALUES (?, ?)", (seq, json.dumps(records, sort_keys=True)))


def outbox(conn: apsw.Connection) -> list[tuple[int, list[Record]]]:
    return [(int(s), json.loads(t)) for s, t in conn.execute("SELECT seq, records FROM sync_outbox ORDER BY seq")]


def drop_outbox(conn: apsw.Connection, seq: int) -> None:
    conn.execute("DELETE FROM sync_outbox WHERE seq = ?", (seq,))


def purge_outbox(conn: apsw.Connection, gone: set[tuple[str, str]]) -> None:
    """Erased keys leave the outbox too (its records may hold their text)."""
    for seq, records in outbox(conn):
        kept = [rec for rec in records if (rec["e"], rec["k"]) not in gone or rec["f"] == "erase"]
        if len(kept) != len(records):
            conn.execute("UPDATE sync_outbox SET records = ? WHERE seq = ?", (json.dumps(kept, sort_keys=True), seq))


# -- a snapshot: the whole synced state as records --------------------------------------------------------

def state_records(conn: apsw.Connection) -> list[Record]:
    """Every synced row as records with the stamps this device holds (``ZERO`` for rows never changed
    since sync began), every tombstone, and the records waiting for a newer version. Read inside one
    transaction."""
    clocks = {(e, k, f): h for e, k, f, h in conn.execute("SELECT entity, key, field, hlc FROM sync_clock")}
    out: list[Record] = []

    def add(entity: str, key: Any, fld: str) -> None:
        value = read_value(conn, entity, key, fld)
        if (entity, key, fld) not in clocks and (fld == "page" or value == _DEFAULTS.get(fld, _GONE)):
            return  # never changed since sync began: what ``create`` carries already
        if value is not _GONE:
            out.append({"e": entity, "k": key, "f": fld, "h": clocks.get((entity, key, fld), ZERO), "v": value})

    for (key,) in conn.execute("SELECT id FROM operations ORDER BY created_at, id").fetchall():
        for fld in ("create", "undo", "target"):
            add("op", key, fld)
    for (key,) in conn.execute("SELECT sync_id FROM chunks WHERE document_id IS NULL ORDER BY id").fetchall():
        add("fact", key, "create")
    for (key,) in conn.execute("SELECT sync_id FROM chunks WHERE document_id IS NULL ORDER BY id").fetchall():
        for fld in ("forget", "supersede", "pin", "page"):
            add("fact", key, fld)
    for (key,) in conn.execute("SELECT sync_id FROM documents WHERE sync_id IS NOT NULL ORDER BY id").fetchall():
        for fld in ("create", "forget"):
            add("doc", key, fld)
    for (key,) in conn.execute("SELECT host FROM site_rules ORDER BY host").fetchall():
        add("site", key, "mode")
    for (key,) in conn.execute("SELECT id FROM operator_memory ORDER BY id").fetchall():
        add("opm", key, "body")
    for entity, key, stamp in conn.execute("SELECT entity, key, hlc FROM sync_tombstones ORDER BY entity, key"):
        out.append({"e": entity, "k": key, "f": "erase", "h": stamp, "v": None})
    return out + waiting(conn)
