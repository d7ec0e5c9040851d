"""The OpenAPI 3 description of the bridge, written by hand next to ``docs/bridge-protocol.md``.

A test compares it with the router both ways: no route without a description, no description
without a route.
"""

from __future__ import annotations

from typing import Any

from vodou_desktop import APP_NAME
from vodou_desktop.bridge import API_HEADER, API_VERSION, CLIENT_HEADER

STR, INT, OBJ = {"type": "string"}, {"type": "integer"}, {"type": "object"}
COMMON_ERRORS = {"401": "missing or invalid token", "403": "bad Host, Origin, client header or site mode",
                 "412": "another API major version", "429": "too many bad tokens"}
WRITE_ERRORS = {"400": "bad JSON, nesting, text, number, URL or field", "413": "body too large",
                "415": "not application/json", "429": "too many bad tokens, or the token's write budget is spent"}

# (method, path, summary, body properties, required body fields, success status, extra statuses)
ROUTE_DOCS: list[tuple[str, str, str, dict[str, Any] | None, list[str], str, dict[str, str]]] = [
    ("GET", "/api/ping", "App identity and API version (no token needed)", None, [], "200", {}),
    ("GET", "/api/openapi.json", "This document", None, [], "200", {}),
    ("POST", "/api/pair/start", "Ask the app to show a one-time pairing code", {"extensionId": STR}, [], "202",
     {"429": "too many pairing starts"}),
    ("POST", "/api/pair/complete", "Exchange the code for a token", {"code": STR, "extensionId": STR}, ["code"], "200",
     {"401": "wrong or expired code"}),
    ("DELETE", "/api/pair", "Revoke the caller's pairing", None, [], "200", {}),
    ("GET", "/api/page-match/site-mode", "Mode of a host or URL (query: host)", None, [], "200", {}),
    ("PUT", "/api/page-match/site-mode", "Set a user rule for a host", {"host": STR, "mode": STR}, ["host", "mode"],
     "200", {}),
    ("GET", "/api/page-match/site-modes", "Global default, pause and every rule", None, [], "200", {}),
    ("POST", "/api/page-match/match", "Memory from this page (every project) and related by meaning (project)",
     {"url": STR, "title": STR, "pageContext": STR, "project": STR}, ["url"], "200", {}),
    ("GET", "/api/page-match/probe", "Toolbar state for a page (query: url)", None, [], "200", {}),
    ("POST", "/api/page-match/suggest", "Typing suggestions", {"url": STR, "prefix": STR, "project": STR}, ["url"],
     "200", {}),
    ("POST", "/api/notes", "Remember a note typed on this page",
     {"url": STR, "title": STR, "text": STR, "project": STR}, ["url", "text"], "201", {}),
    ("POST", "/api/links", "Remember this page as a link", {"url": STR, "title": STR, "text": STR, "project": STR},
     ["url"], "201", {}),
    ("POST", "/api/selection", "Send the selection to memory", {"url": STR, "title": STR, "text": STR, "project": STR},
     ["url", "title", "text"], "201", {}),
    ("POST", "/api/library", "Add this page to the Library",
     {"url": STR, "title": STR, "text": STR, "html": STR, "project": STR}, ["url", "title"], "201", {}),
    ("POST", "/api/page-link", "Link a memory to this page (manual)", {"id": INT, "url": STR}, ["id", "url"], "200",
     {"404": "unknown memory"}),
    ("POST", "/api/active-page", "Report the active tab (or only the host of an off site)",
     {"url": STR, "title": STR, "offHost": STR}, [], "200", {}),
    ("POST", "/api/forget/dry-run", "Count what forgetting a host hides; get a confirm token", {"host": STR},
     ["host"], "200", {}),
    ("POST", "/api/forget/confirm", "Forget the host planned under the token (8 s)", {"token": STR}, ["token"],
     "200", {"409": "expired or used token"}),
    ("POST", "/api/forget/undo", "Undo a forget operation", {"op": STR}, ["op"], "200",
     {"404": "unknown operation", "409": "already undone"}),
    ("POST", "/api/turns", "A page-lane turn: content is stored, pageContext is not",
     {"content": STR, "pageContext": STR, "url": STR, "title": STR, "project": STR}, ["content"], "201", {}),
    ("GET", "/api/approvals", "Pending approvals (query status=all for every one)", None, [], "200", {}),
    ("POST", "/api/approvals/{id}", "Approve or deny a parked action", {"decision": STR}, ["decision"], "200",
     {"404": "unknown approval", "409": "already decided"}),
]

ERROR_BODY = {"type": "object", "properties": {"code": STR, "message": STR}, "required": ["code", "message"]}
ERROR_SCHEMA = {"type": "object", "properties": {"error": ERROR_BODY}}


def _operation(method: str, path: str, summary: str, props: dict[str, Any] | None, required: list[str],
               ok: str, extra: dict[str, str]) -> dict[str, Any]:
    responses: dict[str, Any] = {ok: {"description": "success", "content": {"application/json": {"schema": OBJ}}}}
    errors = {**COMMON_ERRORS, **(WRITE_ERRORS if method != "GET" else {"400": "bad query"}), **extra}
    for status, text in sorted(errors.items()):
        responses[status] = {"description": text, "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    op: dict[str, Any] = {"summary": summary, "operationId": f"{method.lower()}{path.replace('/', '_')}",
                          "responses": responses}
    if path not in ("/api/ping", "/api/pair/start", "/api/pair/complete"):
        op["security"] = [{"bearer": []}]
    else:
        op["security"] = []
    if props is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "properties": props, "required": required}}}}
    if "{id}" in path:
        op["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": INT}]
    return op


def document() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path, summary, props, required, ok, extra in ROUTE_DOCS:
        paths.setdefault(path, {})[method.lower()] = _operation(method, path, summary, props, required, ok, extra)
    return {
        "openapi": "3.0.3",
        "info": {"title": f"{APP_NAME} bridge", "version": API_VERSION,
                 "description": f"Localhost API for the paired extension. Send {API_HEADER}: {API_VERSION}; "
                                f"writes need {CLIENT_HEADER} and application/json. See docs/bridge-protocol.md."},
        "servers": [{"url": "http://127.0.0.1:47653"}],
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
