"""DATA-4: Library documents can be forgotten (one, or a site's), undone, and erased to the bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_cli, total_hits
from vodou_desktop.errors import Conflict, NotFound
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

from .conftest import add_fact

LIVE = FactFilter(project=ALL_PROJECTS)


def _doc_ids(vault: Vault, f: FactFilter = LIVE) -> list[int]:
    return [d.id for d in vault.read(lambda c: q.list_documents(c, f))]


def _vocab_has(vault: Vault, term: str) -> bool:
    """Whether the full-text index still knows a term starting with ``term`` (the tokenizer may stem
    it), read through fts5vocab over chunks_fts (a temp table: the vault file is not touched)."""
    def read(conn):  # type: ignore[no-untyped-def]
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, chunks_fts, row)")
        return conn.execute("SELECT count(*) FROM temp.vocab WHERE term LIKE ?", (term + "%",)).fetchone()[0] > 0
    return bool(vault.read(read))


def test_forget_one_document_and_undo_brings_it_back(vault: Vault, forgetting: Forgetting) -> None:
    keep = save_document(vault, "kept article", Origin(kind="library", url="https://a.example/k", title="K"))
    doc = save_document(vault, "forgettable article", Origin(kind="library", url="https://a.example/f", title="F"))
    result = forgetting.forget_document(doc)
    assert result["documents_hidden"] == 1
    assert _doc_ids(vault) == [keep]
    with pytest.raises(Conflict):
        forgetting.forget_document(doc)
    undone = forgetting.undo(result["op"])
    assert undone["documents_restored"] == 1 and undone["document"] == doc
    assert sorted(_doc_ids(vault)) == [keep, doc]
    with pytest.raises(NotFound):
        forgetting.forget_document(9999)


def test_forget_site_with_documents_counts_hides_and_undoes_them(vault: Vault, forgetting: Forgetting) -> None:
    add_fact(vault, "a fact from the site", "https://news.example/x")
    docs = [save_document(vault, f"article {i}", Origin(kind="library", url=f"https://www.news.example/{i}",
                                                        title=str(i))) for i in range(2)]
    other = save_document(vault, "elsewhere", Origin(kind="library", url="https://other.example/", title="O"))
    dry = forgetting.forget_host("news.example", dry_run=True)
    assert (dry["facts"], dry["documents"]) == (1, 2)
    kept = forgetting.forget_host("news.example")  # not told: documents stay
    assert kept["documents_kept"] == 2 and sorted(_doc_ids(vault)) == sorted([*docs, other])
    forgetting.undo(kept["op"])
    gone = forgetting.forget_host("news.example", documents=True)
    assert (gone["facts_hidden"], gone["documents_hidden"]) == (1, 2) and _doc_ids(vault) == [other]
    back = forgetting.undo(gone["op"])
    assert (back["facts_restored"], back["documents_restored"]) == (1, 2)
    assert sorted(_doc_ids(vault)) == sorted([*docs, other])


def test_erase_site_with_documents_leaves_no_text_on_disk(vault: Vault, vault_path: Path,
                                                          forgetting: Forgetting) -> None:
    for i in range(30):  # enough other rows that pages are reused, not just dropped
        add_fact(vault, f"filler fact number {i} about gardening", "https://filler.example.com/")
    add_fact(vault, "FACTCANARY from the site", "https://gone.example/y")
    save_document(vault, "DOCCANARY first paragraph.\n\n" + "zyxdoccanary body text. " * 80,
                  Origin(kind="library", url="https://gone.example/doc", title="DOCTITLECANARY"))
    hidden = save_document(vault, "DOCCANARY forgotten first", Origin(kind="library", url="https://sub.gone.example/d",
                                                                      title="T"))
    forgetting.forget_document(hidden)  # erase also takes documents that were only hidden
    save_document(vault, "STAYDOC text", Origin(kind="library", url="https://stay.example/doc", title="S"))
    assert total_hits(vault_path, "zyxdoccanary") > 0 and _vocab_has(vault, "zyxdoccanar")
    result = forgetting.erase_host("gone.example", documents=True)
    assert (result["facts_erased"], result["documents_erased"], result["documents_kept"]) == (1, 2, 0)
    for needle in ("DOCCANARY", "zyxdoccanary", "DOCTITLECANARY", "FACTCANARY"):
        assert total_hits(vault_path, needle) == 0, needle
    assert not _vocab_has(vault, "zyxdoccanar") and not _vocab_has(vault, "doccanar")
    assert total_hits(vault_path, "STAYDOC") > 0
    assert len(_doc_ids(vault, FactFilter(project=ALL_PROJECTS, include_forgotten=True))) == 1


def test_erase_one_document(vault: Vault, vault_path: Path, forgetting: Forgetting) -> None:
    doc = save_document(vault, "ONEDOCCANARY text", Origin(kind="library", url="https://a.example/1", title="1"))
    assert forgetting.erase_document(doc)["documents_erased"] == 1
    assert total_hits(vault_path, "ONEDOCCANARY") == 0 and _doc_ids(vault) == []
    with pytest.raises(NotFound):
        forgetting.erase_document(doc)


def test_cli_documents_flags(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        doc = save_document(vault, "CLIDOC article", Origin(kind="library", url="https://cli.example/a", title="A"))
        save_document(vault, "CLIDOC second", Origin(kind="library", url="https://cli.example/b", title="B"))
    dry = run_cli("--vault", str(vault_path), "mem", "forget", "--host", "cli.example", "--dry-run")
    assert "2 library documents would be kept (add --documents" in dry.out
    one = run_cli("--vault", str(vault_path), "mem", "forget", "--document", str(doc))
    assert one.code == 0 and f"forgot library document #{doc}" in one.out
    op = one.out.split("vodou undo ")[1].strip()
    assert "visible again" in run_cli("--vault", str(vault_path), "mem", "forget", "--undo", op).out
    kept = run_cli("--vault", str(vault_path), "mem", "erase", "--host", "cli.example", "--yes")
    assert kept.code == 0 and "2 library documents kept" in kept.out
    erased = run_cli("--vault", str(vault_path), "mem", "erase", "--host", "cli.example", "--documents", "--yes")
    assert erased.code == 0 and "2 library documents" in erased.out
    assert total_hits(vault_path, "CLIDOC") == 0
    assert run_cli("--vault", str(vault_path), "mem", "erase", "--id", "1", "--documents", "--yes").code == 2
