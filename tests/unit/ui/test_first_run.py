"""The first launch of the composed app (issues 24 and 35): one welcome window, not modal, in a
person's words (no "capture tier", "first_party", "bridge"), that fits this computer: where the key
really goes, the AI tools found here and only those, each with a button to connect it; once seen,
nothing opens at start."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QDialog, QDialogButtonBox, QLabel, QMessageBox

from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from tests.unit.ui.test_desktop import desktop  # noqa: F401  (the composed-app fixture)
from vodou_desktop import config
from vodou_desktop.ingest.capture_watchers import CLAUDE_KEY
from vodou_desktop.mcp import install
from vodou_desktop.ui.encryption_flow import OFFERED_KEY
from vodou_desktop.ui.welcome import SHOWN_KEY

# Words of the code, not of the person: the tier names, the bridge, the storage engine, our jargon.
JARGON = ("tier", "capture tier", "first_party", "first party", "bridge", "sqlite", "mcp", "embedding", "op id",
          "ops", "backfill", "watcher")


def open_dialogs(earlier: list[QDialog] | None = None) -> list[QDialog]:
    """The dialogs shown now, but those another test left open (``earlier``)."""
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()
            and not any(w is e for e in earlier or [])]


@pytest.fixture
def earlier(qapp) -> list[QDialog]:
    """Dialogs already open before the app starts (left by earlier tests in this process)."""
    return open_dialogs()


def shown_text(dialog: QDialog) -> str:
    """Everything the dialog shows in words: its title, labels and buttons."""
    parts = [dialog.windowTitle()]
    parts += [w.text() for w in dialog.findChildren(QLabel) if w.isVisible()]
    parts += [w.text().replace("&", "") for w in dialog.findChildren(QAbstractButton) if w.isVisible()]
    return "\n".join(parts)


def jargon_in(text: str) -> list[str]:
    folded = text.casefold()
    return [word for word in JARGON if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", folded)]


def decline(dialog: QDialog) -> None:
    """"No" / "Not now": the answer that changes nothing."""
    assert isinstance(dialog, QMessageBox)
    button = next(b for b in dialog.buttons()
                  if dialog.buttonRole(b) in (QMessageBox.ButtonRole.NoRole, QMessageBox.ButtonRole.RejectRole))
    button.click()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder where Cursor and Claude Code are installed (their folders) and no other AI tool."""
    folder = tmp_path / "home"
    (folder / ".cursor").mkdir(parents=True)
    (folder / ".claude").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("PATH", str(tmp_path / "no-commands"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


def without_paths(text: str) -> str:
    """A path names the person's own files (``default.vodou.sqlite``): no jargon of ours."""
    return re.sub(r"(?:/[\w.+-]+)+/?", "PATH", text)


def test_first_launch_opens_one_welcome_window_never_modal(qtbot, earlier, home, desktop):  # noqa: F811
    qtbot.waitUntil(lambda: len(open_dialogs(earlier)) > 0)
    qtbot.waitUntil(lambda: desktop.welcome is not None and desktop.welcome.facts is not None, timeout=5000)
    dialogs = open_dialogs(earlier)
    assert dialogs == [desktop.welcome]  # one window, no question box beside it
    welcome = desktop.welcome
    assert welcome.windowModality() == Qt.WindowModality.NonModal and not welcome.isModal()
    said = shown_text(welcome)
    assert jargon_in(without_paths(said)) == [], said
    assert str(desktop.runtime.vault.path) in said
    assert "a file in" in welcome.encryption.text() and "no keyring" in welcome.encryption.text()  # as it is here
    assert "Ctrl+Shift+Space" in said or "vodou quick" in said
    assert sorted(welcome.connect_buttons) == ["claude-code", "cursor"]  # only the AI tools found here
    assert welcome.capture_claude.isVisible() and not welcome.capture_claude.isChecked()
    welcome.buttons.button(QDialogButtonBox.StandardButton.Close).click()
    qtbot.waitUntil(lambda: not welcome.isVisible())
    qtbot.waitUntil(lambda: desktop.runtime.settings.extra.get(SHOWN_KEY) is True, timeout=5000)
    saved = config.load()
    assert saved.extra[SHOWN_KEY] and saved.extra[OFFERED_KEY] and saved.extra[CLAUDE_KEY] is False
    assert open_dialogs(earlier) == []  # the questions it replaced are answered: none follows


def test_the_welcome_connects_an_ai_tool_found_here(qtbot, earlier, home, desktop):  # noqa: F811
    qtbot.waitUntil(lambda: desktop.welcome is not None and "cursor" in desktop.welcome.connect_buttons,
                    timeout=5000)
    welcome = desktop.welcome
    welcome.connect_buttons["cursor"].click()
    qtbot.waitUntil(lambda: not welcome.connect_buttons["cursor"].isEnabled()
                    and welcome.connect_buttons["cursor"].text() == "Connected", timeout=5000)
    assert install.is_installed("cursor", home / ".cursor" / "mcp.json")
    welcome.capture_claude.setChecked(True)
    welcome.close()
    qtbot.waitUntil(lambda: desktop.runtime.settings.extra.get(CLAUDE_KEY) is True, timeout=5000)


def test_no_ai_tool_found_says_so_and_offers_none(qtbot, earlier, tmp_path, monkeypatch, desktop):  # noqa: F811
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-commands"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    welcome = desktop.show_welcome()
    welcome.refresh()
    qtbot.waitUntil(lambda: "was found on this computer" in welcome.tools_intro.text(), timeout=5000)
    assert welcome.connect_buttons == {} and not welcome.capture_claude.isVisible()


def test_after_the_welcome_was_seen_nothing_opens_at_start(qtbot, earlier, qapp, keyword_search):
    import asyncio

    import qasync

    from vodou_desktop.app import Desktop
    from vodou_desktop.runtime import Runtime

    settings = config.Settings(extra={SHOWN_KEY: True, OFFERED_KEY: True, CLAUDE_KEY: False})
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    runtime = Runtime(settings, keyword_search.vault, keyword_search.embedder, keyword_search.index, keyword_search)
    app = Desktop(runtime, bridge_port=0)
    app.start()
    try:
        qtbot.wait(300)
        assert app.welcome is None and open_dialogs(earlier) == []
    finally:
        done = asyncio.ensure_future(app.shutdown())
        qtbot.waitUntil(done.done, timeout=5000)
        app.services.close()
        app.bridge_services.close()
        app.hub_signals.close()
        asyncio.set_event_loop(None)
        loop.close()


def test_the_jargon_check_finds_the_words_it_looks_for():
    assert jargon_in("Saved in the capture tier by the browser bridge") == ["tier", "capture tier", "bridge"]
    assert jargon_in("first_party memories") == ["first_party"]
    assert jargon_in("Your memories, kept on this computer") == []
