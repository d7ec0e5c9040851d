"""The bridge server: ``create_app`` builds the aiohttp app; ``BridgeServer`` runs it on 127.0.0.1.

It runs on whatever asyncio loop is current — qasync's in the tray app, a plain one for
``vodou serve``. The chosen port goes to ``bridge.json`` (0600) in the runtime folder so the CLI
and the tray can find the running server. The access log records method, path (never the query)
and status.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import BadHttpMessage
from aiohttp.web_protocol import RequestHandler

from vodou_desktop import paths
from vodou_desktop.bridge import API_VERSION
from vodou_desktop.bridge.context import CONTEXT, MAX_BODY_BYTES, BridgeContext
from vodou_desktop.bridge.events import EventHub
from vodou_desktop.bridge.pairing import PairingCodes
from vodou_desktop.bridge.responses import CODES, Refusal, error_for
from vodou_desktop.bridge.routes import add_routes
from vodou_desktop.bridge.security import MIDDLEWARES, stamp_headers
from vodou_desktop.bridge.tokens import TokenStore
from vodou_desktop.config import DEFAULT_BRIDGE_PORT
from vodou_desktop.errors import KnownError

log = logging.getLogger(__name__)
access_log = logging.getLogger("vodou_desktop.bridge.access")
PORT_FALLBACKS = 4
PORT_FILE = "bridge.json"
# After an early error (413) the server reads and drops the unsent body for at most this long.
LINGER_S = 1.0


class JsonErrorRequestHandler(RequestHandler):
    """Requests aiohttp cannot parse (no Host, broken headers) get our JSON errors and headers too."""

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError("response already started; cannot send an error")
        log.debug("bridge: refused a malformed request (%s)", type(exc).__name__)
        if isinstance(exc, BadHttpMessage) and "Host" in str(exc.message):
            response = error_for(Refusal(403, "bad_host", "a request without a Host header is refused"))
        elif 400 <= status < 500:
            response = error_for(Refusal(status, CODES.get(status, "bad_request"), "the request is malformed"))
        else:
            response = error_for(RuntimeError())
        stamp_headers(request, response)  # type: ignore[arg-type]
        response.force_close()
        return response


class _JsonErrorServer(web.Server):
    def __call__(self) -> RequestHandler:
        return JsonErrorRequestHandler(self, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _JsonErrorServer  # same object, one method changed: parse errors answer JSON
        return server


class PathOnlyAccessLogger(AbstractAccessLogger):
    """Never logs the query string or any header: a misplaced token cannot reach the logs."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s %.1fms", request.method, request.rel_url.path, response.status, time * 1000)


def create_app(services: Any, tokens: TokenStore | None = None, hub: EventHub | None = None, *,
               port: int | None = None, max_body: int = MAX_BODY_BYTES) -> web.Application:
    hub = hub or EventHub()
    tokens = tokens or TokenStore()
    app = web.Application(middlewares=MIDDLEWARES, client_max_size=max_body)
    app[CONTEXT] = BridgeContext(tokens, PairingCodes(tokens, hub), hub, services, port, max_body)
    add_routes(app)
    return app


def port_file() -> Path:
    return paths.runtime_dir() / PORT_FILE


def read_port_file() -> dict[str, Any] | None:
    """What a running server wrote about itself (port, pid, api), or None."""
    try:
        data = json.loads(port_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class BridgeServer:
    def __init__(self, services: Any, tokens: TokenStore | None = None, hub: EventHub | None = None,
                 default_port: int = DEFAULT_BRIDGE_PORT) -> None:
        self.hub = hub or EventHub()
        self.tokens = tokens or TokenStore()
        self.default_port = default_port
        self.app = create_app(services, self.tokens, self.hub)
        self.context: BridgeContext = self.app[CONTEXT]
        self._runner: web.AppRunner | None = None

    @property
    def port(self) -> int | None:
        return self.context.port

    @property
    def pairing(self) -> PairingCodes:
        return self.context.pairing

    async def start(self, port: int | None = None) -> int:
        """Bind 127.0.0.1 on ``port`` (0: any free port), or the default and the next four."""
        candidates = [port] if port is not None else [self.default_port + i for i in range(PORT_FALLBACKS + 1)]
        runner = _Runner(self.app, access_log_class=PathOnlyAccessLogger, access_log=access_log,
                               handle_signals=False, lingering_time=LINGER_S)
        await runner.setup()
        errors = []
        for candidate in candidates:
            site = web.TCPSite(runner, "127.0.0.1", candidate)
            try:
                await site.start()
            except OSError as exc:
                errors.append(f"{candidate}: {exc.strerror}")
                continue
            self._runner = runner
            bound = int(runner.addresses[0][1])
            self.context.port = bound
            self._write_port_file(bound)
            log.info("bridge listening on 127.0.0.1:%d", bound)
            return bound
        await runner.cleanup()
        raise KnownError("the bridge could not bind a port on 127.0.0.1 (" + "; ".join(errors) + ")")

    async def stop(self) -> None:
        if self._runner is None:
            return
        await self._runner.cleanup()
        self._runner = None
        self.context.pairing.clear()
        data = read_port_file()
        if data and data.get("pid") == os.getpid():
            port_file().unlink(missing_ok=True)
        log.info("bridge stopped")

    def _write_port_file(self, port: int) -> None:
        folder = paths.runtime_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / (PORT_FILE + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"port": port, "pid": os.getpid(), "api": API_VERSION}, fh)
        os.replace(tmp, port_file())
