"""JSON in, JSON out, and the ONE mapping from errors to statuses and codes.

Handlers raise ``KnownError`` subclasses (each carries ``.status``) or ``Refusal`` (status and a
specific code); ``error_for`` turns any of them into ``{"error": {"code", "message"}}``. Nothing
else ever reaches the client: no traceback, no file path.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from vodou_desktop.errors import KnownError

CODES = {
    400: "bad_request", 401: "unauthorized", 403: "policy_refused", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 412: "api_version_mismatch", 413: "payload_too_large",
    415: "unsupported_media_type", 429: "too_many_requests", 503: "vault_unavailable",
}
HTTP_MESSAGES = {
    404: "no such route", 405: "this route does not accept that method",
    413: "the request body is too large", 400: "the request could not be understood",
}


class Refusal(KnownError):
    """A refusal with its own error code (bad host, bad origin, token in the query …)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers or {}


def json_response(data: Any, status: int = 200) -> web.Response:
    body = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return web.Response(text=body, status=status, content_type="application/json")


def error_response(status: int, code: str, message: str) -> web.Response:
    return json_response({"error": {"code": code, "message": message}}, status)


def error_for(exc: BaseException) -> web.Response:
    """The response for an exception a handler or middleware raised on purpose."""
    if isinstance(exc, Refusal):
        resp = error_response(exc.status, exc.code, str(exc))
        resp.headers.update(exc.headers)
        return resp
    if isinstance(exc, KnownError):
        status = int(getattr(exc, "status", 400))
        return error_response(status, CODES.get(status, "error"), _one_line(str(exc)))
    if isinstance(exc, web.HTTPException):
        status = exc.status
        return error_response(status, CODES.get(status, "error"), HTTP_MESSAGES.get(status, exc.reason))
    return error_response(500, "internal_error", "Vodou hit an internal error; it is logged on this machine")


_PATH = re.compile(r"(?<![:\w/.])/(?:[\w.\-]+/)+[\w.\-]*")


def _one_line(message: str) -> str:
    """One short line with any file-system path replaced: responses never show where files are."""
    return _PATH.sub("<path>", " ".join(message.split()))[:500]
