"""Lossless whole-vault export (DATA-2) as JSON Lines, a readable Markdown view, and the import back.

JSONL: one object per line, each with a ``type``: ``header``, ``setting``, ``site_rule``, ``project``,
``entity``, ``operation`` (the forgets that hid exported memories, so undo still works after an
import), ``source_event`` (the input labels of the capture batches the memories came from),
``memory``, ``document``, ``operator_memory``, ``operator_memory_history``.

Each memory of a batch names the ``source_event`` (its id) it came from — the message of an imported
or captured conversation — and how sure its extraction was (``confidence``). Every row carries its id
in the vault (memories, their sources, documents and their chunks,
entities, source events), and each memory its conversation (``thread_id``: the id of the thread's
first memory, and ``thread_seq``), and each memory its global id (``sync_id``, the one every synced
device knows it by). An import into an empty vault keeps every id and global id, so an id an AI
client kept still names the same memory and a synced device still recognises it; into a vault that
already holds memories it gives new ids and new global ids (the copies are new memories there) and
reports old → new. What sync keeps per device (its journal, clocks, what it applied from whom) is
not exported. A fact group is named by a memory's id (as in the vault). Memories and
documents are also numbered in export order (``ref``); lineage and supersession refer to those
numbers. Forgotten memories are left out unless asked for; erased
ones are gone from the vault and so can never be exported. Embeddings and the keyword index are not
exported: they are derived again. Version 1 files (without ids) still import, with new ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

import apsw

from vodou_desktop import __version__
from vodou_desktop.data import copies
from vodou_desktop.errors import InvalidInput
from vodou_desktop.vault import ALL_PROJECTS, Change, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault import transfer as t
from vodou_desktop.vault.atomic import open_new

FORMAT = "vodou-export"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
PAGE = 1000


@dataclass(frozen=True)
class ExportScope:
    project: str | None = None  # None: every project; a name: that project and the global memories
    include_forgotten: bool = False

    @property
    def filter(self) -> FactFilter:
        return FactFilter(project=self.project if self.project else ALL_PROJECTS,
                          include_forgotten=self.include_forgotten, include_superseded=True)


def export_records(conn: apsw.Connection, scope: ExportScope) -> Iterator[dict[str, Any]]:
    """Every record of the export, in a stable order. Call inside one read transaction."""
    yield {"type": "header", "format": FORMAT, "version": FORMAT_VERSION, "vodou": __version__,
           "project": scope.project, "include_forgotten": scope.include_forgotten}
    for row in t.table_rows(conn, "settings", "key"):
        if not t.is_private_setting(row["key"]):
            yield {"type": "setting", **row}
    for row in t.table_rows(conn, "site_rules", "host"):
        yield {"type": "site_rule", **row}
    for row in t.table_rows(conn, "projects", "name"):
        yield {"type": "project", **row}
    for entity in t.entities(conn):
        yield {"type": "entity", **entity}
    facts = _all(conn, partial(q.facts_for_export, f=scope.filter), lambda f: f.id)
    docs = _all(conn, partial(q.documents_for_export, f=scope.filter), lambda d: d[0].id)
    ops = {f.invalidated_by for f in facts if f.invalidated_by} | {d[1]["invalidated_by"] for d in docs
                                                                     if d[1]["invalidated_by"]}
    for op in t.operations(conn, ops):
        yield {"type": "operation", **op}
    batches = {s["batch_id"] for s in t.sources_by_id(conn, [f.source_id for f in facts]).values() if s["batch_id"]}
    for event in t.source_events_for(conn, batches):
        yield {"type": "source_event", **event}
    yield from _memories(conn, facts)
    yield from _documents(conn, docs)
    for row in t.table_rows(conn, "operator_memory", "created_at, id"):
        yield {"type": "operator_memory", **row}
    for row in t.table_rows(conn, "operator_memory_history", "memory_id, revision"):
        yield {"type": "operator_memory_history", **row}


def _all(conn: apsw.Connection, read: Callable[..., list[Any]], key: Callable[[Any], int]) -> list[Any]:
    """Every row of a paged reader (keyset paging on the row id)."""
    out: list[Any] = []
    after = 0
    while page := read(conn, after_id=after, limit=PAGE):
        out += page
        after = key(page[-1])
    return out


def _memories(conn: apsw.Connection, facts: list[Fact]) -> Iterator[dict[str, Any]]:
    refs = {f.id: n for n, f in enumerate(facts, 1)}
    sources = t.sources_by_id(conn, [f.source_id for f in facts] + [f.extra["pinned_from"] for f in facts
                                                                       if f.extra["pinned_from"]])
    names = t.entity_names_by_chunk(conn, [f.id for f in facts])
    for fact in facts:
        pinned = fact.extra["pinned_from"]
        yield {
            "type": "memory", "ref": refs[fact.id], "id": fact.id, "sync_id": fact.extra["sync_id"],
            "thread_id": fact.extra["thread_id"],
            "thread_seq": fact.extra["thread_seq"], "text": fact.text, "kind": fact.kind, "project": fact.project,
            "scope": fact.scope, "created_at": fact.created_at, "valid_at": fact.valid_at,
            "valid_precision": fact.valid_precision, "forgotten_at": fact.invalid_at,
            "forgotten_by": fact.invalidated_by, "revision": fact.revision,
            "predecessor": refs.get(fact.predecessor_id) if fact.predecessor_id else None,
            "superseded_by": refs.get(fact.superseded_by) if fact.superseded_by else None,
            "superseded_at": fact.extra["superseded_at"], "group": fact.fact_group, "canonical": fact.is_canonical,
            "pinned": pinned is not None,
            "page": {"url": fact.page_url, "key": fact.page_key, "host": fact.page_host, "set_by": fact.page_set_by},
            "source": sources[fact.source_id], "pinned_from": sources[pinned] if pinned else None,
            "entities": names.get(fact.id, []),
            "source_event": fact.source_event_id, "confidence": fact.confidence,
        }


def _documents(conn: apsw.Connection, docs: list[tuple[Any, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    sources = t.sources_by_id(conn, [extra["source_id"] for _, extra in docs])
    for n, (doc, extra) in enumerate(docs, 1):
        yield {"type": "document", "ref": n, "id": doc.id, "chunk_ids": extra["chunk_ids"],
               "title": doc.title, "project": doc.project,
               "created_at": doc.created_at, "forgotten_at": extra["invalid_at"],
               "forgotten_by": extra["invalidated_by"], "source": sources[extra["source_id"]],
               "chunks": extra["chunks"]}


def write_jsonl(vault: Vault, scope: ExportScope, out: IO[str]) -> dict[str, int]:
    counts: dict[str, int] = {}

    def read(conn: apsw.Connection) -> list[dict[str, Any]]:
        return list(export_records(conn, scope))

    for record in vault.read(read):
        counts[record["type"]] = counts.get(record["type"], 0) + 1
        out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    return counts


def write_export_file(path: Path, write: Callable[[IO[str]], dict[str, int]], *,
                      replace: bool = False) -> dict[str, int]:
    """Write an export to ``path`` under a temporary name in the same folder (0600: an export holds
    everything the vault does), fsync it, rename it, fsync the folder. A full disk or a crash leaves
    nothing behind (``VaultUnavailable``, one line); ``replace`` lets the rename replace a file the
    person chose to overwrite, which stays as it was until then."""
    if path.exists() and not replace:
        raise InvalidInput(f"{path} already exists; choose another name")
    if not path.parent.is_dir():
        raise InvalidInput(f"The folder does not exist: {path.parent}")
    with open_new(path, replace=replace, what="the export") as out:  # an OS error: one line, nothing left
        counts = write(out)
    copies.record(path, "export")
    return counts


# -- Markdown: for reading, not for import ---------------------------------------------------------

def write_markdown(vault: Vault, scope: ExportScope, out: IO[str]) -> dict[str, int]:
    records = vault.read(lambda conn: list(export_records(conn, scope)))
    counts: dict[str, int] = {}
    for record in records:
        counts[record["type"]] = counts.get(record["type"], 0) + 1
    out.write("# Vodou memories\n\n")
    by_project: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["type"] == "memory":
            by_project.setdefault(r["project"] or "Global (every project)", []).append(r)
    for project in sorted(by_project):
        out.write(f"## {project}\n\n")
        for m in by_project[project]:
            out.write(f"- {m['text']}\n  {_memory_meta(m)}\n")
        out.write("\n")
    docs = [r for r in records if r["type"] == "document"]
    if docs:
        out.write("## Library documents\n\n")
        for d in docs:
            out.write(f"### {d['title'] or d['source']['url'] or 'Untitled'}\n\n")
            out.write(f"_{d['source']['url'] or 'no address'} · saved {d['created_at']}_\n\n")
            out.write("\n\n".join(d["chunks"]) + "\n\n")
    opm = [r for r in records if r["type"] == "operator_memory"]
    if opm:
        out.write("## Operator memory\n\n")
        for o in opm:
            out.write(f"- **{o['category']}**: {o['content']}\n")
        out.write("\n")
    rules = [r for r in records if r["type"] == "site_rule"]
    if rules:
        out.write("## Site rules\n\n")
        for rule in rules:
            out.write(f"- {rule['host']}: {rule['mode']}\n")
    return counts


def _memory_meta(m: dict[str, Any]) -> str:
    src = m["source"]
    parts = [f"{m['kind']}", f"tier {src['tier']}", f"from {src['kind']}"]
    if src["url"]:
        parts.append(f"<{src['url']}>")
    if src["title"]:
        parts.append(f"“{src['title']}”")
    if src["tool"]:
        parts.append(f"via {src['tool']}")
    if m["scope"]:
        parts.append(f"scope {m['scope']}")
    parts.append(f"saved {m['created_at']}")
    if m["valid_at"]:
        parts.append(f"true at {m['valid_at']} ({m['valid_precision']})")
    if m["revision"] > 1:
        parts.append(f"revision {m['revision']}")
    if m["superseded_by"]:
        parts.append(f"replaced by #{m['superseded_by']}")
    if m["pinned"]:
        parts.append("pinned")
    if m["forgotten_at"]:
        parts.append(f"forgotten {m['forgotten_at']}")
    if m["entities"]:
        parts.append("mentions " + ", ".join(m["entities"]))
    return f"_#{m['ref']} · " + " · ".join(parts) + "_"


# -- import (`vodou import vodou FILE`) --------------------------------------------------------------

def read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    try:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    record = json.loads(line)
                    if not isinstance(record, dict) or "type" not in record:
                        raise InvalidInput(f"{path}:{n}: not a Vodou export record")
                    records.append(record)
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"Cannot read the export {path}: {exc}") from exc
    if not records or records[0].get("format") != FORMAT:
        raise InvalidInput(f"{path} is not a Vodou export (JSONL written by `vodou export --format jsonl`)")
    if records[0].get("version") not in READABLE_VERSIONS:
        raise InvalidInput(f"{path} is a Vodou export of version {records[0].get('version')}; "
                           f"this Vodou reads versions {', '.join(map(str, READABLE_VERSIONS))}")
    return records


@dataclass(frozen=True)
class ImportReport:
    counts: dict[str, int]
    ids_kept: bool  # into an empty vault every exported id is kept
    memory_ids: dict[int, int]  # exported id → id in this vault, for memories whose id changed

    def as_json(self) -> dict[str, Any]:
        return {**self.counts, "ids_kept": self.ids_kept,
                "memory_ids": {str(old): new for old, new in self.memory_ids.items()}}


def import_records(vault: Vault, records: list[dict[str, Any]]) -> ImportReport:
    """Write an export in one transaction. Into an empty vault every id is kept; into one that already
    holds memories they get new ids (reported), and its own settings, site rules and projects win."""

    def of(kind: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "type"} for r in records if r["type"] == kind]

    def job(conn: apsw.Connection, change: Change) -> ImportReport:
        ids = t.Ids(keep=t.is_empty(conn) and records[0].get("version") == FORMAT_VERSION)
        t.insert_rows(conn, change, "settings", of("setting"), replace=ids.keep)
        t.insert_rows(conn, change, "site_rules", of("site_rule"), replace=ids.keep)
        t.insert_rows(conn, change, "projects", of("project"), replace=ids.keep)
        entity_ids = {e["name"]: t.insert_entity(conn, change, e["name"], e["created_at"], e["aliases"],
                                                 ids.wanted(e.get("id")))
                      for e in of("entity")}
        for op in of("operation"):
            t.insert_operation(conn, change, op)
        for event in of("source_event"):
            t.insert_source_event(conn, change, event, ids)
        refs: dict[int, int] = {}
        for m in sorted(of("memory"), key=lambda m: (m.get("id") or 0, m["ref"])):
            predecessor = refs.get(m["predecessor"]) if m["predecessor"] else None
            refs[m["ref"]] = t.import_fact(conn, change, m, predecessor, entity_ids, ids)
        t.set_superseded_by(conn, change, [(refs[m["ref"]], refs[m["superseded_by"]]) for m in of("memory")
                                           if m["superseded_by"] in refs])
        if not ids.keep:
            t.renumber_groups(conn, change, [(refs[m["ref"]], m["group"]) for m in of("memory")
                                             if m["group"] is not None], ids)
        for d in sorted(of("document"), key=lambda d: d["ref"]):
            t.import_document(conn, change, d, ids)
        t.insert_rows(conn, change, "operator_memory", of("operator_memory"), replace=ids.keep)
        history = of("operator_memory_history")
        if not ids.keep:
            history = [{k: v for k, v in h.items() if k != "id"} for h in history]
        t.insert_rows(conn, change, "operator_memory_history", history, replace=ids.keep)
        counts = {kind: len(of(kind)) for kind in ("memory", "document", "entity", "site_rule", "operator_memory",
                                                   "source_event")}
        moved = {old: new for old, new in ids.chunks.items() if old != new}
        return ImportReport(counts, ids.keep, dict(sorted(moved.items())))

    report: ImportReport = vault.write(job)
    return report
