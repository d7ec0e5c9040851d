"""``vodou doctor``: passes on a new vault and on a healthy one, and fails naming the problem, one
line each, on a vault seeded with each defect of the person's data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.data.backup import backup_vault
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.doctor import Setup, run_doctor
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.embedder import DEFAULT_MODEL
from vodou_desktop.vault import Vault
from vodou_desktop.vault.facts import insert_fact
from vodou_desktop.vault.sources import stamp_source

NAMES = ["integrity", "fts_integrity", "embeddings_missing", "embeddings_other_model", "encryption",
         "backup_age", "latest_backup", "sources_without_url", "mixed_batch_tags", "memories_without_message",
         "resources"]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(model=DEFAULT_MODEL, backups=tmp_path / "backups")


def _healthy(vault):
    remember(vault, "We use ruff for linting.", Origin(kind="cli"))
    remember(vault, "Ana likes the violin.", Origin(kind="note", url="https://example.com/a"), project="family")
    w.enqueue(vault, [w.Entry("We decided to ship Atlas on Friday.", "cursor", project="atlas")])
    w.flush(vault)


def _failed(checks) -> dict[str, list]:
    return {c.name: c.rows for c in checks if not c.passed}


def _old_fact(vault, text="An old fact never embedded.") -> int:
    def job(conn, change):
        sid = stamp_source(conn, change, kind="cli", tier="first_party")
        return insert_fact(conn, change, text=text, source_id=sid, created_at="2020-01-01T00:00:00+00:00")

    return vault.write(job)


def test_new_and_healthy_vaults_pass(vault, setup):
    checks = run_doctor(vault, setup)
    assert [c.name for c in checks] == NAMES and _failed(checks) == {}
    _healthy(vault)
    assert _failed(run_doctor(vault, setup)) == {}


def test_new_vault_passes_through_the_cli(vault_path):
    """The real command on a brand-new vault, source audits and all: exit 0 (it said "1 internal audit
    failed" on every vault while the code audit flagged a write path). The vault is made first: a
    --vault naming no vault is refused (tests/unit/cli/test_no_vault.py)."""
    Vault.open(vault_path).close()
    res = run_cli("--vault", str(vault_path), "doctor")
    assert res.code == 0, res.out
    assert res.out.rstrip().endswith("All is well.") and "PROBLEM" not in res.out
    assert "ok    Encryption is off. `vodou encrypt` turns it on." in res.out


def test_no_vault_yet_passes_and_creates_nothing(vodou_home, monkeypatch):
    """A fresh install: the default vault is not made yet. Doctor says so, checks what it can, exits 0
    and leaves the home folder as it was."""
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    before = sorted(vodou_home.rglob("*"))
    res = run_cli("doctor")
    assert res.code == 0, res.out + res.err
    assert "No vault yet at" in res.out and res.out.rstrip().endswith("All is well.")
    assert sorted(vodou_home.rglob("*")) == before
    checks = json.loads(run_cli("doctor", "--json").out)["checks"]
    assert [c["name"] for c in checks] == ["vault", "resources"]


def test_a_vanished_default_vault_is_a_problem_naming_its_copy(vodou_home, monkeypatch):
    """Copies of a vault beside where the default one should be (a restore interrupted between its
    renames): a PROBLEM saying how to put it back, not "no vault yet"."""
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    assert run_cli("mem", "add", "the heron nests by the weir").code == 0
    made = next(vodou_home.rglob("*.vodou.sqlite"))
    kept = made.with_name(made.name + ".before-restore-20260101-000000")
    made.rename(kept)
    res = run_cli("doctor")
    assert res.code == 1 and f"PROBLEM  No vault at {made}" in res.out and f"vodou restore {kept}" in res.out
    assert not made.exists()


def test_page_source_without_url_is_named(vault, setup):
    _healthy(vault)
    vault.write(lambda c, ch: c.execute(
        "INSERT INTO memory_sources(kind, tier, created_at) VALUES ('selection', 'first_party', '2026-01-01')"))
    rows = _failed(run_doctor(vault, setup))["sources_without_url"]
    assert rows == [{"kind": "selection", "rows": 1, "no_url": 1, "source_ids": [4]}]


def test_fact_tagged_from_mixed_batch_is_named(vault, setup):
    w.enqueue(vault, [w.Entry("We decided to ship Atlas on Friday.", "web", project="atlas"),
                      w.Entry("We use ruff for linting everywhere.", "claude-code")])
    report = w.flush(vault)
    bad = report.fact_ids[1]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET project_id = 'atlas' WHERE id = ?", (bad,)))
    rows = _failed(run_doctor(vault, setup))["mixed_batch_tags"]
    assert rows == [{"fact_id": bad, "tagged_as": "atlas", "distinct_input_projects": 2}]


def test_broken_fts_index_is_reported(vault, setup):
    _healthy(vault)
    vault.write(lambda c, ch: c.execute("INSERT INTO chunks_fts(rowid, text) VALUES (999, 'ghost row')"))
    rows = _failed(run_doctor(vault, setup))["fts_integrity"]
    assert rows and ("malformed" in rows[0] or "corrupt" in rows[0]), rows


def test_a_damaged_file_fails_the_integrity_check(vault, setup):
    _healthy(vault)
    # A table whose pages are an index's: which only integrity_check sees (the vault's own objects, so the
    # schema is still the migrations' and the vault opens).
    vault.write(lambda c, ch: c.execute("PRAGMA writable_schema=ON"), transaction=False)
    vault.write(lambda c, ch: c.execute("INSERT INTO messages(role, content, created_at) VALUES ('user', 'x', 'y')"))
    root = vault.read(lambda c: c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'chunks_project'")
                      .fetchone()[0])
    vault.write(lambda c, ch: c.execute("UPDATE sqlite_schema SET rootpage = ? WHERE name = 'messages'", (root,)),
                transaction=False)
    vault.close()
    from vodou_desktop.vault import Vault

    reopened = Vault.open(vault.path)
    try:
        failed = _failed(run_doctor(reopened, setup))
    finally:
        reopened.close()
    assert failed.get("integrity"), failed


def test_old_chunk_without_embedding_is_named(vault, setup):
    _healthy(vault)
    old = _old_fact(vault)
    checks = run_doctor(vault, setup, window=timedelta(hours=1))
    assert _failed(checks)["embeddings_missing"] == [old]


def test_vectors_of_another_model_are_a_problem_unless_search_by_meaning_is_off(vault, setup):
    _healthy(vault)
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET embedding = zeroblob(16), embed_model = 'other-model'"
                                        " WHERE id = 1"))
    assert "embeddings_other_model" in _failed(run_doctor(vault, setup))
    off = Setup(model=None, backups=setup.backups)
    assert "embeddings_other_model" not in _failed(run_doctor(vault, off))


def test_search_by_meaning_off_is_a_state_not_a_problem(vault, setup):
    """Meaning off: no vector is ever made, so old memories without one are how it should be (it said
    "PROBLEM … 20000 chunks older than 1:00:00 have no embedding" and exited 1 on every such vault)."""
    _healthy(vault)
    _old_fact(vault)
    checks = run_doctor(vault, Setup(model=None, backups=setup.backups, off_by="VODOU_EMBEDDER=none"))
    assert [c.name for c in checks] == ["integrity", "fts_integrity", "meaning", *NAMES[4:]]
    assert _failed(checks) == {}
    assert next(c for c in checks if c.name == "meaning").detail == "off (VODOU_EMBEDDER=none)"


def test_backup_age(vault, vault_path, setup):
    _healthy(vault)
    assert _failed(run_doctor(vault, setup)) == {}  # a new vault needs no backup yet
    _old_fact(vault, "A memory written long ago.")
    assert "backup_age" not in _failed(run_doctor(vault, setup))  # nor one holding old memories (an import)
    vault.write(lambda c, ch: c.execute("UPDATE schema_migrations SET applied_at = '2020-01-01T00:00:00+00:00'"))
    assert "backup_age" in _failed(run_doctor(vault, setup))  # a vault made long ago, never backed up
    setup.backups.mkdir()
    backup_vault(vault_path, setup.backups / f"{vault_path.name}.backup-20260101-120000")
    later = Setup(model=DEFAULT_MODEL, backups=setup.backups, now=datetime(2026, 1, 5, tzinfo=UTC))
    assert "backup_age" not in _failed(run_doctor(vault, later))
    much_later = Setup(model=DEFAULT_MODEL, backups=setup.backups, now=datetime(2026, 1, 20, tzinfo=UTC))
    check = next(c for c in run_doctor(vault, much_later) if c.name == "backup_age")
    assert not check.passed and "is 18 days old" in check.detail


def test_cli_exit_codes_json_and_one_line_per_problem(vault_path, vault):
    _healthy(vault)
    res = run_cli("--vault", str(vault_path), "doctor", "--json")
    assert res.code == 0, res.out
    assert json.loads(res.out)["ok"] is True
    vault.write(lambda c, ch: c.execute(
        "INSERT INTO memory_sources(kind, tier, created_at) VALUES ('note', 'first_party', '2026-01-01')"))
    vault.write(lambda c, ch: c.execute("INSERT INTO chunks_fts(rowid, text) VALUES (999, 'ghost row')"))
    res = run_cli("--vault", str(vault_path), "doctor")
    assert res.code == 1
    problems = [line for line in res.out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 2, res.out
    assert problems[0].startswith("PROBLEM  The keyword search index does not match your memories")
    assert problems[1].startswith("PROBLEM  Some memories from web pages lost their address (note: 1 of 2 "
                                  "without URL)")
    assert res.out.rstrip().endswith("2 problems (see above).")
    res = run_cli("--vault", str(vault_path), "doctor", "--verbose")
    assert res.code == 1
    assert "'kind': 'note', 'rows': 2, 'no_url': 1" in res.out
