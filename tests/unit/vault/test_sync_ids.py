"""Migration 0005_sync_ids: every fact gets a global id, and the journal's triggers capture every write
path only while sync is on."""

from __future__ import annotations

from pathlib import Path

from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, correct, pin, remember
from vodou_desktop.vault import Vault
from vodou_desktop.vault import sync_store as st
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.migrations import migrate
from vodou_desktop.vault.schema import MIGRATIONS


def test_old_vault_facts_get_distinct_global_ids(vault_path: Path) -> None:
    conn = open_connection(vault_path)
    migrate(conn, vault_path, MIGRATIONS[:4])
    conn.execute("INSERT INTO memory_sources(kind, tier, created_at) VALUES ('cli', 'first_party', 'x')")
    for n in range(50):
        conn.execute("INSERT INTO chunks(text, source_id, created_at) VALUES (?, 1, 'x')", (f"fact {n}",))
    conn.close()
    with Vault.open(vault_path) as vault:
        ids = vault.read(lambda c: [r[0] for r in c.execute("SELECT sync_id FROM chunks")])
    assert len(ids) == 50 and len(set(ids)) == 50
    assert all(isinstance(i, str) and len(i) == 32 for i in ids)


def _journal(vault: Vault) -> list[tuple[str, str]]:
    return vault.read(lambda c: [(r[0], r[1]) for r in c.execute("SELECT entity, field FROM sync_journal ORDER BY id")])


def test_nothing_is_journaled_until_sync_is_on(vault: Vault) -> None:
    remember(vault, "a heron", Origin(kind="cli"))
    SiteModes(vault).set_rule("example.com", "off")
    assert _journal(vault) == []


def test_every_synced_write_path_is_journaled(vault: Vault) -> None:
    vault.write(lambda c, ch: st.set_capture(c, ch, True))
    fact = remember(vault, "a heron", Origin(kind="cli"))
    newer = correct(vault, fact, "a grey heron")
    pin(vault, newer)
    forgetting = Forgetting(vault)
    op = forgetting.forget_fact(newer)["op"]
    forgetting.undo(op)
    SiteModes(vault).set_rule("example.com", "off")
    SiteModes(vault).clear_rule("example.com")
    OperatorMemory(vault).add("preference", "answers in French")
    forgetting.erase_fact(newer)
    seen = set(_journal(vault))
    assert {("fact", "create"), ("fact", "supersede"), ("fact", "pin"), ("fact", "forget"), ("fact", "erase"),
            ("op", "create"), ("op", "undo"), ("site", "mode"), ("opm", "body")} <= seen
    # the journal never holds text
    dump = vault.read(lambda c: repr(list(c.execute("SELECT * FROM sync_journal"))))
    assert "heron" not in dump


def test_a_document_is_journaled_once_and_its_chunks_and_embeddings_never(vault: Vault) -> None:
    from vodou_desktop.ingest.remember import save_document
    from vodou_desktop.vault.facts import set_embeddings

    fact = remember(vault, "a heron", Origin(kind="cli"))
    vault.write(lambda c, ch: st.set_capture(c, ch, True))
    save_document(vault, "A long page about herons.\n\n" + "More words. " * 300,
                  Origin(kind="library", url="https://example.com/h"))
    vault.write(lambda c, ch: set_embeddings(c, ch, [(fact, [0.1, 0.2, 0.3])], "m"))
    assert _journal(vault) == [("doc", "create")]  # the document travels whole; its chunks are not memories
