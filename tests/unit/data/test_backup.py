"""DATA-1: `vodou backup` while other processes write, `vodou restore` with the old vault kept."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes, run_cli
from vodou_desktop import config
from vodou_desktop.data import rolling
from vodou_desktop.data.backup import (
    VaultCounts,
    backup_vault,
    check_copy,
    manifest_path,
    restore_vault,
    write_manifest,
)
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

WRITER = textwrap.dedent("""
    import sys
    from vodou_desktop.ingest.remember import Origin, remember
    from vodou_desktop.vault import Vault
    vault = Vault.open(sys.argv[1])
    name = sys.argv[2]
    i = 0
    while True:
        remember(vault, f"{name} wrote fact {i}", Origin(kind="cli"))
        print(i, flush=True)   # acknowledged only after the commit returned
        i += 1
""")


def _texts(path: Path) -> set[str]:
    with Vault.open(path) as vault:
        return {f.text for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=10**6))}


def _acked(proc: subprocess.Popen[str]) -> int:
    assert proc.stdout is not None
    return int(proc.stdout.readline())


def test_backup_while_two_processes_write_then_restore(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "written before anyone else", Origin(kind="cli"))
    writers = {name: subprocess.Popen([sys.executable, "-c", WRITER, str(vault_path), name],
                                      stdout=subprocess.PIPE, text=True) for name in ("alpha", "beta")}
    try:
        for proc in writers.values():  # both are writing now; read a few acknowledgements
            for _ in range(20):
                _acked(proc)
        acked = {name: _acked(proc) for name, proc in writers.items()}  # acknowledged before the backup
        result = run_cli("--vault", str(vault_path), "backup", str(tmp_path / "copy.sqlite"))
        after = {name: _acked(proc) for name, proc in writers.items()}  # still writing after it
    finally:
        for proc in writers.values():
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
    assert result.code == 0, result.err
    assert "integrity ok" in result.out and "memories" in result.out
    copy = tmp_path / "copy.sqlite"
    assert copy.stat().st_mode & 0o777 == 0o600  # private, like the vault
    conn = apsw.Connection(str(copy))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    scratch = tmp_path / "scratch.sqlite"  # opening a vault writes to it (WAL): read a copy of the backup
    shutil.copyfile(copy, scratch)
    in_copy = _texts(scratch)
    expected = {f"{name} wrote fact {i}" for name, last in acked.items() for i in range(last + 1)}
    assert expected - in_copy == set()
    assert "written before anyone else" in in_copy
    assert all(after[name] > acked[name] for name in acked)

    restored = run_cli("--vault", str(vault_path), "restore", str(copy))
    assert restored.code == 0, restored.err
    assert _texts(vault_path) == in_copy
    previous = [p for p in tmp_path.glob("vault.sqlite.before-restore-*")
                if not p.name.endswith(("-wal", "-shm", "-journal"))]
    assert len(previous) == 1 and f"alpha wrote fact {after['alpha']}" in _texts(previous[0])


def test_restore_refuses_while_another_process_has_the_vault_open(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "kept as it is", Origin(kind="cli"))
    backup_vault(vault_path, tmp_path / "copy.sqlite")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from vodou_desktop.vault import Vault
            vault = Vault.open({str(vault_path)!r})
            vault.reader()
            print("open", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = sorted(p.name for p in tmp_path.iterdir())
        result = run_cli("--vault", str(vault_path), "restore", str(tmp_path / "copy.sqlite"))
        assert result.code == 2 and result.err.count("\n") == 1
        assert "open in another program" in result.err
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    finally:
        holder.communicate("", timeout=30)
    assert "kept as it is" in _texts(vault_path)


def test_restore_refuses_a_newer_schema_and_a_damaged_copy(vault_path: Path, tmp_path: Path) -> None:
    Vault.open(vault_path).close()
    newer = tmp_path / "newer.sqlite"
    backup_vault(vault_path, newer)
    conn = apsw.Connection(str(newer))
    conn.execute("INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_future', 'x')")
    conn.close()
    write_manifest(newer, VaultCounts(0, 0, 0, 0), encrypted=False)  # as a newer Vodou made it
    before = file_hashes(vault_path)
    with pytest.raises(VaultUnavailable, match="newer version"):
        restore_vault(newer, vault_path)
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\x07" * 8000)
    result = run_cli("--vault", str(vault_path), "restore", str(damaged))
    assert result.code == 2 and "Traceback" not in result.err
    assert file_hashes(vault_path) == before
    assert not list(tmp_path.glob("*.before-restore-*"))


def test_backup_never_overwrites(vault_path: Path, tmp_path: Path) -> None:
    Vault.open(vault_path).close()
    (tmp_path / "taken").write_text("mine")
    result = run_cli("--vault", str(vault_path), "backup", str(tmp_path / "taken"))
    assert result.code == 2 and "already exists" in result.err
    assert (tmp_path / "taken").read_text() == "mine"


def test_rolling_backups_once_a_day_keep_the_newest(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "rolled fact", Origin(kind="cli"))
    settings = config.Settings(backups_keep=2, backups_folder=str(tmp_path / "rolled"))
    first = rolling.run_if_due(vault_path, settings)
    assert first is not None and first.counts.memories == 1
    assert rolling.run_if_due(vault_path, settings) is None  # not a day old yet
    folder = tmp_path / "rolled"
    for stamp in ("20200101-000000", "20200102-000000"):  # two older ones, as if from past days
        (folder / f"{vault_path.name}.daily-{stamp}").write_bytes(first.path.read_bytes())
    (folder / "unrelated.sqlite").write_text("not ours")
    forced = rolling.run_if_due(vault_path, settings, force=True)
    assert forced is not None
    kept = rolling.rolling_backups(folder, vault_path)
    assert len(kept) == 2 and kept[-1] == forced.path and (folder / "unrelated.sqlite").exists()
    assert check_copy(kept[0]).memories == 1
    assert rolling.run_if_due(vault_path, config.Settings(backups_enabled=False, backups_folder=str(folder))) is None


def test_a_restored_vault_is_private_whatever_the_umask(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "the spare key is under the blue pot", Origin(kind="cli"))
    copy = tmp_path / "copy.sqlite"
    backup_vault(vault_path, copy)
    target = tmp_path / "restored" / "vault.sqlite"
    target.parent.mkdir()
    previous = os.umask(0o022)
    try:
        restore_vault(copy, target)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_copy_that_opens_but_fails_the_integrity_check_is_refused(vault_path: Path, tmp_path: Path) -> None:
    """Every query of it works; only SQLite's integrity check sees that an index lost its rows."""
    with Vault.open(vault_path) as vault:
        remember(vault, "the spare key is under the blue pot", Origin(kind="cli"))
    copy = tmp_path / "copy.sqlite"
    backup_vault(vault_path, copy)
    conn = apsw.Connection(str(copy))
    conn.execute("CREATE TABLE extra(a, b); INSERT INTO extra VALUES (1, 2), (3, 4); CREATE INDEX extra_a ON extra(a)")
    conn.execute("PRAGMA writable_schema=ON")
    conn.execute("UPDATE sqlite_schema SET sql = 'CREATE INDEX extra_a ON extra(b)' WHERE name = 'extra_a'")
    conn.close()
    reader = apsw.Connection(str(copy), flags=apsw.SQLITE_OPEN_READONLY)
    assert [r[0] for r in reader.execute("SELECT text FROM chunks")] == ["the spare key is under the blue pot"]
    reader.close()
    before = file_hashes(vault_path)
    with pytest.raises(VaultUnavailable, match="integrity check"):
        check_copy(copy)
    with pytest.raises(VaultUnavailable, match="does not match its manifest"):  # changed after it was made
        restore_vault(copy, vault_path)
    manifest_path(copy).unlink()  # a backup made before manifests: the integrity check still refuses it
    with pytest.raises(VaultUnavailable, match="integrity check"):
        restore_vault(copy, vault_path)
    assert file_hashes(vault_path) == before


def test_backup_list_lists_backups_and_writes_no_file(vault_path: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`vodou backup list` lists (as `pair list` and `sites list` do); it never makes a backup named `list`.
    A file of that name is still possible as `./list`."""
    monkeypatch.chdir(tmp_path)
    with Vault.open(vault_path) as vault:
        remember(vault, "a memory worth a backup", Origin(kind="cli"))
    empty = run_cli("--vault", str(vault_path), "backup", "list")
    assert empty.code == 0 and "no backups" in empty.out, empty
    assert not (tmp_path / "list").exists()
    assert run_cli("--vault", str(vault_path), "backup").code == 0
    outside = tmp_path / "elsewhere" / "copy.vodou"
    outside.parent.mkdir()
    assert run_cli("--vault", str(vault_path), "backup", str(outside)).code == 0
    listed = run_cli("--vault", str(vault_path), "backup", "list")
    assert listed.code == 0, listed
    assert "1 in the backups folder" in listed.out and str(outside) in listed.out, listed.out
    assert not (tmp_path / "list").exists()
    as_json = json.loads(run_cli("--vault", str(vault_path), "backup", "list", "--json").out)
    assert len(as_json["backups"]) == 1 and as_json["elsewhere"] == [str(outside.resolve())]
    assert run_cli("--vault", str(vault_path), "backup", "./list").code == 0
    assert (tmp_path / "list").is_file()
