"""A locked, corrupt, read-only or missing-folder vault: one clear message, never overwritten."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import file_hashes, run_cli
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, connection


def test_corrupt_file_is_refused_and_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    path.write_bytes(b"this is not a database at all" * 300)
    before = file_hashes(path)
    with pytest.raises(VaultUnavailable, match="damaged or is not a Vodou vault"):
        Vault.open(path)
    assert file_hashes(path) == before


def test_corrupt_file_cli_says_one_line(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    path.write_bytes(os.urandom(8192))
    before = file_hashes(path)
    result = run_cli("--vault", str(path), "mem", "list")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "damaged" in result.err
    assert file_hashes(path) == before


def test_missing_folder_is_a_clear_error_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "vault.sqlite"
    result = run_cli("--vault", str(path), "mem", "add", "x")
    assert result.code == 2 and "folder does not exist" in result.err
    assert not (tmp_path / "no").exists()


def test_read_only_file_is_refused_even_for_root(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Vault.open(vault_path).close()
    before = file_hashes(vault_path)
    real_access = os.access
    monkeypatch.setattr(connection.os, "access", lambda p, m: False if Path(p) == vault_path else real_access(p, m))
    result = run_cli("--vault", str(vault_path), "mem", "add", "x")
    assert result.code == 2 and "read-only" in result.err
    assert file_hashes(vault_path) == before


def test_locked_vault_gives_a_clear_message(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Vault.open(vault_path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import apsw, sys, time
            c = apsw.Connection({str(vault_path)!r})
            c.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)
        with pytest.raises(VaultUnavailable, match="locked by another program"):
            vault = Vault.open(vault_path)
            try:
                remember(vault, "while locked", Origin(kind="cli"))
            finally:
                vault.close()
    finally:
        holder.communicate("", timeout=10)
    with Vault.open(vault_path) as vault:  # lock gone: the vault works and lost nothing
        remember(vault, "after the lock", Origin(kind="cli"))
        assert vault.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
