"""Reading request bodies and fields: every malformed input becomes a clear 400."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from vodou_desktop.errors import InvalidInput

MAX_FIELD_CHARS = 2_000_000


async def read_body(request: web.Request) -> dict[str, Any]:
    """The JSON object of a request (the size limit was checked before, and aiohttp enforces it)."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput("the body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object")
    return data


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
    return value


def required(body: dict[str, Any], name: str, limit: int = MAX_FIELD_CHARS) -> str:
    value = text_field(body, name, required=True, limit=limit)
    assert value is not None
    return value


def int_field(body: dict[str, Any], name: str) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInput(f"'{name}' must be a whole number")
    try:
        return int(value)
    except ValueError as exc:
        raise InvalidInput(f"'{name}' must be a whole number") from exc


def query_param(request: web.Request, name: str) -> str:
    value = request.rel_url.query.get(name, "").strip()
    if not value:
        raise InvalidInput(f"the query parameter '{name}' is required")
    return value
