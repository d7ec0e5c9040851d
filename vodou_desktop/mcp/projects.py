"""Which project an MCP call is in, in the order a person controls it:

1. a server pinned with ``vodou mcp --project NAME``: that project, always (an argument naming
   another project is refused, so a pinned client never reaches past its wall);
2. the tool's ``project`` argument;
3. the client's roots, mapped to projects through ``vodou projects`` (the longest project folder
   that contains the root wins, as for terminal captures);
4. without roots, the server's working folder, mapped the same way;
5. the default project in the vault's settings (``vodou projects default set NAME``), the one set for
   this client first, then the one for every client;
6. none: global memories only, so a client in an unmapped folder never sees a project's memories.

The reason for the choice goes back with every answer, so the person (and the model) can see why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.watch import project_for
from vodou_desktop.vault.facts import clean_project
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.vault.writer import Change

DEFAULT_KEY = "mcp_default_project"


@dataclass(frozen=True)
class ProjectChoice:
    project: str | None
    reason: str  # said to the client: "argument", "client root /x", "pinned: …", "no project folder matched: …"


def root_folder(uri: str) -> str | None:
    """The local folder of a ``file://`` root URI (None for any other scheme)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


def choose_project(argument: str | None, roots: Sequence[str], cwd: str | None,
                   mapping: Iterable[tuple[str, str | None]], *, pinned: str | None = None,
                   defaults: Sequence[tuple[str | None, str]] = (), roots_note: str | None = None) -> ProjectChoice:
    """The project for a call; ``roots`` are the client's root URIs (empty when it has none);
    ``defaults`` are ``(project, reason)`` pairs from settings, the most specific first;
    ``roots_note`` says why there are no roots (the client did not answer in time)."""
    asked = clean_project(argument) if argument is not None else None
    if pinned is not None:
        if asked is not None and asked != pinned:
            raise InvalidInput(f"this server is pinned to project {pinned!r} (vodou mcp --project {pinned});"
                               f" it does not search {asked!r}")
        return ProjectChoice(pinned, f"pinned: vodou mcp --project {pinned}")
    if asked is not None:
        return ProjectChoice(asked, "argument")
    mapping = list(mapping)
    for uri in roots:
        folder = root_folder(uri)
        found = project_for(folder, mapping) if folder else None
        if found:
            return ProjectChoice(found, f"client root {folder}")
    if not roots and cwd:
        found = project_for(cwd, mapping)
        if found:
            return ProjectChoice(found, _with(f"working folder {cwd}", roots_note))
    for name, reason in defaults:
        if name:
            return ProjectChoice(name, _with(reason, roots_note))
    return ProjectChoice(None, _with("no project folder matched and no default project: global memories only",
                                     roots_note))


def _with(reason: str, note: str | None) -> str:
    return f"{reason} ({note})" if note else reason


def default_key(client: str | None) -> str:
    return DEFAULT_KEY if client is None else f"{DEFAULT_KEY}:{client}"


def default_projects(conn: apsw.Connection, client: str) -> list[tuple[str | None, str]]:
    """The defaults in settings that apply to ``client``: its own, then the one for every client."""
    return [(get_setting(conn, default_key(client)) or None, f"default project for {client} in settings"),
            (get_setting(conn, default_key(None)) or None, "default project in settings")]


def set_default_project(conn: apsw.Connection, change: Change, project: str | None, client: str | None) -> None:
    """Set (or with ``None`` clear) the default project, for one client or for every client."""
    set_setting(conn, change, default_key(client), (clean_project(project) if project else None) or "")


def all_default_projects(conn: apsw.Connection) -> dict[str | None, str]:
    """Every default set: ``None`` for every client, else the client's name."""
    rows = conn.execute("SELECT key, value FROM settings WHERE (key = ? OR key LIKE ?) AND value != ''",
                        (DEFAULT_KEY, DEFAULT_KEY + ":%"))
    return {(None if k == DEFAULT_KEY else str(k)[len(DEFAULT_KEY) + 1:]): str(v) for k, v in rows}
