"""What the memory browser's "AI tools" page shows, Qt-free: which clients have Vodou in their
configuration file, which AI tools wrote memories (and how many), and each one's default project."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vodou_desktop.errors import KnownError
from vodou_desktop.mcp import install
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
