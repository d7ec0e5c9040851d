"""A real ``vodou mcp`` process driven by the SDK's own stdio client, from synchronous tests.

The client session lives in an anyio blocking portal (an event loop in a thread), so one server can
serve a whole module of tests (the model-on server loads its model once) while each test calls
``client.call(...)`` plainly.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as types
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[3]
CLIENT_NAME = "vodou-test-client"


def vodou_command() -> tuple[str, list[str]]:
    """The installed ``vodou`` beside this Python (a venv), else ``python -m vodou_desktop``."""
    script = Path(sys.executable).parent / "vodou"
    if script.exists():
        return str(script), []
    return sys.executable, ["-m", "vodou_desktop"]


class McpClient:
    def __init__(self, vault: Path, home: Path, *, model: bool = False, cwd: Path | None = None,
                 roots: list[Path] | None = None, client_name: str = CLIENT_NAME, extra: list[str] = (),
                 roots_callback: Any = None) -> None:
        self.vault, self.home, self.client_name = vault, home, client_name
        command, args = vodou_command()
        env = {**os.environ, "VODOU_HOME": str(home), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
        env.pop("VODOU_VAULT", None)
        if model:
            env.pop("VODOU_EMBEDDER", None)
        else:
            env["VODOU_EMBEDDER"] = "none"
        params = StdioServerParameters(command=command, args=[*args, "--vault", str(vault), "mcp", *extra], env=env,
                                       cwd=str(cwd or vault.parent))
        self.stderr = open(home / "mcp-stderr.log", "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        read, write = self._stack.enter_context(self.portal.wrap_async_context_manager(
            stdio_client(params, errlog=self.stderr)))
        callback = _roots_callback(roots) if roots is not None else roots_callback
        self.session: ClientSession = self._stack.enter_context(self.portal.wrap_async_context_manager(
            ClientSession(read, write, client_info=types.Implementation(name=client_name, version="1.0"),
                          list_roots_callback=callback)))
        self.init: types.InitializeResult = self.portal.call(self.session.initialize)

    def list_tools(self) -> list[types.Tool]:
        return self.portal.call(self.session.list_tools).tools

    def raw(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self.portal.call(self.session.call_tool, name, arguments)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The tool's result as a model reads it (recall: its structured content with the block as
        ``text``); a tool error fails the test with its message. The structured copy must be the same
        answer without the memories' texts."""
        result = self.raw(name, arguments)
        assert not result.is_error, text_of(result)
        if name == "recall":
            return {**(result.structured_content or {}), "text": text_of(result)}
        data = json_of(result)
        assert result.structured_content == without_texts(data)
        return data

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self.stderr.close()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def without_texts(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: without_texts(v) for k, v in data.items() if k != "text"}
    if isinstance(data, list):
        return [without_texts(v) for v in data]
    return data


def json_of(result: types.CallToolResult) -> Any:
    return json.loads(text_of(result))


def _roots_callback(folders: list[Path]):  # type: ignore[no-untyped-def]
    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=f.resolve().as_uri(), name=f.name) for f in folders])

    return list_roots
