"""The single writer: one thread, one connection, a queue of jobs, each in ``BEGIN IMMEDIATE``.

WAL lets readers run beside it on their own connections. A job is ``fn(conn, change)``: it
does its SQL and records what it touched in ``change``; after the commit the vault tells its
listeners (probe cache, vector index, UI) once per job.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from vodou_desktop.vault.connection import open_connection, quick_check_before_first_write, translate_errors

log = logging.getLogger(__name__)


@dataclass
class Change:
    """What one committed write touched. Listeners decide whether to refresh."""

    tables: set[str] = field(default_factory=set)
    chunk_ids: set[int] = field(default_factory=set)
    page_keys: set[str] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    external: bool = False  # another process wrote the vault
    secrets_removed: list[str] = field(default_factory=list)  # kinds, one per secret (vault/secret_filter.py)

    def touch(self, table: str, *, chunk_ids: Any = (), page_keys: Any = (), hosts: Any = ()) -> None:
        self.tables.add(table)
        self.chunk_ids.update(chunk_ids)
        self.page_keys.update(k for k in page_keys if k)
        self.hosts.update(h for h in hosts if h)

    def __bool__(self) -> bool:
        return bool(self.tables or self.external)


WriteJob = Callable[[apsw.Connection, Change], Any]
_STOP = object()


@dataclass
class _Pause:
    """Queued like a job: the writer closes its connection, says so, and waits to reopen."""

    closed: threading.Event = field(default_factory=threading.Event)
    resume: threading.Event = field(default_factory=threading.Event)


class WriterThread:
    def __init__(self, path: Path, on_commit: Callable[[Change], None]) -> None:
        self._path = path
        self._on_commit = on_commit
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="vodou-vault-writer", daemon=True)
        self._conn: apsw.Connection | None = None
        self._started: Future[None] = Future()
        self._checked = False
        self._damaged: BaseException | None = None

    def start(self, setup: Callable[[apsw.Connection], object]) -> None:
        """Open the connection in the writer thread and run ``setup`` (migrations) there."""
        self._setup = setup
        self._thread.start()
        self._started.result()

    def submit(self, job: WriteJob, *, transaction: bool = True) -> Future[Any]:
        """Queue ``job``; ``transaction=False`` runs it outside BEGIN (checkpoints, VACUUM)."""
        fut: Future[Any] = Future()
        if not self._thread.is_alive():
            fut.set_exception(RuntimeError("the vault is closed"))
            return fut
        self._queue.put((job, fut, transaction))
        return fut

    def close(self) -> None:
        """Drain queued writes, then close the connection."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()

    def pause(self, timeout: float) -> _Pause:
        """After the writes queued so far: close the connection and hold later writes (they wait in
        the queue) until ``resume``. The file is then free of this writer."""
        if not self._thread.is_alive():
            raise RuntimeError("the vault is closed")
        pause = _Pause()
        self._queue.put(pause)
        if not pause.closed.wait(timeout):
            pause.resume.set()
            raise TimeoutError("the vault's writer did not finish its queued writes in time")
        return pause

    def _hold(self, pause: _Pause) -> None:
        """In the writer thread: closed until resumed, then the file reopened (it may be another
        file by then: restored, encrypted) and checked again before the next write."""
        assert self._conn is not None
        self._conn.close()
        self._conn = None
        pause.closed.set()
        pause.resume.wait()
        self._checked = False
        try:
            self._conn = open_connection(self._path)
            self._damaged = None
        except BaseException as exc:  # every later write fails with it, as for a damaged vault
            log.error("the vault could not be reopened: %s", exc)
            self._damaged = exc

    def ensure_checked(self) -> None:
        """``PRAGMA quick_check`` once, before this process's first write (writer thread only).

        A damaged vault refuses this and every later write with the same message; nothing is written.
        """
        if self._damaged is not None:
            raise self._damaged
        if self._checked:
            return
        assert self._conn is not None and self.in_writer_thread
        try:
            quick_check_before_first_write(self._conn, self._path)
        except BaseException as exc:
            self._damaged = exc
            raise
        self._checked = True

    @property
    def in_writer_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def _run(self) -> None:
        try:
            self._conn = open_connection(self._path)
            self._setup(self._conn)
        except BaseException as exc:  # reported to the opener, who shows it
            self._started.set_exception(exc)
            if self._conn is not None:
                self._conn.close()
            return
        self._started.set_result(None)
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            if isinstance(item, _Pause):
                self._hold(item)
                continue
            job, fut, transaction = item
            if fut.set_running_or_notify_cancel():
                self._run_job(job, fut, transaction)
        if self._conn is not None:
            self._conn.close()

    def _run_job(self, job: WriteJob, fut: Future[Any], transaction: bool) -> None:
        change = Change()
        try:
            self.ensure_checked()  # also the reason the connection could not be reopened, if it could not
            conn = self._conn
            assert conn is not None
            with translate_errors(self._path):
                if not transaction:
                    result = job(conn, change)
                    fut.set_result(result)
                    return
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = job(conn, change)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except BaseException as exc:
            fut.set_exception(exc)
            return
        if change:
            try:
                self._on_commit(change)
            except Exception:  # a listener's bug must not lose the committed write's result
                log.exception("vault change listener failed")
        fut.set_result(result)
