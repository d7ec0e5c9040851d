"""The embedding model's state (loading / ready / off / failed) in the tray tooltip and the status bar.

The tray is wired exactly as the app wires it (``ModelStatus.changed`` → ``Tray.update_tooltip``);
offscreen there is no tray host, but the ``QSystemTrayIcon`` and its tooltip are real.
"""

from __future__ import annotations

import pytest

from vodou_desktop.search.embedder import Embedder
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.active_page import PageState
from vodou_desktop.ui.services import ModelStatus
from vodou_desktop.ui.tray import Tray


def wired_tray(embedder: Embedder) -> tuple[Tray, ModelStatus]:
    status = ModelStatus(embedder)
    tray = Tray(ActionRegistry(), status.text)
    status.changed.connect(tray.update_tooltip)
    return tray, status


def test_tooltip_says_loading_then_failed_when_the_model_cannot_load(qtbot, tmp_path):
    embedder = Embedder(str(tmp_path / "no-such-model"))
    tray, _status = wired_tray(embedder)
    assert tray.icon.toolTip() == ("Vodou\nNo page from the browser yet\n"
                                   "Meaning search: model loading… (keyword search meanwhile)")
    embedder.start()
    qtbot.waitUntil(lambda: "failed to load" in tray.icon.toolTip(), timeout=20000)
    assert tray.icon.toolTip().endswith("Meaning search: model failed to load (keyword search only)")


def test_tooltip_says_off_and_keeps_the_page_line(qtbot):
    tray, _status = wired_tray(Embedder("none"))
    tray.set_page(PageState("https://example.com/a", "A", "example.com", "suggest", "user rule on example.com"))
    assert tray.icon.toolTip() == ("Vodou\nexample.com — suggest (user rule on example.com)\n"
                                   "Meaning search: off (keyword search only)")


@pytest.mark.model
def test_tooltip_and_status_bar_say_ready_with_the_real_model(qtbot, model, services):
    from vodou_desktop.ui.browser.window import MemoryBrowser

    tray, _status = wired_tray(model)
    assert tray.icon.toolTip().endswith("Meaning search: model ready")
    services.model_status = ModelStatus(model)
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    assert browser.model_label.text() == "Meaning search: model ready"
