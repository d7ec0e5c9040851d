"""The tray icon and its menu (UI-1). The icon follows the active page; the menu is built from
the shared action registry, so the panel and the memory browser trigger the very same commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRect, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from vodou_desktop.ui.actions import MODES, ActionRegistry
from vodou_desktop.ui.active_page import PageState
from vodou_desktop.ui.icon import icon_for_state

MENU_LAYOUT = ("page", "-", "mode.off", "mode.suggest", "mode.collect", "-", "pause", "-", "quick_search",
               "add_memory", "open_browser", "-", "forget_site", "pair", "settings", "backfill", "-", "quit")


def build_menu(actions: ActionRegistry, layout: tuple[str, ...] = MENU_LAYOUT) -> QMenu:
    menu = QMenu()
    for name in layout:
        if name == "-":
            menu.addSeparator()
        else:
            menu.addAction(actions[name])
    return menu


def window_keys_out_of_context_menus(app: QApplication) -> None:
    """The tray menu (and the list's context menu) hold the window's own shortcuts, which work only in
    a Vodou window: they are shown in the menu bar, not in a menu that opens over another app (the
    actions whose keys work there say so themselves: ``setShortcutVisibleInContextMenu``)."""
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowShortcutsInContextMenus)


def show_quick_key(actions: ActionRegistry, state: Any) -> None:
    """Search… shows the quick-access key only while it works from any app (``ShortcutState``)."""
    search = actions["quick_search"]
    search.setShortcut(QKeySequence(state.text) if state.active else QKeySequence())
    search.setShortcutVisibleInContextMenu(state.active)
    search.setToolTip(state.words)


def describe(state: PageState) -> str:
    """One line for the menu header, the tooltip and the panel: host, mode and why."""
    if state.paused:
        return "Collection paused — Vodou reads no page"
    if not state.host:
        return "No page from the browser yet"
    return f"{state.host} — {state.mode} ({state.reason})"


def update_actions(actions: ActionRegistry, state: PageState) -> None:
    """Put the page's host, mode and pause state into the shared actions."""
    actions["page"].setText(describe(state))
    has_page = bool(state.host)
    for mode in MODES:
        action = actions[f"mode.{mode}"]
        action.setEnabled(has_page and not state.paused)
        action.blockSignals(True)
        action.setChecked(has_page and state.mode == mode and not state.paused)
        action.blockSignals(False)
    pause = actions["pause"]
    pause.blockSignals(True)
    pause.setChecked(state.paused)
    pause.blockSignals(False)


class Tray(QObject):
    """``QSystemTrayIcon`` + menu. Left click asks for the panel (``panel_requested``)."""

    panel_requested = Signal(QRect)

    def __init__(self, actions: ActionRegistry, model_text: Callable[[], str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.actions = actions
        self._model_text = model_text
        self.icon_state = "neutral"
        self.state = PageState()
        self.menu = build_menu(actions)
        self.icon = QSystemTrayIcon(icon_for_state("neutral"), self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.update_tooltip()

    def show(self) -> None:
        self.icon.show()

    def set_page(self, state: PageState) -> None:
        self.state = state
        if state.icon_state != self.icon_state:
            self.icon_state = state.icon_state
            self.icon.setIcon(icon_for_state(state.icon_state))
        self.update_tooltip()

    def update_tooltip(self, *_: object) -> None:
        self.icon.setToolTip(f"Vodou\n{describe(self.state)}\n{self._model_text()}")

    def notify(self, title: str, text: str, error: bool = False) -> None:
        kind = QSystemTrayIcon.MessageIcon.Warning if error else QSystemTrayIcon.MessageIcon.Information
        self.icon.showMessage(title, text, kind, 8000)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.panel_requested.emit(self.icon.geometry())
