"""``vodou mcp install CLIENT`` / ``uninstall CLIENT``: merge Vodou's server into an AI tool's own
configuration file, keeping everything else in it.

Each client keeps its MCP servers in one file, under one key (Codex: a TOML table). Install reads
the file, adds or replaces only the ``vodou`` entry, checks that nothing else changed, keeps a
``.bak`` copy of the file as it was, and replaces the file atomically (a temporary file in the same
folder, fsync, rename). A second install with the same entry changes nothing. Uninstall removes
only the ``vodou`` entry. A file that is not plain JSON (comments, trailing commas) or not valid
TOML is never rewritten: the person is shown the entry to add by hand.

Where each client keeps the file (Linux first; macOS and Windows where the client documents them):

- Claude Desktop: ``~/.config/Claude`` (Linux builds), ``~/Library/Application Support/Claude``,
  ``%APPDATA%\\Claude``; ``claude_desktop_config.json``, key ``mcpServers``;
- Claude Code (user scope): ``~/.claude.json``, key ``mcpServers`` (what
  ``claude mcp add --scope user`` writes);
- Cursor: ``~/.cursor/mcp.json``, key ``mcpServers``;
- VS Code (user profile): ``~/.config/Code/User/mcp.json``,
  ``~/Library/Application Support/Code/User/mcp.json``, ``%APPDATA%\\Code\\User\\mcp.json``; key ``servers``;
- Windsurf: ``~/.codeium/windsurf/mcp_config.json``, key ``mcpServers``;
- Codex: ``$CODEX_HOME/config.toml`` (default ``~/.codex``), table ``[mcp_servers.vodou]``;
- Zed: ``~/.config/zed/settings.json`` (``%APPDATA%\\Zed`` on Windows), key ``context_servers``;
- Gemini CLI: ``~/.gemini/settings.json``, key ``mcpServers``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vodou_desktop.errors import InvalidInput, KnownError

SERVER_NAME = "vodou"
ENV_KEYS = ("VODOU_VAULT", "VODOU_HOME")  # the environment that decides which vault the server opens


@dataclass(frozen=True)
class Client:
    name: str
    title: str
    key: str  # the JSON key holding the servers ("mcp_servers" table for Codex)
    stdio_type: bool = False  # the entry says "type": "stdio"
    toml: bool = False


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-desktop", "Claude Desktop", "mcpServers"),
    Client("claude-code", "Claude Code (user scope)", "mcpServers", stdio_type=True),
    Client("cursor", "Cursor", "mcpServers"),
    Client("vscode", "VS Code (user profile)", "servers", stdio_type=True),
    Client("windsurf", "Windsurf", "mcpServers"),
    Client("codex", "Codex", "mcp_servers", toml=True),
    Client("zed", "Zed", "context_servers"),
    Client("gemini", "Gemini CLI", "mcpServers"),
)}


def client(name: str) -> Client:
    if name not in CLIENTS:
        raise InvalidInput(f"unknown client {name[:40]!r}; the clients are {', '.join(CLIENTS)}")
    return CLIENTS[name]


def config_path(name: str, env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The client's configuration file for this user on this platform."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    appdata = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    mac_support = home / "Library" / "Application Support"
    if name == "claude-desktop":
        base = mac_support if platform == "darwin" else appdata if platform == "win32" else xdg
        return base / "Claude" / "claude_desktop_config.json"
    if name == "claude-code":
        return home / ".claude.json"
    if name == "cursor":
        return home / ".cursor" / "mcp.json"
    if name == "vscode":
        base = mac_support if platform == "darwin" else appdata if platform == "win32" else xdg
        return base / "Code" / "User" / "mcp.json"
    if name == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    if name == "codex":
        return (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex") / "config.toml"
    if name == "zed":
        return (appdata / "Zed" if platform == "win32" else home / ".config" / "zed") / "settings.json"
    if name == "gemini":
        return home / ".gemini" / "settings.json"
    raise InvalidInput(f"unknown client {name[:40]!r}")


def server_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables that choose the vault, as set now (absolute paths), for the client to pass on."""
    env = os.environ if env is None else env
    return {k: str(Path(env[k]).expanduser().resolve()) for k in ENV_KEYS if env.get(k)}


def entry(name: str, command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Vodou's entry in the client's format."""
    spec = client(name)
    out: dict[str, Any] = {"type": "stdio"} if spec.stdio_type else {}
    out.update(command=command, args=list(args), env=dict(env))
    return out


def snippet(name: str, command: str, args: list[str], env: dict[str, str]) -> str:
    """What ``--print-config`` prints: the file's part that holds Vodou's entry."""
    spec = client(name)
    value = entry(name, command, args, env)
    if spec.toml:
        return _toml_table(value)
    return json.dumps({spec.key: {SERVER_NAME: value}}, indent=2, ensure_ascii=False)


def claude_add_command(command: str, args: list[str], env: dict[str, str]) -> str:
    """The ``claude mcp add`` command that makes the same user-scope entry."""
    flags = [f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items()]
    return " ".join(["claude mcp add --scope user", *flags, SERVER_NAME, "--", shlex.quote(command),
                     *map(shlex.quote, args)])


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None  # the file's text (None: no file)
    after: str | None  # the new text (None: remove nothing / unchanged)
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.after is not None and self.after != self.before


def plan_install(name: str, command: str, args: list[str], env: dict[str, str], path: Path | None = None) -> Change:
    path = path or config_path(name)
    before = _read(path)
    spec = client(name)
    value = entry(name, command, args, env)
    if spec.toml:
        if _toml_load(before or "", path).get("mcp_servers", {}).get(SERVER_NAME) == value:
            return Change(path, before, None)  # already there, as it would be written
        return Change(path, before, _toml_set(before or "", value, path))
    data = _json(before, path, name, value)
    servers = data.setdefault(spec.key, {})
    if not isinstance(servers, dict):
        raise KnownError(f"{path}: {spec.key} is not a JSON object; add Vodou by hand:\n"
                         + snippet(name, command, args, env))
    if servers.get(SERVER_NAME) == value:
        return Change(path, before, None)
    servers[SERVER_NAME] = value
    return Change(path, before, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def plan_uninstall(name: str, path: Path | None = None) -> Change:
    path = path or config_path(name)
    before = _read(path)
    spec = client(name)
    if before is None:
        return Change(path, None, None)
    if spec.toml:
        return Change(path, before, _toml_remove(before, path))
    data = _json(before, path, name, None)
    servers = data.get(spec.key)
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return Change(path, before, None)
    del servers[SERVER_NAME]
    return Change(path, before, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def is_installed(name: str, path: Path | None = None) -> bool | None:
    """Whether the client's file has Vodou's entry; None when there is no file."""
    path = path or config_path(name)
    text = _read(path)
    if text is None:
        return None
    spec = client(name)
    data = _toml_load(text, path) if spec.toml else _json(text, path, name, None)
    servers = data.get(spec.key)
    return isinstance(servers, dict) and SERVER_NAME in servers


def apply(change: Change) -> Change:
    """Write the change: a ``.bak`` of the file first, then an atomic replace. Unchanged: nothing."""
    if not change.changed:
        return change
    assert change.after is not None
    change.path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if change.before is not None:
        backup = change.path.with_name(change.path.name + ".bak")
        shutil.copy2(change.path, backup)
    mode = change.path.stat().st_mode & 0o777 if change.path.exists() else 0o600
    fd, temp = tempfile.mkstemp(prefix=f".{change.path.name}.", dir=change.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(change.after)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode)
        os.replace(temp, change.path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    folder = os.open(change.path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return Change(change.path, change.before, change.after, backup)


# -- file formats ----------------------------------------------------------------------------

def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise KnownError(f"cannot read {path}: {exc}") from exc


def _json(text: str | None, path: Path, name: str, value: dict[str, Any] | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        hint = ("" if value is None else "; add this entry by hand:\n"
                + json.dumps({client(name).key: {SERVER_NAME: value}}, indent=2, ensure_ascii=False))
        raise KnownError(f"{path} is not plain JSON (comments or trailing commas?), so Vodou does not rewrite it"
                         f" ({exc}){hint}") from exc
    if not isinstance(data, dict):
        raise KnownError(f"{path} does not hold a JSON object; Vodou does not rewrite it")
    return data


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)  # a JSON string is a valid TOML basic string


def _toml_table(value: dict[str, Any]) -> str:
    env = ", ".join(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in value["env"].items())
    args = ", ".join(_toml_string(a) for a in value["args"])
    return (f"[mcp_servers.{SERVER_NAME}]\ncommand = {_toml_string(value['command'])}\nargs = [{args}]\n"
            f"env = {{{' ' + env + ' ' if env else ''}}}\n")


_OUR_HEADER = re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*\"?{SERVER_NAME}\"?\s*(\.[^\]]*)?\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def _toml_without_ours(text: str) -> str:
    """``text`` without the ``[mcp_servers.vodou]`` table and its sub-tables."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if _OUR_HEADER.match(line):
            skipping = True
            continue
        if skipping and _ANY_HEADER.match(line):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out)


def _toml_load(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KnownError(f"{path} is not valid TOML ({exc}); Vodou does not rewrite it") from exc


def _toml_set(text: str, value: dict[str, Any], path: Path) -> str:
    original = _toml_load(text, path)
    base = _toml_without_ours(text).rstrip("\n")
    new = (base + "\n\n" if base else "") + _toml_table(value)
    _check_toml(original, new, path, value)
    return new


def _toml_remove(text: str, path: Path) -> str | None:
    original = _toml_load(text, path)
    if SERVER_NAME not in original.get("mcp_servers", {}):
        return None
    new = _toml_without_ours(text).rstrip("\n") + "\n"
    _check_toml(original, new, path, None)
    return new


def _check_toml(original: dict[str, Any], new_text: str, path: Path, value: dict[str, Any] | None) -> None:
    """The new file must parse, hold exactly our entry (or none) and leave everything else as it was."""
    new = _toml_load(new_text, path)
    theirs_before = {**original, "mcp_servers": {k: v for k, v in original.get("mcp_servers", {}).items()
                                                 if k != SERVER_NAME}}
    theirs_after = {**new, "mcp_servers": {k: v for k, v in new.get("mcp_servers", {}).items() if k != SERVER_NAME}}
    ours = new.get("mcp_servers", {}).get(SERVER_NAME)
    if theirs_before != theirs_after or ours != value:
        raise KnownError(f"{path} defines mcp_servers in a way Vodou cannot edit safely; add this by hand:\n"
                         + (_toml_table(value) if value else f"(remove the [mcp_servers.{SERVER_NAME}] table)"))
