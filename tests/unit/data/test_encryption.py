"""DATA-3: encryption at rest with apsw-sqlite3mc; the key from the keyring (file fallback here) or
VODOU_PASSPHRASE; a wrong key is one line and changes no byte."""

from __future__ import annotations

import errno
from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes, run_cli, total_hits
from vodou_desktop import config
from vodou_desktop.data import backup as backup_module
from vodou_desktop.data import encryption, rolling
from vodou_desktop.data.backup import backup_vault, restore_vault
from vodou_desktop.data.encryption import decrypt_vault, encrypt_vault
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.keystore import VaultKeyStore

BEFORE = "quokkacanary-before-encrypt"
AFTER = "quokkacanary-after-encrypt"


def _raw_hits(folder: Path, needle: str) -> dict[str, int]:
    """Occurrences of ``needle`` in every file under ``folder`` (vaults, WAL, SHM, backups)."""
    raw = needle.encode()
    return {str(p.relative_to(folder)): n for p in folder.rglob("*") if p.is_file()
            and (n := p.read_bytes().count(raw))}


def test_sqlite3mc_keeps_fts5_porter_wal_and_backup(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "probe.sqlite"))
    cipher.apply_key(conn, "a test key")
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES ('the herons were running')")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH 'run'").fetchone()[0] == 1
    copy = apsw.Connection(str(tmp_path / "copy.sqlite"))
    cipher.apply_key(copy, "a test key")
    with copy.backup("main", conn, "main") as job:
        job.step(-1)
    assert copy.execute("SELECT count(*) FROM t WHERE t MATCH 'heron'").fetchone()[0] == 1
    assert b"herons" not in (tmp_path / "probe.sqlite").read_bytes() + (tmp_path / "copy.sqlite").read_bytes()
    copy.close()
    conn.close()


def test_encrypt_hides_canaries_before_and_after_everywhere(tmp_path: Path, vodou_home: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")  # keyword search finds the canaries (no model to prepare here)
    vault_path = tmp_path / "vault.sqlite"
    backups = tmp_path / "backups"
    config.save(config.Settings(backups_folder=str(backups), backups_keep=5))
    with Vault.open(vault_path) as vault:
        remember(vault, f"the {BEFORE} lives in the garden", Origin(kind="cli"))
    assert rolling.run_if_due(vault_path) is not None  # a plain rolling backup, made before encryption
    assert run_cli("--vault", str(vault_path), "backup").code == 0  # and one by hand, into the same folder
    assert _raw_hits(tmp_path, BEFORE)  # the scan finds plain text when it is there

    result = run_cli("--vault", str(vault_path), "encrypt")
    assert result.code == 0, result.err
    assert "private file (0600)" in result.out and "2 earlier backups in the backups folder were encrypted" \
        in result.out
    added = run_cli("--vault", str(vault_path), "mem", "add", f"the {AFTER} sleeps in the shed")
    assert added.code == 0, added.err
    with Vault.open(vault_path) as vault:  # leave a WAL and SHM behind, with the writer still open
        remember(vault, f"a second {AFTER} note", Origin(kind="cli"))
        assert rolling.run_if_due(vault_path, force=True) is not None  # a rolling backup of the encrypted vault
        assert Path(str(vault_path) + "-wal").exists()
        assert _raw_hits(tmp_path, BEFORE) == {} and _raw_hits(tmp_path, AFTER) == {}
        assert _raw_hits(vodou_home, BEFORE) == {} and _raw_hits(vodou_home, AFTER) == {}
    assert _raw_hits(tmp_path, BEFORE) == {} and _raw_hits(tmp_path, AFTER) == {}

    found = run_cli("--vault", str(vault_path), "mem", "search", "quokkacanary", "--json")
    assert found.code == 0, found.err
    assert BEFORE in found.out and AFTER in found.out
    copies = [p for p in backups.iterdir() if not p.name.endswith(".manifest")]
    assert len(rolling.rolling_backups(backups, vault_path)) == 2 and len(copies) == 4
    assert all(cipher.is_encrypted(p) for p in copies)
    assert {p.name + ".manifest" for p in copies} == {p.name for p in backups.iterdir()} - {p.name for p in copies}


def test_wrong_or_missing_key_is_one_line_and_changes_nothing(vault_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "a secret kept under a passphrase", Origin(kind="cli"))
    monkeypatch.setenv(cipher.PASSPHRASE_ENV, "correct horse battery staple")
    assert run_cli("--vault", str(vault_path), "encrypt", "--passphrase").code == 0
    assert VaultKeyStore().get() is None  # a passphrase is never stored
    before = file_hashes(vault_path)
    cipher.forget_keys()
    monkeypatch.setenv(cipher.PASSPHRASE_ENV, "wrong passphrase")
    for args in (("mem", "list"), ("mem", "add", "must not land"), ("backup", str(vault_path.parent))):
        result = run_cli("--vault", str(vault_path), *args)
        assert result.code == 2 and result.err.count("\n") == 1 and "Traceback" not in result.err
        assert "encrypted" in result.err and "does not open it" in result.err
    monkeypatch.delenv(cipher.PASSPHRASE_ENV)
    result = run_cli("--vault", str(vault_path), "mem", "list")
    assert result.code == 2 and result.err.count("\n") == 1 and "VODOU_PASSPHRASE" in result.err
    assert file_hashes(vault_path) == before
    monkeypatch.setenv(cipher.PASSPHRASE_ENV, "correct horse battery staple")
    assert "a secret kept under a passphrase" in run_cli("--vault", str(vault_path), "mem", "list").out


def test_decrypt_gives_back_a_plain_vault(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "plain again soon", Origin(kind="cli"))
    assert run_cli("--vault", str(vault_path), "encrypt").code == 0
    assert cipher.is_encrypted(vault_path) and total_hits(vault_path, "plain again soon") == 0
    result = run_cli("--vault", str(vault_path), "decrypt")
    assert result.code == 0, result.err
    assert not cipher.is_encrypted(vault_path)
    conn = apsw.Connection(str(vault_path))  # no key at all: an ordinary SQLite file
    assert conn.execute("SELECT count(*) FROM chunks WHERE text = 'plain again soon'").fetchone()[0] == 1
    conn.close()
    assert run_cli("--vault", str(vault_path), "decrypt").code == 2  # not encrypted: one line


def test_encrypted_backup_and_restore(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "restorable secret", Origin(kind="cli"))
    encrypt_vault(vault_path, VaultKeyStore().get_or_create(), settings=config.Settings(
        backups_folder=str(tmp_path / "b")))
    report = backup_vault(vault_path, tmp_path / "copy.sqlite")
    assert report.encrypted and total_hits(tmp_path / "copy.sqlite", "restorable secret") == 0
    with Vault.open(vault_path) as vault:
        remember(vault, "written after the backup", Origin(kind="cli"))
    assert run_cli("--vault", str(vault_path), "restore", str(tmp_path / "copy.sqlite")).code == 0
    listed = run_cli("--vault", str(vault_path), "mem", "list").out
    assert "restorable secret" in listed and "written after the backup" not in listed


@pytest.mark.model
def test_hybrid_search_on_an_encrypted_vault(vault_path: Path, model: Embedder, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "the heron nests by the river in spring", Origin(kind="cli"))
        remember(vault, "invoices are due on the first monday", Origin(kind="cli"))
    encrypt_vault(vault_path, VaultKeyStore().get_or_create(), settings=config.Settings(
        backups_folder=str(tmp_path / "b")))
    with Vault.open(vault_path) as vault:
        remember(vault, "a grey bird standing in shallow water", Origin(kind="cli"))
        index = VectorIndex(vault)
        index.load()
        search = SearchService(vault, model, index)
        from vodou_desktop.search.backfill import backfill
        backfill(vault, model)
        index.load()
        keyword = search.search("heron", k=3)
        meaning = search.search("wading birds", k=3)
        index.close()
    assert keyword and "heron" in keyword[0].fact.text
    assert {r.fact.text for r in meaning} & {"a grey bird standing in shallow water",
                                             "the heron nests by the river in spring"}
    assert total_hits(vault_path, "heron") == 0


def test_a_generated_key_skips_key_stretching_and_a_passphrase_does_not(tmp_path: Path) -> None:
    key = VaultKeyStore().get_or_create()
    assert cipher.is_generated_key(key) and not cipher.is_generated_key("correct horse battery staple")
    path = tmp_path / "fast.sqlite"
    conn = apsw.Connection(str(path))
    cipher.apply_key(conn, key)
    conn.execute("CREATE TABLE t(x)")
    conn.close()
    slow = apsw.Connection(str(path))  # the same key with the default 64,007 rounds is another key
    slow.execute(f"PRAGMA key={cipher.quote(key)}")
    with pytest.raises(apsw.NotADBError):
        slow.execute("SELECT count(*) FROM t").fetchall()
    slow.close()
    assert cipher.key_opens(path, key)


def _fails_once(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, when: str | None = None) -> list[str]:
    """``owner.name`` raises a full disk on its first call (whose first argument ends with ``when``)."""
    real, calls = getattr(owner, name), []

    def failing(*args: object, **kwargs: object) -> object:
        if not calls and (when is None or str(args[0]).endswith(when)):
            calls.append(str(args[0]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)
    return calls


def _mode_and_texts(path: Path, key: str | None) -> tuple[str, list[str]]:
    """What a reader in another program sees at once (no busy wait): the journal mode and the texts."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        if key is not None:
            cipher.apply_key(conn, key)
        conn.set_busy_timeout(0)
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        return mode, [str(r[0]) for r in conn.execute("SELECT text FROM chunks ORDER BY id")]
    finally:
        conn.close()


# Every step a conversion or a restore can fail at once it holds the vault: (which way, where, name).
FAILURES = [(way, owner, name) for way in ("encrypt", "decrypt") for owner, name in (
    (encryption, "create_private_file"), (encryption.shutil, "copyfile"), (encryption, "rekey_file"),
    (encryption, "fsync_file"))] + [("restore", backup_module.os, "replace")]


@pytest.mark.parametrize(("way", "owner", "name"), FAILURES, ids=[f"{w}-{n}" for w, _, n in FAILURES])
def test_a_failed_change_leaves_the_vault_as_it_was_in_wal_mode(vault_path: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, way: str,
                                                                owner: object, name: str) -> None:
    """Out of WAL, the reader that comes while the app reopens the vault is refused ("database is
    locked"): a failure leaves the vault exactly as it was, its journal mode included."""
    settings = config.Settings(backups_folder=str(tmp_path / "b"))
    key = VaultKeyStore().get_or_create()
    with Vault.open(vault_path) as vault:
        remember(vault, "the stoatcanary crosses the snow", Origin(kind="cli"))
    if way == "decrypt":
        encrypt_vault(vault_path, key, settings=settings)
    else:
        backup_vault(vault_path, tmp_path / "copy.sqlite")
    held_key = key if way == "decrypt" else None
    before = _mode_and_texts(vault_path, held_key)
    assert before == ("wal", ["the stoatcanary crosses the snow"])
    calls = _fails_once(monkeypatch, owner, name, when=vault_path.name if way == "restore" else None)
    with pytest.raises((VaultUnavailable, OSError)):
        if way == "encrypt":
            encrypt_vault(vault_path, key, settings=settings)
        elif way == "decrypt":
            decrypt_vault(vault_path, settings=settings)
        else:
            restore_vault(tmp_path / "copy.sqlite", vault_path)
    assert calls, "the failure was never reached"
    assert _mode_and_texts(vault_path, held_key) == before
    assert cipher.is_encrypted(vault_path) == (way == "decrypt")
    left = {p.name for p in vault_path.parent.glob(f"{vault_path.name}*")}  # no copy, no rollback journal
    assert left - {f"{vault_path.name}-wal", f"{vault_path.name}-shm"} == {vault_path.name}


def test_encrypt_names_the_copies_it_cannot_reach(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "a note kept in two places", Origin(kind="cli"))
    own = tmp_path / "mine"
    own.mkdir()
    assert run_cli("--vault", str(vault_path), "backup", str(own / "copy.sqlite")).code == 0
    assert run_cli("--vault", str(vault_path), "export", str(own / "all.jsonl")).code == 0
    assert run_cli("--vault", str(vault_path), "backup").code == 0  # in the backups folder: reached
    result = run_cli("--vault", str(vault_path), "encrypt")
    assert result.code == 0, result.err
    line = next(x for x in result.out.splitlines() if "outside its backups folder" in x)
    assert line.startswith("2 copies") and str(own / "copy.sqlite") in line and str(own / "all.jsonl") in line
    assert "not encrypted" in line and "never encrypted" in line
    assert total_hits(own / "copy.sqlite", "a note kept in two places") > 0  # untouched, as it says


def test_a_plain_copy_left_by_a_killed_decrypt_is_removed_at_the_next_start(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "the lynxcanary sleeps", Origin(kind="cli"))
    assert run_cli("--vault", str(vault_path), "encrypt").code == 0
    left = vault_path.with_name(vault_path.name + ".decrypting")  # what decrypt killed midway left
    left.write_bytes(b"SQLite format 3\x00 the lynxcanary sleeps")
    result = run_cli("--vault", str(vault_path), "mem", "list")
    assert result.code == 0 and "lynxcanary" in result.out
    assert not left.exists() and cipher.is_encrypted(vault_path)
    assert _raw_hits(vault_path.parent, "lynxcanary") == {}


def test_an_empty_file_left_under_a_backups_name_does_not_stop_encrypt(tmp_path: Path) -> None:
    vault_path, backups = tmp_path / "vault.sqlite", tmp_path / "backups"
    config.save(config.Settings(backups_folder=str(backups)))
    with Vault.open(vault_path) as vault:
        remember(vault, "the empty name does not stop me", Origin(kind="cli"))
    backups.mkdir()
    empty = backups / "vault.sqlite.before-encrypt-20260101-000000"  # what a kill left before the safety copy
    empty.touch()
    result = run_cli("--vault", str(vault_path), "encrypt")
    assert result.code == 0, result.err
    assert "1 copy left half-written or empty by an interrupted operation was removed" in result.out
    assert not empty.exists() and all(p.stat().st_size > 0 for p in backups.iterdir())
