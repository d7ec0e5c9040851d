"""``vodou serve``: the vault and the browser bridge, headless (no tray). Stops cleanly on SIGINT/SIGTERM.

Pairing codes the extension asks for are printed on stdout (and ``vodou pair`` prints them too).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

from vodou_desktop.bridge import events
from vodou_desktop.bridge.server import BridgeServer
from vodou_desktop.bridge.services import Services
from vodou_desktop.bridge.tokens import TokenStore
from vodou_desktop.errors import InvalidInput
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import EmbedderState
from vodou_desktop.sync.background import BackgroundSync
from vodou_desktop.words import plural

EXTERNAL_POLL_S = 2.0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("serve", help="run the vault and the browser bridge without the tray app")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: the settings' port, then the next 4)")
    parser.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.port is not None and not (args.port == 0 or 1024 <= args.port <= 65535):
        raise InvalidInput("--port must be 0 (any free port) or between 1024 and 65535")
    with Runtime.open(args.vault, background_backfill=True) as rt:
        _say_model_progress(rt)
        asyncio.run(_serve(rt, args.port))
    print("vodou: bridge stopped, vault closed", flush=True)
    return 0


def _say_model_progress(rt: Runtime) -> None:
    """A first run prepares the model for search by meaning (an export of a few seconds, keyword
    search meanwhile): say so, step by step, and say when it is ready."""
    def progress(step: int, steps: int, what: str) -> None:
        print(f"vodou: preparing the model for search by meaning (first run), step {step} of {steps}: {what}",
              flush=True)

    def state(now: EmbedderState) -> None:
        if now is EmbedderState.READY:
            print(f"vodou: search by meaning ready (on {rt.embedder.runtime})", flush=True)
        elif now is EmbedderState.FAILED:
            print(f"vodou: note: {rt.embedder.why_not_ready()}", flush=True)

    rt.embedder.on_progress(progress)
    rt.embedder.on_state(state)
    if rt.embedder.state is not EmbedderState.LOADING:  # settled before we listened
        state(rt.embedder.state)


def _print_event(kind: str, payload: dict[str, Any]) -> None:
    if kind == events.PAIRING_CODE:
        print(f"vodou: pairing code for extension {payload['extensionId']}: {payload['code']}"
              f" (valid {payload['expiresIn']} s)", flush=True)
    elif kind == events.PAIRED:
        print(f"vodou: paired extension {payload['extensionId']}", flush=True)
    elif kind == events.APPROVALS_CHANGED:
        print(f"vodou: {plural(payload['pending'], 'action')} waiting for approval", flush=True)


async def _serve(rt: Runtime, port: int | None) -> None:
    hub = events.EventHub()
    hub.subscribe(_print_event)
    services = Services.build(rt.vault, rt.search, hub, rt.settings)
    tokens = TokenStore()
    server = BridgeServer(services, tokens, hub, default_port=rt.settings.bridge_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        bound = await server.start(port)
        print(f"vodou: bridge on http://127.0.0.1:{bound} — pairing tokens are kept in {tokens.storage}", flush=True)
        poller = asyncio.create_task(_poll_external(rt))
        sync = BackgroundSync(rt.vault, on_state=lambda state: print(f"vodou: {state.words()}", flush=True))
        sync.start()  # its own thread, when this vault syncs (docs/sync.md)
        await stop.wait()
        await asyncio.to_thread(sync.stop)
        poller.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
    finally:
        await server.stop()
        services.close()


async def _poll_external(rt: Runtime) -> None:
    """Notice writes by other processes (the CLI), so probe answers never go stale."""
    while True:
        await asyncio.sleep(EXTERNAL_POLL_S)
        await asyncio.to_thread(rt.vault.poll_external)
