"""The source audits of seeds 000 and 004, run over the real package (and over planted code, to show
they can fail): every project predicate keeps the global carve-out, and every function that reads a
governed column goes through its policy (or is a reviewed helper)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import code_audit

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
def planted(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "vault").mkdir(parents=True)
    (root / "vault" / "query.py").write_text(CLEAN_CODE)
    return root


def test_real_package_has_no_project_predicate_without_carve_out() -> None:
    assert code_audit.missing_carve_out() == []


def test_real_package_reads_governed_columns_only_through_their_policy() -> None:
    count = code_audit.governed_readers()
    assert len(count.readers) > 20  # the scan sees the package's readers (it is not looking elsewhere)
    assert count.unchecked == []


def test_every_reviewed_helper_still_reads_a_governed_column() -> None:
    """A review names a function that reads governed columns; one that no longer does (renamed,
    removed) leaves a stale exemption that would let a new function of the same name through."""
    readers = set(code_audit.governed_readers().readers)
    stale = [name for name in [*code_audit.REVIEWED, *code_audit.OWNER_DIAGNOSTICS] if name not in readers]
    assert stale == []


def test_clean_code_passes(planted: Path) -> None:
    assert code_audit.missing_carve_out(planted) == []
    count = code_audit.governed_readers(planted)
    assert count.readers == ["vault/query.py:list_facts", "vault/query.py:tagged"] and count.unchecked == []


def test_missing_carve_out_and_unchecked_reader_are_named(planted: Path) -> None:
    (planted / "bridge.py").write_text(
        'def by_project(conn, p):\n    return conn.execute("SELECT id FROM chunks WHERE project_id = ?", (p,))\n\n\n'
        'def hosts(conn):\n    return conn.execute("SELECT source_host FROM memory_sources").fetchall()\n\n\n'
        'COLS = "id, source_url"\n\n\n'
        'def urls(conn):\n    return conn.execute(f"SELECT {COLS} FROM memory_sources").fetchall()\n\n\n'
        'def joined(conn):\n    return conn.execute("SELECT id" + ", invalid_at FROM chunks").fetchall()\n\n\n'
        'def assembled(conn, only):\n    extra = " AND invalid_at IS NULL" if only else ""\n'
        '    sql = f"SELECT id FROM chunks WHERE 1{extra}"\n    return conn.execute(sql).fetchall()\n')
    assert [f"{h.file}:{h.line}" for h in code_audit.missing_carve_out(planted)] == ["bridge.py:2"]
    assert code_audit.governed_readers(planted).unchecked == [
        "bridge.py:by_project", "bridge.py:hosts", "bridge.py:urls", "bridge.py:joined",
        "bridge.py:assembled"]


def test_a_select_and_a_governed_column_in_different_statements_is_no_reader(planted: Path) -> None:
    """A write that reads an unrelated value (the next id) and then INSERTs a governed column reads no
    governed column: the SELECT and the column name must be in one SQL text."""
    (planted / "facts.py").write_text(
        'def insert(conn, p):\n'
        '    new_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]\n'
        '    conn.execute("INSERT INTO chunks(id, project_id) VALUES (?, ?)", (new_id, p))\n')
    assert code_audit.governed_readers(planted).readers == ["vault/query.py:list_facts", "vault/query.py:tagged"]
