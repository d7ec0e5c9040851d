"""The vault's schema, as named, append-only migrations.

Each migration is a function applied in one transaction together with its row in
``schema_migrations``: either both land or neither does. Never edit a released migration;
append a new one. A vault that records a migration this code does not know was written by a
newer Vodou and is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import apsw

from vodou_desktop.vault.clock import new_sync_id
from vodou_desktop.vault.connection import scalar

log = logging.getLogger(__name__)
Migration = tuple[str, Callable[[apsw.Connection], None]]


def _m0001_initial(conn: apsw.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE memory_sources (
            id          INTEGER PRIMARY KEY,
            kind        TEXT NOT NULL,
            tier        TEXT NOT NULL CHECK (tier IN ('pinned', 'first_party', 'capture', 'import')),
            source_url  TEXT,
            source_host TEXT,
            title       TEXT,
            tool        TEXT,
            batch_id    TEXT,
            created_at  TEXT NOT NULL
        );
        CREATE INDEX memory_sources_host ON memory_sources(source_host);
        CREATE INDEX memory_sources_batch ON memory_sources(batch_id);

        CREATE TABLE documents (
            id           INTEGER PRIMARY KEY,
            source_id    INTEGER NOT NULL REFERENCES memory_sources(id),
            title        TEXT,
            page_url     TEXT,
            page_key     TEXT,
            page_host    TEXT,
            content_hash TEXT,
            project_id   TEXT,
            created_at   TEXT NOT NULL,
            invalid_at   TEXT,
            invalidated_by TEXT
        );
        CREATE INDEX documents_page_key ON documents(page_key);
        CREATE INDEX documents_page_host ON documents(page_host);

        -- Facts and document chunks share one table (one FTS index, one vector matrix).
        -- A row with document_id NOT NULL is a document chunk and never a fact.
        CREATE TABLE chunks (
            id              INTEGER PRIMARY KEY,
            text            TEXT NOT NULL,
            kind            TEXT NOT NULL DEFAULT 'fact',
            source_id       INTEGER NOT NULL REFERENCES memory_sources(id),
            document_id     INTEGER REFERENCES documents(id),
            seq             INTEGER,
            project_id      TEXT,
            scope           TEXT,
            created_at      TEXT NOT NULL,
            valid_at        TEXT,
            valid_precision TEXT CHECK (valid_precision IN ('instant', 'day')),
            invalid_at      TEXT,
            invalidated_by  TEXT,
            superseded_by   INTEGER REFERENCES chunks(id),
            superseded_at   TEXT,
            predecessor_id  INTEGER REFERENCES chunks(id),
            revision        INTEGER NOT NULL DEFAULT 1,
            fact_group      INTEGER,
            is_canonical    INTEGER NOT NULL DEFAULT 1,
            page_url        TEXT,
            page_key        TEXT,
            page_host       TEXT,
            page_set_by     TEXT CHECK (page_set_by IN ('manual', 'token', 'source')),
            content_hash    TEXT,
            embedding       BLOB,
            embed_model     TEXT
        );
        CREATE INDEX chunks_project ON chunks(project_id);
        CREATE INDEX chunks_page_key ON chunks(page_key);
        CREATE INDEX chunks_page_host ON chunks(page_host);
        CREATE INDEX chunks_source ON chunks(source_id);
        CREATE INDEX chunks_document ON chunks(document_id);
        CREATE INDEX chunks_group ON chunks(fact_group);
        CREATE INDEX chunks_invalid_by ON chunks(invalidated_by);
        CREATE INDEX chunks_unembedded ON chunks(id) WHERE embedding IS NULL;

        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('secure-delete', 1);
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END;

        CREATE TABLE source_events (
            id         INTEGER PRIMARY KEY,
            batch_id   TEXT NOT NULL,
            entry_id   TEXT NOT NULL,
            project_id TEXT,
            scope      TEXT,
            tool       TEXT,
            event_at   TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX source_events_batch ON source_events(batch_id);

        CREATE TABLE site_rules (
            host       TEXT PRIMARY KEY,
            mode       TEXT NOT NULL CHECK (mode IN ('off', 'suggest', 'collect')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );

        CREATE TABLE settings (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );

        -- Forget / erase / other bulk operations, so that undo clears exactly what one op set.
        CREATE TABLE operations (
            id         TEXT PRIMARY KEY,
            kind       TEXT NOT NULL,
            target     TEXT,
            detail     TEXT,
            created_at TEXT NOT NULL,
            undone_at  TEXT
        );

        CREATE TABLE messages (
            id         INTEGER PRIMARY KEY,
            role       TEXT NOT NULL,
            content    TEXT NOT NULL,
            project_id TEXT,
            created_at TEXT NOT NULL
        );

        CREATE TABLE approvals (
            id         INTEGER PRIMARY KEY,
            tool       TEXT NOT NULL,
            arguments  TEXT NOT NULL,
            reason     TEXT NOT NULL,
            message_id INTEGER REFERENCES messages(id),
            status     TEXT NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'approved', 'denied', 'failed')),
            result     TEXT,
            created_at TEXT NOT NULL,
            decided_at TEXT
        );

        CREATE TABLE operator_memory (
            id                 TEXT PRIMARY KEY,
            category           TEXT NOT NULL
                               CHECK (category IN ('preference', 'initiative', 'pinned_context')),
            content            TEXT NOT NULL,
            canonical_key      TEXT NOT NULL,
            salience           INTEGER NOT NULL,
            revision           INTEGER NOT NULL DEFAULT 1,
            predecessor        INTEGER,
            source_ref         TEXT NOT NULL,
            original_source_ref TEXT NOT NULL,
            reauthorized_at    TEXT,
            expires_at         TEXT,
            last_used_at       TEXT,
            created_at         TEXT NOT NULL,
            updated_at         TEXT NOT NULL
        );
        CREATE TABLE operator_memory_history (
            id            INTEGER PRIMARY KEY,
            memory_id     TEXT NOT NULL,
            category      TEXT NOT NULL,
            revision      INTEGER NOT NULL,
            content       TEXT NOT NULL,
            source_ref    TEXT NOT NULL,
            successor_revision INTEGER NOT NULL,
            superseded_at TEXT NOT NULL
        );
        CREATE INDEX operator_memory_history_memory ON operator_memory_history(memory_id);

        CREATE TABLE projects (
            name       TEXT PRIMARY KEY,
            path       TEXT,
            created_at TEXT NOT NULL
        );

        CREATE TABLE entities (
            id        INTEGER PRIMARY KEY,
            name      TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        );
        CREATE TABLE entity_aliases (
            alias     TEXT NOT NULL,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            PRIMARY KEY (alias, entity_id)
        );
        CREATE TABLE entity_links (
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            chunk_id  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, chunk_id)
        );
        CREATE INDEX entity_links_chunk ON entity_links(chunk_id);

        -- What importers and watchers have already seen (idempotent re-import, file offsets).
        CREATE TABLE ingest_seen (
            key        TEXT PRIMARY KEY,
            value      TEXT,
            updated_at TEXT NOT NULL
        );
        """
    )


def _m0002_pinning(conn: apsw.Connection) -> None:
    # A pinned fact points at a copy of its source with tier 'pinned'; this keeps the original so
    # unpinning restores the exact provenance.
    conn.execute("ALTER TABLE chunks ADD COLUMN pinned_from INTEGER REFERENCES memory_sources(id)")


FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
FTS_BATCH = 20_000


def _create_fts(conn: apsw.Connection) -> None:
    """The keyword index over chunks: a fact's text and its context words (the date it refers to)."""
    conn.execute(
        f"""
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, context, content='chunks', content_rowid='id', tokenize='{FTS_TOKENIZE}'
        );
        INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('secure-delete', 1);
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text, context) VALUES (new.id, new.text, new.context);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text, context)
                VALUES ('delete', old.id, old.text, old.context);
        END;
        CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text, context ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text, context)
                VALUES ('delete', old.id, old.text, old.context);
            INSERT INTO chunks_fts(rowid, text, context) VALUES (new.id, new.text, new.context);
        END;
        """
    )


def _batches(conn: apsw.Connection, sql: str, what: str) -> Callable[[], list[tuple]]:  # type: ignore[type-arg]
    """Keyset batches of ``sql`` (``... WHERE id > ? ORDER BY id LIMIT ?``), logging progress."""
    total = int(scalar(conn, "SELECT count(*) FROM chunks"))
    state = {"after": 0, "done": 0}

    def next_batch() -> list[tuple]:  # type: ignore[type-arg]
        rows: list[tuple] = [tuple(r) for r in conn.execute(sql, (state["after"], FTS_BATCH))]  # type: ignore[type-arg]
        if rows:
            state["after"] = rows[-1][0]
            state["done"] += len(rows)
            log.info("%s: %d of %d memories", what, min(state["done"], total), total)
        return rows

    return next_batch


def _m0003_fts_porter(conn: apsw.Connection) -> None:
    # Stemming ("herons" finds "heron") and a second column for context words (the date a dated
    # fact refers to, in words); the index is rebuilt in batches with progress in the log.
    from vodou_desktop.vault.facts import date_words

    conn.execute(
        "DROP TRIGGER chunks_fts_insert; DROP TRIGGER chunks_fts_delete; DROP TRIGGER chunks_fts_update;"
        " DROP TABLE chunks_fts; ALTER TABLE chunks ADD COLUMN context TEXT"
    )
    dated = _batches(conn, "SELECT id, valid_at FROM chunks WHERE id > ? AND valid_at IS NOT NULL"
                           " AND document_id IS NULL ORDER BY id LIMIT ?", "dating memories")
    while rows := dated():
        conn.executemany("UPDATE chunks SET context = ? WHERE id = ?", [(date_words(v), i) for i, v in rows])
    _create_fts(conn)
    fill = _batches(conn, "SELECT id FROM chunks WHERE id > ? ORDER BY id LIMIT ?", "rebuilding the keyword index")
    while rows := fill():
        conn.execute("INSERT INTO chunks_fts(rowid, text, context) SELECT id, text, context FROM chunks"
                     " WHERE id BETWEEN ? AND ?", (rows[0][0], rows[-1][0]))


def _m0004_threads(conn: apsw.Connection) -> None:
    # Memories from one conversation or session keep their order: thread_id is the id of the thread's
    # first memory, thread_seq the position in it. Existing memories: one thread per batch (a captured
    # window, an imported conversation); the rest are threaded by the rule of ``facts.infer_thread``.
    from vodou_desktop.vault.facts import ThreadTail, continues

    conn.execute(
        "ALTER TABLE chunks ADD COLUMN thread_id INTEGER; ALTER TABLE chunks ADD COLUMN thread_seq INTEGER;"
    )
    rows = _batches(conn, "SELECT c.id, c.project_id, c.valid_at, c.created_at, s.kind, s.tool, s.tier, s.batch_id"
                          " FROM chunks c JOIN memory_sources s ON s.id = c.source_id"
                          " WHERE c.id > ? AND c.document_id IS NULL ORDER BY c.id LIMIT ?", "threading memories")
    prev: ThreadTail | None = None
    batches: dict[str, tuple[int, int]] = {}
    while batch := rows():
        updates = []
        for chunk_id, project, valid_at, created_at, kind, tool, tier, batch_id in batch:
            tail = ThreadTail(chunk_id, chunk_id, 0, project, valid_at, created_at, kind, tool, tier)
            if batch_id and batch_id in batches:
                thread, seq = batches[batch_id]
                tail = tail._replace(thread_id=thread, thread_seq=seq + 1)
            elif not batch_id and prev is not None and continues(prev, tail):
                tail = tail._replace(thread_id=prev.thread_id, thread_seq=prev.thread_seq + 1)
            if batch_id:
                batches[batch_id] = (tail.thread_id, tail.thread_seq)
            updates.append((tail.thread_id, tail.thread_seq, chunk_id))
            prev = None if batch_id else tail
        conn.executemany("UPDATE chunks SET thread_id = ?, thread_seq = ? WHERE id = ?", updates)
    conn.execute("CREATE INDEX chunks_thread ON chunks(thread_id, thread_seq)")


# -- sync between a person's devices (docs/sync.md) ----------------------------------------------------

SYNC_CAPTURE_SETTING = "sync_capture"  # '1' while this vault syncs and is not applying another device's change
_CAPTURING = f"(SELECT value FROM settings WHERE key = '{SYNC_CAPTURE_SETTING}') = '1'"
_NOW_MS = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"


def _journal_trigger(name: str, event: str, table: str, when: str, entity: str, key: str, field: str) -> str:
    guard = f"{when} AND {_CAPTURING}" if when else _CAPTURING
    return (f"CREATE TRIGGER {name} {event} ON {table} WHEN {guard} BEGIN"
            f" INSERT INTO sync_journal(entity, key, field, at) VALUES ('{entity}', {key}, '{field}', {_NOW_MS});"
            " END;")


def _changed(*cols: str) -> str:
    return "(" + " OR ".join(f"old.{c} IS NOT new.{c}" for c in cols) + ")"


SYNC_TRIGGERS = (
    ("sync_fact_insert", "AFTER INSERT", "chunks", "new.document_id IS NULL", "fact", "new.sync_id", "create"),
    ("sync_fact_forget", "AFTER UPDATE OF invalid_at, invalidated_by", "chunks",
     "new.document_id IS NULL AND " + _changed("invalid_at", "invalidated_by"), "fact", "new.sync_id", "forget"),
    ("sync_fact_supersede", "AFTER UPDATE OF superseded_by", "chunks",
     "new.document_id IS NULL AND " + _changed("superseded_by"), "fact", "new.sync_id", "supersede"),
    ("sync_fact_pin", "AFTER UPDATE OF pinned_from", "chunks",
     "new.document_id IS NULL AND " + _changed("pinned_from"), "fact", "new.sync_id", "pin"),
    ("sync_fact_page", "AFTER UPDATE OF page_url, page_set_by", "chunks",
     "new.document_id IS NULL AND " + _changed("page_url", "page_set_by"), "fact", "new.sync_id", "page"),
    ("sync_fact_delete", "AFTER DELETE", "chunks", "old.document_id IS NULL", "fact", "old.sync_id", "erase"),
    ("sync_op_insert", "AFTER INSERT", "operations", "", "op", "new.id", "create"),
    ("sync_op_undo", "AFTER UPDATE OF undone_at", "operations", _changed("undone_at"), "op", "new.id", "undo"),
    ("sync_op_target", "AFTER UPDATE OF target", "operations", _changed("target"), "op", "new.id", "target"),
    ("sync_site_insert", "AFTER INSERT", "site_rules", "", "site", "new.host", "mode"),
    ("sync_site_update", "AFTER UPDATE OF mode, updated_at", "site_rules", _changed("mode", "updated_at"), "site",
     "new.host", "mode"),
    ("sync_site_delete", "AFTER DELETE", "site_rules", "", "site", "old.host", "mode"),
    ("sync_opm_insert", "AFTER INSERT", "operator_memory", "", "opm", "new.id", "body"),
    ("sync_opm_update", "AFTER UPDATE OF content, canonical_key, salience, revision, predecessor, source_ref,"
     " reauthorized_at, expires_at, updated_at", "operator_memory", "", "opm", "new.id", "body"),
    ("sync_opm_delete", "AFTER DELETE", "operator_memory", "", "opm", "old.id", "erase"),
    ("sync_opm_history", "AFTER INSERT", "operator_memory_history", "", "opm", "new.memory_id", "body"),
)


def _m0005_sync_ids(conn: apsw.Connection) -> None:
    # Sync (SYNC-1..3): a global id for every fact (operations, operator memory and site rules already
    # have ids that mean the same on every device), the journal that triggers fill while sync is on,
    # and the device-local bookkeeping of what was applied from whom. Nothing here holds a memory's text
    # except ``sync_parked`` (changes waiting for a row they refer to) and ``sync_outbox`` (a change file
    # between its commit and its rename); erase purges both.
    conn.execute("ALTER TABLE chunks ADD COLUMN sync_id TEXT")
    ids = _batches(conn, "SELECT id FROM chunks WHERE id > ? AND document_id IS NULL ORDER BY id LIMIT ?",
                   "giving memories their global ids")
    while rows := ids():
        conn.executemany("UPDATE chunks SET sync_id = ? WHERE id = ?", [(new_sync_id(), r[0]) for r in rows])
    conn.execute(
        """
        CREATE UNIQUE INDEX chunks_sync_id ON chunks(sync_id);
        -- merging revisions walks from a memory to its revisions: without this, one scan of chunks each
        CREATE INDEX chunks_predecessor ON chunks(predecessor_id) WHERE predecessor_id IS NOT NULL;
        CREATE TABLE sync_journal (
            id     INTEGER PRIMARY KEY,
            entity TEXT NOT NULL,
            key    TEXT NOT NULL,
            field  TEXT NOT NULL,
            at     TEXT NOT NULL
        );
        CREATE INDEX sync_journal_field ON sync_journal(entity, key, field);
        CREATE TABLE sync_clock (
            entity TEXT NOT NULL,
            key    TEXT NOT NULL,
            field  TEXT NOT NULL,
            hlc    TEXT NOT NULL,
            PRIMARY KEY (entity, key, field)
        ) WITHOUT ROWID;
        CREATE TABLE sync_tombstones (
            entity TEXT NOT NULL,
            key    TEXT NOT NULL,
            hlc    TEXT NOT NULL,
            PRIMARY KEY (entity, key)
        ) WITHOUT ROWID;
        CREATE TABLE sync_peers (
            device_id  TEXT PRIMARY KEY,
            name       TEXT,
            last_seq   INTEGER NOT NULL DEFAULT 0,
            last_change_at TEXT,
            left_at    TEXT
        );
        CREATE TABLE sync_applied (
            device_id TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            gen       INTEGER NOT NULL,
            digest    TEXT NOT NULL,
            PRIMARY KEY (device_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE sync_parked (
            id      INTEGER PRIMARY KEY,
            entity  TEXT NOT NULL,
            key     TEXT NOT NULL,
            record  TEXT NOT NULL
        );
        CREATE INDEX sync_parked_key ON sync_parked(entity, key);
        CREATE TABLE sync_outbox (
            seq     INTEGER PRIMARY KEY,
            records TEXT NOT NULL
        );
        """
    )
    for trigger in SYNC_TRIGGERS:
        conn.execute(_journal_trigger(*trigger))


def _m0007_stable_memory_ids(conn: apsw.Connection) -> None:
    # A memory keeps its id through corrections and moves (vault/revisions.py): a row can move to
    # another id, and the keyword index follows it. The undo journal keeps, per action, the memories it
    # changed (by global id, never text: an erase leaves nothing here). Revision chains written before
    # are renumbered once so that each memory is shown under the id it was first given.
    from vodou_desktop.vault.revisions import settle_heads
    from vodou_desktop.vault.writer import Change

    conn.execute(
        """
        CREATE TRIGGER chunks_fts_reid AFTER UPDATE OF id ON chunks WHEN old.id IS NOT new.id BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text, context)
                VALUES ('delete', old.id, old.text, old.context);
            INSERT INTO chunks_fts(rowid, text, context) VALUES (new.id, new.text, new.context);
        END;
        CREATE TABLE operation_items (
            op      TEXT NOT NULL,
            sync_id TEXT NOT NULL,
            before  TEXT,
            PRIMARY KEY (op, sync_id)
        ) WITHOUT ROWID;
        CREATE INDEX operation_items_sync ON operation_items(sync_id);
        -- moving a row to another id finds what names it (its successor's link, a superseded fact's
        -- winner): without this, a scan of every chunk for each (27 ms at 20,000 memories)
        CREATE INDEX chunks_superseded ON chunks(superseded_by) WHERE superseded_by IS NOT NULL;
        """
    )
    revised = [int(r[0]) for r in conn.execute(
        "SELECT id FROM chunks WHERE predecessor_id IS NOT NULL AND document_id IS NULL ORDER BY id")]
    if revised:
        log.info("giving %d revised memories back their first id", len(revised))
        settle_heads(conn, Change(), revised)


# a forget (or an undone correction) recorded on a row: kept as a cover, so that every operation hiding a
# row is known even when the row shows only one of them (``invalidated_by``); an undo then hides the row
# again under any other operation still covering it, here and on every device (docs/sync.md)
COVER_TRIGGERS = """
    CREATE TRIGGER forget_covers_insert AFTER INSERT ON chunks WHEN new.invalidated_by IS NOT NULL BEGIN
        INSERT OR IGNORE INTO forget_covers(op, chunk_id, at) VALUES (new.invalidated_by, new.id, new.invalid_at);
    END;
    CREATE TRIGGER forget_covers_update AFTER UPDATE OF invalidated_by ON chunks
    WHEN new.invalidated_by IS NOT NULL BEGIN
        INSERT OR IGNORE INTO forget_covers(op, chunk_id, at) VALUES (new.invalidated_by, new.id, new.invalid_at);
    END;
    CREATE TRIGGER forget_covers_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM forget_covers WHERE chunk_id = old.id;
    END;
    CREATE TRIGGER document_covers_insert AFTER INSERT ON documents WHEN new.invalidated_by IS NOT NULL BEGIN
        INSERT OR IGNORE INTO document_covers(op, document_id, at) VALUES (new.invalidated_by, new.id, new.invalid_at);
    END;
    CREATE TRIGGER document_covers_update AFTER UPDATE OF invalidated_by ON documents
    WHEN new.invalidated_by IS NOT NULL BEGIN
        INSERT OR IGNORE INTO document_covers(op, document_id, at) VALUES (new.invalidated_by, new.id, new.invalid_at);
    END;
    CREATE TRIGGER document_covers_delete AFTER DELETE ON documents BEGIN
        DELETE FROM document_covers WHERE document_id = old.id;
    END;
"""
SYNC_DOCUMENT_TRIGGERS = (
    ("sync_doc_insert", "AFTER INSERT", "documents", "", "doc", "new.sync_id", "create"),
    ("sync_doc_forget", "AFTER UPDATE OF invalid_at, invalidated_by", "documents",
     _changed("invalid_at", "invalidated_by"), "doc", "new.sync_id", "forget"),
    ("sync_doc_delete", "AFTER DELETE", "documents", "", "doc", "old.sync_id", "erase"),
)


def _m0006_sync_operations(conn: apsw.Connection) -> None:
    # Sync keeps the one-computer outcome (SYNC-6): every operation that hides a row is kept as a cover
    # (``forget_covers``, ``document_covers``), so forgets and undos merge as operations; Library documents
    # get a global id and sync; records of a kind this version does not know wait in ``sync_waiting``
    # (from a newer version); ``sync_peers.removed_at`` marks a computer removed from the synced vault.
    conn.execute("ALTER TABLE documents ADD COLUMN sync_id TEXT")
    for (doc_id,) in conn.execute("SELECT id FROM documents ORDER BY id").fetchall():
        conn.execute("UPDATE documents SET sync_id = ? WHERE id = ?", (new_sync_id(), doc_id))
    conn.execute(
        """
        CREATE UNIQUE INDEX documents_sync_id ON documents(sync_id);
        CREATE TABLE forget_covers (
            op       TEXT NOT NULL,
            chunk_id INTEGER NOT NULL,
            at       TEXT NOT NULL,
            PRIMARY KEY (op, chunk_id)
        ) WITHOUT ROWID;
        CREATE INDEX forget_covers_chunk ON forget_covers(chunk_id);
        CREATE TABLE document_covers (
            op          TEXT NOT NULL,
            document_id INTEGER NOT NULL,
            at          TEXT NOT NULL,
            PRIMARY KEY (op, document_id)
        ) WITHOUT ROWID;
        CREATE INDEX document_covers_document ON document_covers(document_id);
        INSERT INTO forget_covers(op, chunk_id, at)
            SELECT invalidated_by, id, invalid_at FROM chunks
            WHERE invalidated_by IS NOT NULL AND invalid_at IS NOT NULL;
        INSERT INTO document_covers(op, document_id, at)
            SELECT invalidated_by, id, invalid_at FROM documents
            WHERE invalidated_by IS NOT NULL AND invalid_at IS NOT NULL;
        CREATE TABLE sync_waiting (
            id      INTEGER PRIMARY KEY,
            entity  TEXT NOT NULL,
            key     TEXT NOT NULL,
            record  TEXT NOT NULL
        );
        CREATE INDEX sync_waiting_key ON sync_waiting(entity, key);
        ALTER TABLE sync_peers ADD COLUMN removed_at TEXT;
        """
    )
    conn.execute(COVER_TRIGGERS)
    for trigger in SYNC_DOCUMENT_TRIGGERS:
        conn.execute(_journal_trigger(*trigger))


def _m0008_message_provenance(conn: apsw.Connection) -> None:
    # Provenance to the message (ING-6, VAULT-5): every memory a batch wrote names the input it came
    # from (its ``source_events`` row, the message of an imported or captured conversation), and that
    # input says whose words it was (``role``: the person, or the assistant whose reply the person
    # accepted). ``confidence`` is how sure the extraction was (a hedged statement is kept lower, not
    # dropped); NULL for a memory written as it was typed.
    conn.execute(
        "ALTER TABLE chunks ADD COLUMN source_event_id INTEGER REFERENCES source_events(id);"
        " ALTER TABLE chunks ADD COLUMN confidence REAL;"
        " ALTER TABLE source_events ADD COLUMN role TEXT;"
        " CREATE INDEX chunks_source_event ON chunks(source_event_id) WHERE source_event_id IS NOT NULL;"
    )
    # Memories written before: a batch memory's valid_at is its input's event time, so where exactly one
    # input of its batch has that time, that input is its message. Where two share it, none is guessed
    # (the doctor says how many such memories remain untraced).
    conn.execute(
        "UPDATE chunks SET source_event_id = (SELECT min(e.id) FROM source_events e JOIN memory_sources s"
        " ON s.batch_id = e.batch_id WHERE s.id = chunks.source_id AND e.event_at = chunks.valid_at)"
        " WHERE document_id IS NULL AND valid_at IS NOT NULL AND (SELECT count(*) FROM source_events e"
        " JOIN memory_sources s ON s.batch_id = e.batch_id WHERE s.id = chunks.source_id"
        " AND e.event_at = chunks.valid_at) = 1"
    )


MIGRATIONS: list[Migration] = [
    ("0001_initial", _m0001_initial),
    ("0002_pinning", _m0002_pinning),
    ("0003_fts_porter", _m0003_fts_porter),
    ("0004_threads", _m0004_threads),
    ("0005_sync_ids", _m0005_sync_ids),
    ("0006_sync_operations", _m0006_sync_operations),
    ("0007_stable_memory_ids", _m0007_stable_memory_ids),
    ("0008_message_provenance", _m0008_message_provenance),
]
