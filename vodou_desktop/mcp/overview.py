"""What the memory browser's "AI tools" page shows, Qt-free: which clients have Vodou in their
configuration file, which AI tools wrote memories (and how many), and each one's default project;
which AI tools are on this computer at all (the first run offers only those), and setting one up."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vodou_desktop.errors import KnownError
from vodou_desktop.mcp import install
from vodou_desktop.mcp.client_config import server_command
from vodou_desktop.mcp.projects import all_default_projects
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q


@dataclass(frozen=True)
class ClientSetup:
    client: str
    title: str
    path: Path
    state: str  # "set up", "not set up", "no configuration file", or why the file cannot be read


@dataclass(frozen=True)
class ToolWriter:
    tool: str
    memories: int
    default_project: str | None


def client_setups(env: Mapping[str, str] | None = None) -> list[ClientSetup]:
    out = []
    for name, spec in install.CLIENTS.items():
        path = install.config_path(name, env)
        try:
            present = install.is_installed(name, path)
        except KnownError as exc:
            state = str(exc).split(";")[0]
        else:
            state = "no configuration file" if present is None else "set up" if present else "not set up"
        out.append(ClientSetup(name, spec.title, path, state))
    return out


def tool_writers(vault: Vault) -> tuple[list[ToolWriter], str | None]:
    """Every AI tool that wrote memories or has a default project, and the default for all tools."""
    def read(conn):  # type: ignore[no-untyped-def]
        return (q.count_facts_by_tool(conn, FactFilter(project=ALL_PROJECTS)), all_default_projects(conn))

    counts, defaults = vault.read(read)
    names = sorted(set(counts) | {k for k in defaults if k is not None})
    return [ToolWriter(n, counts.get(n, 0), defaults.get(n)) for n in names], defaults.get(None)


# What shows an AI tool is on this computer, besides its configuration file: its folder, or its command.
COMMANDS = {"claude-desktop": ("claude-desktop",), "claude-code": ("claude",), "cursor": ("cursor",),
            "vscode": ("code", "codium"), "windsurf": ("windsurf",), "codex": ("codex",), "zed": ("zed", "zeditor"),
            "gemini": ("gemini",)}
FOLDERS = {"claude-code": ".claude"}  # beside the home folder's ~/.claude.json


def found_clients(env: Mapping[str, str] | None = None) -> list[ClientSetup]:
    """The AI tools found on this computer (their configuration file or folder, or their command on
    PATH), with whether Vodou is set up in each: only those, for the first run to offer."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    path_var = env.get("PATH", "")
    found = []
    for setup in client_setups(env):
        folder = setup.path.parent
        evidence = (setup.path.exists() or (folder != home and folder.is_dir())
                    or (setup.client in FOLDERS and (home / FOLDERS[setup.client]).is_dir())
                    or any(shutil.which(c, path=path_var) for c in COMMANDS.get(setup.client, ())))
        if evidence:
            found.append(setup)
    return found


def set_up(client: str, vault: str | None = None, env: Mapping[str, str] | None = None) -> install.Change:
    """Add Vodou's MCP server to ``client``'s configuration, as ``vodou mcp install CLIENT`` does."""
    command, args = server_command(vault=vault)
    return install.apply(install.plan_install(client, command, args, install.server_env(env),
                                              install.config_path(client, env)))
