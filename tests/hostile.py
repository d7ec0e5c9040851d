"""A hostile-input corpus for every door that lets data into a vault, and the doors themselves.

The corpus is data: each ``Case`` says what it is (``kind``: a text, a record, a file's bytes, a
planted schema object), how to build it, and what a door must make of it. Each door (``DOORS``)
turns the cases it takes into its own input (a Vodou export, a ChatGPT or Claude export, a backup
file), runs itself from the CLI against a vault that holds a canary memory, and reports what
happened. ``tests/unit/data/test_hostile_doors.py`` runs every case against every door that takes
it and checks the same invariants each time; a new case list (say, secrets) can reuse ``DOORS`` and
``run_door`` with cases of its own.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from tests.support import CliResult, file_hashes, run_cli
from vodou_desktop.data.export_schema import MAX_LINE_BYTES
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import MAX_FACT_CHARS

CANARY = "the canary heron nests by the mill pond"
SQL_VALUE = "x'); UPDATE chunks SET text = 'PWNED ' || text; DELETE FROM site_rules; --"
SQL_KEY = "key, value) SELECT 'x', ?; UPDATE chunks SET text = 'PWNED ' || text; --"
CONTROLS = "I use \x1b]0;OWNED\x07 vim \x1b[2J\rdaily \x9b31m in red"
PRIVATE_SETTINGS = {"sync_device_id": "evil-device", "sync_folder": "/tmp/stranger", "sync_key": "c3RyYW5nZXI=",
                    "sync_capture": "1", "operations_host_key": "00" * 32, "site_modes.paused": "0",
                    "vectors_model": "planted"}

REFUSED, STORED, SKIPPED = "refused", "stored", "skipped"


@dataclass(frozen=True)
class Case:
    """One hostile input. ``kind``: ``text`` (a string a door stores as a memory's words), ``record``
    (Vodou export records), ``conversation`` (a ChatGPT/Claude structure), ``bytes`` (a whole file),
    ``schema`` (SQL run on a real backup before it is handed over). ``expect``: what the door must
    do: refuse it (one line, nothing written), store it as plain data, or skip it and say so.
    ``words``: what the door's answer must say."""

    id: str
    kind: str
    payload: Any
    expect: str
    words: tuple[str, ...] = ()
    doors: tuple[str, ...] = ()  # only these doors (empty: every door that takes ``kind``)
    door_words: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (door, words) where a door says it otherwise

    def words_at(self, door: str) -> tuple[str, ...]:
        return dict(self.door_words).get(door, self.words)


def _memory(ref: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "memory", "ref": ref, "text": text, "kind": "fact", "project": None, "scope": None,
            "created_at": "2026-01-02T03:04:05+00:00", "valid_at": None, "valid_precision": None,
            "forgotten_at": None, "forgotten_by": None, "revision": 1, "predecessor": None, "superseded_by": None,
            "superseded_at": None, "group": None, "canonical": True, "pinned": False,
            "page": {"url": None, "key": None, "host": None, "set_by": None},
            "source": {"kind": "cli", "tier": "first_party", "url": None, "title": None, "tool": "cli",
                       "batch_id": None, "created_at": "2026-01-02T03:04:05+00:00"},
            "pinned_from": None, "entities": [], **extra}


HEADER = {"type": "header", "format": "vodou-export", "version": 2}


def _without(record: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != name}


CASES: list[Case] = [
    # -- texts: stored as data wherever a door stores text (or refused where they cannot be text)
    Case("sql-in-a-value", "text", SQL_VALUE, STORED),
    Case("control-characters", "text", CONTROLS, STORED),
    Case("nul-inside", "text", "before\x00after the nul", STORED),
    Case("lone-surrogate", "text", "a heron \ud83d without its pair", REFUSED, ("lone surrogate",),
         doors=("import vodou",)),
    Case("lone-surrogate-in-a-conversation", "text", "I watch herons \ud83d every morning.", STORED,
         doors=("import chatgpt", "import claude")),
    Case("text-over-the-limit", "text", "heron " * (MAX_FACT_CHARS // 6 + 10), REFUSED, ("longer than",),
         doors=("import vodou",)),
    # -- records of a Vodou export
    Case("sql-in-a-key", "record", [{"type": "setting", SQL_KEY: "v"}], REFUSED, ("line 2", "missing field key")),
    Case("sql-in-a-key-of-a-memory", "record", [_memory(1, "a heron", **{SQL_KEY: 1})], SKIPPED,
         ("skipped fields this Vodou does not know", "memory.key, value)")),
    Case("sql-in-a-setting-value", "record", [{"type": "setting", "key": "site_modes.global_default",
                                               "value": SQL_VALUE}], REFUSED, ("line 2", "field value")),
    Case("private-settings", "record", [{"type": "setting", "key": k, "value": v}
                                        for k, v in PRIVATE_SETTINGS.items()], SKIPPED,
         (f"{len(PRIVATE_SETTINGS)} settings that only this computer may set were skipped",)),
    Case("unknown-record-type", "record", [{"type": "trigger", "sql": "CREATE TRIGGER t ..."}], REFUSED,
         ("line 2", "unknown record type \"trigger\"")),
    Case("record-without-a-type", "record", [{"text": "a heron"}], REFUSED, ("line 2", "unknown record type")),
    Case("memory-without-source", "record", [_without(_memory(1, "a heron"), "source")], REFUSED,
         ("line 2", "missing field source")),
    Case("memory-without-text", "record", [_without(_memory(1, "a heron"), "text")], REFUSED,
         ("line 2", "missing field text")),
    Case("extra-fields", "record", [_memory(1, "a heron", colour="grey", source={
        **_memory(1, "x")["source"], "signature": "x"})], SKIPPED,
         ("memory.colour (1 record)", "memory.source.signature")),
    Case("duplicate-refs", "record", [_memory(1, "a heron"), _memory(1, "another heron")], REFUSED,
         ("line 3", "memory ref 1 again (first on line 2)")),
    Case("duplicate-ids", "record", [_memory(1, "a heron", id=7), _memory(2, "another heron", id=7)], REFUSED,
         ("line 3", "memory id 7 again")),
    Case("duplicate-sync-ids", "record", [_memory(1, "a heron", sync_id="a" * 32),
                                          _memory(2, "another heron", sync_id="a" * 32)], REFUSED,
         ("line 3", "sync_id")),
    Case("id-as-a-string", "record", [_memory(1, "a heron", id="7")], REFUSED, ("field id is a string",)),
    Case("id-as-a-float", "record", [_memory(1, "a heron", id=7.0)], REFUSED, ("field id is a number",)),
    Case("flag-as-a-number", "record", [_memory(1, "a heron", canonical=1)], REFUSED, ("field canonical",)),
    Case("bad-tier", "record", [_memory(1, "a heron", source={**_memory(1, "x")["source"], "tier": "root"})],
         REFUSED, ("field source.tier",)),
    Case("unknown-entity", "record", [_memory(1, "a heron", entities=["Ada"])], REFUSED, ("entities", "Ada")),
    Case("dangling-predecessor", "record", [_memory(2, "a heron", predecessor=1)], REFUSED, ("predecessor",)),
    Case("bad-host", "record", [{"type": "site_rule", "host": "Chase.COM:443/x", "mode": "collect",
                                 "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}],
         REFUSED, ("field host",)),
    Case("second-header", "record", [HEADER], REFUSED, ("line 2", "second header")),
    # -- whole files
    Case("invalid-utf8", "bytes", b"\xff\xfe not text\n", REFUSED, ("not UTF-8",),
         door_words=(("restore", ("is damaged or is not a Vodou vault",)), ("open", ("is damaged or is not a Vodou",)),
                     ("key restore --check", ("does not open",)))),
    Case("not-json", "bytes", b"{\"type\": \"memory\", \n", REFUSED, ()),
    Case("nan", "bytes", b'{"type": "header", "format": "vodou-export", "version": NaN}\n', REFUSED, (),
         doors=("import vodou",)),
    Case("empty-file", "bytes", b"", REFUSED, (), doors=("import vodou", "import chatgpt", "import claude",
                                                        "restore", "key restore --check")),
    Case("huge-line", "bytes", "huge", REFUSED, ("longer than",), doors=("import vodou",)),
    # -- conversations of a ChatGPT or Claude export
    Case("conversation-sql-in-a-key", "conversation", {"extra": {SQL_KEY: 1}}, STORED),
    Case("conversation-unknown-role", "conversation", {"role": "system"}, SKIPPED),
    Case("conversation-missing-messages", "conversation", {"drop": True}, SKIPPED, ("malformed",)),
    Case("conversation-twice", "conversation", {"twice": True}, STORED),
    Case("conversation-bad-time", "conversation", {"time": "yesterday"}, SKIPPED, ("malformed",)),
    # -- backups and vaults carrying schema objects of their own
    Case("planted-trigger", "schema", "CREATE TABLE loot(t TEXT); CREATE TRIGGER keep_erased AFTER DELETE ON chunks"
         " BEGIN INSERT INTO loot VALUES (old.text); END;", REFUSED, ('a trigger "keep_erased" on chunks',)),
    Case("planted-site-trigger", "schema", "CREATE TRIGGER bank_on AFTER INSERT ON chunks BEGIN INSERT OR REPLACE"
         " INTO site_rules(host, mode, created_at, updated_at) VALUES ('chase.com', 'collect', 'x', 'x'); END;",
         REFUSED, ('a trigger "bank_on" on chunks',)),
    Case("planted-view", "schema", "CREATE VIEW everything AS SELECT text FROM chunks", REFUSED,
         ('a view "everything"',)),
    Case("planted-index", "schema", "CREATE INDEX chunks_by_text ON chunks(text)", REFUSED,
         ('an index "chunks_by_text"',)),
    Case("planted-virtual-table", "schema", "CREATE VIRTUAL TABLE shadow USING fts5(t)", REFUSED,
         ('a table "shadow"',)),
    Case("changed-trigger", "schema", "DROP TRIGGER sync_fact_delete; CREATE TRIGGER sync_fact_delete AFTER DELETE ON"
         " chunks BEGIN SELECT 1; END;", REFUSED, ('a trigger "sync_fact_delete" on chunks whose SQL is not Vodou',)),
    Case("dropped-index", "schema", "DROP INDEX chunks_project", REFUSED,
         ('an index "chunks_project" on chunks missing',)),
    Case("sql-in-a-stored-value", "schema", "UPDATE chunks SET scope = 'x''); DROP TABLE chunks; --' WHERE id = 1",
         STORED),
]


# -- the doors --------------------------------------------------------------------------------------

@dataclass
class Outcome:
    result: CliResult
    vault: Path  # the vault the door writes (for ``open``: the file opened)
    input: Path
    hashes_before: dict[str, str] = field(default_factory=dict)  # the vault's files just before the door ran


def seed_vault(path: Path) -> None:
    with Vault.open(path) as vault:
        remember(vault, CANARY, Origin(kind="cli"))


def memory_texts(path: Path) -> set[str]:
    with Vault.open(path) as vault:
        return {f.text for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS,
                                                                                  include_forgotten=True),
                                                                   limit=10**6))}


def _jsonl(tmp: Path, case: Case) -> Path:
    path = tmp / "hostile.jsonl"
    if case.kind == "bytes":
        if case.payload == "huge":
            with path.open("wb") as out:
                out.write(json.dumps(HEADER).encode() + b"\n")
                out.write(b'{"type": "memory", "text": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}\n')
        else:
            path.write_bytes(case.payload)
        return path
    records = [_memory(1, case.payload)] if case.kind == "text" else case.payload
    lines = [json.dumps(HEADER)] + [json.dumps(r, ensure_ascii=True) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def _conversations(tmp: Path, case: Case, fmt: str) -> Path:
    path = tmp / "conversations.json"
    if case.kind == "bytes":
        path.write_bytes(case.payload)
        return path
    text = case.payload if case.kind == "text" else "I keep two herons in the garden pond."
    shape = case.payload if case.kind == "conversation" else {}
    role = shape.get("role", "user")
    when = shape.get("time")
    if fmt == "chatgpt":
        message = {"id": "m1", "author": {"role": role}, "content": {"parts": [text]},
                   "create_time": 1.7e9 if when is None else when}
        conv: dict[str, Any] = {"id": "c1", "title": "garden", "mapping": {"a": {"id": "a", "message": message}}}
        if shape.get("drop"):
            conv.pop("mapping")
    else:
        sender = {"user": "human"}.get(role, role)
        conv = {"uuid": "c1", "name": "garden", "chat_messages": [{"uuid": "m1", "sender": sender, "text": text,
                                                                   "created_at": when or "2024-03-04T09:15:10Z"}]}
        if shape.get("drop"):
            conv.pop("chat_messages")
    conv.update(shape.get("extra", {}))
    convs = [conv, conv] if shape.get("twice") else [conv]
    path.write_text(json.dumps(convs, ensure_ascii=True), encoding="ascii")
    return path


def _backup(tmp: Path, case: Case) -> Path:
    """A real backup (``vodou backup``) of a vault holding the canary, then changed as the case says."""
    source = tmp / "elsewhere.sqlite"
    seed_vault(source)
    if case.kind == "text":
        with Vault.open(source) as vault:
            remember(vault, case.payload.replace("\x00", ""), Origin(kind="cli"))
    backup = tmp / "hostile-backup.sqlite"
    made = run_cli("--vault", str(source), "backup", str(backup))
    assert made.code == 0, made.err
    if case.kind == "bytes":
        backup.write_bytes(case.payload)
    elif case.kind == "schema":
        conn = apsw.Connection(str(backup))
        conn.execute(case.payload)
        conn.close()
    if case.kind in ("bytes", "schema"):  # as handed over by someone else: without a manifest that matches
        Path(str(backup) + ".manifest").unlink()
    return backup


Door = Callable[[Path, Case], tuple[list[str], Path, Path]]  # → (vodou's arguments, the vault it writes, its input)


def _import_vodou(tmp: Path, case: Case) -> tuple[list[str], Path, Path]:
    vault, path = tmp / "vault.sqlite", _jsonl(tmp, case)
    return ["--vault", str(vault), "import", "vodou", str(path)], vault, path


def _import_conversations(fmt: str) -> Door:
    def door(tmp: Path, case: Case) -> tuple[list[str], Path, Path]:
        vault, path = tmp / "vault.sqlite", _conversations(tmp, case, fmt)
        return ["--vault", str(vault), "import", fmt, str(path)], vault, path
    return door


def _restore(tmp: Path, case: Case) -> tuple[list[str], Path, Path]:
    vault, backup = tmp / "vault.sqlite", _backup(tmp, case)
    return ["--vault", str(vault), "restore", str(backup)], vault, backup


def _key_check(tmp: Path, case: Case) -> tuple[list[str], Path, Path]:
    """``vodou key restore --check BACKUP``: the backup a recovery key is checked against."""
    vault, backup = tmp / "vault.sqlite", _backup(tmp, case)
    saved = tmp / "recovery.txt"
    assert run_cli("--vault", str(vault), "key", "save", str(saved)).code == 0
    return ["--vault", str(vault), "key", "restore", "--from", str(saved), "--check", str(backup)], vault, backup


def _open(tmp: Path, case: Case) -> tuple[list[str], Path, Path]:
    """A vault from elsewhere opened as it is (``--vault``)."""
    backup = _backup(tmp, case)
    opened = tmp / "opened.sqlite"
    shutil.copyfile(backup, opened)
    return ["--vault", str(opened), "mem", "list"], opened, opened


DOORS: dict[str, tuple[Door, tuple[str, ...]]] = {
    "import vodou": (_import_vodou, ("text", "record", "bytes")),
    "import chatgpt": (_import_conversations("chatgpt"), ("text", "conversation", "bytes")),
    "import claude": (_import_conversations("claude"), ("text", "conversation", "bytes")),
    "restore": (_restore, ("text", "bytes", "schema")),
    "key restore --check": (_key_check, ("bytes", "schema")),
    "open": (_open, ("text", "bytes", "schema")),
}


def pairs(cases: list[Case]) -> list[tuple[str, Case]]:
    """Every (door, case) the corpus holds: each case at each door that takes its kind."""
    return [(name, case) for case in cases for name, (_, kinds) in DOORS.items()
            if case.kind in kinds and (not case.doors or name in case.doors)]


def run_door(name: str, tmp: Path, case: Case) -> Outcome:
    """Seed the door's vault with the canary, build its input, note the vault's bytes, run it."""
    door, _ = DOORS[name]
    seed_vault(tmp / "vault.sqlite")
    args, vault, path = door(tmp, case)
    before = file_hashes(vault)
    return Outcome(run_cli(*args), vault, path, before)
