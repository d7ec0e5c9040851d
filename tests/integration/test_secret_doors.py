"""Secrets never stored as written, through every door (DATA-8, issue 31 item 7).

Each door that lets text into the vault gets three secrets — a GitHub token (``ghp_`` + 36), an
AWS access key id and a PEM private key — and then every file under the vault's folder and
VODOU_HOME (the vault, its WAL, a backup made afterwards, logs) is read as bytes: no 12-character
piece of any secret may be there, in any case (the keyword index stores lower-cased terms). Where
the door answers, the answer says what was removed.

Enumerations, so that the next door fails here until it is covered:
- every source kind the provenance writer accepts has a door below (or a reason it has none);
- every function of the package whose SQL writes a free-text column calls the filter, or is
  listed with the reason it need not (``REVIEWED``) or the gap it is (``KNOWN_GAPS``).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

import vodou_desktop
from tests.integration.bridge.helpers import LoopThread, start_bridge, stop_bridge
from tests.support import run_cli
from vodou_desktop.ingest.watch import SessionWatcher
from vodou_desktop.mcp.tools import Caller, MemoryTools
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault
from vodou_desktop.vault.sources import KINDS

GITHUB = "ghp_" + "Z8q2Lw5Rt7Yx1Kc4Vb9Nm3Pj6Hd0Fs2Ga8Ue"
AWS_ID = "AKIAZ7Q4M2LK8XJ3WPRT"
PAGE = "https://docs.example.org/deploy"


def _pem() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                             serialization.NoEncryption()).decode().strip()


SECRETS = {"github": (GITHUB, "GitHub Token"), "aws": (AWS_ID, "AWS Access Key"), "pem": (None, "Private Key")}


@dataclass
class Place:
    """One test's vault, folders and the secret it carries."""

    root: Path
    vault: Path
    home: Path
    secret: str
    kind: str
    extracted: bool = False  # the door keeps only the sentences an extractor picks

    @property
    def line(self) -> str:
        """A sentence an extractor keeps, carrying the secret. A key block follows its sentence on
        lines of its own, or, where an extractor would drop such lines anyway, sits inside it."""
        if "\n" in self.secret and self.extracted:
            return f"We use the deploy key {' '.join(self.secret.splitlines())} for the Atlas servers."
        if "\n" in self.secret:
            return f"We use this deploy key for the Atlas servers:\n{self.secret}"
        return f"We use {self.secret} as the Atlas deploy credential."

    def cli(self, *args: str) -> str:
        result = run_cli("--vault", str(self.vault), *args)
        assert result.code == 0, result.err
        return result.out + result.err


# -- the doors ------------------------------------------------------------------------------------
# Each writes ``place.line`` through one door and returns what the door answered (None: a door
# that answers nobody, such as a watcher). ``SOURCES``: the source kinds it writes under.

def cli_add(p: Place) -> str | None:
    return p.cli("mem", "add", p.line)


def cli_correct(p: Place) -> str | None:
    p.cli("mem", "add", "The Atlas deploy credential is in the team vault.")
    return p.cli("mem", "correct", "1", p.line)


def cli_import(fmt: str) -> Callable[[Place], str | None]:
    def door(p: Place) -> str | None:
        if fmt == "chatgpt":
            convs = [{"id": "c1", "title": "deploys", "mapping": {"a": {"id": "a", "parent": None, "message": {
                "id": "m1", "author": {"role": "user"}, "content": {"parts": [p.line]}, "create_time": 1.7e9}}},
                "current_node": "a"}]
        else:
            convs = [{"uuid": "c1", "name": "deploys", "created_at": "2026-01-02T10:00:00Z",
                      "chat_messages": [{"uuid": "m1", "sender": "human", "text": p.line,
                                         "created_at": "2026-01-02T10:00:00Z"}]}]
        path = p.root / "inputs" / "conversations.json"
        path.write_text(json.dumps(convs))
        return p.cli("import", fmt, str(path))
    return door


def cli_import_vodou(p: Place) -> str | None:
    """An export written by a vault where the filter was off holds the secret; importing it here stores none."""
    other = p.root / "inputs" / "other.sqlite"
    out = p.root / "inputs" / "export.jsonl"
    for args in (("secrets", "off", "cli"), ("mem", "add", p.line), ("export", "--format", "jsonl", str(out))):
        assert run_cli("--vault", str(other), *args).code == 0
    assert "secret_filter" not in out.read_text()  # the choice to keep secrets stays in that vault
    assert p.secret.splitlines()[1] in out.read_text() if "\n" in p.secret else p.secret in out.read_text()
    for name in list(other.parent.iterdir()):  # the other vault is not this test's: only the export file stays
        if name != out:
            name.unlink()
    p.cli("import", "vodou", str(out))
    return None  # the import's report is data/export.py's (see the report of this change)


def cli_import_vodou_opm(p: Place) -> str | None:
    """The same for operator memory: an export holding it as written, imported here, stores none."""
    other = p.root / "inputs" / "other.sqlite"
    out = p.root / "inputs" / "export.jsonl"
    for args in (("secrets", "off", "opm"), ("opm", "add", "pinned_context", p.line),
                 ("export", "--format", "jsonl", str(out))):
        assert run_cli("--vault", str(other), *args).code == 0
    assert '"type": "operator_memory"' in out.read_text()
    for name in list(other.parent.iterdir()):
        if name != out:
            name.unlink()
    p.cli("import", "vodou", str(out))
    return None


def capture_add(p: Place) -> str | None:
    p.cli("capture", "add", p.line, "--tool", "zsh")
    assert leaks([p.root / "v"], p.secret) == []  # the buffer, before a flush turns it into memories
    p.cli("capture", "flush")
    return None  # a shell hook answers nobody


def opm_add(p: Place) -> str | None:
    return p.cli("opm", "add", "pinned_context", p.line)


@contextlib.contextmanager
def _tools(p: Place) -> Iterator[MemoryTools]:
    runtime = Runtime.open(p.vault, embedder="none")
    try:
        yield MemoryTools(runtime)
    finally:
        runtime.close()


def mcp_remember(p: Place) -> str | None:
    with _tools(p) as tools:
        return json.dumps(tools.call("remember", {"text": p.line}, Caller(client="claude-code")))


def mcp_correct(p: Place) -> str | None:
    with _tools(p) as tools:
        first = tools.call("remember", {"text": "The Atlas credential lives in the vault."}, Caller(client="cursor"))
        return json.dumps(tools.call("correct_memory", {"id": first["memory"]["id"], "text": p.line},
                                     Caller(client="cursor")))


def _bridge(p: Place, path: str, body: dict[str, Any]) -> str | None:
    vault = Vault.open(p.vault)
    index = VectorIndex(vault)
    loop = LoopThread()
    bridge = start_bridge(vault, SearchService(vault, Embedder("none"), index), loop)
    try:
        reply = bridge.post(path, body)
        assert reply.status == 201, reply.raw
        return reply.raw.decode()
    finally:
        stop_bridge(bridge)
        loop.close()
        index.close()
        vault.close()


def bridge_door(path: str, field: str) -> Callable[[Place], str | None]:
    def door(p: Place) -> str | None:
        body = {"url": PAGE, "title": "Deploying Atlas", field: p.line}
        return _bridge(p, path, {"content": p.line} if path == "/api/turns" else body)
    return door


def claude_code_session(p: Place) -> str | None:
    claude, inbox = p.root / "inputs" / "claude", p.root / "inputs" / "inbox"
    (claude / "proj").mkdir(parents=True)
    entry = {"type": "user", "uuid": "u1", "cwd": str(p.root), "sessionId": "s1",
             "timestamp": "2026-07-12T10:00:00.000Z", "message": {"role": "user", "content": p.line}}
    (claude / "proj" / "s1.jsonl").write_text(json.dumps(entry) + "\n")
    _watch(p, claude, inbox)
    return None


def inbox_file(p: Place) -> str | None:
    claude, inbox = p.root / "inputs" / "claude", p.root / "inputs" / "inbox"
    claude.mkdir(parents=True)
    inbox.mkdir(parents=True)
    note = inbox / "notes.md"
    note.write_text(p.line + "\n")
    os.utime(note, (time.time() - 60, time.time() - 60))  # settled: the watcher reads it now
    _watch(p, claude, inbox)
    return None


def _watch(p: Place, claude: Path, inbox: Path) -> None:
    with Vault.open(p.vault) as vault:
        watcher = SessionWatcher(vault, claude, inbox, flush_after=0.1)
        watcher._mark_all()
        watcher.process_dirty()
        watcher.flush()
        assert watcher.stats.entries + watcher.stats.inbox_files == 1


def add_memory_dialog(p: Place) -> str | None:
    """The desktop's Add memory dialog: its status line says what was removed."""
    from PySide6.QtWidgets import QApplication, QDialogButtonBox

    from tests.unit.ui.conftest import make_services
    from vodou_desktop.ui.add_memory_dialog import AddMemoryDialog

    app = QApplication.instance() or QApplication([])
    vault = Vault.open(p.vault)
    index = VectorIndex(vault)
    services = make_services(SearchService(vault, Embedder("none"), index), None)
    try:
        dialog = AddMemoryDialog(services)
        dialog.text.setPlainText(p.line)
        dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
        deadline = time.monotonic() + 30
        while not services.messages.history and time.monotonic() < deadline:  # the save runs in a worker
            app.processEvents()
            time.sleep(0.02)
        return " | ".join(text for _, text in services.messages.history)
    finally:
        services.close()
        index.close()
        vault.close()


@dataclass(frozen=True)
class Door:
    write: Callable[[Place], str | None]
    sources: tuple[str, ...]
    verbatim: bool = True  # the text is stored as written (no extraction): the marker must be in it


DOORS: dict[str, Door] = {
    "cli mem add": Door(cli_add, ("cli",)),
    "cli mem correct": Door(cli_correct, ("cli",)),
    "cli import chatgpt": Door(cli_import("chatgpt"), ("import_chatgpt",), verbatim=False),
    "cli import claude": Door(cli_import("claude"), ("import_claude",), verbatim=False),
    "cli import vodou": Door(cli_import_vodou, ()),
    "cli import vodou, operator memory": Door(cli_import_vodou_opm, ()),
    "cli capture add": Door(capture_add, ("capture",), verbatim=False),
    "cli opm add": Door(opm_add, ("opm",)),
    "mcp remember": Door(mcp_remember, ("mcp",)),
    "mcp correct_memory": Door(mcp_correct, ("mcp",)),
    "bridge note": Door(bridge_door("/api/notes", "text"), ("note",)),
    "bridge link": Door(bridge_door("/api/links", "text"), ("link",)),
    "bridge selection": Door(bridge_door("/api/selection", "text"), ("selection",)),
    "bridge library": Door(bridge_door("/api/library", "text"), ("library",)),
    "bridge turn": Door(bridge_door("/api/turns", "content"), ("turn",)),
    "watched Claude Code session": Door(claude_code_session, ("capture",), verbatim=False),
    "inbox folder": Door(inbox_file, ("inbox",), verbatim=False),
    "add memory dialog": Door(add_memory_dialog, ("panel",)),
}
# Source kinds no door of the product writes under, and why.
NO_DOOR = {
    "bench": "written only by the benchmarks in bench/",
    "page_turn": "a kind older vaults hold; no writer in this version stamps it",
}


def test_every_source_kind_has_a_door() -> None:
    covered = {s for door in DOORS.values() for s in door.sources}
    assert covered | set(NO_DOOR) == set(KINDS) and not covered & set(NO_DOOR)


@pytest.fixture
def place(request: pytest.FixtureRequest, tmp_path: Path, vodou_home: Path) -> Place:
    secret, kind = SECRETS[request.param]
    (tmp_path / "v").mkdir()
    (tmp_path / "inputs").mkdir()
    return Place(tmp_path, tmp_path / "v" / "vault.sqlite", vodou_home, secret or _pem(), kind)


def pieces(secret: str, size: int = 12) -> set[bytes]:
    """Every ``size``-character piece of the secret's long runs of token characters, lower-cased."""
    out = set()
    for run in re.findall(rf"[A-Za-z0-9+/=]{{{size},}}", secret):
        out |= {run[i:i + size].lower().encode() for i in range(len(run) - size + 1)}
    return out


def leaks(folders: list[Path], secret: str) -> list[str]:
    wanted = pieces(secret)
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                data = path.read_bytes().lower()
                found += [f"{path.name}: {piece.decode()}" for piece in wanted if piece in data][:1]
    return found


def stored_texts(vault: Path) -> str:
    conn = apsw.Connection(str(vault), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = [r[0] for r in conn.execute(
            "SELECT text FROM chunks UNION ALL SELECT content FROM operator_memory"
            " UNION ALL SELECT content FROM messages UNION ALL SELECT value FROM ingest_seen")]
    finally:
        conn.close()
    return "\n".join(str(r) for r in rows)


@pytest.mark.parametrize("place", list(SECRETS), indirect=True)
@pytest.mark.parametrize("name", list(DOORS))
def test_no_byte_of_a_secret_reaches_the_vault_folder(name: str, place: Place) -> None:
    door = DOORS[name]
    place.extracted = not door.verbatim
    answer = door.write(place)
    stored = stored_texts(place.vault)
    if door.verbatim:
        assert f"[secret removed: {place.kind}]" in stored, stored[-500:]
    if answer is not None:
        assert re.search(r"secrets? removed|\"secrets_removed\": \[\"", answer), answer
        assert place.kind in answer, answer
    backup = place.root / "v" / "backups"
    backup.mkdir()
    assert run_cli("--vault", str(place.vault), "backup", str(backup / "after.sqlite")).code == 0
    assert leaks([place.root / "v", place.home], place.secret) == []


# -- the writers, read from the source ------------------------------------------------------------

TEXT_COLUMNS = {"chunks": ("text",), "documents": ("title",), "memory_sources": ("title",),
                "operator_memory": ("content",), "operator_memory_history": ("content",),
                "messages": ("content",), "approvals": ("arguments",), "ingest_seen": ("value",)}
SCRUBS = frozenset({"scrub", "scrub_for_source", "scrub_document", "scrub_value", "_scrubbed"})
REVIEWED = {
    "vault/approvals_store.py:claim_pending": "clears a parked call's arguments when it is decided",
    "vault/approvals_store.py:set_result": "stores a parked call's result (ids and memories already stored)",
    "vault/ingest_store.py:mark_seen_many": "bookkeeping of ids and file offsets; the capture buffer's "
                                            "text is scrubbed by buffer_entry before it comes here",
    "vault/retraction.py:stamp_documents_invalid": "sets forget stamps, no text",
    "vault/retraction.py:add_cover": "records which operation covers a row (an operation id, a row id, a time)",
    "vault/retraction.py:stamp_invalid": "sets forget stamps, no text",
    "vault/retraction.py:delete_facts": "erase: overwrites and deletes rows, writes no new text",
    "vault/transfer.py:renumber_groups": "renumbers fact groups, no text",
}
KNOWN_GAPS = {
    "vault/sync_store.py:_opm_body": "operator memory from another computer is written as it arrived "
                                     "(facts from sync go through insert_fact and are scrubbed)",
}
UNKNOWN = "\x00"
# The package writes SQL keywords in capitals (an unknown verb before INTO: "{verb} INTO ...").
_INSERT = re.compile(r"(?:\bINSERT\b(?:\s+OR\s+\w+)?|\x00)\s+INTO\s+([\w\x00]+)\s*(?:\(([^)]*)\))?")
_UPDATE = re.compile(r"\bUPDATE\s+([\w\x00]+)\s+SET\s+(.*)", re.S)


def _constants(tree: ast.Module) -> dict[str, str]:
    return {n.targets[0].id: n.value.value for n in tree.body
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def _render(node: ast.AST, constants: dict[str, str]) -> str:
    """A string expression as SQL text; a part not known from the source is ``UNKNOWN``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_render(v, constants) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _render(node.value, constants)
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _render(node.left, constants) + _render(node.right, constants)
    return UNKNOWN


def _is_text(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (_is_text(node.left) or _is_text(node.right)))


def _text_writes(sql: str) -> set[str]:
    """The free-text tables a statement writes a text column of (an unknown table or column counts)."""
    out = set()
    for pattern, cols_at in ((_INSERT, 2), (_UPDATE, 2)):
        for m in pattern.finditer(sql):
            tables = list(TEXT_COLUMNS) if m.group(1) == UNKNOWN else [m.group(1)]
            cols = m.group(cols_at)
            for table in (t for t in tables if t in TEXT_COLUMNS):
                if pattern is _INSERT and cols is None:
                    out.add(table)
                elif cols is not None and (UNKNOWN in cols or any(
                        re.search(rf"\b{c}\b" + (r"\s*=" if pattern is _UPDATE else ""), cols)
                        for c in TEXT_COLUMNS[table])):
                    out.add(table)
    return out


def text_writers(root: Path) -> dict[str, bool]:
    """Every function whose SQL writes a free-text column, and whether it calls the filter."""
    found: dict[str, bool] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            inside: set[int] = set()
            writes: set[str] = set()
            for node in ast.walk(fn):
                if id(node) in inside or not _is_text(node):
                    continue
                inside.update(id(sub) for sub in ast.walk(node))
                writes |= _text_writes(_render(node, constants))
            if writes:
                calls = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                         for c in ast.walk(fn) if isinstance(c, ast.Call)}
                found[f"{path.relative_to(root).as_posix()}:{fn.name}"] = bool(calls & SCRUBS)
    return found


def test_every_writer_of_free_text_runs_the_filter() -> None:
    writers = text_writers(Path(vodou_desktop.__file__).parent)
    assert {"vault/facts.py:insert_fact", "vault/facts.py:insert_document", "vault/opm_store.py:insert_row",
            "vault/approvals_store.py:insert_message", "vault/sources.py:stamp_source"} <= set(writers)
    unscrubbed = {name for name, scrubs in writers.items() if not scrubs}
    assert unscrubbed == set(REVIEWED) | set(KNOWN_GAPS), sorted(unscrubbed)
    assert not {name for name, scrubs in writers.items() if scrubs} & (set(REVIEWED) | set(KNOWN_GAPS))


def test_an_export_file_cannot_turn_the_filter_off(tmp_path: Path) -> None:
    vault = tmp_path / "v.sqlite"
    hostile = tmp_path / "hostile.jsonl"
    assert run_cli("--vault", str(tmp_path / "src.sqlite"), "mem", "add", "The Atlas servers run Debian.").code == 0
    assert run_cli("--vault", str(tmp_path / "src.sqlite"), "export", "--format", "jsonl", str(hostile)).code == 0
    lines = hostile.read_text().splitlines()
    lines.insert(1, json.dumps({"type": "setting", "key": "secret_filter.cli", "value": "off"}))
    hostile.write_text("\n".join(lines) + "\n")
    run_cli("--vault", str(vault), "import", "vodou", str(hostile))
    assert run_cli("--vault", str(vault), "mem", "add", f"token {GITHUB}").code == 0
    assert leaks([tmp_path], GITHUB) == []  # neither input holds the token: only a kept memory could
