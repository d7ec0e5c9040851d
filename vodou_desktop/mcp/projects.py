"""Which project an MCP call is in: the argument, else the client's roots, else the working folder.

Folders map to projects through ``vodou projects`` (the longest project folder that contains the
folder wins, as for terminal captures). No mapping means no project: global memories only, so a
client in an unmapped folder never sees any project's memories.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from vodou_desktop.ingest.watch import project_for
from vodou_desktop.vault.facts import clean_project


@dataclass(frozen=True)
class ProjectChoice:
    project: str | None
    reason: str  # said to the client: "argument", "client root /x", "working folder /y", "no mapped folder"


def root_folder(uri: str) -> str | None:
    """The local folder of a ``file://`` root URI (None for any other scheme)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


def choose_project(argument: str | None, roots: Sequence[str], cwd: str | None,
                   mapping: Iterable[tuple[str, str | None]]) -> ProjectChoice:
    """The project for a call; ``roots`` are the client's root URIs (empty when it has none)."""
    if argument is not None:
        name = clean_project(argument)
        if name is not None:
            return ProjectChoice(name, "argument")
    mapping = list(mapping)
    for uri in roots:
        folder = root_folder(uri)
        found = project_for(folder, mapping) if folder else None
        if found:
            return ProjectChoice(found, f"client root {folder}")
    if not roots and cwd:
        found = project_for(cwd, mapping)
        if found:
            return ProjectChoice(found, f"working folder {cwd}")
    return ProjectChoice(None, "no project folder matched: global memories only")
