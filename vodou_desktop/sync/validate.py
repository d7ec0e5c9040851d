"""Every record of a sealed file is checked before anything of it is applied (SYNC-2, SYNC-6).

A sealed file proves only who wrote it: a device of this vault, with the key. What it says is checked
here, with the rules the CLI and the app apply to what a person types — the fact writer's text and
project rules, the site modes, the operator-memory rules, the provenance tiers and kinds — plus the
shape of every value, the stamp and the key of every record. A record that fails refuses its whole
file (``BadRecord``: one line); nothing of that file is applied, and the other devices' files still
are. A record of an entity or field this version does not know is not an error: a newer Vodou wrote it
(``split`` gives it back apart, to wait unapplied until this version knows it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.opm import CATEGORIES, clean_content, clean_source_ref
from vodou_desktop.governance.sitemodes import check_mode
from vodou_desktop.pages import site_host
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import retraction as r
from vodou_desktop.vault.clock import parse_iso
from vodou_desktop.vault.facts import MAX_DOCUMENT_CHARS, MAX_FACT_CHARS, clean_project, clean_text
from vodou_desktop.vault.hlc import valid as valid_stamp
from vodou_desktop.vault.sources import KINDS as SOURCE_KINDS
from vodou_desktop.vault.sources import TIERS
from vodou_desktop.vault.sync_store import ENTITIES, FIELDS, OPM_BODY
from vodou_desktop.words import LIST_KINDS

PAYLOAD_VERSION = 1  # what this version writes and reads; a later one waits for an update
MAX_RECORDS = 200_000  # a file holds far fewer (the writer cuts files by size)
SYNC_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)
OP_ID = re.compile(r"op-[0-9a-f]{12}", re.ASCII)
OPM_ID = re.compile(r"opm-[0-9a-f]{6,32}", re.ASCII)
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}", re.ASCII)  # an entity or field name, known or from a newer version
# every kind this version writes: the undoable ones, those that hide rows (an undone move or import),
# erases, and the journal's own (a move, a pin, an import: their items stay on the computer that made them)
KNOWN_OPS = frozenset((*r.UNDOABLE_KINDS, *r.FORGET_KINDS, *r.ERASE_KINDS, js.MOVE_FACTS_KIND, js.PIN_FACTS_KIND,
                       js.IMPORT_KIND))
PAGE_SET_BY = (None, "manual", "token", "source")
MAX_LINE = 8_192  # a title, a URL, a tool or batch name
MAX_COVERS = 10_000


class BadRecord(Exception):
    """A record this version knows and that breaks its rules: the reason, one line."""


def split(payload: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The records of an authentic file, checked: those to apply, and those of an entity or field this
    version does not know (to keep, waiting). ``BadRecord`` for the first that breaks a rule."""
    records = payload.get("records")
    if not isinstance(records, list):
        raise BadRecord("holds no list of changes")
    if len(records) > MAX_RECORDS:
        raise BadRecord(f"holds {len(records)} changes (at most {MAX_RECORDS})")
    known: list[dict[str, Any]] = []
    future: list[dict[str, Any]] = []
    for n, rec in enumerate(records, 1):
        try:
            (known if check(rec) else future).append(rec)
        except (BadRecord, InvalidInput) as exc:
            raise BadRecord(f"change {n} of {len(records)} {_what(rec)}: {exc}") from None
    return known, future


def _what(rec: object) -> str:
    if isinstance(rec, dict) and isinstance(rec.get("e"), str) and isinstance(rec.get("f"), str):
        return f"({rec['e'][:20]}.{rec['f'][:20]})"
    return "(not a change record)"


def check(rec: object) -> bool:
    """True: a record this version applies; False: one of an entity or field it does not know yet."""
    if not isinstance(rec, dict) or set(rec) != {"e", "k", "f", "h", "v"}:
        raise BadRecord("is not a change record (entity, key, field, stamp, value)")
    entity, key, fld, stamp = rec["e"], rec["k"], rec["f"], rec["h"]
    if not isinstance(entity, str) or not NAME.fullmatch(entity):
        raise BadRecord("names no entity")
    if not isinstance(fld, str) or not NAME.fullmatch(fld):
        raise BadRecord("names no field")
    if not valid_stamp(stamp):
        raise BadRecord("has no valid clock stamp")
    if not isinstance(key, str) or not 0 < len(key) <= 300 or any(ord(c) < 32 for c in key):
        raise BadRecord("has no valid key")
    if entity not in ENTITIES or fld not in FIELDS[entity]:
        return False  # from a newer version: waits
    _KEYS[entity](key)
    if fld == "erase":
        if rec["v"] is not None:
            raise BadRecord("an erase carries no value")
        return True
    if entity == "op" and fld == "create":
        return _op_create(rec["v"])
    _VALUES[(entity, fld)](rec["v"])
    return True


# -- keys ------------------------------------------------------------------------------------------

def _sync_id(key: Any, what: str = "global id") -> None:
    if not isinstance(key, str) or not SYNC_ID.fullmatch(key):
        raise BadRecord(f"has no valid {what}")


def _op_id(key: Any) -> None:
    if not isinstance(key, str) or not OP_ID.fullmatch(key):
        raise BadRecord("names no valid operation")


def _host(key: str) -> None:
    try:
        if site_host(key) != key:
            raise BadRecord(f"names a host that is not written as one ({key[:60]!r})")
    except InvalidInput as exc:
        raise BadRecord(f"names no valid host ({exc})") from None


def _opm_id(key: str) -> None:
    if not OPM_ID.fullmatch(key):
        raise BadRecord("names no valid operator memory")


_KEYS: dict[str, Callable[[str], None]] = {"fact": _sync_id, "doc": _sync_id, "op": _op_id, "site": _host,
                                           "opm": _opm_id}


# -- values ----------------------------------------------------------------------------------------

def _dict(v: Any, keys: set[str], what: str, optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(v, dict) or not keys <= set(v) <= keys | optional:
        raise BadRecord(f"{what} is not of the form {{{', '.join(sorted(keys))}}}")
    return v


def _time(v: Any, what: str, *, optional: bool = False) -> None:
    if v is None and optional:
        return
    if not isinstance(v, str) or len(v) > 40:
        raise BadRecord(f"{what} is not a time")
    try:
        parse_iso(v)
    except ValueError:
        raise BadRecord(f"{what} is not a time ({v[:40]!r})") from None


def _line(v: Any, what: str, *, optional: bool = True, limit: int = MAX_LINE) -> None:
    if v is None and optional:
        return
    if not isinstance(v, str) or len(v) > limit:
        raise BadRecord(f"{what} is not a line of at most {limit} characters")


def _int(v: Any, what: str, low: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise BadRecord(f"{what} is not a whole number of at least {low}")
    return v


def _text(v: Any, limit: int) -> None:
    if not isinstance(v, str):
        raise BadRecord("its text is not text")
    if len(v) > limit:  # the fact writer's own rule, said the same way
        raise BadRecord(f"its text is too long ({len(v)} characters; the limit is {limit})")
    clean_text(v, limit)


def _source(v: Any) -> None:
    src = _dict(v, {"kind", "tier", "url", "title", "tool", "batch_id", "created_at"}, "its source")
    if src["kind"] not in SOURCE_KINDS:
        raise BadRecord(f"its source kind {str(src['kind'])[:30]!r} is not one of Vodou's")
    if src["tier"] not in TIERS:
        raise BadRecord(f"its tier {str(src['tier'])[:30]!r} is not one of {', '.join(TIERS)}")
    for name in ("url", "title", "tool", "batch_id"):
        _line(src[name], f"its source {name}")
    _time(src["created_at"], "its source time")


def _page(v: Any) -> None:
    page = _dict(v, {"url", "key", "host", "set_by"}, "its page")
    if page["set_by"] not in PAGE_SET_BY:
        raise BadRecord("its page link was set by nobody Vodou knows")
    for name in ("url", "key", "host"):
        _line(page[name], f"its page {name}")


def _project(v: Any) -> None:
    if v is not None and (not isinstance(v, str) or clean_project(v) != v):
        raise BadRecord("its project is not a short single line")


def _fact_create(v: Any) -> None:
    d = _dict(v, {"text", "kind", "project", "scope", "created_at", "valid_at", "valid_precision", "revision",
                  "predecessor", "source", "page"}, "a new memory")
    _text(d["text"], MAX_FACT_CHARS)
    if d["kind"] not in LIST_KINDS:
        raise BadRecord(f"its kind {str(d['kind'])[:30]!r} is not one of {', '.join(LIST_KINDS)}")
    _project(d["project"])
    _line(d["scope"], "its scope", limit=200)
    _time(d["created_at"], "its time")
    _time(d["valid_at"], "the time it refers to", optional=True)
    if d["valid_precision"] not in (None, "instant", "day"):
        raise BadRecord("its time precision is not instant or day")
    _int(d["revision"], "its revision", 1)
    if d["predecessor"] is not None:
        _sync_id(d["predecessor"], "earlier revision")
    _source(d["source"])
    _page(d["page"])


def _covers(v: Any) -> None:
    d = _dict(v, {"at", "by"}, "a forget", optional=frozenset({"covers"}))
    _time(d["at"], "its forget time", optional=True)
    if d["by"] is not None:
        _op_id(d["by"])
    covers = d.get("covers", [])
    if not isinstance(covers, list) or len(covers) > MAX_COVERS:
        raise BadRecord("its forgets are not a list")
    for cover in covers:
        if not isinstance(cover, list) or len(cover) != 2:
            raise BadRecord("a forget of it is not [operation, time]")
        _op_id(cover[0])
        _time(cover[1], "a forget's time")


def _supersede(v: Any) -> None:
    d = _dict(v, {"by", "at"}, "a replacement")
    if d["by"] is not None:
        _sync_id(d["by"], "later revision")
    _time(d["at"], "its replacement time", optional=True)


def _pin(v: Any) -> None:
    d = _dict(v, {"pinned", "at"}, "a pin")
    if not isinstance(d["pinned"], bool):
        raise BadRecord("its pin is not yes or no")
    _time(d["at"], "its pin time", optional=True)


def _doc_create(v: Any) -> None:
    d = _dict(v, {"title", "project", "created_at", "source", "chunks"}, "a new Library document")
    _line(d["title"], "its title")
    _project(d["project"])
    _time(d["created_at"], "its time")
    _source(d["source"])
    chunks = d["chunks"]
    if not isinstance(chunks, list) or not chunks:
        raise BadRecord("its text is not a list of parts")
    total = 0
    for chunk in chunks:
        _text(chunk, MAX_DOCUMENT_CHARS)
        total += len(chunk)
    if total > MAX_DOCUMENT_CHARS:
        raise BadRecord(f"its text is too long ({total} characters; the limit is {MAX_DOCUMENT_CHARS})")


def _op_create(v: Any) -> bool:
    d = _dict(v, {"kind", "target", "detail", "created_at"}, "an operation")
    if not isinstance(d["kind"], str) or not NAME.fullmatch(d["kind"]):
        raise BadRecord("its operation kind is not a name")
    if d["kind"] not in KNOWN_OPS:
        return False  # an operation a newer version knows: waits
    _time(d["created_at"], "its time")
    if d["detail"] is not None:
        if not isinstance(d["detail"], str) or len(d["detail"]) > 100_000:
            raise BadRecord("its detail is not text")
        try:
            detail = json.loads(d["detail"])
        except ValueError:
            raise BadRecord("its detail is not JSON") from None
        if not isinstance(detail, dict):
            raise BadRecord("its detail is not a JSON object")
        if d["kind"] == r.CORRECT_FACT_KIND and detail.get("replaces") is not None:
            _sync_id(detail["replaces"], "corrected memory")
    if d["kind"] in (r.FORGET_FACT_KIND, r.CORRECT_FACT_KIND, r.FORGET_DOCUMENT_KIND):
        if d["target"] is not None:
            _sync_id(d["target"], "memory or document")
    else:
        _line(d["target"], "its target")
    return True


def _undo(v: Any) -> None:
    _time(v, "its undo time", optional=True)


def _target(v: Any) -> None:
    _line(v, "its target")  # None: the memory an operation named was erased


def _site_mode(v: Any) -> None:
    if v is None:  # a rule removed
        return
    d = _dict(v, {"mode", "created_at", "updated_at"}, "a site rule")
    if not isinstance(d["mode"], str):
        raise BadRecord("its site mode is not a word")
    try:
        check_mode(d["mode"])
    except InvalidInput as exc:
        raise BadRecord(str(exc)) from None
    _time(d["created_at"], "its time")
    _time(d["updated_at"], "its change time")


def _opm_body(v: Any) -> None:
    d = _dict(v, set(OPM_BODY) | {"history"}, "an operator memory")
    _opm_id(str(d["id"]))
    if d["category"] not in CATEGORIES:
        raise BadRecord(f"its category {str(d['category'])[:30]!r} is not one of {', '.join(CATEGORIES)}")
    clean_content(d["content"])
    _line(d["canonical_key"], "its dedupe key", optional=False, limit=10_000)
    _int(d["salience"], "its salience")
    _int(d["revision"], "its revision", 1)
    if d["predecessor"] is not None:
        _int(d["predecessor"], "its earlier revision")
    clean_source_ref(d["source_ref"])
    clean_source_ref(d["original_source_ref"])
    for name in ("reauthorized_at", "expires_at"):
        _time(d[name], f"its {name}", optional=True)
    _time(d["created_at"], "its time")
    _time(d["updated_at"], "its change time")
    history = d["history"]
    if not isinstance(history, list) or len(history) > 10_000:
        raise BadRecord("its history is not a list")
    for item in history:
        if not isinstance(item, list) or len(item) != 6:
            raise BadRecord("a revision in its history is not of the form Vodou writes")
        category, revision, content, source_ref, successor, superseded_at = item
        if category not in CATEGORIES:
            raise BadRecord("a revision in its history has no known category")
        _int(revision, "a revision's number", 1)
        clean_content(content)
        clean_source_ref(source_ref)
        _int(successor, "a revision's successor", 1)
        _time(superseded_at, "a revision's time")


_VALUES: dict[tuple[str, str], Callable[[Any], None]] = {
    ("fact", "create"): _fact_create, ("fact", "forget"): _covers, ("fact", "supersede"): _supersede,
    ("fact", "pin"): _pin, ("fact", "page"): _page, ("doc", "create"): _doc_create, ("doc", "forget"): _covers,
    ("op", "undo"): _undo, ("op", "target"): _target,
    ("site", "mode"): _site_mode, ("opm", "body"): _opm_body,
}
