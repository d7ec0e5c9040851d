"""Opening the vault file with apsw, and turning SQLite's environment errors into messages.

Pragmas, chosen once here:
- ``journal_mode=WAL``: readers never block the writer and the writer never blocks readers.
- ``synchronous=FULL``: "saved" means saved. With WAL, NORMAL can lose the last transactions on
  power loss; FULL fsyncs the WAL at every commit, which is what a memory store owes its owner.
- ``busy_timeout=5000``: a second process (the CLI beside the running app) waits for the write
  lock instead of failing at once.
- ``foreign_keys=ON``.
- ``secure_delete=ON``: deleted rows are overwritten, so an erased memory is gone from the file's bytes.

An encrypted vault gets its key before all of these (``cipher.key_for`` finds it without writing).
"""

from __future__ import annotations

import contextlib
import logging
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import apsw

from vodou_desktop.errors import VaultUnavailable, damaged_vault, from_sqlite, not_a_vault
from vodou_desktop.vault.atomic import finish_interrupted, refuse_to_replace
from vodou_desktop.vault.cipher import apply_key, key_for

T = TypeVar("T")
log = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 5000
APPLICATION_ID = 0x566F646F  # "Vodo": marks the file as a Vodou vault


def open_connection(path: Path, *, create: bool = True, readonly: bool = False) -> apsw.Connection:
    """Open ``path`` with the vault's pragmas; environment failures raise ``VaultUnavailable``."""
    folder = path.parent
    if not folder.is_dir():
        # Never create folders here: a typo in --vault must not scatter new vaults around.
        raise VaultUnavailable(f"The vault's folder does not exist: {folder}")
    if not path.exists() and (readonly or not create):
        raise VaultUnavailable(f"No vault at {path}")
    if create and not readonly:  # the writer's connection: first finish what a killed process left
        finish_interrupted(path)
        if not path.exists():
            refuse_to_replace(path)
    if path.exists() and not readonly and not os.access(path, os.W_OK):
        raise VaultUnavailable(f"The vault {path} is read-only; Vodou needs to write to it.")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    if create and not readonly:
        flags |= apsw.SQLITE_OPEN_CREATE
        create_private_file(path)
    key = key_for(path)  # before opening: a wrong key must not touch the file
    with translate_errors(path):
        conn = apsw.Connection(str(path), flags=flags)
        _apply_vault_key(conn, key)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        _check_is_vault(conn, path)
        if not readonly:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise VaultUnavailable(f"Cannot switch {path} to WAL mode (is the folder read-only?)")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("PRAGMA secure_delete=ON")  # freed pages are zeroed: erased text leaves the file
    return conn


def _apply_vault_key(conn: apsw.Connection, key: str | None) -> None:
    """An encrypted vault's key goes first, before any other statement (see ``cipher``)."""
    if key is not None:
        apply_key(conn, key)


def create_private_file(path: Path) -> None:
    """Create a new vault file readable by its owner only (0600, whatever the umask).

    SQLite gives the ``-wal`` and ``-shm`` files the main file's permissions, so they are 0600 too.
    An existing file is left as it is.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise VaultUnavailable(f"Cannot create the vault {path}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o600)  # the umask may have removed bits only; this also drops any it left
    finally:
        os.close(fd)


def quick_check_before_first_write(conn: apsw.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` before this process writes: a damaged vault is refused, not written to.

    The writer runs it once, before its first write job or migration step, so a damaged file is
    never changed (not even by a migration) while reading it costs nothing extra; the message says
    how to get back to a working vault.
    """
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        problems = [str(exc)]
    if problems == ["ok"]:
        return
    log.info("quick_check of %s: %s", path, "; ".join(problems)[:500])
    raise damaged_vault(path)


def _check_is_vault(conn: apsw.Connection, path: Path) -> None:
    """Refuse a file that is not a database, or another program's database, or a vault whose schema
    holds anything its migrations do not make (a planted trigger, table, view or index:
    ``schema_objects``), before any pragma (WAL switch included) could write to it and before any
    statement could fire what was planted."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    app_id = scalar(conn, "PRAGMA application_id")
    if not (app_id == APPLICATION_ID or (app_id == 0 and (not tables or "schema_migrations" in tables))):
        conn.close()
        raise not_a_vault(path)
    try:
        _check_schema(conn, path)
    except BaseException:
        conn.close()
        raise


def _check_schema(conn: apsw.Connection, path: Path) -> None:
    from vodou_desktop.vault import schema_objects  # it imports the schema, which imports this module
    from vodou_desktop.vault.migrations import applied_migrations
    from vodou_desktop.vault.schema import MIGRATIONS

    done = applied_migrations(conn)
    if not set(done) <= {name for name, _ in MIGRATIONS}:
        return  # a newer Vodou's vault: refused as such when it is migrated
    if not schema_objects.differences(conn, done):
        return
    problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:  # damaged, rather than changed: said as such, with the way back
        log.info("quick_check of %s: %s", path, "; ".join(problems)[:500])
        raise damaged_vault(path)
    schema_objects.refuse_foreign(conn, path, done)


@contextlib.contextmanager
def translate_errors(path: Path | str) -> Iterator[None]:
    """Environment errors from SQLite become one clear ``VaultUnavailable`` message, in the words of
    ``errors``; SQLite's own text goes to the log only."""
    try:
        yield
    except apsw.Error as exc:
        known = from_sqlite(exc, path)
        if known is None:
            raise
        raise known from exc


def scalar(conn: apsw.Connection, sql: str, params: tuple[object, ...] | list[object] = ()) -> Any:
    """The first column of the first row (``None`` when there is no row)."""
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


SQL_VARIABLES_PER_QUERY = 900  # well under SQLite's bound-parameter limit, with room for filter params


def batched(values: Iterable[T], size: int = SQL_VARIABLES_PER_QUERY) -> Iterator[list[T]]:
    """``values`` in lists of at most ``size``: one ``IN (...)`` query each."""
    items = list(values)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def id_array(ids: Iterable[int]) -> apsw.CArrayBinding:
    """``ids`` as one bound value for ``IN carray(?)``: the statement's text is the same however many
    ids there are, so it is prepared once and then taken from the statement cache (an ``IN (?,?,...)``
    list is a new statement for every count, prepared each time: a third of a 300-id read), and there
    is no bound-parameter limit. Empty ``ids`` cannot be bound: callers read nothing for them."""
    values = array("q", ids)
    if not values:
        raise ValueError("no ids to bind")
    return apsw.carray(values)


def marks(part: Sequence[object]) -> str:
    """``?,?,?`` for an ``IN (...)`` over ``part``."""
    return ",".join("?" * len(part))
