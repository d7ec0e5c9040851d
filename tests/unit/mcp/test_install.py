"""``vodou mcp install / uninstall CLIENT`` on a temporary home, for every client: the client's other
servers and settings are kept, a ``.bak`` is written, a second install changes nothing, uninstall
gives back what was there; the entry carries --vault and VODOU_HOME; files Vodou cannot edit safely
are left alone with the entry to add by hand."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli
from vodou_desktop.mcp import install

CODEX_BEFORE = ('# my codex settings\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n'
                'args = ["x"]\n\n[mcp_servers.other.env]\nTOKEN = "t"\n\n[profiles.fast]\nmodel = "mini"\n')


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("CODEX_HOME", "APPDATA", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)
    return home


def _parse(client: str, text: str) -> Any:
    return tomllib.loads(text) if client == "codex" else json.loads(text)


def _existing(client: str) -> str:
    if client == "codex":
        return CODEX_BEFORE
    key = install.CLIENTS[client].key
    return json.dumps({"theme": "dark", key: {"other": {"command": "other-server", "args": ["x"]}}}, indent=4)


def _servers(client: str, text: str) -> dict[str, Any]:
    return _parse(client, text)[install.CLIENTS[client].key]


@pytest.mark.parametrize("client", list(install.CLIENTS))
def test_install_keeps_the_rest_backs_up_is_idempotent_and_uninstall_restores(client: str, home: Path,
                                                                              vodou_home: Path) -> None:
    path = install.config_path(client)
    assert str(path).startswith(str(home))
    path.parent.mkdir(parents=True, exist_ok=True)
    before = _existing(client)
    path.write_text(before)
    vault = home / "my-vault.sqlite"

    dry = run_cli("--vault", str(vault), "mcp", "install", client, "--dry-run")
    assert dry.code == 0, dry.err
    assert path.read_text() == before and str(path) in dry.out and "vodou" in dry.out

    done = run_cli("--vault", str(vault), "mcp", "install", client)
    assert done.code == 0, done.err
    servers = _servers(client, path.read_text())
    assert servers["other"] == _servers(client, before)["other"]  # the other server is kept
    ours = servers["vodou"]
    assert ours["args"][-1] == "mcp" and ours["args"][-3:-1] == ["--vault", str(vault.resolve())]
    assert ours["env"] == {"VODOU_HOME": str(vodou_home.resolve())}
    assert Path(ours["command"]).is_absolute()
    after = _parse(client, path.read_text())
    assert {k: v for k, v in after.items() if k != install.CLIENTS[client].key} == \
        {k: v for k, v in _parse(client, before).items() if k != install.CLIENTS[client].key}
    backup = path.with_name(path.name + ".bak")
    assert backup.read_text() == before

    written = path.read_text()
    again = run_cli("--vault", str(vault), "mcp", "install", client)
    assert again.code == 0 and "nothing to change" in again.out and path.read_text() == written

    removed = run_cli("mcp", "uninstall", client)
    assert removed.code == 0, removed.err
    assert _parse(client, path.read_text()) == _parse(client, before)
    if client == "codex":
        assert path.read_text() == before  # the text itself, comments and order included
    assert "nothing to change" in run_cli("mcp", "uninstall", client).out


@pytest.mark.parametrize("client", ["cursor", "codex"])
def test_install_into_a_missing_file_creates_it(client: str, home: Path) -> None:
    assert run_cli("mcp", "install", client, "--project", "alpha").code == 0
    path = install.config_path(client)
    ours = _servers(client, path.read_text())["vodou"]
    assert ours["args"][-3:] == ["mcp", "--project", "alpha"]
    assert not path.with_name(path.name + ".bak").exists()


def test_a_file_with_comments_is_left_alone(home: Path) -> None:
    path = install.config_path("zed")
    path.parent.mkdir(parents=True)
    text = '// Zed settings\n{\n  "theme": "One Dark", // my theme\n}\n'
    path.write_text(text)
    result = run_cli("mcp", "install", "zed")
    assert result.code != 0 and "not strict JSON" in result.err and '"context_servers"' in result.err
    assert path.read_text() == text and not path.with_name("settings.json.bak").exists()


def test_claude_code_also_gets_its_own_command_and_print_config_carries_the_vault(home: Path,
                                                                                 vodou_home: Path) -> None:
    result = run_cli("--vault", str(home / "v.sqlite"), "mcp", "install", "claude-code", "--dry-run")
    assert "claude mcp add --scope user -e VODOU_HOME=" in result.out and " vodou -- " in result.out
    printed = run_cli("--vault", str(home / "v.sqlite"), "mcp", "--print-config", "claude-desktop")
    entry = json.loads(printed.out)["mcpServers"]["vodou"]
    assert entry["env"] == {"VODOU_HOME": str(vodou_home.resolve())} and "--vault" in entry["args"]
    codex = run_cli("mcp", "--print-config", "codex")
    assert tomllib.loads(codex.out)["mcp_servers"]["vodou"]["args"][-1] == "mcp"


def test_platform_paths() -> None:
    env = {"HOME": "/h", "APPDATA": "C:/Users/p/AppData/Roaming"}
    assert install.config_path("claude-desktop", env, "darwin") == Path(
        "/h/Library/Application Support/Claude/claude_desktop_config.json")
    assert install.config_path("claude-desktop", env, "linux") == Path("/h/.config/Claude/claude_desktop_config.json")
    assert install.config_path("vscode", env, "win32") == Path("C:/Users/p/AppData/Roaming/Code/User/mcp.json")
    assert install.config_path("codex", {**env, "CODEX_HOME": "/c"}, "linux") == Path("/c/config.toml")
    assert install.config_path("zed", env, "darwin") == Path("/h/.config/zed/settings.json")
