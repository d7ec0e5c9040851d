"""The command that starts ``vodou mcp`` for a client (``--print-config`` and ``install``).

The command is the installed ``vodou`` that is running now (an absolute path, so a client started
from the desktop, with another PATH, finds it), else this Python with ``-m vodou_desktop``. The
vault travels with it: ``--vault`` when given, and ``VODOU_VAULT`` / ``VODOU_HOME`` when set, so
the client's server opens the same vault as this command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from vodou_desktop.mcp.install import CLIENTS, config_path, entry, server_env

__all__ = ["CLIENTS", "client_config", "config_path", "server_command", "server_env"]


def server_command(argv0: str | None = None, vault: str | None = None,
                   project: str | None = None) -> tuple[str, list[str]]:
    """``(command, args)`` that start this Vodou's MCP server (pinned to ``project`` when given)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    path = Path(argv0)
    if path.name.startswith("vodou") and path.suffix == "" and path.exists() and os.access(path, os.X_OK):
        command, args = str(path.resolve() if not path.is_absolute() else path), []
    else:
        command, args = str(Path(sys.executable)), ["-m", "vodou_desktop"]
    if vault:
        args += ["--vault", str(Path(vault).expanduser().resolve())]
    return command, [*args, "mcp", *(["--project", project] if project else [])]


def client_config(client: str, command: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON to paste into ``client``'s MCP configuration (Codex: the same as a dict; its file is TOML)."""
    spec = CLIENTS.get(client)
    if spec is None:
        raise ValueError(f"unknown client {client!r}")
    return {spec.key: {"vodou": entry(client, command, args, env or {})}}
