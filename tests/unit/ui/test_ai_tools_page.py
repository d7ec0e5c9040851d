"""The memory browser's "AI tools" page over a real vault and a temporary home: which clients have
Vodou in their configuration, what each AI tool wrote, and a default project set from the page is
the one every ``vodou mcp`` reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.mcp.projects import default_projects
from vodou_desktop.ui.ai_tools_page import AiToolsPage


def rows(model) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[str(model.index(r, c).data()) for c in range(model.columnCount())] for r in range(model.rowCount())]


def test_the_page_shows_set_up_clients_writers_and_sets_a_default(qtbot, services, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert run_cli("mcp", "install", "cursor").code == 0
    vault = services.runtime.vault
    for i in range(3):
        remember(vault, f"note {i}", Origin(kind="mcp", tier="capture", tool="claude-code"))
    remember(vault, "by hand", Origin(kind="cli", tool="cli"))
    page = AiToolsPage(services)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.writers.modelReset, timeout=10_000):
        page.refresh()
    states = {r[0]: r[1] for r in rows(page.clients)}
    assert states["Cursor"] == "set up" and states["Codex"] == "no configuration file"
    assert rows(page.writers) == [["claude-code", "3", "—"]]  # only AI tools over MCP, not the CLI

    page.writer_view.selectRow(0)
    page.project.setText("alpha")
    with qtbot.waitSignal(page.writers.modelReset, timeout=10_000):
        page.set_default()
    assert rows(page.writers) == [["claude-code", "3", "alpha"]]
    assert vault.read(lambda c: default_projects(c, "claude-code"))[0][0] == "alpha"
    page.project.setText("bad\nname")
    page.set_default()
    assert "single line" in page.problem.text()


def test_the_page_sets_up_the_selected_tool(qtbot, services, tmp_path: Path,  # type: ignore[no-untyped-def]
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from vodou_desktop.mcp import install

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    page = AiToolsPage(services)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.clients.modelReset, timeout=10_000):
        page.refresh()
    assert not page.setup_button.isEnabled()  # nothing selected
    row = next(r for r, setup in enumerate(page.clients.rows) if setup.client == "codex")
    page.client_view.selectRow(row)
    assert page.setup_button.isEnabled()
    with qtbot.waitSignal(page.clients.modelReset, timeout=10_000):
        page.setup_button.click()
    assert install.is_installed("codex", tmp_path / ".codex" / "config.toml")
    assert {r[0]: r[1] for r in rows(page.clients)}["Codex"] == "set up"
    assert not page.setup_button.isEnabled()  # set up already: nothing more to do for it
    assert any("Vodou is set up in Codex" in text for _kind, text in services.messages.history)
