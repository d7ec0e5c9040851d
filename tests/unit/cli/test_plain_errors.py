"""A damaged vault, a locked vault and a vault from a newer Vodou: each command says so in one plain
line (through ``errors``' words), with no SQLite internals, table names or raw timestamps."""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import pytest

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, connection

COMMANDS = [["mem", "list"], ["mem", "show", "1"], ["mem", "search", "heron"], ["stats"], ["export"],
            ["opm", "list"], ["sites", "list"], ["recall"], ["projects", "list"], ["mem", "add", "new one"],
            ["mem", "forget", "1"], ["undo"], ["mem", "pin", "2"], ["backup", "BACKUP"]]
INTERNALS = re.compile(r"btree|error code|sqlite|chunks|schema|apsw|Traceback|malformed|\d{4}-\d\d-\d\dT", re.I)


def _vault(path: Path) -> Path:
    with Vault.open(path) as vault:
        for i in range(200):
            remember(vault, f"memory {i}: the grey heron nests by the mill " * 3, Origin(kind="cli"))
        vault.checkpoint()
    return path


def _damage(path: Path) -> None:
    """Spoil the header byte of the memories' leaf pages: the file opens, their rows cannot be read."""
    conn = apsw.Connection(str(path))
    pages = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'")]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    for page in pages:
        data[(page - 1) * size] = 0x55
    path.write_bytes(bytes(data))


def _newer(path: Path) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future', '2030-01-01')")
    conn.close()


def _holding_the_lock(path: Path) -> apsw.Connection:
    holder = apsw.Connection(str(path))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE settings SET value = value")
    return holder


@pytest.mark.parametrize("state, said", [("damaged", "is damaged: some of it cannot be read"),
                                         ("locked", "is locked by another program; try again in a moment"),
                                         ("newer", "was made by a newer version of Vodou; upgrade Vodou")])
def test_each_command_says_one_plain_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str,
                                          said: str) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    path = _vault(tmp_path / "v.sqlite")
    holder = None
    if state == "damaged":
        _damage(path)
    elif state == "newer":
        _newer(path)
    else:
        monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 20)  # fail fast: the wait itself is not under test
        holder = _holding_the_lock(path)
    try:
        for command in COMMANDS:
            argv = [str(tmp_path / "backup.sqlite") if a == "BACKUP" else a for a in command]
            res = run_cli("--vault", str(path), *argv)
            assert res.code == 2, (command, res.out, res.err)
            assert res.err.count("\n") == 1 and res.err.startswith("vodou: error: "), (command, res.err)
            assert said in res.err and str(path) in res.err, (command, res.err)
            assert not INTERNALS.search(res.err.replace(str(path), "PATH")), (command, res.err)
    finally:
        if holder is not None:
            holder.close()
    assert not (tmp_path / "backup.sqlite").exists()


def test_times_are_said_in_words_not_iso(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    added = run_cli("opm", "add", "preference", "Answer in French")
    mid = added.out.split()[1]
    corrected = run_cli("opm", "correct", mid, "Answer in English")
    listed = run_cli("opm", "list", "--all")
    assert listed.code == 0 and "replaced just now by r2" in listed.out and " expires " in listed.out
    for out in (added.out, corrected.out, listed.out):
        assert not re.search(r"\d{4}-\d\d-\d\d", out), out
