"""Helpers for bridge tests: a real bridge on 127.0.0.1 (own asyncio loop in a thread), a raw client.

The client is ``http.client`` so that tests control every header byte (Host, Origin, none at all).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from vodou_desktop import config
from vodou_desktop.bridge.events import EventHub
from vodou_desktop.bridge.server import BridgeServer
from vodou_desktop.bridge.services import Services
from vodou_desktop.bridge.tokens import TokenStore
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import Vault

EXT_ID = "abcdefghijklmnopabcdefghijklmnop"
OTHER_EXT_ID = "ponmlkjihgfedcbaponmlkjihgfedcba"
ORIGIN = f"chrome-extension://{EXT_ID}"


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)

    @property
    def code(self) -> str | None:
        return self.json.get("error", {}).get("code") if self.raw.startswith(b"{") else None


class LoopThread:
    """A plain asyncio loop in a thread, so sync tests can drive a real async server."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="bridge-test-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@dataclass
class Bridge:
    server: BridgeServer
    services: Services
    hub: EventHub
    tokens: TokenStore
    token: str
    vault: Vault
    loop: LoopThread
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def port(self) -> int:
        assert self.server.port is not None
        return self.server.port

    def request(self, method: str, path: str, body: Any = None, *, token: str | None = "default",
                host: str | None = "default", origin: str | None = None, content_type: str | None = "default",
                client: bool = True, raw: bytes | None = None, headers: dict[str, str] | None = None,
                timeout: float = 10) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent: dict[str, str] = {}
        if host == "default":
            sent["Host"] = f"127.0.0.1:{self.port}"
        elif host is not None:
            sent["Host"] = host
        if token == "default":
            sent["Authorization"] = f"Bearer {self.token}"
        elif token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if origin:
            sent["Origin"] = origin
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        if content_type == "default":
            content_type = "application/json" if (body is not None or method in ("POST", "PUT")) else None
        if content_type:
            sent["Content-Type"] = content_type
        if client and method in ("POST", "PUT", "DELETE"):
            sent["X-Vodou-Client"] = "extension"
        sent.update(headers or {})
        if "Content-Length" not in sent:
            sent["Content-Length"] = str(len(payload))
        for name, value in sent.items():
            conn.putheader(name, value)
        conn.endheaders(payload or None)
        resp = conn.getresponse()
        reply = Reply(resp.status, resp.headers, resp.read())
        conn.close()
        return reply

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, {} if body is None else body, **kw)


def start_bridge(vault: Vault, search: SearchService, loop: LoopThread,
                 settings: config.Settings | None = None) -> Bridge:
    hub = EventHub()
    tokens = TokenStore()
    services = Services.build(vault, search, hub, settings)
    server = BridgeServer(services, tokens, hub)
    loop.run(server.start(0))
    bridge = Bridge(server, services, hub, tokens, tokens.pair(EXT_ID), vault, loop)
    hub.subscribe(lambda kind, payload: bridge.events.append((kind, payload)))
    return bridge


def stop_bridge(bridge: Bridge) -> None:
    bridge.loop.run(bridge.server.stop())
    bridge.services.close()


class ScriptedModel:
    """A local OpenAI-compatible endpoint that proposes the tool calls a hostile page asks for."""

    def __init__(self, loop: LoopThread) -> None:
        self.loop = loop
        self.requests: list[dict[str, Any]] = []
        self.calls: list[tuple[str, Any]] = []
        self.reply = "Done as the page said."
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.complete)
        self.runner = web.AppRunner(app)
        loop.run(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        loop.run(site.start())
        self.base_url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"

    async def complete(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        tool_calls = [{"id": f"call{i}", "type": "function",
                       "function": {"name": name, "arguments": json.dumps(args)}}
                      for i, (name, args) in enumerate(self.calls)]
        message = {"role": "assistant", "content": self.reply, "tool_calls": tool_calls}
        return web.json_response({"choices": [{"index": 0, "message": message}]})

    def close(self) -> None:
        self.loop.run(self.runner.cleanup())
