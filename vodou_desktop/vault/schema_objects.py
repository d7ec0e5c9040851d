"""A vault holds only what the migrations make (VAULT-1, DATA-7).

A file that takes the vault's place (a restored backup, a vault opened with ``--vault``, the file a
recovery key is checked against) could carry schema objects of its own: a trigger that copies every
erased memory into a table of its own, or sets a bank back to ``collect`` on every new memory, a
view, an index on a column an attacker wants to keep. SQLite runs them as part of the vault's own
statements, so they are refused before the file is used: its ``sqlite_schema`` (tables, indexes,
triggers, views and their SQL) must be exactly what the migrations it records create on a blank
vault. The expected objects are derived here, once per process, by running those migrations on an
empty in-memory database, so a new migration needs no list kept by hand.

Refusing (rather than rebuilding the copy through the write path) keeps the rule simple to check
and to explain: nothing of the file is used, the refusal names the object, and the file is left as
it was for whoever wants to look at it. The only objects allowed beyond the migrations' are the
statistics tables SQLite itself makes (``ANALYZE``: they change query plans, never data); the
shadow tables of the vault's own full-text index are compared by name and type only, as their SQL
is written by the FTS5 module and may differ between SQLite versions.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import apsw

from vodou_desktop.errors import VaultUnavailable, not_a_vault
from vodou_desktop.vault.schema import MIGRATIONS, Migration

SQLITE_OWN = frozenset({"sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"})
FTS_SHADOWS = ("_data", "_idx", "_docsize", "_config", "_content")
_SPACE = re.compile(r"\s+")

Objects = dict[tuple[str, str], tuple[str, str]]  # (type, name) -> (table it belongs to, normalised SQL)


@dataclass(frozen=True)
class Difference:
    kind: str  # "extra", "changed", "missing"
    type: str
    name: str
    table: str

    def words(self) -> str:
        on = f" on {self.table}" if self.type in ("trigger", "index") and self.table != self.name else ""
        return f'{"an" if self.type[0] in "aeiou" else "a"} {self.type} "{self.name}"{on}'


def _normalised(sql: str | None) -> str:
    return _SPACE.sub(" ", sql or "").strip()


def _rows(conn: apsw.Connection) -> list[tuple[str, str, str, str | None]]:
    return [(str(t), str(n), str(tbl), sql) for t, n, tbl, sql in
            conn.execute("SELECT type, name, tbl_name, sql FROM main.sqlite_schema")]


def objects_of(conn: apsw.Connection) -> Objects:
    return {(kind, name): (table, _normalised(sql)) for kind, name, table, sql in _rows(conn)}


@dataclass(frozen=True)
class _Expected:
    objects: Objects
    raw: dict[tuple[str, str], tuple[str, str | None]]  # as SQLite stored them: compared first, at no cost
    shadows: frozenset[str]  # the shadow tables of the vault's own full-text indexes


_expected: dict[tuple[str, ...], _Expected] = {}
_expected_lock = threading.Lock()


def expected_objects(done: Sequence[str], migrations: Sequence[Migration] = MIGRATIONS) -> Objects:
    """What the migrations named ``done`` (in that order) create on a blank vault."""
    return _expected_for(done, migrations).objects


def _expected_for(done: Sequence[str], migrations: Sequence[Migration]) -> _Expected:
    key = tuple(done)
    with _expected_lock:
        if key in _expected and migrations is MIGRATIONS:
            return _expected[key]
    from vodou_desktop.vault.migrations import migrate

    steps = dict(migrations)
    conn = apsw.Connection(":memory:")
    try:
        migrate(conn, ":memory:", [(name, steps[name]) for name in done if name in steps])
        rows = _rows(conn)
    finally:
        conn.close()
    objects = {(kind, name): (table, _normalised(sql)) for kind, name, table, sql in rows}
    fts = {name for (kind, name), (_, sql) in objects.items()
           if kind == "table" and sql.upper().startswith("CREATE VIRTUAL TABLE") and "USING FTS5" in sql.upper()}
    made = _Expected(objects, {(kind, name): (table, sql) for kind, name, table, sql in rows},
                     frozenset(f"{table}{suffix}" for table in fts for suffix in FTS_SHADOWS))
    if migrations is MIGRATIONS:
        with _expected_lock:
            _expected[key] = made
    return made


def differences(conn: apsw.Connection, done: Sequence[str],
                migrations: Sequence[Migration] = MIGRATIONS) -> list[Difference]:
    """How ``conn``'s schema differs from what its recorded migrations make (empty: it is as made)."""
    wanted = _expected_for(done, migrations)
    found: set[tuple[str, str]] = set()
    out: list[Difference] = []
    for kind, name, table, sql in sorted(_rows(conn)):
        found.add((kind, name))
        if kind == "table" and name in SQLITE_OWN:
            continue
        if (kind, name) not in wanted.objects:
            out.append(Difference("extra", kind, name, table))
        elif wanted.raw[(kind, name)] == (table, sql) or (kind == "table" and name in wanted.shadows):
            continue
        elif wanted.objects[(kind, name)] != (table, _normalised(sql)):
            out.append(Difference("changed", kind, name, table))
    for (kind, name), (table, _) in sorted(wanted.objects.items()):
        if (kind, name) not in found:
            out.append(Difference("missing", kind, name, table))
    return out


def sentence(diffs: Sequence[Difference], shown: int = 3) -> str:
    """``a table "loot" and a trigger "keep" on chunks that Vodou's migrations do not make``: the
    first ``shown`` objects, by kind of difference, then how many more."""
    parts, left = [], shown
    for kind, tail in (("extra", "that Vodou's migrations do not make"), ("changed", "whose SQL is not Vodou's"),
                       ("missing", "missing")):
        of_kind = [d for d in diffs if d.kind == kind]
        if not of_kind or left <= 0:
            continue
        named = [d.words() for d in of_kind[:left]]
        left -= len(named)
        listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        parts.append(f"{listed} {tail}")
    more = len(diffs) - shown
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def refuse_foreign(conn: apsw.Connection, path: object, done: Sequence[str], *, what: str = "vault",
                   outcome: str = "it was not opened and nothing was changed",
                   migrations: Sequence[Migration] = MIGRATIONS) -> None:
    """``VaultUnavailable`` in one line naming the objects when ``conn``'s schema is not the migrations'."""
    diffs = differences(conn, done, migrations)
    if diffs:
        raise VaultUnavailable(f"the {what} at {path} is not as Vodou made it: it has {sentence(diffs)} "
                               f"(someone or something changed the file); {outcome}")


def refuse_foreign_file(path: Path, key: str | None, *, what: str = "copy",
                        outcome: str = "it was not used and nothing was changed") -> None:
    """``refuse_foreign`` for a file not open yet (read only; ``key``: an encrypted file's)."""
    from vodou_desktop.vault.cipher import apply_key
    from vodou_desktop.vault.connection import translate_errors
    from vodou_desktop.vault.migrations import applied_migrations

    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        with translate_errors(path):
            if key is not None:
                apply_key(conn, key)
            done = applied_migrations(conn)
            if not done:
                raise not_a_vault(path)
            refuse_foreign(conn, path, done, what=what, outcome=outcome)
    finally:
        conn.close()
