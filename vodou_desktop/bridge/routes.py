"""The bridge's routes. Handlers are thin: parse the JSON, call one service, shape the answer.

Every service that takes a page URL is a ``@page_operation`` (site mode first, GOV-4); blocking
vault work runs in a worker thread so the app's loop (and the Qt GUI on it) never waits.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from vodou_desktop import APP_ID, APP_NAME, __version__
from vodou_desktop.bridge import API_VERSION, events, openapi
from vodou_desktop.bridge.active_page import ActivePage
from vodou_desktop.bridge.bodies import int_field, path_id, query_param, read_body, required, text_field
from vodou_desktop.bridge.context import context_of
from vodou_desktop.bridge.responses import Refusal, json_response
from vodou_desktop.bridge.security import EXTENSION_ID, bearer_token
from vodou_desktop.bridge.services import Services
from vodou_desktop.bridge.turns import TurnRequest
from vodou_desktop.errors import InvalidInput, PolicyRefused
from vodou_desktop.vault.secret_filter import removed_note

URL_LIMIT = 8_192
blocking = asyncio.to_thread


def _services(request: web.Request) -> Services:
    return context_of(request).services  # type: ignore[no-any-return]


# -- meta ---------------------------------------------------------------------------------------
async def ping(request: web.Request) -> web.Response:
    token = bearer_token(request)
    paired = bool(token and context_of(request).tokens.match(token))
    return json_response({"app": APP_ID, "name": APP_NAME, "version": __version__, "api": API_VERSION,
                          "paired": paired})


async def openapi_document(request: web.Request) -> web.Response:
    return json_response(openapi.document())


# -- pairing ------------------------------------------------------------------------------------
def _extension_origin(request: web.Request, body: dict[str, Any]) -> str:
    extension_id = request.get(EXTENSION_ID)
    if extension_id is None:
        raise Refusal(403, "bad_origin", "pairing is only possible from a browser extension")
    claimed = body.get("extensionId")
    if claimed is not None and claimed != extension_id:
        raise InvalidInput("extensionId does not match the extension's origin")
    return str(extension_id)


async def pair_start(request: web.Request) -> web.Response:
    extension_id = _extension_origin(request, await read_body(request))
    pending = await blocking(context_of(request).pairing.start, extension_id)
    return json_response({"expiresIn": int(pending.expires_at - context_of(request).pairing.clock()),
                          "codeLength": len(pending.code)}, 202)


async def pair_complete(request: web.Request) -> web.Response:
    body = await read_body(request)
    extension_id = _extension_origin(request, body)
    token = await blocking(context_of(request).pairing.complete, extension_id, body.get("code"),
                           text_field(body, "browser", required=False, limit=200))
    return json_response({"token": token, "extensionId": extension_id})


async def pair_delete(request: web.Request) -> web.Response:
    extension_id = request[EXTENSION_ID]
    await blocking(context_of(request).tokens.revoke, extension_id)
    return json_response({"revoked": extension_id})


# -- site modes ---------------------------------------------------------------------------------
async def site_mode_get(request: web.Request) -> web.Response:
    host = query_param(request, "host")
    resolution = await blocking(_services(request).sites.resolve, host)
    if request.rel_url.query.get("active") == "1" and resolution.mode == "off":
        # The active tab is on an off site: the tray dims like the toolbar, from this same question.
        # Nothing more about the page is sent or read (no URL, no title, no vault read).
        context_of(request).hub.emit(events.ACTIVE_PAGE, {"accepted": False, "url": None, "pageKey": None,
                                                          "title": None, **resolution.as_json()})
    return json_response(resolution.as_json())


async def site_mode_put(request: web.Request) -> web.Response:
    body = await read_body(request)
    host, mode = required(body, "host", URL_LIMIT), required(body, "mode", 20)
    return json_response((await blocking(_services(request).sites.set_rule, host, mode)).as_json())


async def site_modes(request: web.Request) -> web.Response:
    sites = _services(request).sites

    def read() -> dict[str, Any]:
        return {"globalDefault": sites.global_default, "paused": sites.paused, "rules": sites.rules()}

    return json_response(await blocking(read))


# -- page memory --------------------------------------------------------------------------------
async def match(request: web.Request) -> web.Response:
    body = await read_body(request)
    result = await blocking(_services(request).pages.match, required(body, "url", URL_LIMIT),
                            text_field(body, "title", required=False),
                            text_field(body, "pageContext", required=False),
                            text_field(body, "project", required=False))
    return json_response(result)


async def probe(request: web.Request) -> web.Response:
    url = query_param(request, "url")
    return json_response(await blocking(_services(request).pages.probe, url))


async def suggest(request: web.Request) -> web.Response:
    body = await read_body(request)
    prefix = text_field(body, "prefix", required=False, limit=2_000) or ""
    found = await blocking(_services(request).pages.suggest, required(body, "url", URL_LIMIT), prefix,
                           text_field(body, "project", required=False))
    return json_response({"suggestions": found})


def _saved(item_id: int, name: str, item: dict[str, Any]) -> dict[str, Any]:
    """A write's answer: the item, and the kinds of the secrets removed from it before it was stored."""
    removed = item.pop("secrets_removed", [])
    return {"id": item_id, name: item, "secrets_removed": removed, "note": removed_note(removed)}


async def notes(request: web.Request) -> web.Response:
    body = await read_body(request)
    fact = await blocking(_services(request).pages.note, required(body, "url", URL_LIMIT),
                          text_field(body, "title", required=False), required(body, "text"),
                          text_field(body, "project", required=False))
    return json_response(_saved(fact.id, "fact", fact.as_json()), 201)


async def links(request: web.Request) -> web.Response:
    body = await read_body(request)
    fact = await blocking(_services(request).pages.link, required(body, "url", URL_LIMIT),
                          text_field(body, "title", required=False), text_field(body, "text", required=False),
                          text_field(body, "project", required=False))
    return json_response(_saved(fact.id, "fact", fact.as_json()), 201)


async def selection(request: web.Request) -> web.Response:
    body = await read_body(request)
    fact = await blocking(_services(request).pages.selection, required(body, "url", URL_LIMIT),
                          required(body, "title"), required(body, "text"),
                          text_field(body, "project", required=False))
    return json_response(_saved(fact.id, "fact", fact.as_json()), 201)


async def library(request: web.Request) -> web.Response:
    body = await read_body(request)
    text, html = text_field(body, "text", required=False), text_field(body, "html", required=False)
    if text is None and html is None:
        raise InvalidInput("'text' or 'html' is required")
    doc = await blocking(_services(request).pages.library, required(body, "url", URL_LIMIT),
                         required(body, "title"), text, html, text_field(body, "project", required=False))
    return json_response(_saved(doc.id, "document", doc.as_json()), 201)


async def page_link(request: web.Request) -> web.Response:
    body = await read_body(request)
    fact = await blocking(_services(request).pages.page_link, int_field(body, "id"), required(body, "url", URL_LIMIT))
    return json_response({"id": fact.id, "fact": fact.as_json()})


async def active_page(request: web.Request) -> web.Response:
    body = await read_body(request)
    report = await blocking(ActivePage(_services(request).sites).report, required(body, "url", URL_LIMIT),
                            text_field(body, "title", required=False))
    if not report["accepted"]:
        raise PolicyRefused(f"{report['host']} is off ({report['reason']}): the extension must not report it")
    context_of(request).hub.emit(events.ACTIVE_PAGE, report)
    return json_response(report)


# -- forget -------------------------------------------------------------------------------------
async def forget_dry_run(request: web.Request) -> web.Response:
    body = await read_body(request)
    return json_response(await blocking(_services(request).forgetting.plan, required(body, "host", URL_LIMIT)))


async def forget_confirm(request: web.Request) -> web.Response:
    body = await read_body(request)
    return json_response(await blocking(_services(request).forgetting.confirm, required(body, "token", 200)))


async def forget_undo(request: web.Request) -> web.Response:
    body = await read_body(request)
    return json_response(await blocking(_services(request).forgetting.undo, required(body, "op", 200)))


# -- turns and approvals ------------------------------------------------------------------------
async def turns(request: web.Request) -> web.Response:
    body = await read_body(request)
    req = TurnRequest(content=required(body, "content"), page_context=text_field(body, "pageContext", required=False),
                      page=text_field(body, "url", required=False, limit=URL_LIMIT),
                      title=text_field(body, "title", required=False),
                      project=text_field(body, "project", required=False))
    return json_response(await _services(request).turns.run(req), 201)


async def approvals_list(request: web.Request) -> web.Response:
    pending_only = request.rel_url.query.get("status", "pending") != "all"
    return json_response({"approvals": await blocking(_services(request).gate.approvals, pending_only)})


async def approvals_decide(request: web.Request) -> web.Response:
    approval_id = path_id(request)
    decision = required(await read_body(request), "decision", 20)
    return json_response(await blocking(_services(request).gate.resolve, approval_id, decision))


ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/api/ping", ping),
    ("GET", "/api/openapi.json", openapi_document),
    ("POST", "/api/pair/start", pair_start),
    ("POST", "/api/pair/complete", pair_complete),
    ("DELETE", "/api/pair", pair_delete),
    ("GET", "/api/page-match/site-mode", site_mode_get),
    ("PUT", "/api/page-match/site-mode", site_mode_put),
    ("GET", "/api/page-match/site-modes", site_modes),
    ("POST", "/api/page-match/match", match),
    ("GET", "/api/page-match/probe", probe),
    ("POST", "/api/page-match/suggest", suggest),
    ("POST", "/api/notes", notes),
    ("POST", "/api/links", links),
    ("POST", "/api/selection", selection),
    ("POST", "/api/library", library),
    ("POST", "/api/page-link", page_link),
    ("POST", "/api/active-page", active_page),
    ("POST", "/api/forget/dry-run", forget_dry_run),
    ("POST", "/api/forget/confirm", forget_confirm),
    ("POST", "/api/forget/undo", forget_undo),
    ("POST", "/api/turns", turns),
    ("GET", "/api/approvals", approvals_list),
    ("POST", "/api/approvals/{id}", approvals_decide),
]


def add_routes(app: web.Application) -> None:
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, handler)
