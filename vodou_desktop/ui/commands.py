"""What each registered action does. Vault work runs as ops; nothing here blocks the GUI thread."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QMessageBox

from vodou_desktop.bridge import events
from vodou_desktop.errors import KnownError
from vodou_desktop.ui.backup_dialogs import BackupFlow, ensure_file_actions
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog
from vodou_desktop.ui.long_work import JobProgressDialog, backfill_job
from vodou_desktop.ui.pair_dialog import PairDialog, browser_label, spaced_code
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.words import plural


class Commands:
    """Handlers for the action registry, bound to the running desktop (see ``app.Desktop``)."""

    def __init__(self, desktop: Any) -> None:
        self.d = desktop
        self._dialogs: list[Any] = []
        self.backups = BackupFlow(desktop.services, desktop.runtime.vault.path, desktop.browser, desktop.vault_swap)

    def connect_actions(self) -> None:
        actions = self.d.actions
        actions.mode_group.triggered.connect(lambda action: self.set_mode(action.data()))
        actions.on("pause", self.set_paused)
        actions.on("open_browser", self.d.browser.raise_window)
        actions.on("quick_search", lambda: self.d.quick.summon("search"))
        actions.on("welcome", self.d.show_welcome)
        actions.on("forget_site", self.forget_site)
        actions.on("pair", self.pair)
        actions.on("settings", self.settings)
        actions.on("backfill", self.backfill)
        actions.on("quit", self.d.request_quit)
        ensure_file_actions(actions)
        actions.on("backup", self.backups.backup)
        actions.on("restore", self.backups.restore)
        actions.on("export", self.backups.export)

    def set_mode(self, mode: str) -> None:
        """The same service the bridge's PUT uses, so GET /api/page-match/site-mode agrees."""
        host, sites = self.d.active_page.state.host, self.d.sites
        if not host:
            return
        self.d.services.ops.run(lambda: sites.set_rule(host, mode), lambda _r: self.d.active_page.refresh())

    def set_paused(self, paused: bool) -> None:
        sites = self.d.sites
        self.d.services.ops.run(lambda: sites.set_paused(paused), lambda _r: self.d.active_page.refresh())

    def forget_site(self) -> None:
        self.d.panel.hide()
        dialog = ForgetSiteDialog(self.d.forgetting, self.d.services.ops, self.d.active_page.state.host or "")
        self._keep(dialog)

    def pair(self) -> None:
        self._keep(PairDialog(self.d.bridge, self.d.services.ops))

    def settings(self) -> None:
        dialog = SettingsDialog(self.d.services, self.d.sites, self.d.bridge.tokens,
                                vault_path=self.d.runtime.vault.path)
        dialog.accepted.connect(lambda: self.d.shortcut.start(self.d.runtime.settings.quick_shortcut))
        self._keep(dialog)

    def backfill(self) -> None:
        try:
            job = backfill_job(self.d.runtime.vault, self.d.runtime.embedder)
        except KnownError as exc:
            self.d.services.messages.error(str(exc))
            return
        self._keep(JobProgressDialog(job))
        job.start()

    def bridge_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == events.PAIRING_CODE:
            self._keep(PairDialog(self.d.bridge, self.d.services.ops, code=payload))
            shown = spaced_code(str(payload.get("code", "")))
            self.d.services.messages.info(f"Pairing code for the browser extension: {shown}")
            if self.d.tray is not None:
                self.d.tray.notify("Vodou pairing code", f"Type {shown} into the browser extension")
        elif kind == events.PAIRED:
            for dialog in self._dialogs:
                if isinstance(dialog, PairDialog):
                    dialog.paired(payload)
            self.d.services.messages.info(f"Paired with {browser_label(payload)}.")
        elif kind == events.APPROVALS_CHANGED:
            self.d.panel.refresh()
            approvals_tab = self.d.browser.extra_tabs.get("Approvals")  # in-memory approvals change no table
            if approvals_tab is not None:
                approvals_tab.refresh()  # type: ignore[attr-defined]
            if payload.get("pending") and self.d.tray is not None:
                self.d.tray.notify("Vodou", f"{plural(payload['pending'], 'action')} waiting for your approval")

    def show_error(self, text: str) -> None:
        if self.d.tray is not None:
            self.d.tray.notify("Vodou", text, error=True)

    def poll_external(self) -> None:
        """Notice writes by the CLI beside the app (the vault then broadcasts an external change)."""
        vault = self.d.runtime.vault
        self.d.services.ops.run(vault.poll_external)

    def _keep(self, dialog: Any) -> None:
        self._dialogs = [d for d in self._dialogs if d.isVisible()]
        self._dialogs.append(dialog)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()


def confirm(parent: Any, title: str, text: str) -> bool:
    answer = QMessageBox.question(parent, title, text, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
