"""VAULT-1, DATA-7: a vault holds only what the migrations make. Every object SQLite keeps in
``sqlite_schema`` (tables, indexes, triggers, views, their SQL) is compared with what the vault's
own migrations create on a blank vault, before the file is written to or any statement runs; a
difference is refused in one line naming the object, and the file is left byte for byte."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.support import break_not_null, file_hashes, run_cli
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, schema_objects
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.migrations import applied_migrations, migrate
from vodou_desktop.vault.schema import MIGRATIONS

PLANTED = [  # (what is run on a closed vault, words the refusal must say)
    ("CREATE TABLE loot(t TEXT)", 'a table "loot"'),
    ("CREATE TRIGGER keep_erased AFTER DELETE ON chunks BEGIN SELECT 1; END", 'a trigger "keep_erased" on chunks'),
    ("CREATE TRIGGER bank_on AFTER INSERT ON chunks BEGIN UPDATE site_rules SET mode = 'collect'; END",
     'a trigger "bank_on" on chunks'),
    ("CREATE VIEW everything AS SELECT text FROM chunks", 'a view "everything"'),
    ("CREATE INDEX chunks_by_text ON chunks(text)", 'an index "chunks_by_text" on chunks'),
    ("CREATE VIRTUAL TABLE shadow USING fts5(t)", 'a table "shadow"'),
    ("DROP TRIGGER sync_fact_delete; CREATE TRIGGER sync_fact_delete AFTER DELETE ON chunks BEGIN SELECT 1; END",
     'a trigger "sync_fact_delete" on chunks whose SQL is not Vodou\'s'),
    ("DROP TRIGGER chunks_fts_delete", 'a trigger "chunks_fts_delete" on chunks missing'),
    ("DROP INDEX chunks_project", 'an index "chunks_project" on chunks missing'),
]


def _vault(path: Path) -> None:
    with Vault.open(path) as vault:
        remember(vault, "the heron nests by the mill", Origin(kind="cli"))


def _plant(path: Path, sql: str) -> None:
    conn = apsw.Connection(str(path))
    try:
        conn.execute(sql)
    finally:
        conn.close()


def test_a_vault_at_every_migration_step_is_what_that_step_makes_and_migrates_on(tmp_path: Path) -> None:
    """The check knows every intermediate schema: an older vault opens (and is brought up to date)."""
    for step in range(len(MIGRATIONS) + 1):
        path = tmp_path / f"step{step}.sqlite"
        conn = apsw.Connection(str(path))
        migrate(conn, path, MIGRATIONS[:step])
        assert schema_objects.differences(conn, applied_migrations(conn)) == []
        conn.close()
        _vault(path)  # opens it: checked, then migrated to the last step
        conn = open_connection(path)
        assert applied_migrations(conn) == [name for name, _ in MIGRATIONS]
        assert schema_objects.differences(conn, applied_migrations(conn)) == []
        conn.close()


@pytest.mark.parametrize(("sql", "words"), PLANTED, ids=[w for _, w in PLANTED])
def test_a_planted_object_is_refused_before_anything_runs_and_the_file_is_left_as_it_was(
        tmp_path: Path, sql: str, words: str) -> None:
    path = tmp_path / "vault.sqlite"
    _vault(path)
    _plant(path, sql)
    before = file_hashes(path)
    with pytest.raises(VaultUnavailable) as refused:
        Vault.open(path)
    message = str(refused.value)
    assert words in message and "\n" not in message and "nothing was changed" in message
    said = run_cli("--vault", str(path), "mem", "list")
    assert said.code == 2 and said.err.count("\n") == 1 and words in said.err and "Traceback" not in said.err
    assert file_hashes(path) == before  # not even the switch to WAL: the file was never written


def test_sqlites_own_statistics_are_not_a_planted_object(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    _vault(path)
    _plant(path, "ANALYZE")
    with Vault.open(path) as vault:
        assert vault.read(lambda c: c.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0]) > 0


def test_a_damaged_vault_with_a_table_of_its_own_is_called_damaged(tmp_path: Path) -> None:
    """The words that lead back to a working vault (restore a backup) win over "changed"."""
    path = tmp_path / "vault.sqlite"
    _vault(path)
    break_not_null(path)
    with pytest.raises(VaultUnavailable, match="is damaged"):
        Vault.open(path)


def test_every_difference_names_the_object_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    _vault(path)
    _plant(path, "; ".join(f"CREATE TABLE t{i}(x)" for i in range(5)))
    conn = apsw.Connection(str(path))
    diffs = schema_objects.differences(conn, applied_migrations(conn))
    conn.close()
    assert [d.name for d in diffs] == [f"t{i}" for i in range(5)]
    assert schema_objects.sentence(diffs) == ('a table "t0", a table "t1" and a table "t2" that Vodou\'s migrations '
                                              'do not make (and 2 more)')
