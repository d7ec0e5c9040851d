"""The write side for facts and documents. Readers live in ``query.py``.

Page links (GOV-9): a chunk's page is set with a precedence — ``manual`` (page-link) beats
``token`` (a ``page:`` URL inside the text) beats ``source`` (the URL of its source). A lower
precedence never overwrites a higher one, so re-indexing cannot undo a manual link.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from datetime import date
from typing import NamedTuple

import apsw
import numpy as np

from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.pages import host_of, page_key
from vodou_desktop.vault import dates
from vodou_desktop.vault.clock import new_sync_id, now_iso, parse_iso
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.records import CONVERSATION as CONVERSATION_KIND
from vodou_desktop.vault.secret_filter import scrub_document, scrub_for_source
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.vault.writer import Change

MAX_FACT_CHARS = 8_000
MAX_DOCUMENT_CHARS = 5_000_000
MAX_EMBEDDING_DIM = 8_192
# The model every stored vector is known to come from ("" = unknown or mixed: a re-embed pass must
# look). Kept true by ``set_embeddings``; set by search/backfill.py when a full pass has finished.
VECTORS_MODEL_SETTING = "vectors_model"
PAGE_SET_RANK = {None: 0, "source": 1, "token": 2, "manual": 3}
PAGE_TOKEN = re.compile(r"(?:^|\s)page:\s*<?(https?://[^\s>]+)", re.IGNORECASE)
# Kinds that describe the person and therefore follow them into every project.
GLOBAL_KINDS = frozenset({"preference"})
# A person's message of an imported or captured conversation, kept whole (ING-6): a record of what was
# said, shown with its conversation, never a claim of its own (no fact group, no supersession).
CONVERSATION = CONVERSATION_KIND


def content_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()


def clean_text(text: str, limit: int = MAX_FACT_CHARS) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    text = text.replace("\x00", "").strip()
    if not text:
        raise InvalidInput("text is empty")
    if len(text) > limit:
        raise InvalidInput(f"text is too long ({len(text)} characters; the limit is {limit})")
    return text


def clean_project(project: str | None) -> str | None:
    if project is None:
        return None
    project = project.strip()
    if not project:
        return None
    if len(project) > 200 or any(ord(c) < 32 for c in project):
        raise InvalidInput("project name must be a short single line")
    return project


def date_words(valid_at: str | None, text: str = "") -> str | None:
    """The day a dated fact refers to, in words a question may use: "7 May 2023 May 2023 Sunday"; then,
    the same way, each day its ``text`` points at from that day ("yesterday", "last Friday": ``dates``)."""
    if not valid_at:
        return None
    try:
        day = date.fromisoformat(valid_at[:10])
    except ValueError:
        return None
    own = dates.day_words(day)
    return " ".join([own, *(w for w in dates.referred(text, day) if w not in own)])


def redate(conn: apsw.Connection, change: Change, rows: Iterable[tuple[int, str | None, str]]) -> int:
    """Each ``(id, context read, context now)``: the memory's context words set to today's, unless they
    changed since they were read. The keyword index's trigger re-indexes each row written. How many."""
    written = 0
    for fact_id, read, now in rows:
        conn.execute("UPDATE chunks SET context = ? WHERE id = ? AND context IS ?", (now, fact_id, read))
        written += conn.changes()
    return written


def embedding_blob(vector: Sequence[float] | np.ndarray) -> bytes:
    """A vector as stored: little-endian float32. Its width is the model's (no fixed width here)."""
    arr = np.asarray(vector, dtype="<f4").reshape(-1)
    if not 0 < arr.shape[0] <= MAX_EMBEDDING_DIM or not np.isfinite(arr).all():
        raise InvalidInput(f"embedding must be 1 to {MAX_EMBEDDING_DIM} finite numbers, not {arr.shape[0]}")
    return arr.tobytes()


# Plain sequential writes (one remember() per conversation turn) form a thread when they follow each
# other within this many seconds with the same project, source kind/tool/tier and the same date.
THREAD_GAP_SECONDS = 600


class ThreadTail(NamedTuple):
    """What decides whether the next memory continues a thread: the last memory written."""

    id: int
    thread_id: int
    thread_seq: int
    project: str | None
    valid_at: str | None
    created_at: str
    kind: str
    tool: str | None
    tier: str


def continues(prev: ThreadTail, new: ThreadTail) -> bool:
    """A memory joins the thread of the one written just before it when both come from the same
    project and kind of source, refer to the same (known) date, and were written close together."""
    if prev.valid_at is None or prev.valid_at != new.valid_at:
        return False
    if (prev.project, prev.kind, prev.tool, prev.tier) != (new.project, new.kind, new.tool, new.tier):
        return False
    try:
        gap = (parse_iso(new.created_at) - parse_iso(prev.created_at)).total_seconds()
    except ValueError:
        return False
    return 0 <= gap <= THREAD_GAP_SECONDS


def _thread_tail(conn: apsw.Connection) -> ThreadTail | None:
    """The memory written last (the highest id), when it is a fact."""
    row = conn.execute(
        "SELECT c.id, c.thread_id, c.thread_seq, c.project_id, c.valid_at, c.created_at, s.kind, s.tool, s.tier"
        " FROM chunks c JOIN memory_sources s ON s.id = c.source_id"
        " WHERE c.id = (SELECT max(id) FROM chunks) AND c.document_id IS NULL").fetchone()
    if row is None:
        return None
    return ThreadTail(row[0], row[1] if row[1] is not None else row[0], row[2] or 0, *row[3:])


def _thread_place(conn: apsw.Connection, new: ThreadTail, thread: int | None, seq: int | None,
                  infer: bool) -> tuple[int, int]:
    """The new chunk's (thread, seq), decided before it is written (``new.id`` is the id it gets): the
    given thread (appended, or at ``seq``), else the thread of the memory written just before it when
    the new one continues it, else a thread of its own."""
    if thread is not None:
        if seq is None:
            seq = int(scalar(conn, "SELECT coalesce(max(thread_seq), -1) FROM chunks WHERE thread_id = ?",
                             (thread,))) + 1
        return thread, seq
    if infer:
        prev = _thread_tail(conn)
        if prev is not None and continues(prev, new):
            return prev.thread_id, prev.thread_seq + 1
    return new.id, 0


def insert_fact(
    conn: apsw.Connection,
    change: Change,
    *,
    text: str,
    source_id: int,
    kind: str = "fact",
    project: str | None = None,
    scope: str | None = None,
    valid_at: str | None = None,
    valid_precision: str | None = None,
    created_at: str | None = None,
    predecessor_id: int | None = None,
    revision: int = 1,
    thread_id: int | None = None,
    thread_seq: int | None = None,
    infer_thread: bool = True,
    fact_id: int | None = None,
    sync_id: str | None = None,
    source_event_id: int | None = None,
    confidence: float | None = None,
) -> int:
    """Insert one fact; returns its id. Preferences are always global (project NULL). ``sync_id``: its
    global id when it came from another device (sync); otherwise a new one.

    Its place in a conversation: ``thread_id`` (the id of the thread's first memory) when the caller
    knows it (appended, or at ``thread_seq``); otherwise inferred from the memory written just before
    (``continues``) unless ``infer_thread`` is false, which starts a thread. ``fact_id``: this id (an
    import keeping the exported ids); otherwise the next one. ``source_event_id``: the input of its
    batch it came from (``source_events``: a conversation's message); ``confidence``: how sure its
    extraction was, in (0, 1] (None: written as typed).
    """
    text = scrub_for_source(conn, change, clean_text(text), source_id)  # DATA-8: no secret as written
    if confidence is not None and not 0.0 < float(confidence) <= 1.0:
        raise InvalidInput(f"confidence must be in (0, 1], not {confidence!r}")
    project = None if kind in GLOBAL_KINDS else clean_project(project)
    if valid_at is not None and valid_precision not in ("instant", "day"):
        valid_precision = "instant"
    page, origin = _page_for(conn, source_id, text)
    created_at = created_at or now_iso()
    # The id SQLite would give it (no AUTOINCREMENT: the highest id + 1), chosen here so that its
    # thread is known before the row is written: one INSERT, no UPDATE of the row just written.
    chunk_id = fact_id if fact_id is not None else int(scalar(conn, "SELECT coalesce(max(id), 0) + 1 FROM chunks"))
    place = _thread_place(conn, ThreadTail(chunk_id, chunk_id, 0, project, valid_at, created_at, *origin),
                          thread_id, thread_seq, infer_thread)
    conn.execute(
        "INSERT INTO chunks(id, text, kind, source_id, project_id, scope, created_at, valid_at,"
        " valid_precision, predecessor_id, revision, page_url, page_key, page_host, page_set_by,"
        " content_hash, context, thread_id, thread_seq, sync_id, source_event_id, confidence)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (chunk_id, text, kind, source_id, project, scope, created_at, valid_at, valid_precision,
         predecessor_id, revision, *page, content_hash(text), date_words(valid_at, text), *place,
         sync_id or new_sync_id(), source_event_id, None if confidence is None else float(confidence)),
    )
    change.touch("chunks", chunk_ids=[chunk_id], page_keys=[page[1]], hosts=[page[2]])
    return chunk_id


def _page_for(conn: apsw.Connection, source_id: int, text: str
              ) -> tuple[tuple[str | None, ...], tuple[str, str | None, str]]:
    """The new fact's page (url, key, host, set by) and its source's (kind, tool, tier)."""
    row = conn.execute("SELECT source_url, kind, tool, tier FROM memory_sources WHERE id = ?",
                       (source_id,)).fetchone()
    if row is None:
        raise NotFound(f"no source {source_id}")
    origin = (row[1], row[2], row[3])
    token = _page_token(text)
    if token:
        return (*token, "token"), origin
    if row[0]:
        return (row[0], page_key(row[0]), host_of(row[0]), "source"), origin
    return (None, None, None, None), origin


def _page_token(text: str) -> tuple[str, str, str] | None:
    match = PAGE_TOKEN.search(text)
    if not match:
        return None
    url = match.group(1).rstrip(".,;)")
    try:
        return (url, page_key(url), host_of(url))
    except InvalidInput:
        return None


def set_page_link(conn: apsw.Connection, change: Change, chunk_id: int, url: str, set_by: str) -> bool:
    """Link a chunk to a page unless a higher-precedence link exists. Returns whether it changed."""
    row = conn.execute("SELECT page_set_by, page_key FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {chunk_id}")
    if PAGE_SET_RANK[row[0]] > PAGE_SET_RANK[set_by]:
        return False
    key, host = page_key(url), host_of(url)
    conn.execute(
        "UPDATE chunks SET page_url = ?, page_key = ?, page_host = ?, page_set_by = ? WHERE id = ?",
        (url, key, host, set_by, chunk_id),
    )
    change.touch("chunks", chunk_ids=[chunk_id], page_keys=[key, row[1]], hosts=[host])
    return True


def reindex_chunk(conn: apsw.Connection, change: Change, chunk_id: int) -> None:
    """Re-derive the page of a chunk from its text token; a manual link always survives."""
    row = conn.execute("SELECT text FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {chunk_id}")
    token = _page_token(row[0])
    if token:
        set_page_link(conn, change, chunk_id, token[0], "token")


def set_embeddings(
    conn: apsw.Connection, change: Change, items: Iterable[tuple[int, np.ndarray]], model: str
) -> int:
    """Store vectors of ``model`` (replacing any older vector of those chunks).

    A vault whose vectors were all of another model is marked unknown, so that the next re-embed
    pass (search/backfill.py) looks for vectors that are not of the model it runs."""
    n = 0
    ids: list[int] = []
    for chunk_id, vector in items:
        conn.execute(
            "UPDATE chunks SET embedding = ?, embed_model = ? WHERE id = ?",
            (embedding_blob(vector), model, chunk_id),
        )
        ids.append(chunk_id)
        n += 1
    if ids:
        change.touch("embeddings", chunk_ids=ids)
        known = get_setting(conn, VECTORS_MODEL_SETTING)
        if known and known != model:
            set_setting(conn, change, VECTORS_MODEL_SETTING, "")
    return n


def insert_document(
    conn: apsw.Connection,
    change: Change,
    *,
    source_id: int,
    title: str | None,
    chunks: Sequence[str],
    project: str | None = None,
    created_at: str | None = None,
    doc_id: int | None = None,
    chunk_ids: Sequence[int] | None = None,
    sync_id: str | None = None,
) -> int:
    """A Library document: one ``documents`` row and its chunks (kind ``doc``, never facts). ``doc_id``
    and ``chunk_ids``: these ids (an import keeping the exported ids); otherwise the next ones.
    ``sync_id``: its global id when it came from another device (sync); otherwise a new one."""
    if not chunks:
        raise InvalidInput("the document has no text")
    title, chunks = scrub_document(conn, change, title, chunks, source_id, split_document)  # DATA-8
    created = created_at or now_iso()
    row = conn.execute("SELECT source_url FROM memory_sources WHERE id = ?", (source_id,)).fetchone()
    if row is None:
        raise NotFound(f"no source {source_id}")
    url = row[0]
    key, host = (page_key(url), host_of(url)) if url else (None, None)
    full = "\n\n".join(chunks)
    if chunk_ids is not None and len(chunk_ids) != len(chunks):
        raise InvalidInput("the document's chunk ids do not match its chunks")
    conn.execute(
        "INSERT INTO documents(id, source_id, title, page_url, page_key, page_host, content_hash,"
        " project_id, created_at, sync_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (doc_id, source_id, title, url, key, host, content_hash(full), clean_project(project), created,
         sync_id or new_sync_id()),
    )
    doc_id = int(conn.last_insert_rowid())
    ids = []
    for seq, text in enumerate(chunks):
        conn.execute(
            "INSERT INTO chunks(id, text, kind, source_id, document_id, seq, project_id, created_at,"
            " page_url, page_key, page_host, page_set_by, content_hash)"
            " VALUES (?, ?, 'doc', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (None if chunk_ids is None else chunk_ids[seq], text, source_id, doc_id, seq, clean_project(project),
             created, url, key, host, "source" if url else None, content_hash(text)),
        )
        ids.append(int(conn.last_insert_rowid()))
    change.touch("documents", chunk_ids=ids, page_keys=[key], hosts=[host])
    return doc_id


def split_document(text: str, target: int = 900) -> list[str]:
    """Split text into chunks of about ``target`` characters on paragraph, then line, boundaries."""
    text = clean_text(text, MAX_DOCUMENT_CHARS)
    parts: list[str] = []
    current = ""
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        while len(para) > target * 2:
            cut = para.rfind(" ", 0, target) if " " in para[:target] else target
            parts.append(para[:cut].strip())
            para = para[cut:].strip()
        if current and len(current) + len(para) + 2 > target:
            parts.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        parts.append(current)
    return parts
