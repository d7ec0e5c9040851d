"""THE read path for facts. Every reader of ``chunks`` is in this module and builds its WHERE
clause with ``FactFilter.where()``, which always applies the hard predicates (SEARCH-3):

- project wall: ``project_id = :p OR project_id IS NULL`` (NULL is global and passes everywhere);
- soft delete: ``invalid_at IS NULL`` unless an owner view asks to see forgotten facts;
- supersession: ``superseded_by IS NULL``;
- facts never include document chunks (``document_id IS NULL``; SEARCH-4).

Each reader registers itself with ``@reader`` so that tests can enumerate them all and prove
each one honours every predicate (GOV-5). A structural test fails on any other module that
selects from ``chunks``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Final, NamedTuple, TypeVar

import apsw

from vodou_desktop.errors import InvalidInput, NotFound, PolicyRefused
from vodou_desktop.pages import normalize_host
from vodou_desktop.vault.connection import id_array, scalar
from vodou_desktop.vault.records import (
    CONVERSATION,
    FACT_COLUMNS,
    Document,
    Fact,
    SourceMessage,
    document_from_row,
    fact_from_row,
)

F = TypeVar("F", bound=Callable[..., Any])


class _AllProjects:
    def __repr__(self) -> str:
        return "ALL_PROJECTS"


ALL_PROJECTS: Final = _AllProjects()
"""Owner views (the memory browser, ``mem list``): every project, global included."""

READERS: dict[str, Callable[..., Any]] = {}


def reader(fn: F) -> F:
    """Register a reader of governed columns (enumerated by the policy tests)."""
    READERS[fn.__name__] = fn
    return fn


@dataclass(frozen=True)
class FactFilter:
    """What a caller may see. The defaults are the safe ones."""

    project: str | None | _AllProjects = None  # None: no project context → global facts only
    # With a project name: its memories and the global ones (the wall), or only its own (False: the
    # person's "this project only"). Either way never more than the wall.
    global_too: bool = True
    include_forgotten: bool = False
    include_superseded: bool = False
    host: str | None = None  # source host or page host is this host or a subdomain
    tiers: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # the writing tool of the source (``cli``, an MCP client's name, …)
    saved_since: str | None = None  # ISO time: only memories saved at or after it
    after: str | None = None  # ISO time: only memories true/said at or after it (their age: valid_at, else saved)
    before: str | None = None  # ISO time: only memories true/said before it
    ids: tuple[int, ...] | None = None  # only these memories (a selection); () lets none through

    def where(self) -> tuple[str, list[Any]]:
        """SQL predicates over ``c`` (chunks) and ``s`` (memory_sources), with parameters."""
        clauses = ["c.document_id IS NULL"]
        params: list[Any] = []
        if self.project is None:
            clauses.append("c.project_id IS NULL")
        elif isinstance(self.project, str):
            clauses.append(_PROJECT_AND_GLOBAL if self.global_too else _PROJECT_ONLY)
            params.append(self.project)
        if not self.include_forgotten:
            clauses.append("c.invalid_at IS NULL")
        if not self.include_superseded:
            clauses.append("c.superseded_by IS NULL")
        if self.host:
            host = normalize_host(self.host)
            clauses.append(
                "(s.source_host = ? OR s.source_host LIKE ? ESCAPE '\\'"
                " OR c.page_host = ? OR c.page_host LIKE ? ESCAPE '\\')"
            )
            pattern = "%." + host.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [host, pattern, host, pattern]
        if self.tiers:
            clauses.append(f"s.tier IN ({','.join('?' * len(self.tiers))})")
            params += list(self.tiers)
        if self.kinds:
            clauses.append(f"c.kind IN ({','.join('?' * len(self.kinds))})")
            params += list(self.kinds)
        if self.tools:
            clauses.append(f"s.tool IN ({','.join('?' * len(self.tools))})")
            params += list(self.tools)
        if self.saved_since:
            clauses.append("c.created_at >= ?")
            params.append(self.saved_since)
        if self.after:
            clauses.append("coalesce(c.valid_at, c.created_at) >= ?")
            params.append(self.after)
        if self.before:
            clauses.append("coalesce(c.valid_at, c.created_at) < ?")
            params.append(self.before)
        if self.ids is not None:
            clauses.append("c.id IN carray(?)" if self.ids else "0")
            if self.ids:
                params.append(id_array(self.ids))
        return " AND ".join(clauses), params


_PROJECT_AND_GLOBAL = "(c.project_id = ? OR c.project_id IS NULL)"
# The person's "this project only" (a narrowing of the wall above, never a wall of its own): the
# one predicate on a project without the global carve-out, reviewed in tests/code_audit.py.
_PROJECT_ONLY = "c.project_id = ?"


# -- scopes: what a project group means (this project only, with global, global only) -----------

class Scope(StrEnum):
    """The three ways to look at a project: its own memories, with the global ones, or the global ones
    alone. Global memories (NULL project, every preference) are seen from every project."""

    PROJECT_ONLY = "project"
    PROJECT_AND_GLOBAL = "project+global"
    GLOBAL_ONLY = "global"


def within(f: FactFilter, project: str | None, scope: Scope = Scope.PROJECT_AND_GLOBAL) -> FactFilter:
    """``f`` narrowed to ``project`` seen with ``scope`` (``project`` is ignored for ``GLOBAL_ONLY``).

    Never wider than ``f``: a caller walled into one project (an MCP server pinned to it, a client's
    folder) asking for another gets ``PolicyRefused``, not the other project's memories."""
    scope = Scope(scope)
    if scope is Scope.GLOBAL_ONLY:
        target: str | None = None
        global_too = True
    else:
        if not isinstance(project, str) or not project.strip():
            raise InvalidInput("name the project (or look at the global memories only)")
        target, global_too = project.strip(), scope is Scope.PROJECT_AND_GLOBAL
    if isinstance(f.project, _AllProjects):
        return replace(f, project=target, global_too=global_too)
    if target is None and (f.project is None or f.global_too):
        return replace(f, project=None, global_too=True)
    if target is not None and f.project == target:
        return replace(f, global_too=f.global_too and global_too)
    wanted = "the global memories" if target is None else f"project {target}"
    raise PolicyRefused(f"only {_seen(f)} can be seen here: {wanted} is outside it")


def _seen(f: FactFilter) -> str:
    if f.project is None:
        return "the global memories"
    return f"project {f.project}" + (" and the global memories" if f.global_too else "")


@dataclass(frozen=True)
class ProjectCounts:
    """How many memories a filter lets through in each project and among the global ones: what a
    project list (the memory browser's sidebar, ``vodou projects list``) shows for every scope."""

    projects: dict[str, int]  # each project's own memories, by name
    global_count: int

    def count(self, project: str | None, scope: Scope = Scope.PROJECT_ONLY) -> int:
        scope = Scope(scope)
        if scope is Scope.GLOBAL_ONLY:
            return self.global_count
        own = self.projects.get(project or "", 0)
        return own + self.global_count if scope is Scope.PROJECT_AND_GLOBAL else own

    @property
    def total(self) -> int:
        return sum(self.projects.values()) + self.global_count

    def as_json(self) -> dict[str, Any]:
        return {"global": self.global_count, "total": self.total,
                "projects": [{"name": name, "only": n, "with_global": n + self.global_count}
                             for name, n in self.projects.items()]}


_FROM = "FROM chunks c JOIN memory_sources s ON s.id = c.source_id"
# Readers of given ids: each id is one primary-key seek. Without NOT INDEXED SQLite answers
# ``c.id IN (...) AND c.document_id IS NULL`` through the document index (a seek there, then one in
# the table for every id): a third slower for 300 ids.
_FROM_IDS = "FROM chunks c NOT INDEXED JOIN memory_sources s ON s.id = c.source_id"


def _select(conn: apsw.Connection, f: FactFilter, extra: str, params: Sequence[Any], source: str = _FROM) -> list[Fact]:
    where, wparams = f.where()
    sql = f"SELECT {FACT_COLUMNS} {source} WHERE {where} AND {extra}"
    return [fact_from_row(row) for row in conn.execute(sql, [*wparams, *params])]


@reader
def get_fact(conn: apsw.Connection, fact_id: int, f: FactFilter) -> Fact:
    rows = _select(conn, f, "c.id = ?", [fact_id])
    if not rows:
        raise NotFound(f"no memory with id {fact_id} (or it is hidden here)")
    return rows[0]


MAX_REVISIONS = 200  # a history longer than this shows its newest revisions


@reader
def revision_history(conn: apsw.Connection, fact_id: int, f: FactFilter) -> list[Fact]:
    """A memory's revisions that ``f`` lets through, oldest first, ending with ``fact_id`` itself (an
    owner's view passes ``include_superseded``: history is never recalled, only shown)."""
    fact = get_fact(conn, fact_id, f)
    older: list[Fact] = []
    current = fact
    while current.predecessor_id is not None and len(older) < MAX_REVISIONS:
        rows = _select(conn, f, "c.id = ?", [current.predecessor_id])
        if not rows:
            break
        current = rows[0]
        older.append(current)
    return [*reversed(older), fact]


@reader
def facts_by_ids(conn: apsw.Connection, ids: Sequence[int], f: FactFilter) -> list[Fact]:
    """The facts among ``ids`` that ``f`` lets through (used to filter vector candidates)."""
    return _select(conn, f, "c.id IN carray(?)", [id_array(ids)], _FROM_IDS) if ids else []


class RankRow(NamedTuple):
    """What ranking needs of a candidate fact, without its text and provenance (``rank_rows``). A
    tuple: search makes a few hundred per query."""

    id: int
    tier: str
    is_canonical: bool
    scope: str | None
    kind: str = "fact"
    message: int | None = None  # the source event (message) it came from, when a batch wrote it


@reader
def rank_rows(conn: apsw.Connection, ids: Sequence[int], f: FactFilter) -> list[RankRow]:
    """The facts among ``ids`` that ``f`` lets through, with only what ranking weighs (tier,
    duplicate status, scope): search reads full facts only for the results it returns."""
    if not ids:
        return []
    where, params = f.where()
    sql = f"SELECT {_RANK_COLUMNS} {_FROM_IDS} WHERE {where} AND c.id IN carray(?)"
    return [_rank_row(r) for r in conn.execute(sql, [*params, id_array(ids)])]


_RANK_COLUMNS = "c.id, s.tier, c.is_canonical, c.scope, c.kind, c.source_event_id"


@reader
def match_texts(conn: apsw.Connection, ids: Sequence[int], f: FactFilter) -> list[tuple[int, str, str | None]]:
    """The text and context words of the facts among ``ids`` that ``f`` lets through: what search
    holds a query's terms against (term coverage, the second hop's words)."""
    if not ids:
        return []
    where, params = f.where()
    sql = f"SELECT c.id, c.text, c.context {_FROM_IDS} WHERE {where} AND c.id IN carray(?)"
    return [(int(r[0]), r[1], r[2]) for r in conn.execute(sql, [*params, id_array(ids)])]


def _rank_row(r: Sequence[Any]) -> RankRow:
    return RankRow(r[0], r[1], bool(r[2]), r[3], r[4], r[5])


@reader
def list_facts(conn: apsw.Connection, f: FactFilter, limit: int = 100, offset: int = 0,
               before_id: int | None = None) -> list[Fact]:
    """Newest first; ``before_id`` pages by keyset (ids below it), which never skips or repeats a
    memory when others are added or forgotten between pages."""
    where, params = f.where()
    if before_id is not None:
        where += " AND c.id < ?"
        params = [*params, before_id]
    sql = f"SELECT {FACT_COLUMNS} {_FROM} WHERE {where} ORDER BY c.id DESC LIMIT ? OFFSET ?"
    return [fact_from_row(row) for row in conn.execute(sql, [*params, limit, offset])]


# The memory browser's sort orders, done in SQL (every order ends on the id, so it is total and a
# page never shows a row twice). "newest"/"oldest" go by the memory's event time, as its Age reads.
FACT_ORDERS: Final = {
    # a person's messages kept whole (conversation memory) come after what was distilled from them
    "newest": f"c.kind = '{CONVERSATION}', coalesce(c.valid_at, c.created_at) DESC, c.id DESC",
    "oldest": "coalesce(c.valid_at, c.created_at), c.id",
    "project": "c.project_id IS NULL, c.project_id, c.id DESC",
    "kind": "c.kind, c.id DESC",
    "source": "coalesce(s.source_host, c.page_host, s.tool, s.kind), c.id DESC",
}


@reader
def ordered_fact_ids(conn: apsw.Connection, f: FactFilter, order: str = "newest", limit: int = -1,
                     ids: Sequence[int] | None = None) -> list[int]:
    """The ids of the facts ``f`` lets through in one of ``FACT_ORDERS`` (the first ``limit``; all
    with -1), among ``ids`` when given (a search's results sorted another way). Ids only: the
    browser hydrates the rows it shows, a page at a time (``facts_by_ids``)."""
    if order not in FACT_ORDERS:
        raise InvalidInput(f"unknown order {order!r}; one of {', '.join(FACT_ORDERS)}")
    where, params = f.where()
    among, source = "", _FROM
    if ids is not None:
        among, source = " AND c.id IN carray(?)", _FROM_IDS
        params = [*params, id_array(ids)]
    sql = f"SELECT c.id {source} WHERE {where}{among} ORDER BY {FACT_ORDERS[order]} LIMIT ?"
    return [int(r[0]) for r in conn.execute(sql, [*params, limit])]


@reader
def allowed_ids(conn: apsw.Connection, ids: Sequence[int], f: FactFilter) -> set[int]:
    """The ids among ``ids`` that ``f`` lets through: filtering candidates without hydrating facts."""
    if not ids:
        return set()
    where, params = f.where()
    sql = f"SELECT c.id {_FROM_IDS} WHERE {where} AND c.id IN carray(?)"
    return {int(r[0]) for r in conn.execute(sql, [*params, id_array(ids)])}


# Ranking alone first, then the predicates on those few ids: joining every match of a common term
# to chunks and sources before sorting cost ~3x more at 100k chunks (bench/search.py).
# bm25 column weights: the fact's own text, then its context words (the date it refers to).
CONTEXT_WEIGHT = 0.2
KEYWORD_OVERFETCH = 8
KEYWORD_FIRST_RANK = 4  # matches ranked first, per result wanted: enough unless few pass the filter
# The best ``limit * KEYWORD_OVERFETCH`` matches by bm25 (a co-routine, in rank order), each checked
# against the predicates in that order (CROSS JOIN keeps the matches the outer loop, so every check is
# one primary-key seek) until ``limit`` pass: SQLite knows the rows come sorted and sorts nothing again.
_FTS_CHECKED = ("SELECT {columns}, r.score FROM (SELECT rowid, bm25(chunks_fts, 1.0, {w}) AS score FROM chunks_fts"
                " WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) r"
                " CROSS JOIN chunks c ON c.id = r.rowid CROSS JOIN memory_sources s ON s.id = c.source_id"
                " WHERE {where} ORDER BY r.score, r.rowid LIMIT ?")
_FTS_COUNT = "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"


@reader
def keyword_search(conn: apsw.Connection, match: str, f: FactFilter, limit: int,
                   context_weight: float = CONTEXT_WEIGHT) -> list[tuple[int, float]]:
    """FTS5 bm25 over fact text (and context words) under the hard predicates; ``match`` must already
    be safe. ``(id, bm25)``, best (lowest) first; see ``keyword_rank_rows``."""
    return [(row.id, score) for row, score in keyword_rank_rows(conn, match, f, limit, context_weight)]


@reader
def keyword_rank_rows(conn: apsw.Connection, match: str, f: FactFilter, limit: int,
                      context_weight: float = CONTEXT_WEIGHT) -> list[tuple[RankRow, float]]:
    """``keyword_search`` with each match's ranking row (``rank_rows``), read by the same check.

    The best ``limit * KEYWORD_OVERFETCH`` matches are ranked, then checked against the predicates
    best first until ``limit`` pass (one statement); only when too few pass and more matches exist
    does the full filtered query run. Same results either way. The best ``limit *
    KEYWORD_FIRST_RANK`` are ranked first (ranking fewer costs less: 1.8 against 2.1 ms at 10k
    chunks); only when too few of those pass and there are more matches are all of them ranked —
    the first ``limit`` that pass are the same.
    """
    weight = float(context_weight)
    where, params = f.where()
    sql = _FTS_CHECKED.format(columns=_RANK_COLUMNS, w=weight, where=where)
    try:
        for want in (limit * KEYWORD_FIRST_RANK, limit * KEYWORD_OVERFETCH):
            kept = [(_rank_row(r), r[6]) for r in conn.execute(sql, [match, want, *params, limit])]
            if len(kept) >= limit or int(scalar(conn, _FTS_COUNT, (match, want))) < want:
                return kept
        sql = (
            f"SELECT {_RANK_COLUMNS}, bm25(chunks_fts, 1.0, {weight}) AS score FROM chunks_fts"
            " JOIN chunks c ON c.id = chunks_fts.rowid"
            f" JOIN memory_sources s ON s.id = c.source_id WHERE chunks_fts MATCH ? AND {where}"
            " ORDER BY score, c.id LIMIT ?"
        )
        return [(_rank_row(r), r[6]) for r in conn.execute(sql, [match, *params, limit])]
    except apsw.SQLError as exc:
        raise InvalidInput(f"search query could not be understood: {exc}") from exc


@reader
def keyword_match_ids(conn: apsw.Connection, match: str, f: FactFilter, limit: int = -1,
                      context_weight: float = CONTEXT_WEIGHT) -> list[tuple[int, float]]:
    """Every fact ``f`` lets through that ``match`` finds (``(id, bm25)``, best first; the first
    ``limit``, all with -1): the memory browser reaches a search's matches beyond its ranked ones."""
    where, params = f.where()
    sql = (f"SELECT c.id, bm25(chunks_fts, 1.0, {float(context_weight)}) AS score FROM chunks_fts"
           f" JOIN chunks c ON c.id = chunks_fts.rowid JOIN memory_sources s ON s.id = c.source_id"
           f" WHERE chunks_fts MATCH ? AND {where} ORDER BY score, c.id LIMIT ?")
    try:
        return [(int(r[0]), float(r[1])) for r in conn.execute(sql, [match, *params, limit])]
    except apsw.SQLError as exc:
        raise InvalidInput(f"search query could not be understood: {exc}") from exc


@reader
def thread_neighbour_ids(conn: apsw.Connection, ids: Sequence[int], f: FactFilter,
                         span: int = 1) -> list[tuple[int, int, int]]:
    """``(anchor, offset, neighbour)``: the memories up to ``span`` places before (offset < 0) and
    after each anchor in its conversation. Anchors and neighbours both pass ``f``."""
    if not ids:
        return []
    where, params = f.where()
    # The anchors that pass (a subquery with its own c and s), then their neighbours that pass, in
    # that order: one statement, a primary-key seek per anchor and a thread-index range per neighbour.
    sql = (f"SELECT a.id, c.thread_seq - a.thread_seq, c.id FROM (SELECT c.id, c.thread_id, c.thread_seq"
           f" {_FROM_IDS} WHERE {where} AND c.id IN carray(?)) a"
           " CROSS JOIN chunks c ON c.thread_id = a.thread_id AND c.id <> a.id"
           " AND c.thread_seq BETWEEN a.thread_seq - ? AND a.thread_seq + ?"
           f" CROSS JOIN memory_sources s ON s.id = c.source_id WHERE {where}"
           " ORDER BY a.id, c.thread_seq, c.id")
    return [(int(r[0]), int(r[1]), int(r[2]))
            for r in conn.execute(sql, [*params, id_array(ids), span, span, *params])]


@reader
def message_entries(conn: apsw.Connection, ids: Sequence[int], f: FactFilter) -> dict[int, tuple[int, str, str | None]]:
    """For each fact among ``ids`` that ``f`` lets through and names the message it came from: (source
    event id, entry id, role) — which message of its batch that is (ING-6)."""
    if not ids:
        return {}
    where, params = f.where()
    sql = (f"SELECT c.id, e.id, e.entry_id, e.role {_FROM_IDS} JOIN source_events e ON e.id = c.source_event_id"
           f" WHERE {where} AND c.id IN carray(?)")
    return {int(r[0]): (int(r[1]), str(r[2]), r[3]) for r in conn.execute(sql, [*params, id_array(ids)])}


@reader
def source_message(conn: apsw.Connection, fact_id: int, f: FactFilter) -> SourceMessage | None:
    """The message memory ``fact_id`` came from, with its text as far as ``f`` lets it be seen (the
    person's message kept as conversation memory, unless that is forgotten). None for a memory that names
    no message (typed, saved from a page)."""
    get_fact(conn, fact_id, f)  # NotFound when the memory itself is hidden here
    # a forgotten message never shows through another memory (an owner view sees the turn itself, marked)
    where, params = replace(f, include_forgotten=False).where()
    row = conn.execute(
        "SELECT e.id, e.entry_id, e.role, e.event_at, e.tool, e.batch_id FROM chunks c JOIN source_events e"
        " ON e.id = c.source_event_id WHERE c.id = ?", (fact_id,)).fetchone()
    if row is None:
        return None
    event_id, entry_id, role, at, tool, batch_id = row
    turns = _event_turns(conn, int(event_id), where, params)
    accepted_in = None
    if role == "assistant":
        after = conn.execute("SELECT id FROM source_events WHERE batch_id = ? AND id > ? AND role IS NOT 'assistant'"
                             " ORDER BY id LIMIT 1", (batch_id, event_id)).fetchone()
        if after is not None:
            accepted_in = "\n".join(t for _, t in _event_turns(conn, int(after[0]), where, params)) or None
    text = "\n".join(t for _, t in turns) or None
    return SourceMessage(int(event_id), str(entry_id), role, at, tool, str(batch_id), text,
                         tuple(i for i, _ in turns), accepted_in)


def _event_turns(conn: apsw.Connection, event_id: int, where: str, params: list[Any]) -> list[tuple[int, str]]:
    """The conversation memories (the message kept whole, in its parts) of one source event under a filter."""
    sql = (f"SELECT c.id, c.text {_FROM} WHERE {where} AND c.source_event_id = ? AND c.kind = ?"
           " ORDER BY c.thread_seq, c.id")
    return [(int(r[0]), str(r[1])) for r in conn.execute(sql, [*params, event_id, CONVERSATION])]


@reader
def facts_for_page(conn: apsw.Connection, key: str, f: FactFilter, limit: int = 200) -> list[Fact]:
    """Facts saved from exactly this page (page key), newest first."""
    where, params = f.where()
    sql = f"SELECT {FACT_COLUMNS} {_FROM} WHERE {where} AND c.page_key = ? ORDER BY c.id DESC LIMIT ?"
    return [fact_from_row(row) for row in conn.execute(sql, [*params, key, limit])]


@reader
def page_has_memory(conn: apsw.Connection, key: str, f: FactFilter) -> bool:
    """Exact facts or live documents from this page exist (the probe's green)."""
    where, params = f.where()
    fact = conn.execute(f"SELECT 1 {_FROM} WHERE {where} AND c.page_key = ? LIMIT 1", [*params, key])
    if fact.fetchone():
        return True
    return bool(documents_for_page(conn, key, f, limit=1))


@reader
def facts_in_group(conn: apsw.Connection, group: int, f: FactFilter, limit: int = 200) -> list[Fact]:
    """Members of one near-duplicate fact group (the memory browser's detail pane)."""
    return _select(conn, f, "c.fact_group = ? ORDER BY c.id LIMIT ?", [group, limit])


@reader
def count_facts(conn: apsw.Connection, f: FactFilter) -> int:
    where, params = f.where()
    return int(scalar(conn, f"SELECT count(*) {_FROM} WHERE {where}", params))


@reader
def count_facts_by_host(conn: apsw.Connection, f: FactFilter) -> dict[str, int]:
    where, params = f.where()
    sql = (f"SELECT coalesce(s.source_host, c.page_host) AS h, count(*) {_FROM} WHERE {where}"
           " AND h IS NOT NULL GROUP BY h")
    return {row[0]: int(row[1]) for row in conn.execute(sql, params)}


@reader
def count_facts_by_project(conn: apsw.Connection, f: FactFilter) -> dict[str, int]:
    """Projects that hold memories, with how many (global memories are not a project)."""
    where, params = f.where()
    sql = (f"SELECT c.project_id, count(*) {_FROM} WHERE {where} AND c.project_id IS NOT NULL"
           " GROUP BY c.project_id ORDER BY c.project_id")
    return {str(row[0]): int(row[1]) for row in conn.execute(sql, params)}


@reader
def project_counts(conn: apsw.Connection, f: FactFilter) -> ProjectCounts:
    """Every project's own count and the global count under ``f``, in one statement (projects by name)."""
    where, params = f.where()
    rows = conn.execute(f"SELECT c.project_id, count(*) {_FROM} WHERE {where} GROUP BY c.project_id"
                        " ORDER BY c.project_id", params)
    counts = {row[0]: int(row[1]) for row in rows}
    return ProjectCounts({str(k): n for k, n in counts.items() if k is not None}, counts.get(None, 0))


@reader
def count_facts_by_tool(conn: apsw.Connection, f: FactFilter, source_kind: str = "mcp") -> dict[str, int]:
    """How many memories each writing tool of ``source_kind`` (AI tools over MCP by default) holds."""
    where, params = f.where()
    sql = (f"SELECT s.tool, count(*) {_FROM} WHERE {where} AND s.kind = ? AND s.tool IS NOT NULL"
           " GROUP BY s.tool ORDER BY s.tool")
    return {str(row[0]): int(row[1]) for row in conn.execute(sql, [*params, source_kind])}


_DOCUMENT_PROJECT_ONLY = "d.project_id = ?"  # "this project only" for documents (see _PROJECT_ONLY)
DOCUMENT_COLUMNS = (
    "d.id, d.title, d.page_url, d.page_key, d.page_host, d.project_id, s.tier, s.kind, d.created_at,"
    " (SELECT count(*) FROM chunks x WHERE x.document_id = d.id)"
)


def _document_where(f: FactFilter) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if not f.include_forgotten:
        clauses.append("d.invalid_at IS NULL")
    if f.project is None:
        clauses.append("d.project_id IS NULL")
    elif isinstance(f.project, str):
        clauses.append("(d.project_id = ? OR d.project_id IS NULL)" if f.global_too else _DOCUMENT_PROJECT_ONLY)
        params.append(f.project)
    if f.host:
        host = normalize_host(f.host)
        clauses.append("(d.page_host = ? OR d.page_host LIKE ?)")
        params += [host, "%." + host]
    return " AND ".join(clauses) or "1", params


@reader
def documents_for_page(conn: apsw.Connection, key: str, f: FactFilter, limit: int = 100) -> list[Document]:
    """Documents saved from this page — each document once, however many chunks it has."""
    where, params = _document_where(f)
    sql = (f"SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN memory_sources s ON s.id = d.source_id"
           f" WHERE {where} AND d.page_key = ? ORDER BY d.id DESC LIMIT ?")
    return [document_from_row(row) for row in conn.execute(sql, [*params, key, limit])]


@reader
def list_documents(conn: apsw.Connection, f: FactFilter, limit: int = 200, offset: int = 0) -> list[Document]:
    where, params = _document_where(f)
    sql = (f"SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN memory_sources s ON s.id = d.source_id"
           f" WHERE {where} ORDER BY d.id DESC LIMIT ? OFFSET ?")
    return [document_from_row(row) for row in conn.execute(sql, [*params, limit, offset])]


@reader
def count_documents(conn: apsw.Connection, f: FactFilter) -> int:
    where, params = _document_where(f)
    return int(scalar(conn, f"SELECT count(*) FROM documents d WHERE {where}", params))


# -- whole-vault export (DATA-2): every column a lossless round trip needs ------------------------

_EXPORT_EXTRA = "c.thread_id, c.thread_seq, c.superseded_at, c.pinned_from, s.created_at, c.sync_id"


@reader
def facts_for_export(conn: apsw.Connection, f: FactFilter, after_id: int = 0, limit: int = 1000) -> list[Fact]:
    """Facts in id order (keyset paging), with ``extra`` holding what only an export needs: its place
    in a conversation (``thread_id``, ``thread_seq``), ``superseded_at``, ``pinned_from`` (the source
    a pinned fact had before), ``source_created_at`` and ``sync_id`` (its global id, SYNC-1)."""
    where, params = f.where()
    sql = (f"SELECT {FACT_COLUMNS}, {_EXPORT_EXTRA} {_FROM} WHERE {where} AND c.id > ?"
           " ORDER BY c.id LIMIT ?")
    out = []
    for row in conn.execute(sql, [*params, after_id, limit]):
        fact = fact_from_row(row)
        thread_id, thread_seq, superseded_at, pinned_from, source_created, sync_id = row[-6:]
        fact.extra.update(thread_id=thread_id, thread_seq=thread_seq, superseded_at=superseded_at,
                          pinned_from=pinned_from, source_created_at=source_created, sync_id=sync_id)
        out.append(fact)
    return out


@reader
def documents_for_export(conn: apsw.Connection, f: FactFilter, after_id: int = 0,
                         limit: int = 200) -> list[tuple[Document, dict[str, Any]]]:
    """Documents in id order with their source, forget stamp and text (chunks in order)."""
    where, params = _document_where(f)
    sql = (f"SELECT {DOCUMENT_COLUMNS}, d.invalid_at, d.invalidated_by, d.source_id, d.sync_id FROM documents d"
           f" JOIN memory_sources s ON s.id = d.source_id WHERE {where} AND d.id > ? ORDER BY d.id LIMIT ?")
    out = []
    for row in conn.execute(sql, [*params, after_id, limit]):
        doc = document_from_row(row[:-4])
        rows = conn.execute("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY seq", (doc.id,)).fetchall()
        out.append((doc, {"invalid_at": row[-4], "invalidated_by": row[-3], "source_id": row[-2], "sync_id": row[-1],
                          "chunks": [r[1] for r in rows], "chunk_ids": [r[0] for r in rows]}))
    return out


def document_text(conn: apsw.Connection, doc_id: int) -> str:
    rows = conn.execute("SELECT text FROM chunks WHERE document_id = ? ORDER BY seq", (doc_id,))
    return "\n\n".join(r[0] for r in rows)


# -- internal readers: feed the vector index and the backfill, never shown to anyone ------------

def embeddings_after(conn: apsw.Connection, after_id: int, limit: int,
                     model: str | None = None) -> list[tuple[int, bytes]]:
    """Stored vectors in id order (of ``model`` only, when given: one index never mixes models)."""
    if model is None:
        sql = "SELECT id, embedding FROM chunks WHERE id > ? AND embedding IS NOT NULL ORDER BY id LIMIT ?"
        return [(int(r[0]), r[1]) for r in conn.execute(sql, (after_id, limit))]
    sql = ("SELECT id, embedding FROM chunks WHERE id > ? AND embedding IS NOT NULL AND embed_model = ?"
           " ORDER BY id LIMIT ?")
    return [(int(r[0]), r[1]) for r in conn.execute(sql, (after_id, model, limit))]


def embeddings_for(conn: apsw.Connection, ids: Sequence[int], model: str | None = None) -> list[tuple[int, bytes]]:
    if not ids:
        return []
    sql = "SELECT id, embedding, embed_model FROM chunks WHERE embedding IS NOT NULL AND id IN carray(?)"
    return [(int(r[0]), r[1]) for r in conn.execute(sql, [id_array(ids)]) if model is None or r[2] == model]


def stale_embedded(conn: apsw.Connection, model: str, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
    """Chunks whose stored vector is not of ``model`` (a model change): they are re-embedded."""
    sql = ("SELECT id, text FROM chunks WHERE id > ? AND embedding IS NOT NULL"
           " AND embed_model IS NOT ? ORDER BY id LIMIT ?")
    return [(int(r[0]), r[1]) for r in conn.execute(sql, (after_id, model, limit))]


def count_stale_embedded(conn: apsw.Connection, model: str) -> int:
    sql = "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL AND embed_model IS NOT ?"
    return int(scalar(conn, sql, (model,)))


def embedding_widths(conn: apsw.Connection) -> dict[int, int]:
    """How many stored vectors have each width (in floats)."""
    sql = "SELECT length(embedding) / 4, count(*) FROM chunks WHERE embedding IS NOT NULL GROUP BY 1"
    return {int(r[0]): int(r[1]) for r in conn.execute(sql)}


def unembedded(conn: apsw.Connection, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
    sql = "SELECT id, text FROM chunks WHERE embedding IS NULL AND id > ? ORDER BY id LIMIT ?"
    return [(int(r[0]), r[1]) for r in conn.execute(sql, (after_id, limit))]


def term_is_common(conn: apsw.Connection, term_match: str, cap: int) -> bool:
    """Whether more than ``cap`` chunks contain the term; the count stops at ``cap + 1`` rows, so a
    very common term costs no more than a rare one. Reads only the index, no chunk."""
    sql = "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
    return int(scalar(conn, sql, (term_match, cap + 1))) > cap


def term_doc_count(conn: apsw.Connection, term_match: str, cap: int) -> int:
    """How many chunks contain the term, counted up to ``cap``. Reads only the index, no chunk."""
    sql = "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
    return int(scalar(conn, sql, (term_match, cap)))


def chunk_count_estimate(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT coalesce(max(id), 0) FROM chunks"))


def count_unembedded(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT count(*) FROM chunks WHERE embedding IS NULL"))



# -- ingest and audit readers (fact groups, entities, doctor) -----------------------------------

@reader
def facts_after(conn: apsw.Connection, after_id: int, f: FactFilter, limit: int = 1000) -> list[Fact]:
    """Facts with id above ``after_id`` in id order (keyset paging for full scans)."""
    where, params = f.where()
    sql = f"SELECT {FACT_COLUMNS} {_FROM} WHERE {where} AND c.id > ? ORDER BY c.id LIMIT ?"
    return [fact_from_row(row) for row in conn.execute(sql, [*params, after_id, limit])]


@reader
def grouped_facts_after(conn: apsw.Connection, after_id: int, f: FactFilter, limit: int = 1000) -> list[Fact]:
    """``facts_after``, only the facts in a near-duplicate fact group."""
    return _select(conn, f, "c.fact_group IS NOT NULL AND c.id > ? ORDER BY c.id LIMIT ?", [after_id, limit])


@reader
def dated_texts_after(conn: apsw.Connection, after_id: int, f: FactFilter,
                      limit: int = 1000) -> list[tuple[int, str, str, str | None]]:
    """``(id, valid_at, text, context)`` of the dated facts ``f`` lets through, by id, after
    ``after_id``: what the check of the context words reads (``ingest.redate``)."""
    where, params = f.where()
    sql = (f"SELECT c.id, c.valid_at, c.text, c.context {_FROM} WHERE {where} AND c.valid_at IS NOT NULL"
           " AND c.id > ? ORDER BY c.id LIMIT ?")
    return [(int(r[0]), r[1], r[2], r[3]) for r in conn.execute(sql, [*params, after_id, limit])]


@reader
def facts_for_entity(conn: apsw.Connection, entity_id: int, f: FactFilter, limit: int = 200) -> list[Fact]:
    """Facts linked to one entity, newest first."""
    where, params = f.where()
    sql = (f"SELECT {FACT_COLUMNS} {_FROM} JOIN entity_links l ON l.chunk_id = c.id"
           f" WHERE {where} AND l.entity_id = ? ORDER BY c.id DESC LIMIT ?")
    return [fact_from_row(row) for row in conn.execute(sql, [*params, entity_id, limit])]


@reader
def mixed_batch_tags(conn: apsw.Connection, limit: int = 1000) -> list[tuple[int, str, int]]:
    """Seed 004 audit: facts tagged with a project whose batch inputs disagree (a pass is no rows).

    Also catches a unanimous batch whose facts carry a different project than its inputs, and a fact
    whose own message (its source event, ING-6) carries another project than the fact.
    """
    where, params = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True).where()
    sql = (
        "SELECT c.id, c.project_id, COUNT(DISTINCT COALESCE(e.project_id, '')) AS n"
        f" {_FROM} JOIN source_events e ON e.batch_id = s.batch_id"
        " LEFT JOIN source_events own ON own.id = c.source_event_id"
        f" WHERE {where} AND c.project_id IS NOT NULL GROUP BY c.id, c.project_id"
        " HAVING n > 1 OR MAX(COALESCE(e.project_id, '')) <> c.project_id"
        " OR MAX(own.id IS NOT NULL AND COALESCE(own.project_id, '') <> c.project_id) ORDER BY c.id LIMIT ?"
    )
    return [(int(r[0]), str(r[1]), int(r[2])) for r in conn.execute(sql, [*params, limit])]


@reader
def memories_without_message(conn: apsw.Connection, limit: int = 1000) -> tuple[list[tuple[int, str]], int]:
    """VAULT-5 / ING-6 audit: memories a batch wrote (an import, a capture) that do not name a message of
    that batch — none, or one of another batch. A pass is no rows. Memories written before messages were
    named (the migration that added it) and left untraced because two inputs of their batch share a time
    are counted apart, as the second value: known, not a defect."""
    where, params = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True).where()
    since = scalar(conn, "SELECT applied_at FROM schema_migrations WHERE name = '0008_message_provenance'")
    base = (f"{_FROM} LEFT JOIN source_events e ON e.id = c.source_event_id WHERE {where}"
            " AND s.batch_id IS NOT NULL AND (e.id IS NULL OR e.batch_id IS NOT s.batch_id)")
    rows = list(conn.execute(f"SELECT c.id, s.batch_id, c.created_at {base} ORDER BY c.id", params))
    older = sum(1 for r in rows if since is not None and r[2] < since)
    bad = [(int(r[0]), str(r[1])) for r in rows if since is None or r[2] >= since]
    return bad[:limit], older


def oldest_memory_at(conn: apsw.Connection) -> str | None:
    """When the oldest chunk (forgotten ones too) was written; ``None`` for an empty vault."""
    value = scalar(conn, "SELECT min(created_at) FROM chunks")
    return None if value is None else str(value)


def unembedded_before(conn: apsw.Connection, cutoff: str, limit: int = 100) -> tuple[int, list[int]]:
    """Chunks still without an embedding that were written before ``cutoff``: (count, first ids)."""
    count = int(scalar(conn, "SELECT count(*) FROM chunks WHERE embedding IS NULL AND created_at < ?", (cutoff,)))
    sql = "SELECT id FROM chunks WHERE embedding IS NULL AND created_at < ? ORDER BY id LIMIT ?"
    return count, [int(r[0]) for r in conn.execute(sql, (cutoff, limit))]
