"""Edits of another application's configuration file that keep every byte Vodou does not change.

Each edit is a splice: the new text is the old text with one span replaced (Vodou's entry), so
numbers (``1e400``, ``1.10``), string escapes (``\\u00e9``, a lone ``\\ud83d``), key order, spacing
and comments outside that span come back exactly as they were. Nothing of the client's is decoded
and encoded again.

- JSON: the file must be strict JSON (no comments, trailing commas, ``NaN`` or a byte order mark).
  The spans come from a walk of the two levels Vodou edits (the top object and the servers object)
  with the standard decoder, numbers kept as their text. An entry is added after the last member,
  in the indentation found there; uninstall removes exactly that member and its comma.
- TOML (Codex): ``tomlkit`` renders Vodou's table (TOML's own string escapes, ``\\U`` for characters
  outside the BMP) and both ``tomlkit`` and ``tomllib`` must parse the result. The span is Vodou's
  ``[mcp_servers.vodou]`` table from its header to its last key: blank and comment lines after it
  belong to what follows and stay. (Editing through ``tomlkit``'s document instead drops the
  comment lines that follow a removed table and leaves a blank line after install then uninstall.)

Every edit is checked before it is offered: the result parses, holds exactly Vodou's entry (or
none), and everything else parses to what it was (numbers compared as their text).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

SERVER_NAME = "vodou"
_WS = " \t\n\r"


class Unsafe(ValueError):
    """The file cannot be edited safely; ``str(self)`` says why in one line."""


# -- JSON --------------------------------------------------------------------------------------

def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _keep_text(token: str) -> Any:
    return _Number(token)


class _Number(str):
    """A JSON number as written: compared as its text, never turned into a float."""


_DECODER = json.JSONDecoder(parse_float=_keep_text, parse_int=_keep_text, parse_constant=_no_constant)


def load_json(text: str) -> dict[str, Any]:
    """The file's object, numbers as their text. ``Unsafe`` when it is not a strict JSON object."""
    try:
        data = _DECODER.decode(text)
    except ValueError as exc:
        raise Unsafe(f"it is not strict JSON (comments, trailing commas and NaN are not JSON): {exc}") from exc
    if not isinstance(data, dict):
        raise Unsafe("it does not hold a JSON object")
    return data


@dataclass(frozen=True)
class _Member:
    key: str
    key_start: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class _Object:
    open: int  # index of "{"
    close: int  # index of "}"
    members: list[_Member]

    def find(self, key: str) -> _Member | None:
        found = [m for m in self.members if m.key == key]
        if len(found) > 1:
            raise Unsafe(f"it names {key!r} {len(found)} times in one object")
        return found[0] if found else None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _object_at(text: str, start: int) -> _Object:
    """The members of the object opening at ``start`` (the text is already known to be strict JSON)."""
    i = _skip(text, start + 1)
    members: list[_Member] = []
    if text[i] == "}":
        return _Object(start, i, members)
    while True:
        key, after = _DECODER.raw_decode(text, i)
        colon = _skip(text, after)
        value = _skip(text, colon + 1)
        _, end = _DECODER.raw_decode(text, value)
        members.append(_Member(key, i, value, end))
        nxt = _skip(text, end)
        if text[nxt] == "}":
            return _Object(start, nxt, members)
        i = _skip(text, nxt + 1)  # past the comma


def _line_indent(text: str, pos: int) -> str | None:
    """The whitespace before ``pos`` on its line, or None when something else precedes it there."""
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if lead.strip(" \t") == "" else None


def _render(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON whose continuation lines start at ``indent``."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _unit(text: str, top: _Object) -> str:
    """The file's indentation step (that of its first member), two spaces when it has none."""
    if top.members:
        lead = _line_indent(text, top.members[0].key_start)
        if lead:
            return lead
    return "  "


def _member_text(key: str, value: Any, indent: str, unit: str) -> str:
    return f"{json.dumps(key, ensure_ascii=False)}: {_render(value, indent, unit)}"


def _add_member(text: str, obj: _Object, key: str, value: Any, unit: str) -> str:
    """``text`` with ``key: value`` added as the last member of ``obj``, in the layout found there."""
    if obj.members:
        end = obj.members[-1].value_end
        indent = _line_indent(text, obj.members[-1].key_start)
        if indent is None:  # a one-line object stays on one line
            return text[:end] + ", " + f"{json.dumps(key, ensure_ascii=False)}: " + json.dumps(
                value, ensure_ascii=False) + text[end:]
        return text[:end] + ",\n" + indent + _member_text(key, value, indent, unit) + text[end:]
    outer = _line_indent(text, obj.open) or ""
    inner = outer + unit
    body = "{\n" + inner + _member_text(key, value, inner, unit) + "\n" + outer + "}"
    return text[:obj.open] + body + text[obj.close + 1:]


def _remove_member(text: str, obj: _Object, member: _Member) -> str:
    """``text`` without ``member`` (and the comma that joined it to its neighbour)."""
    at = obj.members.index(member)
    if len(obj.members) == 1:
        return text[:obj.open] + "{}" + text[obj.close + 1:]
    if at > 0:
        return text[:obj.members[at - 1].value_end] + text[member.value_end:]
    return text[:member.key_start] + text[obj.members[1].key_start:]


def json_with_entry(text: str | None, key: str, value: dict[str, Any]) -> str | None:
    """The file's text with ``value`` as Vodou's server under ``key``; None when it is already there."""
    if text is None or not text.strip():
        return json.dumps({key: {SERVER_NAME: value}}, indent=2, ensure_ascii=False) + "\n"
    before = load_json(text)
    start = _skip(text, 0)
    top = _object_at(text, start)
    unit = _unit(text, top)
    servers = top.find(key)
    if servers is None:
        new = _add_member(text, top, key, {SERVER_NAME: value}, unit)
    else:
        if text[servers.value_start] != "{":
            raise Unsafe(f"its {key!r} is not a JSON object")
        obj = _object_at(text, servers.value_start)
        ours = obj.find(SERVER_NAME)
        if ours is None:
            new = _add_member(text, obj, SERVER_NAME, value, unit)
        else:
            if _DECODER.decode(text[ours.value_start:ours.value_end]) == value:
                return None
            indent = _line_indent(text, ours.key_start)
            rendered = _render(value, indent, unit) if indent is not None else json.dumps(value, ensure_ascii=False)
            new = text[:ours.value_start] + rendered + text[ours.value_end:]
    _check_json(before, new, key, value)
    return new


def json_without_entry(text: str, key: str) -> str | None:
    """The file's text without Vodou's server under ``key``; None when it is not there."""
    if not text.strip():
        return None
    before = load_json(text)
    top = _object_at(text, _skip(text, 0))
    servers = top.find(key)
    if servers is None or text[servers.value_start] != "{":
        return None
    obj = _object_at(text, servers.value_start)
    ours = obj.find(SERVER_NAME)
    if ours is None:
        return None
    new = _remove_member(text, obj, ours)
    _check_json(before, new, key, None)
    return new


def json_has_entry(text: str, key: str) -> bool:
    servers = load_json(text).get(key)
    return isinstance(servers, dict) and SERVER_NAME in servers


def _check_json(before: dict[str, Any], new_text: str, key: str, value: dict[str, Any] | None) -> None:
    after = load_json(new_text)
    servers_after = after.get(key)
    ours = servers_after.get(SERVER_NAME) if isinstance(servers_after, dict) else None
    if ours != value:
        raise Unsafe("the edit did not come out as written")
    if _without_ours(before, key) != _without_ours(after, key):
        raise Unsafe("the edit would change more than Vodou's entry")


def _without_ours(data: dict[str, Any], key: str) -> dict[str, Any]:
    """The file's object without Vodou's entry (a servers object left empty counts as none)."""
    out = dict(data)
    servers = out.get(key)
    if isinstance(servers, dict):
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        if rest:
            out[key] = rest
        else:
            out.pop(key)
    return out


# -- TOML (Codex) ------------------------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[")
_OURS = re.compile(rf"^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:{SERVER_NAME}|\"{SERVER_NAME}\"|'{SERVER_NAME}')"
                   r"[ \t]*(?:\.[^\]]*)?\][ \t]*(?:#.*)?$")
_CONTENT = re.compile(r"^[ \t]*[^ \t#\r\n]")


def load_toml(text: str) -> dict[str, Any]:
    try:
        tomlkit.parse(text)
        return tomllib.loads(text)
    except (TOMLKitError, tomllib.TOMLDecodeError) as exc:
        raise Unsafe(f"it is not valid TOML ({exc})") from exc


def toml_table(value: dict[str, Any]) -> str:
    """Vodou's ``[mcp_servers.vodou]`` table, rendered by ``tomlkit`` (``env`` inline, one table)."""
    table = tomlkit.table()
    table["command"] = value["command"]
    table["args"] = list(value["args"])
    env = tomlkit.inline_table()
    env.update(value["env"])
    table["env"] = env
    servers = tomlkit.table(is_super_table=True)
    servers[SERVER_NAME] = table
    doc = tomlkit.document()
    doc["mcp_servers"] = servers
    return tomlkit.dumps(doc)


def _our_span(text: str) -> tuple[int, int] | None:
    """Where Vodou's table (and its sub-tables) is: from its header line to the end of its last line
    that is neither blank nor a comment. None when the file has no such header."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    starts = [i for i, line in enumerate(lines) if _OURS.match(line.rstrip("\r\n"))]
    if not starts:
        return None
    first = starts[0]
    last_content = first
    for i in range(first + 1, len(lines)):
        line = lines[i].rstrip("\r\n")
        if _HEADER.match(line) and not _OURS.match(line):
            break
        if _CONTENT.match(line):
            last_content = i
    return offsets[first], offsets[last_content + 1]


def _cut(text: str, start: int, end: int) -> str:
    """``text`` without ``[start, end)``, and without the blank line the cut would double."""
    before, after = text[:start], text[end:]
    if after == "":
        if before.endswith("\n\n"):
            before = before[:-1]
    elif after.startswith("\n") and (before.endswith("\n\n") or before == ""):
        after = after[1:]
    return before + after


def toml_with_entry(text: str | None, value: dict[str, Any]) -> str | None:
    text = text or ""
    before = load_toml(text)
    if before.get("mcp_servers", {}).get(SERVER_NAME) == value:
        return None
    table = toml_table(value)
    span = _our_span(text)
    if span is not None:
        new = text[:span[0]] + table + text[span[1]:]
    elif not text.strip():
        new = table
    else:
        new = text + ("\n" if text.endswith("\n") else "\n\n") + table
    _check_toml(before, new, value)
    return new


def toml_without_entry(text: str) -> str | None:
    before = load_toml(text)
    if SERVER_NAME not in before.get("mcp_servers", {}):
        return None
    span = _our_span(text)
    if span is None:
        raise Unsafe(f"its {SERVER_NAME} server is not a [mcp_servers.{SERVER_NAME}] table")
    new = _cut(text, *span)
    _check_toml(before, new, None)
    return new


def toml_has_entry(text: str) -> bool:
    servers = load_toml(text).get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def _check_toml(original: dict[str, Any], new_text: str, value: dict[str, Any] | None) -> None:
    new = load_toml(new_text)

    def theirs(data: dict[str, Any]) -> dict[str, Any]:
        servers = {k: v for k, v in data.get("mcp_servers", {}).items() if k != SERVER_NAME}
        return {**data, "mcp_servers": servers}

    if theirs(original) != theirs(new) or new.get("mcp_servers", {}).get(SERVER_NAME) != value:
        raise Unsafe("it defines mcp_servers in a way Vodou cannot edit safely")
