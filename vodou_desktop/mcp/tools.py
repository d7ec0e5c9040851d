"""The MCP tools as plain functions over a ``Runtime``: no SDK, no asyncio, testable in-process.

Every tool reads through the vault's query builder (``FactFilter`` for the call's project, so the
project wall holds on the keyword and the meaning path alike), writes through
``ingest.remember.remember`` (the one write entry, which stamps provenance through the one
provenance writer and strips ``vodou:context`` fences), and renders memories with
``results.fact_result``. Nothing here forgets or erases: that stays with the person.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.recall import build_recall_block
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.mcp.projects import ProjectChoice, choose_project
from vodou_desktop.mcp.results import FALLIBLE, fact_result
from vodou_desktop.mcp.schemas import DEFAULT_K, check_arguments
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import search_wait
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import clean_project
from vodou_desktop.vault.projects_store import all_projects

UNNAMED_CLIENT = "mcp-client"
MAX_CLIENT_NAME = 64


def client_tool_name(name: Any) -> str:
    """The provenance ``tool`` for a client: its ``clientInfo.name``, one clean short line."""
    if not isinstance(name, str):
        return UNNAMED_CLIENT
    clean = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return clean[:MAX_CLIENT_NAME] or UNNAMED_CLIENT


@dataclass(frozen=True)
class Caller:
    """Who is calling and from where: the client's name, its root URIs, the server's working folder."""

    client: str = UNNAMED_CLIENT
    roots: Sequence[str] = ()
    cwd: str | None = None


@dataclass
class MemoryTools:
    runtime: Runtime

    def call(self, name: str, arguments: Any, caller: Caller) -> dict[str, Any]:
        """Run tool ``name``; ``InvalidInput``/``NotFound``/``VaultUnavailable`` explain a refusal."""
        args = check_arguments(name, arguments)
        handler: Callable[[dict[str, Any], Caller], dict[str, Any]] = getattr(self, f"_{name}")
        return handler(args, caller)

    # -- context -----------------------------------------------------------------------------
    def project(self, args: dict[str, Any], caller: Caller) -> ProjectChoice:
        if clean_project(args.get("project")) is not None:  # the argument decides: no folder lookup
            return choose_project(args["project"], (), None, ())
        mapping = self.runtime.vault.read(all_projects)
        return choose_project(args.get("project"), caller.roots, caller.cwd, mapping)

    def _fresh(self) -> None:
        """See writes by the app, ``vodou serve`` or the CLI since the last call."""
        self.runtime.vault.poll_external()

    def _wait_for_model(self) -> None:
        self.runtime.embedder.wait(search_wait())

    def _envelope(self, where: ProjectChoice, **data: Any) -> dict[str, Any]:
        return {"label": FALLIBLE, "project": where.project, "project_reason": where.reason, **data}

    # -- tools -------------------------------------------------------------------------------
    def _search_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        self._wait_for_model()
        semantic = self.runtime.search.semantic
        found = self.runtime.search.search(args["query"], FactFilter(project=where.project),
                                           k=int(args.get("k", DEFAULT_K)))
        extra = {} if semantic else {"note": self.runtime.embedder.why_not_ready()}
        return self._envelope(where, search="meaning and keyword" if semantic else "keyword", semantic=semantic,
                              **extra, results=[fact_result(r.fact, r.score) for r in found])

    def _get_memory(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        fact = self.runtime.vault.read(partial(q.get_fact, fact_id=int(args["id"]),
                                               f=FactFilter(project=where.project)))
        return self._envelope(where, memory=fact_result(fact))

    def _recall(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        query = args.get("query")
        if query and query.strip():
            self._wait_for_model()
        block = build_recall_block(OperatorMemory(self.runtime.vault), self.runtime.search, query, where.project)
        return self._envelope(where, **block.as_json())

    def _remember(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        where = self.project(args, caller)
        origin = Origin(kind="mcp", tier="capture", tool=caller.client)
        fact_id = remember(self.runtime.vault, args["text"], origin, kind=args.get("kind", "fact"),
                           project=where.project)
        fact = self.runtime.vault.read(partial(q.get_fact, fact_id=fact_id, f=FactFilter(project=ALL_PROJECTS)))
        return self._envelope(where, memory=fact_result(fact),
                              note=f"saved as written by {caller.client}; the person can review and forget it")

    def _list_projects(self, args: dict[str, Any], caller: Caller) -> dict[str, Any]:
        self._fresh()
        where = self.project(args, caller)
        rows = self.runtime.vault.read(all_projects)
        return self._envelope(where, projects=[{"name": n, "folder": p} for n, p in rows])
