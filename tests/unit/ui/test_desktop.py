"""The composed app offscreen: real bridge on 127.0.0.1 under qasync, tray actions, panel, single instance."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from vodou_desktop import config
from vodou_desktop.app import NO_TRAY, Desktop
from vodou_desktop.bridge import events
from vodou_desktop.governance.approvals import Turn
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.pages import page_key
from vodou_desktop.runtime import Runtime
from vodou_desktop.ui.pair_dialog import PairDialog
from vodou_desktop.ui.single_instance import ask_running_instance_to_show
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

EXT = "abcdefghijklmnopabcdefghijklmnop"
PAGE = "https://news.example.com/story?id=7"


@pytest.fixture
def desktop(qtbot, qapp, keyword_search):
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    search = keyword_search
    runtime = Runtime(config.Settings(), search.vault, search.embedder, search.index, search)
    app = Desktop(runtime, bridge_port=0)
    app.start()
    qtbot.waitUntil(lambda: app.bridge.port is not None, timeout=5000)
    yield app
    done = asyncio.ensure_future(app.shutdown())
    qtbot.waitUntil(done.done, timeout=5000)
    app.services.close()
    app.bridge_services.close()
    app.hub_signals.close()
    for window in (app.browser, app.panel):
        window.deleteLater()
    asyncio.set_event_loop(None)
    loop.close()


def get_json(url: str, token: str) -> dict:
    """A real HTTP request from another thread, while the qasync loop runs the server on this one."""

    def fetch() -> dict:
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read())

    loop = asyncio.get_event_loop()
    with ThreadPoolExecutor(1) as pool:
        return loop.run_until_complete(asyncio.wait_for(loop.run_in_executor(pool, fetch), 8))


def post_json(url: str, body: dict, origin: str) -> tuple[int, dict]:
    """A real POST from another thread (the extension's pairing calls), answered by the qasync loop."""

    def send() -> tuple[int, dict]:
        headers = {"Origin": origin, "X-Vodou-Client": "extension", "Content-Type": "application/json"}
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    loop = asyncio.get_event_loop()
    with ThreadPoolExecutor(1) as pool:
        return loop.run_until_complete(asyncio.wait_for(loop.run_in_executor(pool, send), 8))


def report_page(qtbot, desktop, url: str = PAGE, title: str = "A story") -> None:
    report = {"url": url, "title": title}
    desktop.hub.emit(events.ACTIVE_PAGE, report)
    qtbot.waitUntil(lambda: desktop.active_page.state.url == url, timeout=3000)


def test_without_a_tray_the_browser_opens_and_says_why(qtbot, desktop):
    assert desktop.tray is None  # offscreen has no system tray
    assert desktop.browser.isVisible()
    assert ("info", NO_TRAY) in desktop.services.messages.history


def test_a_mode_set_from_the_menu_is_what_the_bridge_returns(qtbot, desktop):
    report_page(qtbot, desktop)
    assert desktop.actions["mode.collect"].isChecked()
    assert desktop.actions["page"].text() == "news.example.com — collect (global default)"
    desktop.actions["mode.suggest"].trigger()
    qtbot.waitUntil(lambda: desktop.active_page.state.mode == "suggest", timeout=3000)
    assert desktop.actions["mode.suggest"].isChecked()
    token = desktop.bridge.tokens.pair(EXT)
    url = f"http://127.0.0.1:{desktop.bridge.port}/api/page-match/site-mode?host=news.example.com"
    answer = get_json(url, token)
    assert answer["mode"] == "suggest"
    assert answer["reason"] == "user rule on news.example.com"


def test_pause_dims_the_icon_state(qtbot, desktop):
    report_page(qtbot, desktop)
    assert desktop.active_page.state.icon_state == "neutral"
    desktop.actions["pause"].trigger()
    qtbot.waitUntil(lambda: desktop.active_page.state.icon_state == "paused", timeout=3000)
    assert desktop.sites.paused
    assert not desktop.actions["mode.collect"].isEnabled()


def test_an_off_site_dims_the_tray_like_the_toolbar(qtbot, desktop):
    """Issue 14 defect 4: the toolbar dimmed on an off site while the tray stayed blue."""
    report_page(qtbot, desktop)
    assert desktop.active_page.state.icon_state == "neutral"
    desktop.sites.set_rule("bank.example", "off")
    off = {"accepted": False, "url": None, "pageKey": None, "title": None, "host": "bank.example",
           "mode": "off", "reason": "user rule on bank.example"}
    desktop.hub.emit(events.ACTIVE_PAGE, off)  # what GET site-mode?host=…&active=1 raises on an off site
    qtbot.waitUntil(lambda: desktop.active_page.state.icon_state == "dimmed", timeout=3000)
    assert desktop.actions["page"].text() == "bank.example — off (user rule on bank.example)"


def test_memory_saved_from_the_page_turns_the_state_green(qtbot, desktop):
    report_page(qtbot, desktop)
    remember(desktop.runtime.vault, "The story says the bridge reopens in May", Origin("note", url=PAGE))
    qtbot.waitUntil(lambda: desktop.active_page.state.icon_state == "green", timeout=1000)


def test_panel_shows_facts_and_documents_from_this_page(qtbot, desktop):
    vault = desktop.runtime.vault
    remember(vault, "Exact fact from the story", Origin("note", url=PAGE))
    remember(vault, "Another page of the same site", Origin("note", url="https://news.example.com/other"))
    save_document(vault, "Body of the story.\n\nSecond paragraph.", Origin("library", url=PAGE, title="Story"))
    report_page(qtbot, desktop)
    panel = desktop.panel
    qtbot.waitUntil(lambda: panel.loaded is not None and panel.facts.rowCount() == 1, timeout=3000)
    assert panel.facts.index(0, 0).data() == "Exact fact from the story\nglobal · fact"
    assert panel.documents.rowCount() == 1
    assert panel.title.text() == "A story" and panel.host.text() == "news.example.com"


def test_tray_panel_lists_every_project_exactly_when_the_icon_is_green(qtbot, desktop):
    """Issue 14 defect 1: green icon ⇔ the panel lists it; all projects, each with its project."""
    vault = desktop.runtime.vault
    report_page(qtbot, desktop)
    panel = desktop.panel
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=3000)
    assert desktop.active_page.state.icon_state == "neutral" and panel.facts.rowCount() == 0
    assert panel.empty.isVisibleTo(panel) and "No memories saved from this page" in panel.empty.text()
    for project in ("family", "thesis", "garden"):
        remember(vault, f"Story memory for {project}", Origin("note", url=PAGE), project=project)
    qtbot.waitUntil(lambda: desktop.active_page.state.icon_state == "green", timeout=3000)
    panel.refresh()
    qtbot.waitUntil(lambda: panel.facts.rowCount() == 3, timeout=3000)
    shown = {panel.facts.index(i, 0).data() for i in range(3)}
    assert shown == {f"Story memory for {p}\n{p} · fact" for p in ("family", "thesis", "garden")}
    assert not panel.empty.isVisibleTo(panel)
    assert [panel.project.itemText(i) for i in range(panel.project.count())] == [
        "No project (global)", "family", "garden", "thesis"]
    panel.project.setCurrentIndex(2)
    panel.project.activated.emit(2)
    assert panel.site_projects.get("news.example.com") == "garden"  # remembered per site
    qtbot.waitUntil(lambda: panel.project.currentText() == "garden" and panel.facts.rowCount() == 3, timeout=3000)
    assert panel.note_button.isEnabled()  # collect here: a note goes to the chosen project
    panel.add_note()
    panel.note_prompt.set_text("Garden note from the tray")
    panel.note_prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: panel.facts.rowCount() == 4, timeout=3000)
    saved = vault.read(lambda c: q.facts_for_page(c, page_key(PAGE), FactFilter(project=ALL_PROJECTS)))
    assert {(f.text, f.project) for f in saved} >= {("Garden note from the tray", "garden")}


def test_tray_panel_without_a_page_says_how_to_pair(qtbot, desktop):
    panel = desktop.panel
    panel.set_page(desktop.active_page.state)
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=3000)
    assert "Pair the browser extension" in panel.empty.text()


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_approve_or_deny_from_the_panel(qtbot, desktop, decision):
    gate = desktop.bridge_services.gate
    parked = gate.submit("remember", {"text": "Remember the parked fact"}, Turn(None, has_page_content=True))
    assert parked["status"] == "pending"
    panel = desktop.panel
    panel.refresh()
    qtbot.waitUntil(lambda: panel.approvals.rowCount() == 1, timeout=3000)
    button = panel.approve_button if decision == "approve" else panel.deny_button
    button.click()
    qtbot.waitUntil(lambda: panel.approvals.rowCount() == 0, timeout=3000)
    facts = desktop.runtime.vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert [f.text for f in facts] == (["Remember the parked fact"] if decision == "approve" else [])
    assert gate.get(parked["approval"]["id"])["status"] == ("approved" if decision == "approve" else "denied")


def test_an_in_memory_approval_shows_in_the_approvals_tab_and_says_it_is_not_saved(qtbot, desktop):
    tab = desktop.browser.extra_tabs["Approvals"]
    tab.refresh()
    qtbot.waitUntil(lambda: tab.summary.text() == "Nothing waits for your approval.", timeout=3000)
    qtbot.wait(1000)  # let that refresh settle: only the approvals event may bring the new row
    parked = desktop.bridge_services.gate.submit("remember", {"text": "From a page"}, Turn(None, has_page_content=True))
    assert parked["approval"]["volatile"] is True
    qtbot.waitUntil(lambda: tab.summary.text() == "1 waiting for you", timeout=3000)  # no vault change needed
    assert "It is not saved: it ends when you quit Vodou" in tab.model.row_record(0)["reason"]


def test_a_second_launch_raises_the_browser(qtbot, desktop):
    desktop.browser.hide()
    assert ask_running_instance_to_show()
    qtbot.waitUntil(desktop.browser.isVisible, timeout=3000)


def test_quit_closes_the_bridge(qtbot, desktop):
    desktop.actions["quit"].trigger()
    assert desktop._quit.is_set()
    QApplication.processEvents()


def test_a_mode_set_in_the_sites_tab_is_what_the_bridge_returns(qtbot, desktop):
    tab = desktop.browser.extra_tabs["Sites"]
    tab.host.setText("forum.example.net")
    tab.mode_buttons["off"].click()
    qtbot.waitUntil(lambda: [r.mode for r in tab.model.rows if r.host == "forum.example.net"] == ["off"],
                    timeout=3000)
    token = desktop.bridge.tokens.pair(EXT)
    url = f"http://127.0.0.1:{desktop.bridge.port}/api/page-match/site-mode?host=forum.example.net"
    answer = get_json(url, token)
    assert (answer["mode"], answer["reason"]) == ("off", "user rule on forum.example.net")


def test_the_browser_tabs_use_the_app_services(qtbot, desktop):
    assert list(desktop.browser.extra_tabs) == ["Sites", "Operator memory", "Approvals", "AI tools"]
    assert desktop.browser.extra_tabs["Approvals"]._gate is desktop.bridge_services.gate  # the panel's gate
    assert desktop.browser.extra_tabs["AI tools"]._services is desktop.services  # the app's vault and workers
    assert desktop.services.sites is desktop.sites and desktop.services.forgetting is desktop.forgetting


def test_a_pairing_code_from_the_bridge_is_shown_and_pairing_completes(qtbot, desktop):
    base, origin = f"http://127.0.0.1:{desktop.bridge.port}", f"chrome-extension://{EXT}"
    status, _answer = post_json(f"{base}/api/pair/start", {}, origin)
    assert status == 202

    def shown() -> list[PairDialog]:
        return [d for d in desktop.commands._dialogs if isinstance(d, PairDialog) and d.isVisible()]

    qtbot.waitUntil(lambda: len(shown()) == 1, timeout=3000)
    code = desktop.hub.last[events.PAIRING_CODE]["code"]
    assert shown()[0].code.text() == f"{code[:4]}-{code[4:]}"
    assert ("info", f"Pairing code for the browser extension: {code[:4]}-{code[4:]}") in \
        desktop.services.messages.history
    status, answer = post_json(f"{base}/api/pair/complete", {"code": shown()[0].code.text(), "browser": "Chromium"},
                               origin)
    assert status == 200 and answer["extensionId"] == EXT
    said = "Paired with Chromium."
    qtbot.waitUntil(lambda: ("info", said) in desktop.services.messages.history, timeout=3000)
    assert desktop.bridge.tokens.is_paired(EXT)
    dialog = shown()[0]  # says what happened and what to do next; the used code is gone
    assert dialog.how.text().startswith("<b>Paired with Chromium.</b>")
    assert code not in dialog.code.text() and "Open any web page" in dialog.how.text()
    assert desktop.bridge.tokens.pairings()[0].browser == "Chromium"
