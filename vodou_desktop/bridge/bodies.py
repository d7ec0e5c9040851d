"""Reading request bodies, fields, query strings and path ids: every malformed input becomes a clear 400.

One parser and one validator for every route, so that no handler can forget a check:
- the body is a JSON object, nested at most ``MAX_DEPTH`` levels (deeper nesting, even past the
  JSON decoder's own recursion limit, is a 400, never a ``RecursionError``);
- no string anywhere (keys included) holds a lone UTF-16 surrogate (``"\\ud800"`` cannot be
  stored or encoded);
- every number is a finite float or an integer within SQLite's 64-bit range (``10**30`` is a
  400, never an ``OverflowError`` at the database);
- query parameters and path ids get the same string and integer checks.
A client that goes away mid-body is ``ClientGone``: nobody is left to answer, and it is not an
internal error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from vodou_desktop.errors import InvalidInput

MAX_FIELD_CHARS = 2_000_000
MAX_DEPTH = 32
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


class ClientGone(ConnectionError):
    """The client disconnected before its body arrived (logged briefly, not as an internal error)."""


def _reject_constant(name: str) -> Any:
    raise InvalidInput(f"the body is not valid JSON ({name} is not a number)")


async def read_body(request: web.Request) -> dict[str, Any]:
    """The JSON object of a request (the size limit was checked before, and aiohttp enforces it)."""
    try:
        raw = await request.read()
    except ConnectionError as exc:
        raise ClientGone("the client disconnected while sending its body") from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise InvalidInput(f"the body is nested too deeply (the limit is {MAX_DEPTH} levels)") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput("the body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object")
    check_value(data)
    return data


def check_value(value: Any) -> None:
    """Depth, surrogates and number range of a decoded JSON value (iterative: no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise InvalidInput(f"the body is nested too deeply (the limit is {MAX_DEPTH} levels)")
            if isinstance(item, dict):
                for key, child in item.items():
                    check_text(key, "a field name")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            check_text(item, "a text field")
        elif isinstance(item, int) and not isinstance(item, bool):
            check_int(item, "a number")


def check_text(value: str, what: str) -> str:
    if _SURROGATE.search(value):
        raise InvalidInput(f"{what} holds a lone UTF-16 surrogate, which is not text")
    return value


def check_int(value: int, what: str) -> int:
    if not MIN_INT <= value <= MAX_INT:
        raise InvalidInput(f"{what} is out of range (whole numbers up to {MAX_INT})")
    return value


def text_field(body: dict[str, Any], name: str, *, required: bool = True, limit: int = MAX_FIELD_CHARS) -> str | None:
    value = body.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidInput(f"'{name}' is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"'{name}' must be a string")
    if len(value) > limit:
        raise InvalidInput(f"'{name}' is too long (the limit is {limit} characters)")
    return check_text(value, f"'{name}'")


def required(body: dict[str, Any], name: str, limit: int = MAX_FIELD_CHARS) -> str:
    value = text_field(body, name, required=True, limit=limit)
    assert value is not None
    return value


def parse_int(value: Any, what: str) -> int:
    """A whole number (JSON integer or digits) within SQLite's 64-bit range."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInput(f"{what} must be a whole number")
    try:
        number = int(value)
    except ValueError as exc:
        raise InvalidInput(f"{what} must be a whole number") from exc
    return check_int(number, what)


def int_field(body: dict[str, Any], name: str) -> int:
    return parse_int(body.get(name), f"'{name}'")


def path_id(request: web.Request, name: str = "id") -> int:
    return parse_int(request.match_info.get(name, ""), f"the {name} in the path")


def query_param(request: web.Request, name: str) -> str:
    value = request.rel_url.query.get(name, "").strip()
    if not value:
        raise InvalidInput(f"the query parameter '{name}' is required")
    return check_text(value, f"the query parameter '{name}'")
