"""``vodou mcp install CLIENT`` / ``uninstall CLIENT``: merge Vodou's server into an AI tool's own
configuration file, keeping everything else in it byte for byte.

Each client keeps its MCP servers in one file, under one key (Codex: a TOML table). Install reads
the file, splices in or replaces only the ``vodou`` entry (``config_edit``: numbers, escapes, key
order and comments outside it are not touched), checks that nothing else changed, keeps a ``.bak``
copy of the file as it was (with its mode), and replaces the file crash-safely (a temporary file
in the same folder as the real file, fsync, rename, fsync of the folder) with the mode it had; a
new file is 0600 (``~/.claude.json`` can hold credentials). A file reached through a symbolic link
(stow, chezmoi, home-manager) is written where the link points, and the link stays. A second
install with the same entry changes nothing; uninstall removes only the ``vodou`` entry.

Vodou never rewrites a file it cannot edit safely: not strict JSON (comments, trailing commas,
``NaN``), not valid TOML, not UTF-8, read-only, or in a folder it cannot write. It says why in one
line and prints the entry to add by hand.

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
import shlex
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.mcp import config_edit

SERVER_NAME = config_edit.SERVER_NAME
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


def claude_add_command(command: str, args: list[str], env: dict[str, str]) -> str:
    """The ``claude mcp add`` command that makes the same user-scope entry."""
    flags = [f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items()]
    return " ".join(["claude mcp add --scope user", *flags, SERVER_NAME, "--", shlex.quote(command),
                     *map(shlex.quote, args)])


@dataclass(frozen=True)
class Change:
    path: Path  # the file as the client names it (it may be a symbolic link)
    before: str | None  # the file's text (None: no file)
    after: str | None  # the new text (None: remove nothing / unchanged)
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.after is not None and self.after != self.before

    @property
    def target(self) -> Path:
        """The file that is written: the end of the link when ``path`` is a symbolic link."""
        return Path(os.path.realpath(self.path))

    @property
    def through_link(self) -> bool:
        return self.path.is_symlink()


def plan_install(name: str, command: str, args: list[str], env: dict[str, str], path: Path | None = None) -> Change:
    path = path or config_path(name)
    spec = client(name)
    value = entry(name, command, args, env)
    hand = "; add this entry by hand:\n" + snippet(name, command, args, env)
    before = _read(path, hand)
    after = _edit(path, hand, lambda: config_edit.toml_with_entry(before, value) if spec.toml
                  else config_edit.json_with_entry(before, spec.key, value))
    change = Change(path, before, after)
    if change.changed:
        _check_writable(change, hand)
    return change


def plan_uninstall(name: str, path: Path | None = None) -> Change:
    path = path or config_path(name)
    spec = client(name)
    hand = (f"; remove the [mcp_servers.{SERVER_NAME}] table by hand" if spec.toml
            else f"; remove \"{SERVER_NAME}\" from its \"{spec.key}\" by hand")
    before = _read(path, hand)
    if before is None:
        return Change(path, None, None)
    after = _edit(path, hand, lambda: config_edit.toml_without_entry(before) if spec.toml
                  else config_edit.json_without_entry(before, spec.key))
    change = Change(path, before, after)
    if change.changed:
        _check_writable(change, hand)
    return change


def is_installed(name: str, path: Path | None = None) -> bool | None:
    """Whether the client's file has Vodou's entry; None when there is no file."""
    path = path or config_path(name)
    text = _read(path, "")
    if text is None:
        return None
    spec = client(name)
    if not text.strip():
        return False
    return bool(_edit(path, "", lambda: config_edit.toml_has_entry(text) if spec.toml
                      else config_edit.json_has_entry(text, spec.key)))


def apply(change: Change) -> Change:
    """Write the change: a ``.bak`` of the file first, then a crash-safe replace of the file (of the
    end of the link, so the link stays). Unchanged: nothing."""
    if not change.changed:
        return change
    assert change.after is not None
    target = change.target
    try:
        old = target.stat() if change.before is not None else None
        mode = stat.S_IMODE(old.st_mode) if old is not None else 0o600
        backup = None
        if change.before is not None:
            backup = change.path.with_name(change.path.name + ".bak")
            _write_atomic(Path(os.path.realpath(backup)), change.before, mode, old)
        if old is None:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_atomic(target, change.after, mode, old)
    except OSError as exc:
        raise KnownError(f"cannot write {target}: {exc.strerror or exc}; nothing was changed there") from exc
    return Change(change.path, change.before, change.after, backup)


def _write_atomic(target: Path, text: str, mode: int, like: os.stat_result | None) -> None:
    """A temporary file in the target's own folder, with the mode (and owner) of the file it replaces,
    fsynced, renamed over it, and the folder fsynced: the file is the old one or the new one."""
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            os.fchmod(fh.fileno(), mode)
            if like is not None and (like.st_uid, like.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fh.fileno(), like.st_uid, like.st_gid)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


# -- checks ----------------------------------------------------------------------------------

def _read(path: Path, hand: str) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KnownError(f"cannot read {path}: {exc.strerror or exc}{hand}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KnownError(f"{path} is not UTF-8 text (byte {exc.start}), so Vodou does not rewrite it{hand}") from exc


def _edit(path: Path, hand: str, edit: Any) -> Any:
    try:
        return edit()
    except config_edit.Unsafe as exc:
        raise KnownError(f"{path}: {exc}, so Vodou does not rewrite it{hand}") from exc


def _check_writable(change: Change, hand: str) -> None:
    """Refuse before writing: a read-only file (whoever we are), a link that leads nowhere writable."""
    target = change.target
    if change.before is None:
        if change.through_link and not target.parent.is_dir():
            raise KnownError(f"{change.path} is a link to {target}, whose folder does not exist{hand}")
        return
    mode = stat.S_IMODE(target.stat().st_mode)
    if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        where = f" (a link to {target})" if change.through_link else ""
        raise KnownError(f"{change.path}{where} is read-only (mode {mode:04o}), so Vodou does not change it{hand}")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise KnownError(f"the folder of {target} is not writable, so Vodou cannot replace the file safely{hand}")


def snippet(name: str, command: str, args: list[str], env: dict[str, str]) -> str:
    """What ``--print-config`` prints: the file's part that holds Vodou's entry."""
    spec = client(name)
    value = entry(name, command, args, env)
    if spec.toml:
        return config_edit.toml_table(value)
    return json.dumps({spec.key: {SERVER_NAME: value}}, indent=2, ensure_ascii=False)
