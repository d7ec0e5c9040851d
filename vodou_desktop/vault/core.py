"""The ``Vault``: one file, one writer thread, a reader connection per thread, change events.

``suspended()`` lets a long-running process (the tray app) let go of the file for a while (to
restore a backup into its place, or to encrypt it): queued writes finish, the writer closes its
connection, reads in progress end, every reader connection closes; new reads and writes wait
until the block ends, then everything reopens the file found under the vault's name.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import apsw

from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.vault.connection import open_connection, scalar, translate_errors
from vodou_desktop.vault.migrations import migrate
from vodou_desktop.vault.writer import Change, WriteJob, WriterThread

log = logging.getLogger(__name__)
T = TypeVar("T")
Listener = Callable[[Change], None]
# SQLite's page cache per reader connection (SQLite's default is 2 MB): a search checks a few hundred
# candidate rows against the filter, each a page of the chunks table; pages found in the cache are
# not read and decrypted again. It fills only with pages read (bench/history/rounds-1-4.md, "Search speed").
READER_CACHE_KIB = 32_768


class Vault:
    """Open with ``Vault.open(path)``; close with ``close()`` (drains queued writes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[apsw.Connection] = []
        self._readers_lock = threading.Lock()
        self._writer = WriterThread(path, self._emit)
        self._closed = False
        self._data_version: int | None = None
        self._gate = threading.Condition(threading.Lock())  # reads in progress; whether the vault is suspended
        self._reading = 0
        self._suspended = False
        self._generation = 0  # bumped when reader connections are closed: each thread reopens its own

    @classmethod
    def open(cls, path: Path | str) -> Vault:
        vault = cls(Path(path))
        vault._writer.start(lambda conn: migrate(conn, vault.path, before_write=vault._writer.ensure_checked))
        vault._data_version = vault._current_data_version()
        return vault

    # -- reading -------------------------------------------------------------------------
    def reader(self) -> apsw.Connection:
        """This thread's read connection (autocommit; use ``read_tx`` for a consistent view)."""
        if self._closed:
            raise VaultUnavailable("the vault is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "generation", None) != self._generation:
            conn = open_connection(self.path, create=False)
            conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
            self._local.conn, self._local.generation = conn, self._generation
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def read(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn`` on this thread's reader inside one read transaction."""
        if self._in_read():  # nested: part of the read around it, which holds its place
            with translate_errors(self.path):
                return fn(self._local.conn)  # type: ignore[no-any-return]
        self._enter_read()  # counted, and waits while the vault is suspended
        try:
            conn = self.reader()
            with translate_errors(self.path):
                conn.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    conn.execute("COMMIT")
        finally:
            self._leave_read()

    def _in_read(self) -> bool:
        """This thread is inside ``read`` (only a read leaves its connection in a transaction; while one
        runs, the vault cannot be suspended, so the connection is of the current generation)."""
        local = self._local
        conn = getattr(local, "conn", None)
        return conn is not None and getattr(local, "generation", None) == self._generation and conn.in_transaction

    def _enter_read(self) -> None:
        with self._gate:
            while self._suspended:
                self._gate.wait()
            self._reading += 1

    def _leave_read(self) -> None:
        with self._gate:
            self._reading -= 1
            if self._suspended and self._reading == 0:
                self._gate.notify_all()  # ``suspended`` waits for the last read to end

    # -- writing -------------------------------------------------------------------------
    def write(self, job: WriteJob, timeout: float | None = None, *, transaction: bool = True) -> Any:
        """Run ``job(conn, change)`` on the writer thread in one transaction; wait for it."""
        if self._writer.in_writer_thread:
            raise RuntimeError("vault.write called from inside a write job")
        return self._writer.submit(job, transaction=transaction).result(timeout)

    def submit(self, job: WriteJob):  # type: ignore[no-untyped-def]
        """Queue a write and return its Future (for async callers)."""
        return self._writer.submit(job)

    def check_integrity(self) -> None:
        """Run the once-per-process ``PRAGMA quick_check`` now (a long-running app, at start);
        ``VaultUnavailable`` when the vault is damaged. Writes run it anyway before the first one."""
        self.write(lambda conn, change: None, transaction=False)

    # -- change events -------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` after each commit (on the writer thread). Returns unsubscribe."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, change: Change) -> None:
        self._data_version = None  # our own write moved it; re-read lazily
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:
                log.exception("vault listener %r failed", listener)

    def _current_data_version(self) -> int:
        nested = self._in_read()
        if not nested:
            self._enter_read()
        try:
            with translate_errors(self.path):
                return int(scalar(self.reader(), "PRAGMA data_version"))
        finally:
            if not nested:
                self._leave_read()

    def poll_external(self) -> bool:
        """Notice writes by another process (the CLI beside the app); emit an external change."""
        current = self._current_data_version()
        previous, self._data_version = self._data_version, current
        if previous is not None and current != previous:
            self._emit_external()
            self._data_version = current
            return True
        return False

    def _emit_external(self) -> None:
        change = Change(external=True)
        change.tables.add("*")
        self._emit(change)

    # -- lifecycle -----------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Fold the WAL into the main file and truncate it (used after erase)."""
        self.write(
            lambda conn, change: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall(),
            transaction=False,
        )

    @contextlib.contextmanager
    def suspended(self, timeout: float = 30.0) -> Iterator[None]:
        """Let go of the file while the block runs (see the module's docstring); on the way out,
        reopen it and tell every listener the whole vault may have changed (an external change).
        ``VaultUnavailable`` when writes or reads in progress do not end within ``timeout``."""
        if self._writer.in_writer_thread or self._in_read():
            raise RuntimeError("Vault.suspended() from inside a read or a write job")
        with self._gate:
            if self._suspended:
                raise VaultUnavailable("The vault is already being restored or converted; try again when it is done.")
            self._suspended = True
        pause = None
        try:
            try:
                pause = self._writer.pause(timeout)
            except TimeoutError as exc:
                raise VaultUnavailable("The vault is busy with a long write; try again in a moment. "
                                       "Nothing was changed.") from exc
            with self._gate:
                if not self._gate.wait_for(lambda: self._reading == 0, timeout):
                    raise VaultUnavailable("The vault is busy with a long read; try again in a moment. "
                                           "Nothing was changed.")
                with self._readers_lock:
                    for conn in self._readers:
                        conn.close()
                    self._readers.clear()
                self._generation += 1
            yield
        finally:
            if pause is not None:
                pause.resume.set()
            with self._gate:
                self._suspended = False
                self._gate.notify_all()
            self._data_version = None
            if pause is not None:
                self._emit_external()

    def close(self) -> None:
        if self._closed:
            return
        self._writer.close()
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
