"""Forget, undo, erase (GOV-6..8) and the 8-second confirm (GOV-7).

Forget is soft and undoable: it stamps ``invalid_at`` with an operation id on every visible fact
whose source host or page host is the host or a subdomain (``forget_host``), on one fact
(``forget_fact``, the memory browser's Forget) or on one Library document (``forget_document``).
A site's Library documents are counted, and kept unless the person says they go too
(``documents=True``: a saved article was a deliberate choice, so it is asked, never assumed). Erase
is hard and irreversible: rows, their lineage, FTS entries, freed pages and the WAL.

The confirm rule is here, not in a UI: ``plan`` is the dry run and returns a token; ``confirm``
with that token within ``confirm_window`` seconds runs the forget. The tray and the extension both
call these, so "two clicks within 8 seconds" means the same thing everywhere.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.governance.ages import format_age
from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.pages import site_host
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import retraction as r

CONFIRM_WINDOW_S = 8.0


@dataclass
class _Pending:
    host: str
    issued_at: float
    used: bool = False


class Forgetting:
    """The retraction service. One instance per running app, so tokens are shared by UI and bridge."""

    def __init__(self, vault: Vault, clock: Callable[[], float] = time.monotonic,
                 confirm_window: float = CONFIRM_WINDOW_S, *, copies: bool = True) -> None:
        self.vault = vault
        self.copies = copies  # erase also rewrites the copies Vodou keeps (False: this is one of them)
        self.clock = clock
        self.confirm_window = confirm_window
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()

    # -- the two-step forget --------------------------------------------------------------
    def plan(self, host: str) -> dict[str, Any]:
        """Dry run: what forgetting ``host`` would hide, and a token to confirm it. Changes nothing."""
        counts = self._counts(site_host(host))
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._drop_stale()
            self._pending[token] = _Pending(counts["host"], self.clock())
        return {**counts, "token": token, "expires_in": self.confirm_window}

    def confirm(self, token: str) -> dict[str, Any]:
        """Run the forget planned under ``token``. Unknown, reused or expired tokens change nothing."""
        with self._lock:
            pending = self._pending.get(token) if isinstance(token, str) else None
            if pending is None:
                raise InvalidInput("unknown confirm token: run the dry run again")
            if pending.used:
                raise Conflict("this confirm token was already used: nothing was changed")
            age = self.clock() - pending.issued_at
            if age > self.confirm_window:
                del self._pending[token]
                raise Conflict(f"the confirm expired ({age:.1f} s > {self.confirm_window:g} s): nothing was changed;"
                               " run the dry run again")
            pending.used = True
        return self.forget_host(pending.host)

    def _drop_stale(self) -> None:
        now = self.clock()
        stale = [t for t, p in self._pending.items() if now - p.issued_at > self.confirm_window * 4]
        for t in stale:
            del self._pending[t]

    # -- direct forget (the CLI) ------------------------------------------------------------
    def forget_host(self, host: str, dry_run: bool = False, *, documents: bool = False) -> dict[str, Any]:
        """Hide every visible fact of ``host`` and its subdomains, and its Library documents too when
        ``documents``; with ``dry_run`` only count."""
        host = site_host(host)
        if dry_run:
            return {**self._counts(host), "dry_run": True}

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            ids = r.visible_host_fact_ids(conn, host)
            docs = r.host_document_ids(conn, host, live_only=True)
            op = r.record_operation(conn, change, r.FORGET_KIND, host, {"facts": len(ids), "documents": len(docs)})
            hidden = r.stamp_invalid(conn, change, ids, op)
            docs_hidden = r.stamp_documents_invalid(conn, change, docs, op) if documents else 0
            return {"op": op, "host": host, "dry_run": False, "facts": hidden, "documents": len(docs),
                    "facts_hidden": hidden, "documents_hidden": docs_hidden,
                    "documents_kept": len(docs) - docs_hidden}

        return dict(self.vault.write(job))

    def forget_document(self, doc_id: int) -> dict[str, Any]:
        """Hide one Library document under a new operation id (undone by ``undo``)."""
        doc_id = int(doc_id)

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            state = r.document_visibility(conn, doc_id)
            if state is None:
                raise NotFound(f"no library document with id {doc_id}")
            if state[0] is not None:
                raise Conflict(f"library document {doc_id} is already forgotten")
            op = r.record_operation(conn, change, r.FORGET_DOCUMENT_KIND, str(doc_id), {"documents": 1})
            return {"op": op, "document": doc_id, "documents_hidden": r.stamp_documents_invalid(conn, change,
                                                                                              [doc_id], op)}

        return dict(self.vault.write(job))

    def forget_fact(self, fact_id: int, by: str | None = None) -> dict[str, Any]:
        """Hide one visible fact under a new operation id (undone by ``undo``). Its revisions and
        fact group are left alone; a group whose canonical it was elects another. ``by`` names the
        AI tool that asked (kept in the operation's detail)."""
        fact_id = int(fact_id)
        detail: dict[str, Any] = {"facts": 1, **({"tool": by} if by else {})}

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            state = r.fact_visibility(conn, fact_id)
            if state is None:
                raise NotFound(f"no memory with id {fact_id}")
            if state[0] is not None:
                raise Conflict(f"memory {fact_id} is already forgotten ({state[1] or 'no reason'})")
            op = r.record_operation(conn, change, r.FORGET_FACT_KIND, str(fact_id), detail)
            hidden = r.stamp_invalid(conn, change, [fact_id], op)
            return {"op": op, "id": fact_id, "facts_hidden": hidden}

        return dict(self.vault.write(job))

    def correct_fact(self, fact_id: int, text: str, by: str | None = None) -> dict[str, Any]:
        """Correct a memory in place (it keeps its id) for the AI tool ``by`` (or the person), recorded
        as an operation so the person sees it and ``undo`` reverts it (the earlier text comes back)."""
        fact_id, clean = int(fact_id), strip_context(text)

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            done = js.correct(conn, change, fact_id, clean, tool=by)
            return {**done, "secrets_removed": list(change.secrets_removed)}

        return dict(self.vault.write(job))

    def forget_facts(self, ids: Sequence[int], by: str | None = None) -> dict[str, Any]:
        """Hide many memories as one operation (one undo brings them all back)."""
        wanted = list(ids)
        return dict(self.vault.write(lambda conn, change: js.forget(conn, change, wanted, tool=by)))

    def forget_tool(self, tool: str, dry_run: bool = False) -> dict[str, Any]:
        """Hide every visible fact written by ``tool`` (an MCP client's name, ``cli``, …) as one
        operation, undone by ``undo``; with ``dry_run`` only count, by source kind."""
        tool = _tool_name(tool)
        if dry_run:
            def count(conn) -> dict[str, Any]:  # type: ignore[no-untyped-def]
                ids = r.visible_tool_fact_ids(conn, tool)
                return {"tool": tool, "dry_run": True, "facts": len(ids), "by_source": r.source_kinds_of(conn, ids)}

            return dict(self.vault.read(count))

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            ids = r.visible_tool_fact_ids(conn, tool)
            by_source = r.source_kinds_of(conn, ids)
            op = r.record_operation(conn, change, r.FORGET_TOOL_KIND, tool, {"facts": len(ids)})
            hidden = r.stamp_invalid(conn, change, ids, op)
            return {"op": op, "tool": tool, "dry_run": False, "facts": hidden, "facts_hidden": hidden,
                    "by_source": by_source}

        return dict(self.vault.write(job))

    def _counts(self, host: str) -> dict[str, Any]:
        facts, docs = self.vault.read(lambda c: (len(r.visible_host_fact_ids(c, host)),
                                                 r.live_document_count(c, host)))
        return {"host": host, "facts": facts, "documents": docs}

    def undo(self, op: str) -> dict[str, Any]:
        """Clear exactly the stamps ``op`` (a host or a single-fact forget) set. A fact that another
        active forget also covers (one made on another computer, kept as a cover; or a host or tool
        forget whose rule it matches) is hidden again under that operation, so undo never resurrects
        what something else hid."""

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            record = r.get_operation(conn, op)
            if record is None or record["kind"] not in r.UNDOABLE_KINDS:
                raise NotFound(f"no forget operation {op!r}")
            if record["undone_at"]:
                raise Conflict(f"operation {op} was already undone ({format_age(record['undone_at'])})")
            if record["kind"] == r.CORRECT_FACT_KIND:
                new_id, old_id = int(record["target"]), int(record["detail"]["replaces"])
                memory = r.revert_correction(conn, change, op, new_id, old_id)
                hidden = int(r.get_operation(conn, op)["target"])  # type: ignore[index]  # where the revision went
                return {"op": op, "id": memory, "restored": memory, "hidden": hidden, "facts_restored": 1,
                        "facts_still_hidden": 0, "documents_restored": 0, "correction": True}
            restored = r.clear_stamps(conn, change, op)
            documents = r.clear_document_stamps(conn, change, op)
            # another operation that covers a row (a forget made on another computer) keeps it hidden
            still_hidden = len(r.settle_hidden(conn, change, "chunks", restored))
            documents -= len(r.settle_hidden(conn, change, "documents", r.covered_by(conn, "documents", op)))
            for other, other_host in r.active_forget_operations(conn, op):
                covered = set(r.visible_host_fact_ids(conn, other_host)) & set(restored)
                still_hidden += r.stamp_invalid(conn, change, sorted(covered), other)
            for other, other_tool in r.active_forget_operations(conn, op, r.FORGET_TOOL_KIND):
                covered = set(r.visible_tool_fact_ids(conn, other_tool)) & set(restored)
                still_hidden += r.stamp_invalid(conn, change, sorted(covered), other)
            for other, covered_ids in js.covering(conn, restored, op).items():  # selections, undone imports
                still_hidden += r.stamp_invalid(conn, change, covered_ids, other)
            r.reelect_canonicals(conn, change, r.group_ids(conn, restored))
            names = {r.FORGET_KIND: "host", r.FORGET_TOOL_KIND: "tool", r.FORGET_FACT_KIND: "id",
                     r.FORGET_DOCUMENT_KIND: "document", r.FORGET_FACTS_KIND: "facts"}
            text_target = record["kind"] in (r.FORGET_KIND, r.FORGET_TOOL_KIND)
            target = record["target"] if text_target else int(record["target"])
            return {"op": op, names[record["kind"]]: target, "facts_restored": len(restored) - still_hidden,
                    "facts_still_hidden": still_hidden, "documents_restored": documents}

        return dict(self.vault.write(job))

    def find_operation(self, given: str | None) -> dict[str, Any]:
        """The operation ``vodou undo`` acts on: the one whose id starts with ``given`` (with or without
        its ``op-``; a few characters are enough when they name one operation), else the newest forget
        not undone yet. An erase is named as such: it can never be undone."""
        if given is None:
            latest = self.vault.read(lambda c: r.latest_operation(c, r.UNDOABLE_KINDS, pending_only=True))
            if latest is None:
                raise NotFound("nothing to undo: no forget is waiting to be undone (an erase can never be undone)")
            return latest
        record = operation_named(self.vault, given)
        if record["kind"] in r.ERASE_KINDS:
            raise InvalidInput(f"operation {record['id']} was an erase: erased memories are deleted for good and"
                               " cannot be undone")
        if record["kind"] not in r.UNDOABLE_KINDS:
            raise InvalidInput(f"operation {record['id']} cannot be undone")
        return record

    def latest_erase(self) -> dict[str, Any] | None:
        """The newest erase (``vodou undo`` says when one came after the forget it undoes)."""
        return self.vault.read(lambda c: r.latest_operation(c, r.ERASE_KINDS, pending_only=False))

    # -- erase ------------------------------------------------------------------------------
    def erase_fact(self, fact_id: int) -> dict[str, Any]:
        """Hard delete a fact with its whole revision lineage; then the WAL is truncated, and every copy
        Vodou keeps that holds any revision of it (by global id: a copy made before a correction holds
        the earlier text under the same id) is rewritten."""

        def job(conn, change: Change) -> tuple[dict[str, Any], list[str]]:  # type: ignore[no-untyped-def]
            if not r.existing_fact_ids(conn, [int(fact_id)]):
                raise NotFound(f"no memory with id {fact_id}")
            ids = sorted(r.lineage(conn, [int(fact_id)]))
            gone = list(js.sync_ids_of(conn, ids).values())
            deleted = r.delete_facts(conn, change, ids)
            op = r.record_operation(conn, change, "erase_fact", str(fact_id), {"facts": deleted})
            return {"op": op, "id": int(fact_id), "facts_erased": deleted}, gone

        result, gone = self.vault.write(job)
        self.vault.checkpoint()
        return self._erase_in_copies(dict(result), lambda f: f.erase_global_ids(gone),
                                     lambda c: _holds_any(c, gone))

    def erase_facts(self, ids: Sequence[int]) -> dict[str, Any]:
        """Hard delete many memories, each with its whole revision lineage, as one operation; then the
        WAL is truncated and every copy Vodou keeps that holds any of them is rewritten."""
        wanted = list(ids)

        def job(conn, change: Change) -> tuple[dict[str, Any], list[str]]:  # type: ignore[no-untyped-def]
            memories = js.memories(conn, wanted)
            rows = sorted(r.lineage(conn, memories))
            gone = list(js.sync_ids_of(conn, rows).values())
            deleted = r.delete_facts(conn, change, rows)
            op = r.record_operation(conn, change, r.ERASE_FACTS_KIND, str(len(memories)),
                                    {"facts": deleted, "memories": len(memories)})
            return {"op": op, "ids": memories, "memories_erased": len(memories), "facts_erased": deleted}, gone

        result, gone = self.vault.write(job)
        self.vault.checkpoint()
        return self._erase_in_copies(dict(result), lambda f: f.erase_global_ids(gone),
                                     lambda c: _holds_any(c, gone))

    def erase_global_ids(self, sync_ids: Sequence[str]) -> dict[str, Any]:
        """Erase the memories with these global ids and their lineage (the same erase, in a copy)."""
        wanted = list(sync_ids)

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            rows = sorted(r.lineage(conn, js.row_ids_of(conn, wanted).values()))
            return {"facts_erased": r.delete_facts(conn, change, rows)}

        result = dict(self.vault.write(job))
        self.vault.checkpoint()
        return result

    def erase_host(self, host: str, *, documents: bool = False) -> dict[str, Any]:
        """Hard delete every fact of ``host`` (and subdomains) with lineage, and its Library documents
        (forgotten ones included) when ``documents``; otherwise they are kept and counted."""
        host = site_host(host)

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            ids = sorted(r.lineage(conn, r.all_host_fact_ids(conn, host)))
            deleted = r.delete_facts(conn, change, ids)
            docs = r.host_document_ids(conn, host, live_only=False)
            docs_erased = r.delete_documents(conn, change, docs) if documents else 0
            keyed = r.keyed_host(conn, change, host)  # the operation must not keep the erased host's name
            r.redact_host_targets(conn, change, host, keyed)
            detail: dict[str, Any] = {"facts": deleted, "documents": len(docs), "documents_erased": docs_erased}
            synced = r.sync_keyed_host(conn, host)  # the other computers of a synced vault erase it too
            if synced is not None:
                detail.update({"sync_host": synced, "documents_too": documents})
            op = r.record_operation(conn, change, r.ERASE_HOST_KIND, keyed, detail)
            return {"op": op, "host": host, "facts_erased": deleted, "documents_erased": docs_erased,
                    "documents_kept": len(docs) - docs_erased}

        result = dict(self.vault.write(job))
        self.vault.checkpoint()
        return self._erase_in_copies(
            result, lambda f: f.erase_host(host, documents=documents),
            lambda c: bool(r.all_host_fact_ids(c, host)) or (documents and bool(r.host_document_ids(
                c, host, live_only=False))))

    def erase_document(self, doc_id: int) -> dict[str, Any]:
        """Hard delete one Library document: its text, index entries, freed pages; then the WAL."""
        doc_id = int(doc_id)

        def job(conn, change: Change) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            if r.document_visibility(conn, doc_id) is None:
                raise NotFound(f"no library document with id {doc_id}")
            erased = r.delete_documents(conn, change, [doc_id])
            op = r.record_operation(conn, change, "erase_document", str(doc_id), {"documents": erased})
            return {"op": op, "document": doc_id, "documents_erased": erased}

        result = dict(self.vault.write(job))
        self.vault.checkpoint()
        return self._erase_in_copies(result, lambda f: f.erase_document(doc_id),
                                     lambda c: r.document_visibility(c, doc_id) is not None)

    def _erase_in_copies(self, result: dict[str, Any], erase: Callable[[Forgetting], Any],
                         holds: Callable[[Any], bool]) -> dict[str, Any]:
        """The same erase on every copy Vodou keeps that holds the erased rows (GOV-8: erase leaves
        nothing on disk); the result says how many were rewritten and which were not reached."""
        if not self.copies:
            return result
        from vodou_desktop.data.erase_copies import erase_in_copies  # files, above the vault

        return {**result, **erase_in_copies(self.vault.path, erase, holds).as_json()}


def _holds_any(conn: Any, sync_ids: Sequence[str]) -> bool:
    """Whether a copy holds any memory with these global ids."""
    if not sync_ids:
        return False
    return bool(js.row_ids_of(conn, sync_ids))


def _tool_name(tool: str) -> str:
    if not isinstance(tool, str) or not tool.strip():
        raise InvalidInput("name the tool whose memories to forget (for example the MCP client's name)")
    return tool.strip()


def operation_named(vault: Vault, given: str) -> dict[str, Any]:
    """The one operation whose id starts with ``given`` (with or without its ``op-``; a few characters
    are enough when they name one), for ``vodou undo ID`` and the journal; refused in words otherwise."""
    prefix = given.strip().lower()
    prefix = prefix if prefix.startswith("op-") else "op-" + prefix
    if len(prefix) <= len("op-"):
        raise InvalidInput("name the action to undo by the first characters of its id, e.g. vodou undo c514")
    found = vault.read(lambda c: r.operations_starting(c, prefix))
    if not found:
        raise NotFound(f"no operation {given.strip()!r} in this vault")
    if len(found) > 1:
        raise Conflict(f"{given.strip()!r} starts the ids of {len(found)} operations; give more characters")
    return dict(found[0])
