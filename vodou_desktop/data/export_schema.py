"""The written schema of a Vodou export (JSON Lines, versions 1 and 2) and the check every import
runs before it writes anything (DATA-2, DATA-7; docs/export-format.md).

One JSON Schema per record type says which fields a record has, their types and bounds; the import
reads a field only if the schema names it, so a field the file adds (a newer Vodou's, or a hostile
one whose name is SQL) is never more than a name to report and skip. A whole file is checked before
the first write: every line decoded (strict UTF-8, one JSON object, no line over ``MAX_LINE_BYTES``),
each record against its type's schema, then the file as a whole (one header, first; no id twice;
every reference to a memory, an entity or a source is consistent). The first problem is one line
naming the line number and the field; nothing is written.

Settings are the one record whose meaning depends on a value: only the settings an export writes
(``EXPORTED_SETTINGS``) are ever imported. Everything else a file may name (sync identity, keys and
state, the erased hosts' key, pause, derived state) belongs to the computer that holds the vault:
such a record is skipped and counted, never written.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, get_type_hints

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import normalize_host
from vodou_desktop.vault.facts import MAX_DOCUMENT_CHARS, MAX_FACT_CHARS

FORMAT = "vodou-export"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MAX_LINE_BYTES = 64 * 1024 * 1024  # a Library document of the largest size, every character escaped, fits
MAX_ID = 2**63 - 1
MAX_NAME = 200  # projects, scopes, tools, entity names, setting keys
MAX_URL = 8_192
MAX_TITLE = 2_000
MAX_DETAIL = 100_000

# -- settings --------------------------------------------------------------------------------------

_MODES = ("off", "suggest", "collect")
_PROJECT_NAME = re.compile(r"^[^\x00-\x1f]{0,200}$")  # facts.clean_project's rule
MCP_DEFAULT_PROJECT = "mcp_default_project"  # and ``mcp_default_project:<client>`` (mcp.projects)


def _global_mode(value: str) -> bool:
    return value in _MODES


def _project_or_empty(value: str) -> bool:
    return bool(_PROJECT_NAME.match(value)) and value == value.strip()


# Setting key → the values an import accepts. Export writes these and nothing else.
EXPORTED_SETTINGS: dict[str, Callable[[str], bool]] = {
    "site_modes.global_default": _global_mode,
    MCP_DEFAULT_PROJECT: _project_or_empty,
}
_CLIENT_KEY = re.compile(rf"^{MCP_DEFAULT_PROJECT}:[A-Za-z0-9._-]{{1,64}}$")


def setting_rule(key: str) -> Callable[[str], bool] | None:
    """How an exported setting's value is checked; ``None``: this computer's own, never imported."""
    if key in EXPORTED_SETTINGS:
        return EXPORTED_SETTINGS[key]
    return _project_or_empty if _CLIENT_KEY.match(key) else None


def is_exported_setting(key: str) -> bool:
    return setting_rule(key) is not None


# -- the schema, one per record type -----------------------------------------------------------------
# Each record type is a typed record (a TypedDict checked by pydantic in strict mode: no "1" for 1, no
# 1.0 for an id, no 0 for false). A field marked NotRequired may be left out (files written before it
# existed); every other field must be there, null only where its type says so. ``json_schemas()``
# gives the same definitions as JSON Schema (docs/export-format.md is written from them).

TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$"
_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"  # a memory's kind, a source's kind, an operation's kind
_SYNC_ID_PATTERN = r"^[0-9A-Za-z_-]{1,64}$"
_STRICT = ConfigDict(strict=True, extra="ignore")


Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Count = Annotated[int, Field(ge=0, le=MAX_ID)]
Time = Annotated[str, Field(max_length=40, pattern=TIME_PATTERN)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]  # an id, a key, an entity's name
Label = Annotated[str, Field(max_length=MAX_NAME)]  # a project, a scope, a tool
Kind = Annotated[str, Field(min_length=1, max_length=40, pattern=_NAME_PATTERN)]
Url = Annotated[str, Field(max_length=MAX_URL)]
Title = Annotated[str, Field(max_length=MAX_TITLE)]
Host = Annotated[str, Field(min_length=1, max_length=253)]
ShortText = Annotated[str, Field(max_length=40)]
SyncId = Annotated[str, Field(min_length=1, max_length=64, pattern=_SYNC_ID_PATTERN)]
Detail = Annotated[str, Field(max_length=MAX_DETAIL)]
FolderPath = Annotated[str, Field(max_length=4_096)]
SettingValue = Annotated[str, Field(max_length=10_000)]
FactText = Annotated[str, Field(min_length=1, max_length=MAX_FACT_CHARS)]
ChunkText = Annotated[str, Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)]
OpmText = Annotated[str, Field(min_length=1, max_length=2_000)]
OpmKey = Annotated[str, Field(max_length=4_000)]
SourceRef = Annotated[str, Field(max_length=300)]
Names = Annotated[list[Name], Field(max_length=1_000)]
Category = Literal["preference", "initiative", "pinned_context"]


@with_config(_STRICT)
class Source(TypedDict):
    kind: Kind
    tier: Literal["pinned", "first_party", "capture", "import"]
    url: Url | None
    title: Title | None
    tool: Label | None
    batch_id: Label | None
    created_at: Time
    id: NotRequired[Id]


@with_config(_STRICT)
class Page(TypedDict):
    url: Url | None
    key: Url | None
    host: Host | None
    set_by: Literal["manual", "token", "source"] | None


@with_config(_STRICT)
class Header(TypedDict):
    format: Literal["vodou-export"]
    version: int
    vodou: NotRequired[ShortText]
    project: NotRequired[Label | None]
    include_forgotten: NotRequired[bool]


@with_config(_STRICT)
class Setting(TypedDict):
    key: Name
    value: SettingValue


@with_config(_STRICT)
class SiteRule(TypedDict):
    host: Host
    mode: Literal["off", "suggest", "collect"]
    created_at: Time
    updated_at: Time


@with_config(_STRICT)
class Project(TypedDict):
    name: Name
    path: FolderPath | None
    created_at: Time


@with_config(_STRICT)
class Entity(TypedDict):
    name: Name
    created_at: Time
    aliases: Names
    id: NotRequired[Id]


@with_config(_STRICT)
class Operation(TypedDict):
    id: Name
    kind: Kind
    target: Url | None
    detail: Detail | None
    created_at: Time
    undone_at: Time | None


@with_config(_STRICT)
class SourceEvent(TypedDict):
    batch_id: Name
    entry_id: Name
    project_id: Label | None
    scope: Label | None
    tool: Label | None
    event_at: Time | None
    created_at: Time
    id: NotRequired[Id]
    role: NotRequired[Literal["user", "assistant"] | None]  # whose words (files before it: absent)


@with_config(_STRICT)
class Memory(TypedDict):
    ref: Id
    text: FactText
    kind: Kind
    project: Label | None
    scope: Label | None
    created_at: Time
    valid_at: Time | None
    valid_precision: Literal["instant", "day"] | None
    forgotten_at: Time | None
    forgotten_by: Label | None
    revision: Id
    predecessor: Id | None
    superseded_by: Id | None
    superseded_at: Time | None
    group: Id | None
    canonical: bool
    pinned: bool
    page: Page
    source: Source
    pinned_from: Source | None
    entities: Names
    id: NotRequired[Id]
    sync_id: NotRequired[SyncId | None]
    thread_id: NotRequired[Id | None]
    thread_seq: NotRequired[Count | None]
    source_event: NotRequired[Id | None]  # the id of the source_event (message) it came from
    confidence: NotRequired[Annotated[float, Field(gt=0.0, le=1.0)] | None]  # how sure its extraction was


@with_config(_STRICT)
class Document(TypedDict):
    ref: Id
    title: Title | None
    project: Label | None
    created_at: Time
    forgotten_at: Time | None
    forgotten_by: Label | None
    source: Source
    chunks: Annotated[list[ChunkText], Field(min_length=1, max_length=100_000)]
    id: NotRequired[Id]
    chunk_ids: NotRequired[Annotated[list[Id], Field(max_length=100_000)] | None]
    sync_id: NotRequired[SyncId | None]  # its global id (files before documents synced: absent)


@with_config(_STRICT)
class OperatorMemory(TypedDict):
    id: Name
    category: Category
    content: OpmText
    canonical_key: OpmKey
    salience: Count
    revision: Id
    predecessor: Count | None
    source_ref: SourceRef
    original_source_ref: SourceRef
    reauthorized_at: Time | None
    expires_at: Time | None
    last_used_at: Time | None
    created_at: Time
    updated_at: Time


@with_config(_STRICT)
class OperatorMemoryHistory(TypedDict):
    memory_id: Name
    category: Category
    revision: Id
    content: OpmText
    source_ref: SourceRef
    successor_revision: Id
    superseded_at: Time
    id: NotRequired[Id]


RECORDS: dict[str, type] = {
    "header": Header, "setting": Setting, "site_rule": SiteRule, "project": Project, "entity": Entity,
    "operation": Operation, "source_event": SourceEvent, "memory": Memory, "document": Document,
    "operator_memory": OperatorMemory, "operator_memory_history": OperatorMemoryHistory,
}
RECORD_TYPES = tuple(RECORDS)
NESTED: dict[str, type] = {"source": Source, "pinned_from": Source, "page": Page}  # objects inside records
_ADAPTERS: dict[str, TypeAdapter[Any]] = {kind: TypeAdapter(record) for kind, record in RECORDS.items()}


def fields_of(kind: str) -> tuple[str, ...]:
    """Every field a record of ``kind`` may have (what the import can ever read)."""
    return tuple(get_type_hints(RECORDS[kind]))


def required_fields(kind: str) -> frozenset[str]:
    return frozenset(RECORDS[kind].__required_keys__)  # type: ignore[attr-defined]


def json_schemas() -> dict[str, dict[str, Any]]:
    """Each record type's schema as JSON Schema (draft 2020-12), for the documentation and for tools."""
    return {kind: adapter.json_schema() for kind, adapter in _ADAPTERS.items()}


# -- reading a file ------------------------------------------------------------------------------------

@dataclass
class ExportFile:
    """A checked export: its records by type (only the fields the schema names), what was left out."""

    version: int
    records: dict[str, list[dict[str, Any]]]
    unknown_fields: Counter[str] = field(default_factory=Counter)  # "memory.colour" → how many records had it
    private_settings: list[str] = field(default_factory=list)  # keys of settings skipped (this computer's own)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.records.get(kind, [])


class _Refused(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def read_export(path: Path) -> ExportFile:
    """Check the whole file at ``path``; ``InvalidInput`` (one line: file, line number, field) at the
    first problem."""
    try:
        with path.open("rb") as fh:
            return check_records(_lines(fh), where=path.name)
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(f"{path} is a folder; give the .jsonl file written by `vodou export`") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc


def _lines(fh: Any) -> Iterator[tuple[int, Any]]:
    """``(line number, decoded JSON value)`` for every non-blank line; refuses what is not one JSON value."""
    n = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE_BYTES:
            raise _Refused(n, f"the line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Refused(n, f"not UTF-8 text (byte {exc.start + 1} of the line)") from exc
        if not text.strip():
            continue
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except ValueError as exc:
            raise _Refused(n, f"not a JSON record ({exc})") from exc
        yield n, value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_records(lines: Iterable[tuple[int, Any]] | Iterable[Any], where: str = "the export") -> ExportFile:
    """Check records (``(line, record)`` pairs, or bare records numbered from 1) and return them typed."""
    try:
        return _check(_numbered(lines), where)
    except _Refused as exc:
        raise InvalidInput(f"{where}, line {exc.line}: {exc}; nothing was imported") from None


def _numbered(lines: Iterable[Any]) -> Iterator[tuple[int, Any]]:
    for n, item in enumerate(lines, 1):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int):
            yield item
        else:
            yield n, item


def _check(lines: Iterator[tuple[int, Any]], where: str) -> ExportFile:
    out: ExportFile | None = None
    seen = _Seen()
    for n, record in lines:
        if not isinstance(record, dict):
            raise _Refused(n, "not a Vodou export record (a JSON object with a type)")
        kind = record.get("type")
        if out is None:
            out = _header(n, record, where)
            continue
        if kind == "header":
            raise _Refused(n, "a second header: an export has one, on its first line")
        if not isinstance(kind, str) or kind not in RECORDS:
            shown = json.dumps(kind, ensure_ascii=True)[:60]
            raise _Refused(n, f"unknown record type {shown}; this Vodou reads {', '.join(RECORD_TYPES[1:])}")
        typed = _typed(n, kind, record, out.unknown_fields)
        _meaning(n, kind, typed)
        seen.add(n, kind, typed)
        if kind == "setting" and setting_rule(typed["key"]) is None:
            out.private_settings.append(typed["key"])
            continue
        out.records.setdefault(kind, []).append(typed)
    if out is None:
        raise InvalidInput(f"{where} is empty: not a Vodou export (JSONL written by `vodou export --format jsonl`)")
    seen.references()
    return out


def _header(n: int, record: dict[str, Any], where: str) -> ExportFile:
    if record.get("type") != "header" or record.get("format") != FORMAT:
        raise InvalidInput(f"{where} is not a Vodou export (JSONL written by `vodou export --format jsonl`): its "
                           "first line is not the export's header")
    version = record.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise InvalidInput(f"{where} is a Vodou export of version {json.dumps(version)[:20]}; this Vodou reads "
                           f"versions {', '.join(map(str, READABLE_VERSIONS))} (a newer Vodou wrote it: upgrade)")
    out = ExportFile(int(version), {})
    _typed(n, "header", record, out.unknown_fields)
    return out


def _typed(n: int, kind: str, record: dict[str, Any], unknown: Counter[str]) -> dict[str, Any]:
    """The record checked against its type, holding only the fields the type names."""
    try:
        typed: dict[str, Any] = _ADAPTERS[kind].validate_python(record)
    except ValidationError as exc:
        raise _Refused(n, f"{_kind_words(kind)}: {_error_words(exc.errors()[0])}") from None
    known = _KNOWN[kind]
    for name in record:
        if name not in known and name != "type":
            unknown[f"{kind}.{_shown_name(name)}"] += 1
    for name, inner_type in NESTED.items():
        inner = record.get(name) if name in known else None
        if isinstance(inner, dict):
            inner_known = _KNOWN_NESTED[inner_type]
            for extra in (k for k in inner if k not in inner_known):
                unknown[f"{kind}.{name}.{_shown_name(extra)}"] += 1
    return typed


_KNOWN = {kind: frozenset(fields_of(kind)) for kind in RECORDS}
_KNOWN_NESTED: dict[type, frozenset[str]] = {t: frozenset(get_type_hints(t)) for t in (Source, Page)}


def _shown_name(name: str) -> str:
    """A field's name as a report shows it: printable, short (a hostile name may be SQL or a screenful)."""
    shown = json.dumps(name, ensure_ascii=True)[1:-1]
    return shown if len(shown) <= 40 else shown[:39] + "…"


def _kind_words(kind: str) -> str:
    return kind.replace("_", " ") + " record"


_WANTED = {"string_type": "a string", "int_type": "an integer", "int_from_float": "an integer",
           "bool_type": "true or false", "list_type": "a list", "dict_type": "an object", "model_type": "an object",
           "typed_dict_type": "an object", "none_required": "null"}


def _error_words(error: Any) -> str:
    """pydantic's first error in the words of the rest of the product: the field, what it is, what it
    must be."""
    loc = [str(p) for p in error.get("loc", ())]
    kind, value, ctx = error.get("type", ""), error.get("input"), error.get("ctx") or {}
    if kind == "missing":
        parent = ".".join(loc[:-1])
        return f"{'field ' + parent + ': ' if parent else ''}missing field {loc[-1] if loc else '?'}"
    at = f"field {'.'.join(loc)}" if loc else "the record"
    if kind in _WANTED:
        return f"{at} is {_json_type(value)}, not {_WANTED[kind]}"
    if kind == "string_unicode":  # JSON spelled half of a UTF-16 pair alone (``\\ud83d``)
        return f"{at} holds a lone surrogate (\\ud800-\\udfff), not text"
    if kind == "literal_error":
        return f"{at} is {_value_words(value)}; it must be {ctx.get('expected', 'one of the allowed values')}"
    if kind == "string_too_long":
        return f"{at} is longer than {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return f"{at} is empty"
    if kind == "string_pattern_mismatch":
        return f"{at} is {_value_words(value)}, not in the expected form"
    if kind in ("greater_than_equal", "less_than_equal"):
        return f"{at} is {value}, out of range"
    if kind in ("too_long", "too_short"):
        return f"{at} has {len(value) if isinstance(value, list) else '?'} items, {kind.replace('_', ' ')}"
    return f"{at}: {str(error.get('msg', 'not valid'))[:120]}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _value_words(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=True)
    return shown if len(shown) <= 40 else shown[:39] + "…"


def _meaning(n: int, kind: str, r: dict[str, Any]) -> None:
    """What a schema cannot say: values the vault would refuse or read wrongly."""
    def refuse(field_name: str, problem: str) -> None:
        raise _Refused(n, f"{_kind_words(kind)}: field {field_name} {problem}")

    if kind == "memory" and not r["text"].replace("\x00", "").strip():
        refuse("text", "is blank")
    if kind == "document" and not any(c.strip() for c in r["chunks"]):
        refuse("chunks", "hold no text")
    if kind == "document" and r.get("chunk_ids") is not None and len(r["chunk_ids"]) != len(r["chunks"]):
        refuse("chunk_ids", f"name {len(r['chunk_ids'])} chunks where chunks holds {len(r['chunks'])}")
    for name in ("project", "project_id", "name" if kind == "project" else ""):
        value = r.get(name) if name else None
        if isinstance(value, str) and (not _project_or_empty(value) or not value.strip()):
            refuse(name, f"is {_value_words(value)}: a project name is one short line")
    if kind == "site_rule":
        try:
            host = normalize_host(r["host"])
        except InvalidInput as exc:
            refuse("host", f"is not a host name ({exc})")
        if host != r["host"]:
            refuse("host", f"is {_value_words(r['host'])}, not written as Vodou writes hosts ({host})")
    if kind == "setting":
        rule = setting_rule(r["key"])
        if rule is not None and not rule(r["value"]):
            refuse("value", f"is {_value_words(r['value'])}, not a value of setting {r['key']}")
    if kind == "memory" and r["valid_at"] is not None and r["valid_precision"] is None:
        refuse("valid_precision", "is null where valid_at is set")


class _Seen:
    """Ids and names across the file: none twice, and every reference to one that is there."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, Any], int] = {}
        self.memory_refs: dict[int, int] = {}  # ref → line
        self.references_to: list[tuple[int, str, int]] = []  # line, field, ref
        self.entity_names: set[str] = set()
        self.entity_uses: list[tuple[int, str]] = []
        self.sources: dict[int, tuple[int, dict[str, Any]]] = {}

    def _once(self, n: int, what: str, value: Any, words: str) -> None:
        if value is None:
            return
        key = (what, value)
        if key in self.keys:
            raise _Refused(n, f"{words} {_value_words(value)} again (first on line {self.keys[key]}); an id is "
                              "used once")
        self.keys[key] = n

    def add(self, n: int, kind: str, r: dict[str, Any]) -> None:
        if kind == "memory":
            self._once(n, "memory ref", r["ref"], "memory ref")
            self._once(n, "row id", r.get("id"), "memory id")
            self._once(n, "sync id", r.get("sync_id"), "memory sync_id")
            self.memory_refs[r["ref"]] = n
            for name in ("predecessor", "superseded_by"):
                if r[name] is not None:
                    self.references_to.append((n, name, r[name]))
            self.entity_uses += [(n, name) for name in r["entities"]]
            for name in ("source", "pinned_from"):
                self._source(n, r[name])
        elif kind == "document":
            self._once(n, "document ref", r["ref"], "document ref")
            self._once(n, "document id", r.get("id"), "document id")
            for chunk in r.get("chunk_ids") or []:
                self._once(n, "row id", chunk, "chunk id (memories and document chunks share ids)")
            self._source(n, r["source"])
        elif kind == "entity":
            self._once(n, "entity", r["name"], "entity")
            self._once(n, "entity id", r.get("id"), "entity id")
            self.entity_names.add(r["name"])
        elif kind in ("setting", "site_rule", "project", "operation", "operator_memory"):
            field_name = {"setting": "key", "site_rule": "host", "project": "name"}.get(kind, "id")
            self._once(n, kind, r[field_name], f"{_kind_words(kind)} {field_name}")
        elif kind == "source_event":
            self._once(n, kind, r.get("id"), "source event id")
        elif kind == "operator_memory_history":
            self._once(n, kind, r.get("id"), "operator memory history id")
            self._once(n, "history revision", (r["memory_id"], r["revision"]), "operator memory revision")

    def _source(self, n: int, src: dict[str, Any] | None) -> None:
        if src is None or src.get("id") is None:
            return
        first = self.sources.setdefault(src["id"], (n, src))
        if first[1] != src:
            raise _Refused(n, f"source {src['id']} differs from the source of that id on line {first[0]}")

    def references(self) -> None:
        for n, name, ref in self.references_to:
            if ref not in self.memory_refs:
                raise _Refused(n, f"memory record: field {name} names memory ref {ref}, which the file does not hold")
        for n, name in self.entity_uses:
            if name not in self.entity_names:
                raise _Refused(n, f"memory record: field entities names {_value_words(name)}, which no entity "
                                  "record of the file defines")
