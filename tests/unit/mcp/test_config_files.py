"""Other applications' configuration files, edited as carefully as our own (``vodou mcp install`` /
``uninstall``): every byte outside Vodou's entry survives (numbers, escapes, order, layout,
comments), a symbolic link is written through and kept, a read-only or non-strict file is refused
with the entry to paste, the file keeps its mode (new ones are 0600), the write is crash-safe, and
no input ends in a traceback."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli
from vodou_desktop.mcp import install

JSON_CLIENTS = [c for c, spec in install.CLIENTS.items() if not spec.toml]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("CODEX_HOME", "APPDATA", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)
    return home


def _place(client: str, text: str | bytes, mode: int | None = None) -> Path:
    path = install.config_path(client)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    if mode is not None:
        path.chmod(mode)
    return path


def _ours(client: str, text: str) -> Any:
    spec = install.CLIENTS[client]
    data = tomllib.loads(text) if spec.toml else json.loads(text)
    return data[spec.key]["vodou"]


# -- every byte outside the entry --------------------------------------------------------------

# Layouts and tokens a JSON round trip through floats and str would change. Each file holds another
# server whose values must come back as written.
JSON_FILES = {
    "two spaces": '{\n  "theme": "dark",\n  "mcpServers": {\n    "other": {"command": "x", "timeout": 1e400}\n  }\n}\n',
    "four spaces, no newline at the end": '{\n    "mcpServers": {\n        "other": {\n            "command": "x",'
                                          '\n            "ratio": 1.10, "neg": -0\n        }\n    },\n    "z": 1\n}',
    "tabs": '{\n\t"a": "caf\\u00e9 \\/ \\ud83d",\n\t"mcpServers": {\n\t\t"other": {"command": "x"}\n\t}\n}\n',
    "one line": '{"mcpServers": {"other": {"command": "x", "big": 123456789012345678901234567890}}, "n": 2E-3}',
    "no servers yet": '{\n  "z-first": true,\n  "a-second": [1.0, 2.50, 1e-7],\n  "esc": "\\u2028\\"q\\""\n}\n',
    "empty servers": '{\n  "mcpServers": {},\n  "after": 0.1\n}\n',
    "crlf": '{\r\n  "mcpServers": {\r\n    "other": {"command": "x"}\r\n  },\r\n  "keep": 1e400\r\n}\r\n',
    "empty object": "{}",
}


@pytest.mark.parametrize("layout", list(JSON_FILES))
def test_json_install_then_uninstall_gives_back_every_byte(layout: str, home: Path) -> None:
    before = JSON_FILES[layout]
    path = _place("cursor", before)
    done = run_cli("mcp", "install", "cursor")
    assert done.code == 0, done.err
    after = path.read_text(encoding="utf-8")
    ours = _ours("cursor", after)
    assert ours["args"][-1] == "mcp"
    rest = after  # the person's text: our entry's own strings (paths such as ``pytest-0``) left out
    for written in (ours["command"], *ours["args"], *ours.get("env", {}).values()):
        rest = rest.replace(json.dumps(written)[1:-1], "")
    for token in ("1e400", "1.10", "-0", "123456789012345678901234567890", "2E-3", "2.50", "1e-7",
                  "\\u00e9", "\\/", "\\ud83d", "\\u2028"):
        assert rest.count(token) == before.count(token), token  # numbers and escapes as written
    assert "Infinity" not in after
    removed = run_cli("mcp", "uninstall", "cursor")
    assert removed.code == 0, removed.err
    back = path.read_bytes().decode()
    if layout == "no servers yet":  # the servers object Vodou added stays, empty
        assert back == before.replace('\n}\n', ',\n  "mcpServers": {}\n}\n')
    elif layout == "empty object":
        assert json.loads(back) == {"mcpServers": {}}
    else:
        assert back == before


def test_json_replacing_an_old_entry_changes_only_that_entry(home: Path) -> None:
    old = '{\n  "mcpServers": {\n    "a": {"n": 1e400},\n    "vodou": {"command": "/old/vodou", "args": []},\n' \
          '    "b": {"s": "\\ud83d"}\n  }\n}\n'
    path = _place("cursor", old)
    assert run_cli("mcp", "install", "cursor").code == 0
    new = path.read_text()
    start, end = old.index('{"command": "/old'), old.index('},\n    "b"') + 1
    assert new.startswith(old[:start]) and new.endswith(old[end:])
    assert _ours("cursor", new)["command"] != "/old/vodou"
    assert run_cli("mcp", "uninstall", "cursor").code == 0
    assert path.read_text() == old[:old.index(',\n    "vodou"')] + old[end:]


CODEX = ('# my codex settings\nmodel = "o3"  # the model I pay for\n\n[mcp_servers.vodou]\ncommand = "/old/vodou"\n'
         'args = []\n\n# my other server, keep it\n[mcp_servers.other]\ncommand = "other-server"  # pinned\n'
         'args = ["x"]\n\n[mcp_servers.other.env]\nTOKEN = "t"\n\n# profiles below\n[profiles.fast]\nmodel = "mini"\n')


def test_codex_table_followed_by_others_keeps_them_exactly(home: Path) -> None:
    """Vodou's table in the middle, followed by other tables and the comments above them: install then
    uninstall keep everything after it exactly (issue 36, item 13)."""
    path = _place("codex", CODEX)
    tail = CODEX[CODEX.index("\n# my other server"):]
    assert run_cli("mcp", "install", "codex").code == 0
    installed = path.read_text()
    assert installed.startswith(CODEX[:CODEX.index("[mcp_servers.vodou]")]) and installed.endswith(tail)
    assert _ours("codex", installed)["command"] != "/old/vodou"
    assert tomllib.loads(installed)["mcp_servers"]["other"] == {"command": "other-server", "args": ["x"],
                                                                "env": {"TOKEN": "t"}}
    assert run_cli("mcp", "uninstall", "codex").code == 0
    assert path.read_text() == CODEX[:CODEX.index("[mcp_servers.vodou]")] + tail.lstrip("\n")


@pytest.mark.parametrize("before", [
    "# only a comment\n",
    '# top\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "o"\n\n# a trailing comment\n',
    'model = "o3"\n[profiles.x]\nmodel = "y" # no blank line at the end',
    "",
])
def test_codex_comments_survive_install_then_uninstall_byte_for_byte(before: str, home: Path) -> None:
    path = _place("codex", before)
    assert run_cli("mcp", "install", "codex").code == 0
    assert path.read_text().startswith(before)
    assert run_cli("mcp", "uninstall", "codex").code == 0
    back = path.read_text()
    assert back == before or (not before.endswith("\n") and back == before + "\n") or (before == "" and back == "")


def test_codex_entry_with_characters_outside_the_bmp_is_valid_toml(home: Path) -> None:
    path = _place("codex", 'model = "o3"\n')
    command, args = str(home / "bin 😀" / "vodou"), ["--vault", str(home / "vault \"é\".sqlite"), "mcp"]
    change = install.apply(install.plan_install("codex", command, args, {"VODOU_HOME": "/h\\x"}, path))
    ours = tomllib.loads(path.read_text())["mcp_servers"]["vodou"]
    assert change.changed and ours == {"command": command, "args": args, "env": {"VODOU_HOME": "/h\\x"}}


# -- links, read-only files, files that are not strict JSON ---------------------------------------

@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_install_through_a_symlink_updates_the_target_and_keeps_the_link(client: str, home: Path) -> None:
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    before = CODEX if client == "codex" else '{\n  "mcpServers": {\n    "other": {"n": 1e400}\n  }\n}\n'
    target = dotfiles / "config"
    target.write_text(before)
    target.chmod(0o600)
    link = install.config_path(client)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    done = run_cli("mcp", "install", client)
    assert done.code == 0, done.err
    assert link.is_symlink() and link.resolve() == target.resolve() and "the link is kept" in done.out
    assert _ours(client, target.read_text())["args"][-1] == "mcp"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in dotfiles.iterdir()) == ["config"]  # no temporary or backup left there
    backup = link.with_name(link.name + ".bak")
    assert not backup.is_symlink() and backup.read_text() == before
    assert run_cli("mcp", "uninstall", client).code == 0
    assert link.is_symlink() and "vodou" not in (tomllib.loads(target.read_text()) if client == "codex"
                                                else json.loads(target.read_text()))["mcpServers" if
                                                client != "codex" else "mcp_servers"]


def test_a_dangling_link_into_a_missing_folder_is_refused(home: Path) -> None:
    link = install.config_path("cursor")
    link.parent.mkdir(parents=True)
    link.symlink_to(home / "gone" / "mcp.json")
    result = run_cli("mcp", "install", "cursor")
    assert result.code == 2 and "does not exist" in result.err.splitlines()[0] and '"mcpServers"' in result.err
    assert link.is_symlink() and not (home / "gone").exists()


@pytest.mark.parametrize("client", ["cursor", "codex"])
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_read_only_file_is_refused_with_what_to_do(client: str, action: str, home: Path) -> None:
    spec = install.CLIENTS[client]
    if spec.toml:
        before = CODEX
    else:
        before = '{"mcpServers": {"vodou": {"command": "/old"}, "other": {}}}'
    path = _place(client, before, 0o444)
    result = run_cli("mcp", action, client)
    first = result.err.splitlines()[0]
    assert result.code == 2 and "read-only" in first and "0444" in first, result.err
    if action == "install":  # the entry to paste follows the one-line reason
        assert ("[mcp_servers.vodou]" if spec.toml else '"mcpServers"') in result.err
    assert path.read_text() == before and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not path.with_name(path.name + ".bak").exists()


NOT_STRICT = {
    "comment": '// mine\n{"mcpServers": {}}',
    "trailing comma": '{"mcpServers": {"a": {},},}',
    "NaN": '{"mcpServers": {"a": {"n": NaN}}}',
    "Infinity": '{"x": Infinity}',
    "byte order mark": '\ufeff{"mcpServers": {}}',
    "array": "[1, 2]",
    "two servers keys": '{"mcpServers": {"a": {}}, "mcpServers": {"b": {}}}',
    "two vodou entries": '{"mcpServers": {"vodou": {}, "vodou": {"command": "x"}}}',
    "servers not an object": '{"mcpServers": ["vodou"]}',
    "not UTF-8": b'{"mcpServers": {}, "name": "caf\xe9"}',
    "control character in a string": '{"a": "tab\there"}',
}


@pytest.mark.parametrize("case", list(NOT_STRICT))
def test_a_file_that_is_not_strict_json_is_refused_with_the_entry(case: str, home: Path) -> None:
    before = NOT_STRICT[case]
    path = _place("claude-desktop", before)
    raw = path.read_bytes()
    result = run_cli("mcp", "install", "claude-desktop")
    assert result.code == 2, (result.out, result.err)
    assert "Traceback" not in result.err and str(path) in result.err.splitlines()[0]
    assert "by hand" in result.err.splitlines()[0] and '"mcpServers": {\n    "vodou"' in result.err
    assert path.read_bytes() == raw and not path.with_name(path.name + ".bak").exists()


def test_a_lone_surrogate_escape_is_kept_and_no_traceback(home: Path) -> None:
    before = '{\n  "note": "\\ud83d half an emoji",\n  "mcpServers": {}\n}\n'
    path = _place("gemini", before)
    for action in ("install", "uninstall"):
        result = run_cli("mcp", action, "gemini")
        assert result.code == 0 and "Traceback" not in result.err, result.err
        assert '"\\ud83d half an emoji"' in path.read_text()
    assert path.read_text() == before


def test_a_folder_where_the_file_should_be_is_a_message(home: Path) -> None:
    install.config_path("cursor").mkdir(parents=True)
    for action in ("install", "uninstall"):
        result = run_cli("mcp", action, "cursor")
        assert result.code == 2 and "cannot read" in result.err and "Traceback" not in result.err


# -- modes and crash safety ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
def test_install_keeps_the_file_mode_and_the_backup_is_no_more_readable(mode: int, home: Path) -> None:
    """``~/.claude.json`` can hold credentials: 0600 stays 0600, and so does its ``.bak``; a file
    others may read keeps its mode too (issue 36, item 14)."""
    path = _place("claude-code", '{"oauthAccount": {"token": "t"}}', mode)
    assert run_cli("mcp", "install", "claude-code").code == 0
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert stat.S_IMODE(path.with_name(path.name + ".bak").stat().st_mode) == mode
    assert run_cli("mcp", "uninstall", "claude-code").code == 0
    assert stat.S_IMODE(path.stat().st_mode) == mode


@pytest.mark.parametrize("client", ["claude-code", "codex", "vscode"])
def test_a_new_client_file_is_created_0600(client: str, home: Path) -> None:
    assert run_cli("mcp", "install", client).code == 0
    path = install.config_path(client)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.with_name(path.name + ".bak").exists()


def test_the_write_is_a_synced_temp_renamed_in_the_targets_folder(home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real = home / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    link = install.config_path("cursor")
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    calls: list[tuple[str, Any]] = []
    fsync, replace = os.fsync, os.replace

    def record_fsync(fd: int) -> None:
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def record_replace(src: Any, dst: Any) -> None:
        calls.append(("replace", (str(src), str(dst))))
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", record_fsync)
    monkeypatch.setattr(os, "replace", record_replace)
    assert run_cli("mcp", "install", "cursor").code == 0
    writes = [c for c in calls if c[0] == "replace"]
    assert [dst for _, (_, dst) in writes] == [str(link.with_name("mcp.json.bak")), str(real)]
    temp = writes[1][1][0]
    assert Path(temp).parent == real.parent and not Path(temp).exists()
    at = calls.index(writes[1])
    assert calls[at - 1] == ("fsync", temp) and calls[at + 1] == ("fsync", str(real.parent))
    assert link.is_symlink()
