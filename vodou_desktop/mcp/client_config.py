"""The snippet each MCP client needs to start ``vodou mcp`` (``vodou mcp --print-config CLIENT``).

The command is the installed ``vodou`` that is running now (an absolute path, so a client started
from the desktop, with another PATH, finds it), else this Python with ``-m vodou_desktop``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

CLIENTS = {
    "claude-desktop": "Claude Desktop: Settings → Developer → Edit Config (claude_desktop_config.json)",
    "claude-code": "Claude Code: .mcp.json in the project folder (or `claude mcp add-json vodou '<the vodou entry>'`)",
    "cursor": "Cursor: ~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    "vscode": "VS Code: .vscode/mcp.json in the workspace (or the user mcp.json)",
}


def server_command(argv0: str | None = None, vault: str | None = None) -> tuple[str, list[str]]:
    """``(command, args)`` that start this Vodou's MCP server."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    path = Path(argv0)
    if path.name.startswith("vodou") and path.suffix == "" and path.exists() and os.access(path, os.X_OK):
        command, args = str(path.resolve() if not path.is_absolute() else path), []
    else:
        command, args = str(Path(sys.executable)), ["-m", "vodou_desktop"]
    if vault:
        args += ["--vault", str(Path(vault).expanduser().resolve())]
    return command, [*args, "mcp"]


def client_config(client: str, command: str, args: list[str]) -> dict[str, Any]:
    """The JSON to paste into ``client``'s MCP configuration."""
    entry: dict[str, Any] = {"command": command, "args": args}
    if client == "vscode":
        return {"servers": {"vodou": {"type": "stdio", **entry}}}
    if client == "claude-code":
        return {"mcpServers": {"vodou": {"type": "stdio", **entry, "env": {}}}}
    if client in ("claude-desktop", "cursor"):
        return {"mcpServers": {"vodou": entry}}
    raise ValueError(f"unknown client {client!r}")
