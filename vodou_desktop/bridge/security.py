"""The bridge's security middleware (BRIDGE-2), in the order the checks run.

1. ``finish`` (outermost): turns every error into JSON and stamps the headers every response
   carries (API version, nosniff, no-store, frame-ancestors, X-Frame-Options: DENY, Vary: Origin, CORS for a paired
   extension only — never ``*``, never credentials, never a cookie).
2. Host allowlist — exactly 127.0.0.1:PORT, localhost:PORT or [::1]:PORT (DNS-rebinding guard).
3. A credential in the query string → 400 (the access log never records the query).
4. API major version (``X-Vodou-API``) → 412 on mismatch.
5. ``Content-Length`` over the limit → 413 before the body is read.
6. Origin, when present, must be a paired ``chrome-extension://<id>`` (exact) → 403.
7. Bearer token, constant time against every paired token → 401; bad tokens back off globally.
8. Writes: ``application/json`` only (415) and the ``X-Vodou-Client`` header (403), then the
   token's write budget (60 per 10 s by default) → 429 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web

from vodou_desktop.bridge import API_HEADER, API_VERSION, CLIENT_HEADER
from vodou_desktop.bridge.context import BACKOFF_DELAY_S, BAD_TOKENS_PER_MINUTE, context_of
from vodou_desktop.bridge.responses import Refusal, error_for
from vodou_desktop.errors import KnownError

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PUBLIC_ROUTES = frozenset({("GET", "/api/ping"), ("POST", "/api/pair/start"), ("POST", "/api/pair/complete")})
PAIR_ROUTES = frozenset({"/api/pair/start", "/api/pair/complete"})
WRITE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})
# Reads that travel as POST so page URLs stay out of query strings and logs: the panel, typing
# suggestions and tab switches send them all the time, so they never spend the write budget.
READS_BY_POST = frozenset({("POST", "/api/page-match/match"), ("POST", "/api/page-match/suggest"),
                           ("POST", "/api/active-page"), ("POST", "/api/forget/dry-run")})
QUERY_CREDENTIALS = frozenset({"token", "access_token", "auth", "authorization", "bearer", "key", "api_key"})
EXTENSION_ORIGIN = re.compile(r"^chrome-extension://([a-p]{32})$")
ALLOW_HEADERS = f"Authorization, Content-Type, {CLIENT_HEADER}, {API_HEADER}"
ALLOW_METHODS = "GET, POST, PUT, DELETE"
# Stored on the request by the checks, read by ``finish``.
CORS_ORIGIN = web.RequestKey("vodou_cors_origin", str)
EXTENSION_ID = web.RequestKey("vodou_extension_id", str)


@web.middleware
async def finish(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except (KnownError, web.HTTPException) as exc:
        response = error_for(exc)
    except asyncio.CancelledError:
        raise
    except ConnectionError as exc:  # the client went away mid-request: nobody to answer, not our error
        log.info("bridge: the client of %s %s disconnected (%s)", request.method, request.rel_url.path,
                 type(exc).__name__)
        response = error_for(Refusal(400, "client_gone", "the client disconnected before its request was complete"))
    except Exception:
        log.exception("bridge: internal error on %s %s", request.method, request.rel_url.path)
        response = error_for(RuntimeError())
    stamp_headers(request, response)
    if response.status == 413:
        response.force_close()  # the unread body is not drained: the connection ends here
    return response


def stamp_headers(request: web.Request, response: web.StreamResponse) -> None:
    headers = response.headers
    headers[API_HEADER] = API_VERSION
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Cache-Control"] = "no-store"
    headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    headers["X-Frame-Options"] = "DENY"
    headers["Referrer-Policy"] = "no-referrer"
    headers["Vary"] = "Origin"
    headers.popall(hdrs.SET_COOKIE, None)
    origin = request.get(CORS_ORIGIN)
    if origin:
        headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = origin
        headers[hdrs.ACCESS_CONTROL_EXPOSE_HEADERS] = API_HEADER


@web.middleware
async def check_host(request: web.Request, handler: Handler) -> web.StreamResponse:
    host = request.headers.get(hdrs.HOST)
    if host is None or host not in context_of(request).allowed_hosts():
        raise Refusal(403, "bad_host", "this server answers only to 127.0.0.1, localhost or [::1] on its own port")
    return await handler(request)


@web.middleware
async def check_query(request: web.Request, handler: Handler) -> web.StreamResponse:
    if any(name.lower() in QUERY_CREDENTIALS for name in request.rel_url.query):
        raise Refusal(400, "token_in_query", "never put a token in the URL; send it as 'Authorization: Bearer'")
    return await handler(request)


@web.middleware
async def check_api_version(request: web.Request, handler: Handler) -> web.StreamResponse:
    announced = request.headers.get(API_HEADER)
    if announced is not None and announced.strip().split(".")[0] != API_VERSION.split(".")[0]:
        raise Refusal(412, "api_version_mismatch",
                      f"this app speaks bridge API {API_VERSION}; the client announced {announced[:20]!r}")
    return await handler(request)


@web.middleware
async def check_body_size(request: web.Request, handler: Handler) -> web.StreamResponse:
    length = request.content_length
    if length is not None and length > context_of(request).max_body:
        raise Refusal(413, "payload_too_large",
                      f"the request body is larger than {context_of(request).max_body} bytes")
    return await handler(request)


@web.middleware
async def check_origin(request: web.Request, handler: Handler) -> web.StreamResponse:
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None:
        if request.rel_url.path == "/api/pair/start":
            raise Refusal(403, "bad_origin", "pairing can only be started by a browser extension")
        return await handler(request)
    match = EXTENSION_ORIGIN.match(origin)
    if match is None:
        raise Refusal(403, "bad_origin", "requests from this origin are not accepted")
    ctx = context_of(request)
    if request.rel_url.path not in PAIR_ROUTES and not ctx.tokens.is_paired(match.group(1)):
        raise Refusal(403, "bad_origin", "this extension is not paired with Vodou")
    request[CORS_ORIGIN] = origin
    request[EXTENSION_ID] = match.group(1)
    if request.method == hdrs.METH_OPTIONS:
        return _preflight()
    return await handler(request)


def _preflight() -> web.Response:
    return web.Response(status=204, headers={
        hdrs.ACCESS_CONTROL_ALLOW_METHODS: ALLOW_METHODS,
        hdrs.ACCESS_CONTROL_ALLOW_HEADERS: ALLOW_HEADERS,
        hdrs.ACCESS_CONTROL_MAX_AGE: "600",
    })


def bearer_token(request: web.Request) -> str | None:
    value = request.headers.get(hdrs.AUTHORIZATION, "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


@web.middleware
async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
    if (request.method, request.rel_url.path) in PUBLIC_ROUTES:
        return await handler(request)
    if request.method == hdrs.METH_OPTIONS:
        raise Refusal(403, "bad_origin", "preflight is only answered for a paired extension origin")
    ctx = context_of(request)
    token = bearer_token(request)
    extension_id = ctx.tokens.match(token) if token else None
    origin_id = request.get(EXTENSION_ID)
    if extension_id is None or (origin_id is not None and origin_id != extension_id):
        failures = ctx.note_bad_token()
        if failures > BAD_TOKENS_PER_MINUTE:
            await asyncio.sleep(BACKOFF_DELAY_S)
            raise Refusal(429, "too_many_requests", "too many failed authentications; slow down",
                          {hdrs.RETRY_AFTER: "60"})
        raise Refusal(401, "unauthorized", "missing or invalid pairing token: pair the extension with Vodou")
    request[EXTENSION_ID] = extension_id
    return await handler(request)


@web.middleware
async def check_write(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method in WRITE_METHODS:
        has_body = bool(request.content_length) or hdrs.CONTENT_TYPE in request.headers or request.body_exists
        if (request.method != hdrs.METH_DELETE or has_body) and request.content_type != "application/json":
            raise Refusal(415, "unsupported_media_type", "send JSON with 'Content-Type: application/json'")
        if not request.headers.get(CLIENT_HEADER, "").strip():
            raise Refusal(403, "missing_client_header", f"state-changing requests need the {CLIENT_HEADER} header")
        route = (request.method, request.rel_url.path)
        who = request.get(EXTENSION_ID) if route not in PUBLIC_ROUTES and route not in READS_BY_POST else None
        wait = context_of(request).spend_write(who) if who else None
        if wait is not None:
            raise Refusal(429, "write_budget_exceeded",
                          f"too many writes from this extension; try again in {wait} s", {hdrs.RETRY_AFTER: str(wait)})
    return await handler(request)


MIDDLEWARES = [finish, check_host, check_query, check_api_version, check_body_size, check_origin, check_token,
               check_write]
