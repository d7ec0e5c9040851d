"""Lossless whole-vault export (DATA-2) as JSON Lines, a readable Markdown view, and the import back.

JSONL: one object per line, each with a ``type``: ``header``, ``setting``, ``site_rule``, ``project``,
``entity``, ``operation`` (the forgets that hid exported memories, so undo still works after an
import), ``source_event`` (the input labels of the capture batches the memories came from),
``memory``, ``document``, ``operator_memory``, ``operator_memory_history``. Each record type has a
written schema (``export_schema``, docs/export-format.md); an import checks the whole file against it
before it writes anything, and writes through the product's own column lists only.

Each memory of a batch names the ``source_event`` (its id) it came from — the message of an imported
or captured conversation — and how sure its extraction was (``confidence``). Every row carries its id
in the vault (memories, their sources, documents and their chunks,
entities, source events), and each memory its conversation (``thread_id``: the id of the thread's
first memory, and ``thread_seq``), and each memory its global id (``sync_id``, the one every synced
device knows it by). An import into an empty vault keeps every id, so an id an AI client kept still
names the same memory; into a vault that already holds memories it gives new ids (reported old →
new). Every import keeps the global ids, so a memory already in the vault (by its global id, else by
its text, project and source) is not added again but merged by the rules sync uses: importing a
file twice leaves the vault as importing it once. Only the settings export writes
(``export_schema.EXPORTED_SETTINGS``) travel; sync's state, keys and the other settings of this
computer never leave it and are never taken from a file. A fact group is named by a memory's id (as
in the vault). Memories and documents are also numbered in export order (``ref``); lineage and
supersession refer to those numbers. Forgotten memories are left out unless asked for; erased ones
are gone from the vault and so can never be exported. Embeddings and the keyword index are not
exported: they are derived again. Version 1 files (without ids) still import, with new ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

import apsw

from vodou_desktop import __version__
from vodou_desktop.controls import markdown_inline, markdown_lines
from vodou_desktop.data import copies
from vodou_desktop.data.export_schema import (
    FORMAT,
    FORMAT_VERSION,
    ExportFile,
    check_records,
    is_exported_setting,
    read_export,
)
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.opm import CATEGORIES
from vodou_desktop.vault import ALL_PROJECTS, Change, Fact, FactFilter, Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import query as q
from vodou_desktop.vault import sync_store as st
from vodou_desktop.vault import transfer as t
from vodou_desktop.vault.atomic import open_new
from vodou_desktop.words import plural

PAGE = 1000
MAPPING_SHOWN = 20  # memories whose id changed, named in an import's report
SETTINGS_SHOWN = 5
FIELDS_SHOWN = 5


@dataclass(frozen=True)
class ExportScope:
    project: str | None = None  # None: every project; a name: that project and the global memories
    include_forgotten: bool = False
    ids: tuple[int, ...] | None = None  # a selection of memories (with their revisions): those alone

    @property
    def filter(self) -> FactFilter:
        return FactFilter(project=self.project if self.project else ALL_PROJECTS,
                          include_forgotten=self.include_forgotten, include_superseded=True, ids=self.ids)


def export_records(conn: apsw.Connection, scope: ExportScope) -> Iterator[dict[str, Any]]:
    """Every record of the export, in a stable order. Call inside one read transaction."""
    yield {"type": "header", "format": FORMAT, "version": FORMAT_VERSION, "vodou": __version__,
           "project": scope.project, "include_forgotten": scope.include_forgotten}
    if scope.ids is not None:  # a selection: its memories (and what they name), not the vault's settings
        yield from _selected(conn, scope)
        return
    for row in t.table_rows(conn, "settings", "key"):
        if is_exported_setting(row["key"]):  # the allowlist: this computer's own settings never leave it
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


def _selected(conn: apsw.Connection, scope: ExportScope) -> Iterator[dict[str, Any]]:
    facts = _all(conn, partial(q.facts_for_export, f=scope.filter), lambda f: f.id)
    names = {n for ns in t.entity_names_by_chunk(conn, [f.id for f in facts]).values() for n in ns}
    for entity in t.entities(conn):
        if entity["name"] in names:
            yield {"type": "entity", **entity}
    for op in t.operations(conn, {f.invalidated_by for f in facts if f.invalidated_by}):
        yield {"type": "operation", **op}
    yield from _memories(conn, facts)


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
        yield {"type": "document", "ref": n, "id": doc.id, "sync_id": extra["sync_id"], "chunk_ids": extra["chunk_ids"],
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
    """Every memory as literal Markdown: a memory's text can neither open a heading, a list or an
    HTML block nor leave its list item (``controls.markdown_lines``), and control characters are
    shown escaped."""
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
        out.write(f"## {markdown_inline(project)}\n\n")
        for m in by_project[project]:
            out.write(f"- {markdown_lines(m['text'], '  ')}\n  {_memory_meta(m)}\n")
        out.write("\n")
    docs = [r for r in records if r["type"] == "document"]
    if docs:
        out.write("## Library documents\n\n")
        for d in docs:
            out.write(f"### {markdown_inline(d['title'] or d['source']['url'] or 'Untitled')}\n\n")
            out.write(f"_{markdown_inline(d['source']['url'] or 'no address')} · saved {d['created_at']}_\n\n")
            out.write("\n\n".join(markdown_lines(chunk) for chunk in d["chunks"]) + "\n\n")
    opm = [r for r in records if r["type"] == "operator_memory"]
    if opm:
        out.write("## Operator memory\n\n")
        for o in opm:
            out.write(f"- **{markdown_inline(o['category'])}**: {markdown_lines(o['content'], '  ')}\n")
        out.write("\n")
    rules = [r for r in records if r["type"] == "site_rule"]
    if rules:
        out.write("## Site rules\n\n")
        for rule in rules:
            out.write(f"- {markdown_inline(rule['host'])}: {rule['mode']}\n")
    return counts


def _memory_meta(m: dict[str, Any]) -> str:
    src = m["source"]
    parts = [f"{m['kind']}", f"tier {src['tier']}", f"from {src['kind']}"]
    if src["url"]:
        parts.append(markdown_inline(src["url"]))
    if src["title"]:
        parts.append(f"“{markdown_inline(src['title'])}”")
    if src["tool"]:
        parts.append(f"via {markdown_inline(src['tool'])}")
    if m["scope"]:
        parts.append(f"scope {markdown_inline(m['scope'])}")
    parts.append(f"saved {m['created_at']}")
    if m["valid_at"]:
        parts.append(f"true at {m['valid_at']} ({m['valid_precision']})")
    if m["revision"] > 1:
        parts.append(f"revision {m['revision']}")
    if m["superseded_by"]:
        parts.append(f"replaced by \\#{m['superseded_by']}")
    if m["pinned"]:
        parts.append("pinned")
    if m["forgotten_at"]:
        parts.append(f"forgotten {m['forgotten_at']}")
    if m["entities"]:
        parts.append("mentions " + ", ".join(markdown_inline(e) for e in m["entities"]))
    return f"_\\#{m['ref']} · " + " · ".join(parts) + "_"


# -- import (`vodou import vodou FILE`, File ▸ Import…) -----------------------------------------------

def is_vodou_export(path: Path) -> bool:
    """Whether ``path`` starts like a Vodou export (its header line), so File ▸ Import… can take one
    through the same checked import as ``vodou import vodou``; anything else goes to the other importers."""
    try:
        with path.open("rb") as fh:
            first = fh.readline(4096).lstrip(b"\xef\xbb\xbf")
    except OSError:
        return False
    try:
        header = json.loads(first)
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("type") == "header" and header.get("format") == FORMAT


def read_jsonl(path: Path) -> ExportFile:
    """Read and check a whole export before anything is written (``export_schema``): one line naming
    the line and the field at the first problem."""
    return read_export(path)


@dataclass(frozen=True)
class ImportReport:
    counts: dict[str, int]  # records of each kind written now
    ids_kept: bool  # into an empty vault every exported id is kept
    memory_ids: dict[int, int]  # exported id → id in this vault, for memories whose id changed
    already_here: dict[str, int] = field(default_factory=dict)  # records of each kind this vault held already
    erased_here: int = 0  # memories erased on this computer: an import never brings them back
    settings_skipped: tuple[str, ...] = ()  # settings only this computer may set (sync, keys, pause…)
    unknown_fields: dict[str, int] = field(default_factory=dict)  # "memory.colour" → records that had it
    op: str | None = None  # the undo journal's entry for the whole import

    def sentences(self) -> list[str]:
        """What the import did, in a few lines: what it wrote, what the vault held already, what it
        skipped and why (the CLI prints them; the app shows them)."""
        counts = self.counts
        lines = [f"imported {plural(counts['memory'], 'memory')}, {plural(counts['document'], 'library document')}, "
                 f"{plural(counts['operator_memory'], 'operator memory')}, {plural(counts['site_rule'], 'site rule')}"
                 f" and {plural(counts['entity'], 'entity')}; meaning search catches up as they are embedded"]
        held = [plural(n, kind.replace("_", " ")) for kind, n in self.already_here.items() if n and kind != "setting"]
        if held:
            lines.append(f"already in this vault, not added again: {', '.join(held)}")
        if self.erased_here:
            lines.append(f"{_were(self.erased_here, 'memory')} erased on this computer: left out (erased is for good)")
        if self.settings_skipped:
            n = len(self.settings_skipped)
            shown = ", ".join(self.settings_skipped[:SETTINGS_SHOWN]) + (" …" if n > SETTINGS_SHOWN else "")
            lines.append(f"{plural(n, 'setting')} that only this computer may set {'was' if n == 1 else 'were'} "
                         f"skipped ({shown})")
        if self.unknown_fields:
            named = list(self.unknown_fields.items())
            fields = ", ".join(f"{name} ({plural(n, 'record')})" for name, n in named[:FIELDS_SHOWN])
            more = len(named) - FIELDS_SHOWN
            lines.append(f"skipped fields this Vodou does not know (a newer version's?): {fields}"
                         f"{f' and {more} more' if more > 0 else ''}")
        if self.ids_kept:
            lines.append("every memory kept its id")
        elif self.memory_ids:
            n = len(self.memory_ids)
            shown = ", ".join(f"#{old} → #{new}" for old, new in list(self.memory_ids.items())[:MAPPING_SHOWN])
            more = n - MAPPING_SHOWN
            lines.append(f"{plural(n, 'memory')} {'has' if n == 1 else 'have'} another id in this vault (it already "
                         f"held memories): {shown}{f' and {more} more (all with --json)' if more > 0 else ''}")
        return lines

    def as_json(self) -> dict[str, Any]:
        return {**self.counts, "ids_kept": self.ids_kept,
                "memory_ids": {str(old): new for old, new in self.memory_ids.items()},
                "already_here": self.already_here, "erased_here": self.erased_here,
                "settings_skipped": list(self.settings_skipped), "unknown_fields": self.unknown_fields,
                "op": self.op}


def import_records(vault: Vault, records: ExportFile | list[dict[str, Any]],
                   what: str = "a Vodou export") -> ImportReport:
    """Write a checked export in one transaction (a list of records is checked first, the same way).

    Into an empty vault every id is kept. Into one that already holds memories they get new ids
    (reported); what the vault holds already is not added again (a memory by its global id, else by
    its text, project and source; a document by its text, address and project) and is merged by the
    rules sync uses (``transfer.merge_fact``); its own settings, site rules, projects and operator
    memory win. Importing a file twice, or again after an import was killed, leaves the vault as one
    import does."""
    checked = records if isinstance(records, ExportFile) else check_records(records)

    def job(conn: apsw.Connection, change: Change) -> ImportReport:
        ids = t.Ids(keep=t.is_empty(conn) and checked.version == FORMAT_VERSION)
        added: dict[str, int] = {}
        here: dict[str, int] = {}

        def count(kind: str, new: bool) -> None:
            target = added if new else here
            target[kind] = target.get(kind, 0) + 1

        settings = checked.of("setting")
        added["setting"] = t.insert_settings(conn, change, settings)
        here["setting"] = len(settings) - added["setting"]
        added["site_rule"] = t.insert_site_rules(conn, change, checked.of("site_rule"))
        here["site_rule"] = len(checked.of("site_rule")) - added["site_rule"]
        t.insert_projects(conn, change, checked.of("project"))
        entity_ids = {e["name"]: t.insert_entity(conn, change, e["name"], e["created_at"], e["aliases"],
                                                 ids.wanted(e.get("id")))
                      for e in checked.of("entity")}
        for event in checked.of("source_event"):
            count("source_event", t.insert_source_event(conn, change, event, ids))
        refs, was_here, erased, merged = _import_memories(conn, change, checked, ids, entity_ids, count)
        pairs = [(refs[m["ref"]], refs[m["superseded_by"]], m["superseded_at"], m["ref"] in was_here)
                 for m in checked.of("memory") if m["superseded_by"] in refs and m["ref"] in refs]
        merged |= t.set_superseded_by(conn, change, pairs)
        if not ids.keep:
            t.renumber_groups(conn, change, [(refs[m["ref"]], m["group"]) for m in checked.of("memory")
                                             if m["group"] is not None and m["ref"] in refs
                                             and m["ref"] not in was_here], ids)
        for op in checked.of("operation"):  # after the memories: an operation names a memory by its id here
            t.insert_operation(conn, change, op, ids)
        if merged:  # what follows from the merged state, as after a sync
            st.normalize(conn, change, merged)
        for d in sorted(checked.of("document"), key=lambda d: d["ref"]):
            if t.document_erased_here(conn, d):  # erased is for good, documents too
                continue
            found = None if ids.keep else t.document_here(conn, d)
            if found is None:
                t.import_document(conn, change, d, ids)
            else:
                t.merge_document(conn, change, found, d)
            count("document", found is None)
        opm_added = [t.insert_operator_memory(conn, change, o) for o in checked.of("operator_memory")]
        for new in opm_added:
            count("operator_memory", new)
        for h in checked.of("operator_memory_history"):
            t.insert_operator_history(conn, change, h, ids)
        if not ids.keep and any(opm_added):  # two vaults' operator memory: no category past its ceiling
            st.enforce_ceilings(conn, change, {name: c.ceiling for name, c in CATEGORIES.items()})
        counts = {kind: added.get(kind, 0) for kind in ("memory", "document", "entity", "site_rule",
                                                        "operator_memory", "source_event", "setting")}
        counts["entity"] = len(checked.of("entity"))
        moved = {old: new for old, new in ids.chunks.items() if old != new}
        entry = js.record_import(conn, change, [refs[r] for r in refs if r not in was_here], what)  # one undo
        return ImportReport(counts, ids.keep, dict(sorted(moved.items())),
                            already_here={k: v for k, v in here.items() if v},
                            erased_here=erased, settings_skipped=tuple(checked.private_settings),
                            unknown_fields=dict(sorted(checked.unknown_fields.items())), op=entry)

    report: ImportReport = vault.write(job)
    return report


def _were(n: int, word: str) -> str:
    return f"{plural(n, word)} {'was' if n == 1 else 'were'}"


def _import_memories(conn: apsw.Connection, change: Change, checked: ExportFile, ids: t.Ids,
              entity_ids: dict[str, int], count: Callable[[str, bool], None]
              ) -> tuple[dict[int, int], set[int], int, set[int]]:
    """Every memory record: written, found here already (and merged), or left out because it was
    erased here (with the revisions that follow it). Returns ref → id here, the refs found here, how
    many were erased here, and the ids here whose state the merge changed."""
    refs: dict[int, int] = {}
    was_here: set[int] = set()
    memories = sorted(checked.of("memory"), key=lambda m: (m.get("id") or 0, m["ref"]))
    # A memory keeps its first id through its corrections, so an earlier revision can come after the
    # one that revised it in id order: what is left out (erased here, and every revision of one) is
    # settled before anything is written, and the revision links after.
    erased = {m["ref"] for m in memories if t.erased_here(conn, m)}
    revised_by: dict[int, list[int]] = {}
    for m in memories:
        if m["predecessor"] is not None:
            revised_by.setdefault(m["predecessor"], []).append(m["ref"])
    todo = list(erased)
    while todo:
        for later in revised_by.get(todo.pop(), []):
            if later not in erased:
                erased.add(later)
                todo.append(later)
    merged: set[int] = set()
    here = t.MemoriesHere(conn, [] if ids.keep else memories)
    for m in memories:
        if m["ref"] in erased:
            continue
        found = None if ids.keep else here.find(m)
        if found is not None:
            refs[m["ref"]] = found
            was_here.add(m["ref"])
            if m.get("id") is not None:
                ids.chunks[m["id"]] = found
            if t.merge_fact(conn, change, found, m, entity_ids):
                merged.add(found)
            count("memory", False)
            continue
        predecessor = refs.get(m["predecessor"]) if m["predecessor"] else None
        refs[m["ref"]] = t.import_fact(conn, change, m, predecessor, entity_ids, ids)
        here.added(refs[m["ref"]], m)
        count("memory", True)
    written = [m for m in memories if m["ref"] in refs and m["ref"] not in was_here]
    t.set_predecessors(conn, change, [(refs[m["ref"]], refs[m["predecessor"]]) for m in written
                                      if m["predecessor"] in refs])
    for m in written:
        if m["predecessor"] in was_here:  # a revision of a memory already here: settled as sync settles forks
            merged |= {refs[m["ref"]], refs[m["predecessor"]]}
    return refs, was_here, len(erased), merged
