"""Quick access (issue 35, item 1) offscreen: the box searches as you type, copies, opens in the
browser, adds with a project from the keyboard alone; the shortcut's state in Settings; the tray's
Search… and Add memory…; ``vodou quick`` through the single-instance socket. The real key grab is
tested on a real X display in tests/integration/tray/test_quick_access.py."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tests.support import run_cli
from tests.unit.ui.test_desktop import desktop  # noqa: F401  (the composed-app fixture)
from vodou_desktop import config, instance
from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.shortcuts import DEFAULT_QUICK_SHORTCUT, parse_shortcut
from vodou_desktop.ui.global_shortcut import BIND_COMMAND, GlobalShortcut, lock_variants
from vodou_desktop.ui.quick_box import QuickBox
from vodou_desktop.ui.quick_settings import QuickAccessSettings
from vodou_desktop.ui.single_instance import SingleInstance
from vodou_desktop.ui.tray import build_menu
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q


@pytest.fixture
def box(qtbot, services, seeded):
    quick = QuickBox(services)
    qtbot.addWidget(quick)
    quick.summon("search")
    qtbot.waitUntil(lambda: services.ops.pending == 0)
    return quick


def test_typing_searches_at_once_and_enter_copies_the_memory(qtbot, box, services):
    shown: list[tuple[str, int]] = []
    box.searched.connect(lambda text, n: shown.append((text, n)))
    qtbot.keyClicks(box.text, "pnpm")
    qtbot.waitUntil(lambda: bool(shown) and shown[-1][0] == "pnpm" and services.ops.pending == 0)
    assert shown[-1] == ("pnpm", 1)
    assert len(shown) <= 2  # "p" at once, then the last text; the keys between coalesced
    assert box.results.row_record(0).fact.text == "Use pnpm, not npm, in the web repository"
    qtbot.keyClick(box.text, Qt.Key.Key_Return)
    assert QGuiApplication.clipboard().text() == "Use pnpm, not npm, in the web repository"
    assert not box.isVisible()


def test_up_and_down_choose_the_result_and_nothing_is_copied_before_results_show(qtbot, box, services):
    copied: list[str] = []
    box._copy = copied.append
    box.text.setText("pnpm")
    qtbot.waitUntil(lambda: services.ops.pending == 0 and box.results.rowCount() == 1)
    box.text.setText("the")  # typed, not answered yet: Enter must not copy the answer to "pnpm"
    assert services.ops.pending == 1
    qtbot.keyClick(box.text, Qt.Key.Key_Return)
    assert copied == [] and box.isVisible()
    qtbot.waitUntil(lambda: services.ops.pending == 0 and box.results.rowCount() >= 2)
    qtbot.keyClick(box.text, Qt.Key.Key_Down)
    second = box.results.row_record(1).fact.text
    qtbot.keyClick(box.text, Qt.Key.Key_Return)
    assert copied[-1] == second


def test_tab_adds_what_was_typed_in_the_project_chosen_with_the_arrows(qtbot, box, services):
    vault = services.runtime.vault
    qtbot.keyClicks(box.text, "The heron survey starts at the mill")
    qtbot.keyClick(box.text, Qt.Key.Key_Tab)
    assert box.mode == "add" and box.add_row.isVisible() and not box.list.isVisible()
    qtbot.waitUntil(lambda: box.project.count() > 2)
    names = [box.project.itemText(i) for i in range(box.project.count())]
    assert names[0] == "No project (global)" and names[1:] == sorted(["infra", "web"])  # the vault's own
    qtbot.keyClick(box.text, Qt.Key.Key_Down)
    qtbot.keyClick(box.text, Qt.Key.Key_Down)
    assert box.project.currentData() == "web"
    with qtbot.waitSignal(box.saved, timeout=5000) as saved:
        qtbot.keyClick(box.text, Qt.Key.Key_Return)
    fact = vault.read(lambda conn: q.facts_by_ids(conn, [saved.args[0]], FactFilter(project=ALL_PROJECTS)))[0]
    assert (fact.text, fact.project, fact.source_kind) == ("The heron survey starts at the mill", "web", "panel")
    assert "Remembered memory" in box.status.text() and "in web" in box.status.text()
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=3000)


def test_an_empty_add_says_what_to_do_and_esc_closes(qtbot, box):
    qtbot.keyClick(box.text, Qt.Key.Key_Tab)
    qtbot.keyClick(box.text, Qt.Key.Key_Return)
    assert box.problem.text() == "Type the memory first."
    qtbot.keyClick(box.text, Qt.Key.Key_Tab)
    assert box.mode == "search"
    qtbot.keyClick(box.text, Qt.Key.Key_Escape)
    assert not box.isVisible()


def test_no_match_offers_to_add(qtbot, box, services):
    qtbot.keyClicks(box.text, "kingfisher")
    qtbot.waitUntil(lambda: services.ops.pending == 0 and "No memories match" in box.status.text())
    assert "Tab adds it" in box.status.text()


def test_ctrl_o_opens_the_memory_in_the_browser(qtbot, desktop):  # noqa: F811
    fact_id = remember(desktop.runtime.vault, "Kingfishers nest in river banks", Origin("cli"), project="birds")
    desktop.browser.hide()
    desktop.quick.summon("search")
    qtbot.keyClicks(desktop.quick.text, "kingfishers")
    qtbot.waitUntil(lambda: desktop.quick.results.rowCount() == 1, timeout=5000)
    qtbot.keyClick(desktop.quick.text, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    tab = desktop.browser.memories
    qtbot.waitUntil(lambda: desktop.browser.isVisible() and tab.selected_fact() is not None
                    and tab.selected_fact().id == fact_id, timeout=5000)
    assert tab.search_box.text() == "kingfishers" and not desktop.quick.isVisible()


def test_the_tray_menu_has_search_and_add_memory_and_search_opens_the_box(qtbot, desktop):  # noqa: F811
    menu = build_menu(desktop.actions)
    texts = [a.text() for a in menu.actions()]
    assert "Search…" in texts and "Add memory…" in texts
    desktop.actions["quick_search"].trigger()
    qtbot.waitUntil(desktop.quick.isVisible, timeout=3000)
    assert desktop.quick.mode == "search"


def test_offscreen_the_shortcut_is_said_unavailable_with_the_command_to_bind(qtbot, desktop):  # noqa: F811
    state = desktop.shortcut.state
    assert state.state == "unavailable" and BIND_COMMAND in state.words
    assert desktop.actions["quick_search"].shortcut().isEmpty()  # no key shown that would not work
    page = QuickAccessSettings(desktop.shortcut, desktop.runtime.settings)
    qtbot.addWidget(page)
    assert BIND_COMMAND in page.state.text() and page.chosen() == DEFAULT_QUICK_SHORTCUT


def test_vodou_quick_asks_the_running_app_for_the_box(qtbot, tmp_path):
    listener = SingleInstance(tmp_path / "desktop.sock")
    assert listener.listen()
    try:
        with qtbot.waitSignal(listener.quick_requested, timeout=3000):
            assert instance.knock("quick", tmp_path / "desktop.sock")
        assert not instance.knock("quick", tmp_path / "none.sock")  # no app: the command starts one
    finally:
        close(qtbot, listener)


def close(qtbot, listener: SingleInstance) -> None:  # type: ignore[no-untyped-def]
    """Close the socket and let its connections' deferred deletes run before the object goes."""
    listener.close()
    qtbot.wait(100)
    listener.deleteLater()
    qtbot.wait(50)


def test_vodou_quick_knocks_on_the_apps_socket_without_starting_another(qtbot, vodou_home):
    listener = SingleInstance(instance.socket_path())
    assert listener.listen()
    try:
        with qtbot.waitSignal(listener.quick_requested, timeout=3000):
            assert run_cli("quick").code == 0
    finally:
        close(qtbot, listener)


def test_settings_save_the_shortcut_and_refuse_one_that_cannot_work(qtbot, services):
    page = QuickAccessSettings(None, config.Settings())
    qtbot.addWidget(page)
    from PySide6.QtGui import QKeySequence

    page.keys.setKeySequence(QKeySequence("Ctrl+Alt+K"))
    assert page.apply(config.Settings()).quick_shortcut == "Ctrl+Alt+K"
    page.keys.setKeySequence(QKeySequence("Shift+K"))
    with pytest.raises(InvalidInput, match="needs Ctrl, Alt or Meta"):
        page.apply(config.Settings())
    page.clear.click()
    assert page.apply(config.Settings()).quick_shortcut == ""


@pytest.mark.parametrize("text, keysym, shown", [
    ("Ctrl+Shift+Space", "space", "Ctrl+Shift+Space"), ("ctrl+alt+k", "k", "Ctrl+Alt+K"),
    ("Meta+F5", "F5", "Meta+F5"), ("F9", "F9", "F9"), ("Ctrl+/", "slash", "Ctrl+/"),
])
def test_shortcuts_are_parsed_to_x_keysyms(text, keysym, shown):
    parsed = parse_shortcut(text)
    assert (parsed.keysym, parsed.text) == (keysym, shown)


@pytest.mark.parametrize("text", ["Shift+A", "Ctrl+Foo", "Ctrl+", "Hyper+K", "K"])
def test_a_shortcut_that_cannot_work_is_refused_in_words(text):
    with pytest.raises(InvalidInput):
        parse_shortcut(text)


def test_a_bad_shortcut_in_the_settings_file_is_a_clear_error(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"quick_shortcut": "Shift+A"}))
    with pytest.raises(KnownError, match="has a bad value: the shortcut 'Shift\\+A' needs Ctrl"):
        config.load(path)
    path.write_text(json.dumps({"quick_shortcut": "ctrl+shift+space"}))
    assert config.load(path).quick_shortcut == "Ctrl+Shift+Space"


def test_every_lock_state_is_grabbed():
    """X matches a grab's modifiers exactly: CapsLock, NumLock and ScrollLock in every combination."""
    masks = {"CapsLock": 2, "NumLock": 16, "ScrollLock": 128}
    assert sorted(lock_variants(masks)) == [0, 2, 16, 18, 128, 130, 144, 146]
    assert sorted(lock_variants({"CapsLock": 2, "NumLock": 16, "ScrollLock": 0})) == [0, 2, 16, 18]


def test_no_shortcut_set_says_so(qtbot):
    shortcut = GlobalShortcut()
    state = shortcut.start("")
    assert state.state == "off" and BIND_COMMAND in state.words
