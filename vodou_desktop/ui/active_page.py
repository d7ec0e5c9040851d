"""The page open in the browser, as the extension reports it, and the icon state it implies.

States (UI-2): ``dimmed`` when the page's mode is off or collection is paused; ``green`` when
exact facts or documents were saved from this page (never site or title matches, BRIDGE-3);
``neutral`` otherwise. The state is recomputed off the GUI thread whenever the extension reports
a new page, or the vault changes that page, the site rules or the pause setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from vodou_desktop.pages import page_key
from vodou_desktop.ui.ops import Ops
from vodou_desktop.vault import ALL_PROJECTS, Change, FactFilter, Vault
from vodou_desktop.vault import query as q


@dataclass(frozen=True)
class PageState:
    url: str | None = None
    title: str | None = None
    host: str | None = None
    mode: str | None = None
    reason: str | None = None
    paused: bool = False
    has_memory: bool = False

    @property
    def icon_state(self) -> str:
        if self.paused:
            return "paused"
        if self.mode == "off":
            return "dimmed"
        return "green" if self.has_memory else "neutral"

    @property
    def key(self) -> str | None:
        return page_key(self.url) if self.url else None


def read_page_state(vault: Vault, sites: Any, url: str | None, title: str | None) -> PageState:
    """Resolve the mode and look for exact memory of ``url`` (runs in a worker)."""
    paused = bool(sites.paused)
    if not url:
        return PageState(paused=paused)
    resolution = sites.resolve(url)
    has = False
    if resolution.mode != "off":
        has = bool(vault.read(lambda c: q.page_has_memory(c, page_key(url), FactFilter(project=ALL_PROJECTS))))
    return PageState(url, title, resolution.host, resolution.mode, resolution.reason, paused, has)


class ActivePage(QObject):
    changed = Signal(object)  # PageState
    _reported = Signal(object)  # bridge payload, marshalled to the GUI thread

    def __init__(self, vault: Vault, sites: Any, ops: Ops, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._vault, self._sites, self._ops = vault, sites, ops
        self.state = PageState()
        self._url: str | None = None
        self._title: str | None = None
        self._reported.connect(self._on_report)

    def report(self, payload: dict[str, Any]) -> None:
        """The bridge's ``active_page`` event (any thread)."""
        self._reported.emit(payload)

    def _on_report(self, payload: dict[str, Any]) -> None:
        self._url, self._title = payload.get("url"), payload.get("title")
        if self._url is None and payload.get("mode") == "off" and payload.get("host"):
            # An off site: the extension sent its host only. Same look as the toolbar: dimmed.
            self._set(PageState(None, None, payload["host"], "off", payload.get("reason"), bool(self._sites.paused)))
            return
        self.refresh()

    def on_bridge_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "active_page":
            self.report(payload)

    def refresh(self) -> None:
        vault, sites, url, title = self._vault, self._sites, self._url, self._title
        self._ops.run(lambda: read_page_state(vault, sites, url, title), self._set, owner=self)

    def vault_changed(self, change: Change) -> None:
        key = self.state.key
        if change.external or change.tables & {"site_rules", "settings", "*"} or (key and key in change.page_keys) \
                or (self.state.host and self.state.host in change.hosts):
            self.refresh()

    def _set(self, state: PageState) -> None:
        if state.url == self._url:
            self.state = state
            self.changed.emit(state)
