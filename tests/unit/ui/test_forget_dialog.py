"""Forget site… (GOV-7) with an injected clock: dry run counts, 8-second confirm, Undo."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def site(vault):
    for text in ("Tabs are better than spaces here", "The w3 tutorial explains flexbox"):
        remember(vault, text, Origin("note", url="https://www.w3schools.com/css/"))
    remember(vault, "Unrelated fact from elsewhere", Origin("note", url="https://example.org/"))
    save_document(vault, "A saved article body", Origin("library", url="https://www.w3schools.com/a"))


def visible(vault) -> int:
    return vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS)))


def make_dialog(qtbot, vault, services, clock) -> ForgetSiteDialog:
    dialog = ForgetSiteDialog(Forgetting(vault, clock), services.ops, "w3schools.com", clock=clock)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def dry_run(qtbot, dialog: ForgetSiteDialog) -> None:
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.step == "confirm")


def test_dry_run_shows_counts_and_changes_nothing(qtbot, vault, services, site, clock):
    dialog = make_dialog(qtbot, vault, services, clock)
    dry_run(qtbot, dialog)
    assert "2 memories will be hidden" in dialog.summary.text()
    assert "1 Library page from this site will be kept" in dialog.summary.text()
    assert dialog.confirm_button.isVisible() and dialog.confirm_button.text().endswith("(8 s)")
    assert visible(vault) == 3


def test_confirm_at_7_9_seconds_forgets_then_undo_restores(qtbot, vault, services, site, clock):
    dialog = make_dialog(qtbot, vault, services, clock)
    dry_run(qtbot, dialog)
    clock.now += 7.9
    qtbot.wait(150)  # the countdown ticks; the button is still live
    assert dialog.confirm_button.isEnabled() and dialog.confirm_button.text().endswith("(1 s)")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.step == "done")
    assert "Forgot 2 memories" in dialog.summary.text()
    assert visible(vault) == 1
    assert dialog.undo_button.isVisible()
    qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.step == "undone")
    assert "Undone: 2 memories from w3schools.com restored" in dialog.summary.text()
    assert visible(vault) == 3


def test_at_8_1_seconds_the_confirm_disables_itself_and_nothing_happens(qtbot, vault, services, site, clock):
    dialog = make_dialog(qtbot, vault, services, clock)
    dry_run(qtbot, dialog)
    button = dialog.confirm_button
    clock.now += 8.1
    qtbot.waitUntil(lambda: not button.isEnabled())
    assert dialog.step == "plan" and dialog.check_button.isVisible() and not button.isVisible()
    assert "nothing was forgotten" in dialog.summary.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog.confirm()  # even called directly, a late confirm does nothing
    qtbot.wait(200)
    assert dialog.step == "plan"
    assert visible(vault) == 3


def test_a_late_confirm_is_refused_by_the_service_too(qtbot, vault, services, site, clock):
    forgetting = Forgetting(vault, clock)
    dialog = ForgetSiteDialog(forgetting, services.ops, "w3schools.com", clock=FakeClock())  # a stuck UI clock
    qtbot.addWidget(dialog)
    dry_run(qtbot, dialog)
    clock.now += 8.1  # only the service sees the time pass
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.step == "plan")
    assert "expired" in dialog.summary.text()
    assert visible(vault) == 3


def test_a_bad_host_is_explained(qtbot, vault, services, clock):
    dialog = make_dialog(qtbot, vault, services, clock)
    dialog.host.setText("javascript:alert(1)")
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    assert "not a web page URL" in dialog.summary.text()
    assert dialog.step == "plan"


def test_the_countdown_never_outlasts_the_services_window(qtbot, vault, services, site, clock):
    """The service's 8 seconds start when it answers the dry run; a dialog that counted from the
    answer's arrival offered "(1 s)" for a confirm the service already refused (issue 35)."""
    forgetting = Forgetting(vault, clock)
    planned = forgetting.plan

    def slow_plan(host):  # type: ignore[no-untyped-def]
        answer = planned(host)  # the service's window opens here
        clock.now += 1.5  # and the answer reaches the dialog 1.5 s later (a busy vault, a loaded machine)
        return answer

    forgetting.plan = slow_plan  # type: ignore[method-assign]
    dialog = ForgetSiteDialog(forgetting, services.ops, "w3schools.com", clock=clock)
    qtbot.addWidget(dialog)
    dialog.show()
    dry_run(qtbot, dialog)
    clock.now += 7.0  # 8.5 s after the service's window opened: it refuses a confirm now
    qtbot.wait(150)
    assert not (dialog.confirm_button.isVisible() and dialog.confirm_button.isEnabled()), \
        dialog.confirm_button.text()
    assert "ran out" in dialog.summary.text()
    assert visible(vault) == 3
