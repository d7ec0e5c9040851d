"""The memory browser's Sites, Operator memory and Approvals tabs over a real vault.

Changes made from a tab go through the same governance services the bridge and the CLI use,
and every tab refreshes from the vault's change event (no test calls refresh).
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox
from pytestqt.modeltest import ModelTester

from vodou_desktop.governance.ages import format_date
from vodou_desktop.governance.approvals import Turn
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.ui.browser.opm_tab import NEVER_RECALLED
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.ui.table_model import Column, RecordTreeModel, TreeRow
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q


def open_tab(qtbot, services, name: str):  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    tab = browser.extra_tabs[name]
    browser.tabs.setCurrentWidget(tab)
    return browser, tab


def table(model) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in range(model.rowCount())]


def test_only_the_tabs_whose_service_exists_are_shown(qtbot, services, governed):
    plain = MemoryBrowser(services)
    qtbot.addWidget(plain)
    assert [plain.tabs.tabText(i) for i in range(plain.tabs.count())] == ["Memories", "Library"]
    full, _tab = open_tab(qtbot, governed, "Sites")
    assert [full.tabs.tabText(i) for i in range(full.tabs.count())] == [
        "Memories", "Library", "Sites", "Operator memory", "Approvals"]


# -- Sites ------------------------------------------------------------------------------------

def test_sites_list_hosts_with_mode_reason_and_fact_count(qtbot, governed, seeded):
    governed.sites.set_rule("mybank.example", "off")
    _browser, tab = open_tab(qtbot, governed, "Sites")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 3)
    assert table(tab.model) == [
        ["doc.rust-lang.org", "Collect", "global default", "1"],
        ["mybank.example", "Off", "user rule on mybank.example", "0"],
        ["wiki.example.com", "Collect", "global default", "1"],
    ]
    assert "Other sites: Collect (global default)" in tab.summary.text()
    ModelTester(None).check(tab.model)


def test_a_mode_set_in_the_sites_tab_is_what_site_modes_resolve(qtbot, governed, seeded):
    _browser, tab = open_tab(qtbot, governed, "Sites")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    tab.view.selectRow(1)
    assert tab.host.text() == "wiki.example.com"
    tab.mode_buttons["suggest"].click()
    qtbot.waitUntil(lambda: tab.model.row_record(1).mode == "suggest")
    assert tab.model.row_record(1).reason == "user rule on wiki.example.com"
    resolved = governed.sites.resolve("https://wiki.example.com/ops")
    assert (resolved.mode, resolved.reason) == ("suggest", "user rule on wiki.example.com")
    tab.clear_button.click()
    qtbot.waitUntil(lambda: tab.model.row_record(1).reason == "global default")
    assert governed.sites.resolve("wiki.example.com").mode == "collect"


def test_a_new_site_can_be_typed_and_a_bad_one_is_explained(qtbot, governed, seeded):
    _browser, tab = open_tab(qtbot, governed, "Sites")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    tab.host.setText("javascript:alert(1)")
    tab.mode_buttons["off"].click()
    qtbot.waitUntil(lambda: tab.problem.text() != "")
    assert governed.messages.history[-1][0] == "error"
    assert governed.sites.rules() == []
    tab.host.setText("News.Example.ORG")
    tab.mode_buttons["off"].click()
    qtbot.waitUntil(lambda: tab.model.rowCount() == 3)
    assert [r.host for r in tab.model.rows if r.mode == "off"] == ["news.example.org"]
    assert governed.sites.resolve("https://a.news.example.org/").mode == "off"


# -- Operator memory --------------------------------------------------------------------------

def _seed_opm(vault) -> dict[str, str]:  # type: ignore[no-untyped-def]
    opm = OperatorMemory(vault)
    pref = opm.add("preference", "Answer in British English").memory.id
    opm.correct(pref, "Answer in British English, metric units", source_ref="settings")
    initiative = opm.add("initiative", "Finish the tax return this month").memory.id
    past = OperatorMemory(vault, clock=lambda: datetime(2020, 1, 1, tzinfo=UTC))
    old = past.add("pinned_context", "Working on the 2019 migration").memory.id
    return {"pref": pref, "initiative": initiative, "old": old}


def _opm_rows(model) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    rows = {}
    for cat in range(model.rowCount()):
        parent = model.index(cat, 0)
        rows[parent.data()] = [model.index(i, 0, parent).data() for i in range(model.rowCount(parent))]
    return rows


def test_operator_memory_shows_categories_status_expiry_and_history(qtbot, governed):
    ids = _seed_opm(governed.runtime.vault)
    _browser, tab = open_tab(qtbot, governed, "Operator memory")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 3 and len(tab.model.records()) == 7)
    assert _opm_rows(tab.model) == {
        "Standing initiatives — 1 note (at most 1)": ["Finish the tax return this month"],
        "Preferences — 1 note (at most 12)": ["Answer in British English, metric units"],
        "Pinned contexts — 1 note (at most 8)": ["Working on the 2019 migration"],
    }
    by_text = {item.text: item for item in tab.model.records()}
    pref = by_text["Answer in British English, metric units"]
    assert (pref.status, pref.revision, pref.source) == ("active", "r2", "settings (first from operator)")
    assert "(in 364 days)" in pref.expires or "(in 365 days)" in pref.expires
    history = by_text["Answer in British English"]
    assert (history.kind, history.status, history.revision) == ("revision", NEVER_RECALLED, "r1 → r2")
    old = by_text["Working on the 2019 migration"]
    expired_on = format_date(datetime(2020, 3, 31, tzinfo=UTC).isoformat())  # a local date, in words
    assert (old.status, old.expires) == ("expired", f"expired {expired_on}") and "2020-" not in old.expires
    assert by_text["Pinned contexts — 1 note (at most 8)"].expires == "after 90 days"
    assert ids["old"] == old.memory_id
    ModelTester(None).check(tab.model)


def test_reauthorize_correct_and_forget_an_operator_memory(qtbot, governed):
    ids = _seed_opm(governed.runtime.vault)
    _browser, tab = open_tab(qtbot, governed, "Operator memory")
    qtbot.waitUntil(lambda: len(tab.model.records()) == 7)
    assert not tab.reauthorize_button.isEnabled()
    tab.select(ids["old"])
    tab.reauthorize_button.click()
    qtbot.waitUntil(lambda: tab.selected() is not None and tab.selected().status == "active")
    assert governed.opm.get(ids["old"]).status == "active"
    tab.correct_button.click()
    tab.prompt.set_text("Working on the 2025 migration")
    tab.prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: tab.selected() is not None and tab.selected().text == "Working on the 2025 migration")
    texts = {item.text: item.status for item in tab.model.records()}
    assert texts["Working on the 2019 migration"] == NEVER_RECALLED
    assert tab.erase_button.text() == "Erase…"  # it deletes for good: Erase, as everywhere (Forget hides)
    tab.erase_button.click()
    assert "for good" in tab.confirm_box.text()
    assert tab.confirm_box.button(QMessageBox.StandardButton.Yes).text() == "Erase"
    tab.confirm_box.button(QMessageBox.StandardButton.Cancel).click()
    tab.select(ids["old"])
    tab.erase_button.click()
    tab.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: "Pinned contexts — 0 notes (at most 8)" in _opm_rows(tab.model))
    assert [m.memory.id for m in governed.opm.list_memories()] == [ids["initiative"], ids["pref"]]


def test_a_refused_operator_memory_correction_is_shown_in_the_prompt(qtbot, governed):
    ids = _seed_opm(governed.runtime.vault)
    governed.opm.add("preference", "Short answers")
    _browser, tab = open_tab(qtbot, governed, "Operator memory")
    qtbot.waitUntil(lambda: len(tab.model.records()) == 8)
    tab.select(ids["pref"])
    tab.correct_button.click()
    tab.prompt.set_text("short answers!")
    tab.prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: "already stored" in tab.prompt.problem.text())
    assert tab.prompt.isVisible()


# -- Approvals --------------------------------------------------------------------------------

def test_approve_and_deny_from_the_approvals_tab(qtbot, governed):
    gate = governed.extras["gate"]
    turn = Turn(None, has_page_content=True)
    first = gate.submit("remember", {"text": "Remember the first parked fact"}, turn)["approval"]["id"]
    second = gate.submit("remember", {"text": "Remember the second parked fact"}, turn)["approval"]["id"]
    _browser, tab = open_tab(qtbot, governed, "Approvals")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    assert tab.summary.text() == "2 waiting for you"
    assert table(tab.model)[0][:4] == ["Remember", "Remember the first parked fact",
                                       tab.model.row_record(0)["reason"], "pending"]
    ModelTester(None).check(tab.model)
    assert tab.selected()["id"] == first  # the one that has waited longest
    tab.deny_button.click()
    qtbot.waitUntil(lambda: tab.summary.text() == "1 waiting for you")
    assert tab.selected()["id"] == second
    tab.approve_button.click()
    qtbot.waitUntil(lambda: tab.summary.text() == "Nothing waits for your approval.")
    assert [r["status"] for r in tab.model.rows] == ["approved", "denied"]
    assert not tab.approve_button.isEnabled()

    def texts() -> list[str]:
        facts = governed.runtime.vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
        return [f.text for f in facts]

    qtbot.waitUntil(lambda: texts() == ["Remember the second parked fact"])


def test_approvals_put_pending_first_in_plain_words_and_never_cut_the_reason(qtbot, governed):
    gate = governed.extras["gate"]
    turn = Turn(None, has_page_content=True)
    done = gate.submit("remember", {"text": "An early one"}, turn)["approval"]["id"]
    gate.resolve(done, "deny")
    gate.submit("site_mode", {"host": "news.example.com", "mode": "off"}, turn)
    browser, tab = open_tab(qtbot, governed, "Approvals")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    assert [r["status"] for r in tab.model.rows] == ["pending", "denied"]
    row = table(tab.model)[0]
    assert row[:2] == ["Change site mode", "news.example.com → Off"]
    assert row[2].startswith("A web page was part of this message, so anything that changes your memory waits")
    assert "side-effecting" not in row[2] and "turn" not in row[2]
    assert tab.view.wordWrap() and tab.view.textElideMode() == Qt.TextElideMode.ElideNone
    browser.resize(1100, 700)
    tab.view.resizeRowsToContents()
    reason = tab.model.index(0, 2)
    needed = tab.view.sizeHintForIndex(reason).height()
    assert tab.view.rowHeight(0) >= needed  # the whole reason fits, wrapped at spaces


def test_approvals_say_why_in_the_past_tense_once_decided(qtbot, governed):
    gate = governed.extras["gate"]
    turn = Turn(None, has_page_content=True)
    denied = gate.submit("remember", {"text": "A denied one"}, turn)["approval"]["id"]
    gate.resolve(denied, "deny")
    gate.submit("remember", {"text": "A waiting one"}, turn)
    _browser, tab = open_tab(qtbot, governed, "Approvals")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    assert tab.model.headerData(2, Qt.Orientation.Horizontal) == "Why it asked"
    waiting, decided = (row[2] for row in table(tab.model))
    assert "waits for you" in waiting and waiting.endswith("It is not saved: it ends when you quit Vodou, so decide "
                                                           "before then.")
    assert decided == ("A web page was part of this message, so it waited for your decision (the page could have "
                       "asked for it).")
    assert "waits" not in decided and "decide before" not in decided and "not saved" not in decided


# -- the tree model ---------------------------------------------------------------------------

def test_record_tree_model_passes_the_model_tester(qtbot):
    model: RecordTreeModel[str] = RecordTreeModel([Column("Name", str.upper), Column("Length", len)])
    tester = ModelTester(None)
    tester.check(model)
    model.set_rows([TreeRow("a", [TreeRow("aa", [TreeRow("aaa")]), TreeRow("ab")]), TreeRow("b")])
    tester.check(model)
    assert model.index(0, 0, model.index(0, 0)).data() == "AA"
    assert model.parent(model.index(0, 0, model.index(0, 0, model.index(0, 0)))).data() == "AA"
    assert model.records() == ["a", "aa", "aaa", "ab", "b"]
    model.set_rows([])
    tester.check(model)


def test_approvals_rows_are_tall_enough_for_every_wrapped_line(qtbot, governed):
    """The reason's last line was cut at the bottom of its row: the row must hold the text as the
    font wraps it at the column's width, less the cell's text margins."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QStyle

    gate = governed.extras["gate"]
    turn = Turn(None, has_page_content=True)
    done = gate.submit("remember", {"text": "An early one"}, turn)["approval"]["id"]
    gate.resolve(done, "deny")
    gate.submit("remember", {"text": "Herons nest in colonies"}, turn)
    browser, tab = open_tab(qtbot, governed, "Approvals")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    browser.resize(1100, 700)
    browser.show()
    qtbot.waitExposed(browser)
    qtbot.wait(50)
    view = tab.view
    margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    metrics = view.fontMetrics()
    for row in range(tab.model.rowCount()):
        for column in range(tab.model.columnCount()):
            text = str(tab.model.index(row, column).data() or "")
            width = view.columnWidth(column) - 2 * margin
            needed = metrics.boundingRect(QRect(0, 0, width, 10_000), Qt.TextFlag.TextWordWrap, text).height()
            assert view.rowHeight(row) >= needed + 2, (row, column, view.rowHeight(row), needed, text)


def test_forget_site_from_the_sites_tab_forgets_the_selected_row(qtbot, governed, seeded):
    _browser, tab = open_tab(qtbot, governed, "Sites")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2)
    assert not tab.forget_button.isEnabled()  # nothing chosen yet
    row = [site.host for site in tab.model.rows].index("wiki.example.com")
    tab.view.selectRow(row)
    assert tab.forget_button.isEnabled() and tab.forget_button.text() == "Forget site…"
    tab.forget_button.click()
    dialog = tab.forget_dialog
    assert dialog is not None and dialog.host.text() == "wiki.example.com"
    qtbot.waitUntil(lambda: dialog.step == "confirm")  # its dry run said how many
    dialog.confirm_button.click()
    qtbot.waitUntil(lambda: dialog.step != "confirm")
    assert dialog.step == "done", dialog.summary.text()
    vault = governed.runtime.vault
    texts = [f.text for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))]
    assert "The staging database password rotates every Monday" not in texts and len(texts) == 4
