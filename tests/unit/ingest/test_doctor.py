"""``vodou doctor``: passes on a clean vault, fails naming the rows on a vault seeded with each defect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.ingest import code_audit
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.doctor import run_doctor
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault.facts import insert_fact
from vodou_desktop.vault.sources import stamp_source

CLEAN_CODE = '''
def list_facts(conn, f):
    where, params = f.where()
    return conn.execute(f"SELECT id FROM chunks c WHERE {where} AND c.project_id IS NULL", params)


def tagged(conn, p):
    return conn.execute("SELECT id FROM chunks WHERE (project_id = ? OR project_id IS NULL)", (p,))


def retag(conn, p, i):
    conn.execute("UPDATE chunks SET project_id = ? WHERE id = ?", (p, i))
'''


@pytest.fixture
def clean_code(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "vault").mkdir(parents=True)
    (root / "vault" / "query.py").write_text(CLEAN_CODE)
    return root


def _healthy(vault):
    remember(vault, "We use ruff for linting.", Origin(kind="cli"))
    remember(vault, "Ana likes the violin.", Origin(kind="note", url="https://example.com/a"), project="family")
    w.enqueue(vault, [w.Entry("We decided to ship Atlas on Friday.", "cursor", project="atlas")])
    w.flush(vault)


def _failed(checks) -> dict[str, list]:
    return {c.name: c.rows for c in checks if not c.passed}


def test_clean_vault_passes(vault, clean_code):
    _healthy(vault)
    checks = run_doctor(vault, code_root=clean_code)
    assert _failed(checks) == {}
    assert [c.name for c in checks] == ["sources_without_url", "mixed_batch_tags", "project_carve_out",
                                        "policy_readers", "fts_integrity", "embeddings_missing", "resources",
                                        "latest_backup"]


def test_real_package_has_no_project_predicate_without_carve_out():
    assert code_audit.missing_carve_out() == []


def test_page_source_without_url_is_named(vault, clean_code):
    _healthy(vault)
    vault.write(lambda c, ch: c.execute(
        "INSERT INTO memory_sources(kind, tier, created_at) VALUES ('selection', 'first_party', '2026-01-01')"))
    rows = _failed(run_doctor(vault, code_root=clean_code))["sources_without_url"]
    assert rows == [{"kind": "selection", "rows": 1, "no_url": 1, "source_ids": [4]}]


def test_fact_tagged_from_mixed_batch_is_named(vault, clean_code):
    w.enqueue(vault, [w.Entry("We decided to ship Atlas on Friday.", "web", project="atlas"),
                      w.Entry("We use ruff for linting everywhere.", "claude-code")])
    report = w.flush(vault)
    bad = report.fact_ids[1]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET project_id = 'atlas' WHERE id = ?", (bad,)))
    rows = _failed(run_doctor(vault, code_root=clean_code))["mixed_batch_tags"]
    assert rows == [{"fact_id": bad, "tagged_as": "atlas", "distinct_input_projects": 2}]


def test_missing_carve_out_and_unchecked_reader_are_named(vault, clean_code):
    (clean_code / "bridge.py").write_text(
        'def by_project(conn, p):\n    return conn.execute("SELECT id FROM chunks WHERE project_id = ?", (p,))\n\n\n'
        'def hosts(conn):\n    return conn.execute("SELECT source_host FROM memory_sources").fetchall()\n')
    failed = _failed(run_doctor(vault, code_root=clean_code))
    assert failed["project_carve_out"] == [
        'bridge.py:2: return conn.execute("SELECT id FROM chunks WHERE project_id = ?", (p,))']
    assert failed["policy_readers"] == ["bridge.py:by_project", "bridge.py:hosts"]


def test_broken_fts_index_is_reported(vault, clean_code):
    _healthy(vault)
    vault.write(lambda c, ch: c.execute("INSERT INTO chunks_fts(rowid, text) VALUES (999, 'ghost row')"))
    rows = _failed(run_doctor(vault, code_root=clean_code))["fts_integrity"]
    assert rows and ("malformed" in rows[0] or "corrupt" in rows[0]), rows


def test_old_chunk_without_embedding_is_named(vault, clean_code):
    _healthy(vault)

    def job(conn, change):
        sid = stamp_source(conn, change, kind="cli", tier="first_party")
        return insert_fact(conn, change, text="An old fact never embedded.", source_id=sid,
                           created_at="2020-01-01T00:00:00+00:00")

    old = vault.write(job)
    assert _failed(run_doctor(vault, code_root=clean_code)) == {"embeddings_missing": [old]}


def test_cli_exit_codes_and_json(vault_path, vault, clean_code, monkeypatch):
    monkeypatch.setattr(code_audit, "package_root", lambda: clean_code)
    _healthy(vault)
    res = run_cli("--vault", str(vault_path), "doctor", "--json")
    assert res.code == 0, res.out
    assert json.loads(res.out)["ok"] is True
    vault.write(lambda c, ch: c.execute(
        "INSERT INTO memory_sources(kind, tier, created_at) VALUES ('note', 'first_party', '2026-01-01')"))
    res = run_cli("--vault", str(vault_path), "doctor")
    assert res.code == 1
    said = " ".join(res.out.split())
    assert "1 internal audit failed: this is a bug in Vodou" in said and "vodou doctor --verbose" in said
    assert "FAIL" not in res.out  # the audits' details are for developers
    res = run_cli("--vault", str(vault_path), "doctor", "--verbose")
    assert res.code == 1
    assert "FAIL  page-kind sources carry their URL (seed 000): note: 2 of 3 without URL" not in res.out
    assert "FAIL  page-kind sources carry their URL (seed 000): note: 1 of 2 without URL" in res.out
