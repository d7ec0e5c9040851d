"""The MCP tools as plain functions over a ``Runtime``: no SDK, no asyncio, testable in-process.

Every tool reads through the vault's query builder (``FactFilter`` for the call's project, so the
project wall, soft delete and supersession hold on the keyword and the meaning path alike), writes
through ``ingest.remember`` (the one write entry, which stamps provenance through the one
provenance writer and strips ``vodou:context`` fences), and renders memories with
``results.fact_result`` inside the answer's size budget (``results.fit``).

A client may correct or forget only what it wrote itself (source ``mcp``, its own tool name); both
are soft and recorded in the vault's operation journal, so the person sees them and can undo them
(``vodou undo OP``). A correction keeps the memory's id. Nothing here erases.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.recall import build_recall_block
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.mcp.projects import ProjectChoice, choose_project, default_projects
from vodou_desktop.mcp.results import FALLIBLE, body, fact_page, fact_result, fit
from vodou_desktop.mcp.schemas import DEFAULT_K, DEFAULT_LIST, check_arguments
from vodou_desktop.pages import site_host
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import EmbedderState, search_wait
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.clock import since_time
from vodou_desktop.vault.facts import clean_project
from vodou_desktop.vault.projects_store import all_projects
from vodou_desktop.vault.secret_filter import removed_note

UNNAMED_CLIENT = "mcp-client"
MAX_CLIENT_NAME = 64
MCP_SOURCE = "mcp"
_CURSOR = re.compile(r"before:([1-9][0-9]{0,18})")


def client_tool_name(name: Any) -> str:
    """The provenance ``tool`` for a client: its ``clientInfo.name``, one clean short line."""
    if not isinstance(name, str):
        return UNNAMED_CLIENT
    clean = "".join(ch for ch in name if unicodedata.category(ch)[0] not in ("C",)).strip()
    return clean[:MAX_CLIENT_NAME] or UNNAMED_CLIENT


class Cancelled(KnownError):
    """The client cancelled the call (or went away) while it waited."""


@dataclass(frozen=True)
class Caller:
    """Who is calling and from where: the client's name, its root URIs, the server's working folder;
    ``roots_note`` says why there are no roots; ``cancel`` is set when the call is cancelled."""

    client: str = UNNAMED_CLIENT
    roots: Sequence[str] = ()
    cwd: str | None = None
    roots_note: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event, compare=False)


@dataclass
class MemoryTools:
    runtime: Runtime
    pinned: str | None = None
    max_chars: int | None = None

    def __post_init__(self) -> None:
        self.pinned = clean_project(self.pinned)
        if self.max_chars is None:
            self.max_chars = int(self.runtime.settings.mcp_max_chars)

    def call(self, name: str, arguments: Any, caller: Caller) -> dict[str, Any]:
        """Run tool ``name``; ``InvalidInput``/``NotFound``/``VaultUnavailable`` explain a refusal."""
        args = check_arguments(name, arguments)
        handler: Callable[[dict[str, Any], Caller], dict[str, Any]] = getattr(self, f"_{name}")
        return handler(args, caller)

    # -- context -----------------------------------------------------------------------------
    def project(self, args: dict[str, Any], caller: Caller) -> ProjectChoice:
        argument = args.get("project")
        if self.pinned is not None or clean_project(argument) is not None:  # no folder lookup needed
            return choose_project(argument, (), None, (), pinned=self.pinned)
        mapping, defaults = self.runtime.vault.read(lambda c: (all_projects(c), default_projects(c, caller.client)))
        return choose_project(argument, caller.roots, caller.cwd, mapping, defaults=defaults,
                              roots_note=caller.roots_note)

    def _fresh(self) -> None:
        """See writes by the app, ``vodou serve`` or the CLI since the last call."""
        self.runtime.vault.poll_external()

    def _wait_for_model(self, caller: Caller) -> None:
        """Wait, at most ``search_wait()``, for the model while it loads, in short steps, so a cancelled
        call (or a client that went away) stops waiting at once."""
        deadline = time.monotonic() + search_wait()
        while self.runtime.embedder.state is EmbedderState.LOADING:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or caller.cancel.wait(min(0.05, remaining)):
                break
        if caller.cancel.is_set():
            raise Cancelled("cancelled by the client")

    def _envelope(self, where: ProjectChoice, **data: Any) -> dict[str, Any]:
        return {"label": FALLIBLE, "project": where.project, "project_reason": where.reason, **data}

    def _budget(self) -> int:
        assert self.max_chars is not None
        return self.max_chars

    def _visible(self, fact_id: int, where: ProjectChoice) -> Fact:
        return self.runtime.vault.read(partial(q.get_fact, fact_id=fact_id, f=FactFilter(project=where.project)))

    # -- reading -----------------------------------------------------------------------------
    def _search_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        self._wait_for_model(caller)
        semantic = self.runtime.search.semantic
        found = self.runtime.search.search(args["query"], FactFilter(project=where.project), operators=True,
                                           k=int(args.get("k", DEFAULT_K)))
        extra = {} if semantic else {"note": self.runtime.embedder.why_not_ready()}
        envelope = self._envelope(where, search="meaning and keyword" if semantic else "keyword", semantic=semantic,
                                  **extra)
        return fit(envelope, "results", [fact_result(r.fact, r.score) for r in found], self._budget())

    def _get_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        fact = self._visible(int(args["id"]), where)
        offset, total = int(args.get("offset", 0)), len(body(fact))
        if offset and offset >= total:
            raise InvalidInput(f"offset {offset} is past the end of memory {fact.id} ({total} characters)")
        length = max(1_000, self._budget() // 2 - 2_000)  # the text travels once, its metadata twice
        return self._envelope(where, memory=fact_page(fact, offset, length))

    def _list_memories(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        filt = FactFilter(project=where.project, kinds=(args["kind"],) if "kind" in args else (),
                          tools=(args["tool"],) if "tool" in args else (),
                          host=site_host(args["site"]) if "site" in args else None,
                          saved_since=since_time(args["since"], "since") if "since" in args else None)
        before = _cursor(args.get("cursor"))
        limit = int(args.get("limit", DEFAULT_LIST))
        facts = self.runtime.vault.read(lambda c: q.list_facts(c, filt, limit=limit + 1, before_id=before))
        more = len(facts) > limit
        data = fit(self._envelope(where, order="newest first"), "memories",
                   [fact_result(f) for f in facts[:limit]], self._budget())
        shown = data["memories"]
        if shown and (more or "omitted" in data):
            data["next_cursor"] = f"before:{shown[-1]['id']}"
        elif not shown and facts:  # not even one preview fits: never strand the reader
            raise InvalidInput("not even one memory fits in this server's answer size (mcp_max_chars)")
        else:
            data["next_cursor"] = None
        if "omitted" in data:
            data["omitted"]["note"] = "the rest of this page comes with next_cursor"
        return data

    def _recall(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        query = args.get("query")
        if query and query.strip():
            self._wait_for_model(caller)
        block = build_recall_block(OperatorMemory(self.runtime.vault), self.runtime.search, query, where.project)
        return self._envelope(where, **block.as_json())

    def _list_projects(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)

        def read(c: Any) -> tuple[Any, ...]:
            return (dict(all_projects(c)), q.count_facts_by_project(c, FactFilter(project=ALL_PROJECTS)),
                    q.count_facts(c, FactFilter(project=None)))

        folders, counts, global_count = self.runtime.vault.read(read)
        names = sorted(set(folders) | set(counts))
        if self.pinned is not None:  # a pinned server shows only its own project
            names = [self.pinned]
        projects = [{"name": n, "memories": counts.get(n, 0), "folder": folders.get(n)} for n in names]
        return self._envelope(where, projects=projects, global_memories=global_count, pinned=self.pinned is not None)

    # -- writing -----------------------------------------------------------------------------
    def _remember(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        where = self.project(args, caller)
        origin = Origin(kind=MCP_SOURCE, tier="capture", tool=caller.client)
        fact_id = remember(self.runtime.vault, args["text"], origin, kind=args.get("kind", "fact"),
                           project=where.project)
        fact = self.runtime.vault.read(partial(q.get_fact, fact_id=fact_id, f=FactFilter(project=ALL_PROJECTS)))
        saved = (f"saved by {caller.client}; {fact_id.note}, the text holds [secret removed: KIND] in its place"
                 if fact_id.note else f"saved as written by {caller.client}")
        return self._envelope(where, memory=fact_result(fact), secrets_removed=list(fact_id.secrets_removed),
                              note=f"{saved}; the person can review and forget it")

    def _own(self, args: dict[str, Any], caller: Caller, verb: str, how: str) -> tuple[ProjectChoice, Fact]:
        """The memory ``args['id']`` if this client wrote it; otherwise a refusal naming how the person can."""
        self._fresh()
        where = self.project(args, caller)
        fact = self._visible(int(args["id"]), where)
        if fact.source_kind != MCP_SOURCE or fact.tool != caller.client:
            writer = f"{fact.tool or fact.source_kind}" + (" over MCP" if fact.source_kind == MCP_SOURCE else "")
            raise InvalidInput(f"memory {fact.id} was written by {writer}, not by {caller.client}: an AI tool may"
                               f" only {verb} what it wrote. The person can {verb} it with {how.format(id=fact.id)}"
                               " or in the memory browser")
        return where, fact

    def _correct_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        where, fact = self._own(args, caller, "correct", "`vodou mem correct {id} TEXT`")
        done = Forgetting(self.runtime.vault).correct_fact(fact.id, args["text"], by=caller.client)
        new = self.runtime.vault.read(partial(q.get_fact, fact_id=done["id"], f=FactFilter(project=ALL_PROJECTS)))
        removed = removed_note(done["secrets_removed"])
        return self._envelope(where, memory=fact_result(new), revision=done["revision"], op=done["op"],
                              secrets_removed=done["secrets_removed"],
                              note=f"corrected in place{f' ({removed})' if removed else ''}: memory {fact.id} keeps"
                                   f" its id; the earlier text stays in its history, never recalled. The person can"
                                   f" undo it: vodou undo {done['op']}")

    def _forget_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        where, fact = self._own(args, caller, "forget", "`vodou mem forget --id {id}`")
        done = Forgetting(self.runtime.vault).forget_fact(fact.id, by=caller.client)
        return self._envelope(where, id=fact.id, op=done["op"], forgotten=True,
                              note=f"hidden, not erased. The person can undo it: vodou undo {done['op']}")


def _cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    match = _CURSOR.fullmatch(cursor)
    if match is None:
        raise InvalidInput("cursor is not one this server gave: pass next_cursor from the previous page")
    return int(match.group(1))
