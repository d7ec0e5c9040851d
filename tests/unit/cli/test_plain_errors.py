"""A damaged vault, a locked vault and a vault from a newer Vodou: each command says so in one plain
line (through ``errors``' words), with no SQLite internals, table names or raw timestamps."""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import pytest

from tests.support import run_cli
from tests.unit.ui.conftest import services  # noqa: F401  (the app's services over a temp vault)
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


def test_sync_status_says_its_times_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    folder = tmp_path / "synced"
    folder.mkdir()
    assert run_cli("mem", "add", "the heron nests by the mill").code == 0
    assert run_cli("sync", "setup", str(folder), "--name", "laptop", "--key-file", str(tmp_path / "key")).code == 0
    status = run_cli("sync", "status")
    assert status.code == 0 and "last run just now" in status.out, status.out
    assert not re.search(r"\d{4}-\d\d-\d\d", status.out.replace(str(folder), "FOLDER")), status.out


# -- the app's messages: the same words, never SQLite's (issue 24) --

SQLITE_ERRORS = [apsw.CorruptError("btreeInitPage() returns error code 11"), apsw.NotADBError("file is not a database"),
                 apsw.BusyError("database is locked"), apsw.LockedError("database table is locked: chunks"),
                 apsw.FullError("database or disk is full"), apsw.IOError("disk I/O error"),
                 apsw.ReadOnlyError("attempt to write a readonly database"),
                 apsw.CantOpenError("unable to open database file")]


@pytest.mark.parametrize("error", SQLITE_ERRORS, ids=lambda e: type(e).__name__)
def test_an_app_op_or_long_job_failing_on_sqlite_says_it_in_words(qtbot, services, error: apsw.Error) -> None:  # noqa: F811
    from vodou_desktop.ui.long_work import LongJob

    def fail() -> None:
        raise error

    services.ops.run(fail)  # no on_failure: the message bridge says it
    qtbot.waitUntil(lambda: services.ops.pending == 0)
    job = LongJob("Embedding memories", lambda _p, _c: fail(), vault_path=services.runtime.vault.path)
    said: list[str] = []
    job.failed.connect(said.append)
    job.start()
    qtbot.waitUntil(lambda: bool(said))
    for text in (services.messages.history[-1][1], said[0]):
        assert str(services.runtime.vault.path) in text and "bug" not in text, text
        assert not INTERNALS.search(text.replace(str(services.runtime.vault.path), "PATH")), text


def test_the_memory_browser_on_a_damaged_vault_says_so_in_words(qtbot, tmp_path: Path) -> None:
    from vodou_desktop import config
    from vodou_desktop.runtime import Runtime
    from vodou_desktop.search.embedder import Embedder
    from vodou_desktop.search.service import SearchService
    from vodou_desktop.search.vectors import VectorIndex
    from vodou_desktop.ui.browser.window import MemoryBrowser
    from vodou_desktop.ui.services import Services

    path = _vault(tmp_path / "v.sqlite")
    _damage(path)
    vault = Vault.open(path)
    index = VectorIndex(vault)
    app = Services.build(Runtime(config.Settings(), vault, Embedder("none"), index,
                                      SearchService(vault, Embedder("none"), index)))
    browser = MemoryBrowser(app)
    qtbot.addWidget(browser)
    try:
        browser.memories.search_box.setText("heron")
        qtbot.waitUntil(lambda: any(kind == "error" for kind, _ in app.messages.history), timeout=20_000)
        qtbot.waitUntil(lambda: app.ops.pending == 0, timeout=20_000)
        errors = [text for kind, text in app.messages.history if kind == "error"]
        for text in errors:
            assert "is damaged: some of it cannot be read" in text and "bug" not in text, text
            assert not INTERNALS.search(text.replace(str(path), "PATH")), text
    finally:
        app.close()
        index.close()
        vault.close()
