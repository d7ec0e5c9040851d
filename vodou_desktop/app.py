"""The composition root of the tray app: ``vodou`` with no command (qutebrowser's ``app.py``).

Start order, read top to bottom in ``Desktop.start``:
  1. vault, embedder (loads in the background), search            — ``Runtime.open``
  2. governance: site modes, forgetting, operator memory, page lane — shared with the bridge
  3. UI plumbing: message bridge, ops, vault events, actions, active page
  4. windows: memory browser, panel, quick access and its global shortcut, tray (or the browser
     alone when there is no tray host)
  5. capture watchers enabled in Settings (Claude Code sessions, inbox), paused with everything else;
     the first run's welcome window (where the vault is, encryption, the extension, quick access, the
     AI tools found here: nothing changes before a button is pressed)
  6. the bridge on this same asyncio loop (qasync)
Shutdown is the reverse: bridge closed, watchers stopped, ops finished, writer drained, vault closed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QSystemTrayIcon

from vodou_desktop import desktop_entry, paths
from vodou_desktop.bridge.events import EventHub
from vodou_desktop.bridge.server import BridgeServer
from vodou_desktop.bridge.services import Services as BridgeServices
from vodou_desktop.errors import KnownError
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.runtime import Runtime
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.active_page import ActivePage
from vodou_desktop.ui.ai_tools_page import AiToolsPage
from vodou_desktop.ui.backup_schedule import RollingBackups
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.ui.capture_status import CaptureStatus
from vodou_desktop.ui.commands import Commands
from vodou_desktop.ui.encryption_flow import EncryptionFlow
from vodou_desktop.ui.global_shortcut import GlobalShortcut, ShortcutState
from vodou_desktop.ui.hub_signals import HubSignals
from vodou_desktop.ui.icon import icon_for_state
from vodou_desktop.ui.ops import freeze_startup_objects
from vodou_desktop.ui.panel import Panel
from vodou_desktop.ui.quick_box import QuickBox
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.single_instance import SingleInstance, ask_running_instance_to_show
from vodou_desktop.ui.style import PaletteKeeper
from vodou_desktop.ui.sync_status import SyncStatus
from vodou_desktop.ui.tray import Tray, show_quick_key, update_actions, window_keys_out_of_context_menus
from vodou_desktop.ui.unlock import UnlockDialog, locked_out
from vodou_desktop.ui.vault_swap import VaultSwap
from vodou_desktop.ui.welcome import WelcomeWindow, needs_welcome
from vodou_desktop.vault import secret_filter

log = logging.getLogger(__name__)
EXTERNAL_POLL_MS = 2000
NO_TRAY = ("No system tray was found on this desktop, so Vodou runs in this window. "
           "Closing it quits Vodou.")


def app_browser(services: Services, actions: ActionRegistry | None = None) -> MemoryBrowser:
    """The memory browser with every tab the app gives it: the browser's own, then AI tools (the MCP
    clients, what each AI tool wrote, their default projects). The screenshot gallery opens this too."""
    browser = MemoryBrowser(services, actions=actions)
    browser.add_tab("AI tools", AiToolsPage(services))
    return browser


class Desktop:
    """Everything the running app owns, built in start order and closed in reverse."""

    def __init__(self, runtime: Runtime, *, bridge_port: int | None = None, background: bool = False,
                 quick: bool = False) -> None:
        self.runtime = runtime
        self.bridge_port = bridge_port
        self.background = background  # started at login: open no window while a tray icon is the way in
        self.quick_at_start = quick  # started by `vodou quick`: the quick box first, not the browser
        vault, search = runtime.vault, runtime.search
        # 2. governance, shared by the tray and the bridge (one forget token table, one rule set)
        self.sites = SiteModes(vault)
        self.forgetting = Forgetting(vault)
        self.hub = EventHub()
        self.bridge_services = BridgeServices.build(vault, search, self.hub, runtime.settings,
                                                    sites=self.sites, forgetting=self.forgetting)
        self.bridge = BridgeServer(self.bridge_services, hub=self.hub, default_port=runtime.settings.bridge_port)
        # 3. UI plumbing
        self.services = Services.build(runtime, sites=self.sites, forgetting=self.forgetting,
                                       page_memory=self.bridge_services.pages, opm=OperatorMemory(vault),
                                       bridge=self.bridge, extras={"gate": self.bridge_services.gate})
        self.actions = ActionRegistry()
        self.capture = CaptureStatus(self.services, self.actions)  # before the commands: Pause stops it first
        self.services.extras["capture"] = self.capture
        self.sync = SyncStatus(self.services, self.actions)  # sync in the background (docs/sync.md)
        self.services.extras["sync"] = self.sync
        self.active_page = ActivePage(vault, self.sites, self.services.ops)
        self.hub_signals = HubSignals(self.hub)
        # 4. windows
        self.browser = app_browser(self.services, self.actions)
        self.panel = Panel(self.actions, self.services.ops, self.bridge_services.pages, self.bridge_services.gate)
        self.quick = QuickBox(self.services)
        self.shortcut = GlobalShortcut()
        self.services.extras["quick_shortcut"] = self.shortcut  # Settings ▸ Quick access changes it
        self.tray: Tray | None = None
        self.rolling_backups = RollingBackups(self.services)
        # File ▸ Restore…, Settings ▸ Encrypt this vault…: the app lets go of its vault while they run
        self.vault_swap = VaultSwap(self.services, capture=self.capture, rolling=self.rolling_backups)
        self.services.extras["vault_swap"] = self.vault_swap
        self.encryption = EncryptionFlow(self.services, runtime.vault.path, self.browser)
        self.commands = Commands(self)
        self.welcome: WelcomeWindow | None = None
        self.single_instance = SingleInstance()
        self._poll = QTimer(interval=EXTERNAL_POLL_MS)
        self._quit = asyncio.Event()

    async def run(self) -> None:
        """Start, serve until Quit (menu, signal, or the last window without a tray), shut down."""
        self.start()
        await self._quit.wait()
        await self.shutdown()

    def request_quit(self) -> None:
        self._quit.set()

    def start(self) -> None:
        self._wire()
        self.browser.setWindowIcon(icon_for_state("neutral"))
        self.shortcut.start(self.runtime.settings.quick_shortcut)
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = Tray(self.actions, self.services.model_status.text)
            self.tray.panel_requested.connect(self.panel.popup_near)
            self.capture.attach(self.tray.menu)
            self.sync.attach(self.tray.menu)
            self.tray.show()
            self.active_page.changed.connect(self.tray.set_page)
            self.services.model_status.changed.connect(self.tray.update_tooltip)
        else:
            QApplication.instance().lastWindowClosed.connect(self.request_quit)  # type: ignore[union-attr]
            if self.background or self.quick_at_start:
                self.browser.showMinimized()  # without a tray the window is the only way in
            else:
                self.browser.raise_window()
            self.services.messages.info(NO_TRAY)
        if not self.single_instance.listen():
            self.services.messages.error("Could not open the single-instance socket; a second launch may not find "
                                         "this one.")
        # The secret filter's library takes ~0.5 s to load: now, off the GUI thread, not at the first save.
        threading.Thread(target=secret_filter.warm_up, name="vodou-secret-filter-load", daemon=True).start()
        self._poll.start()
        self.rolling_backups.start()
        first_run = needs_welcome(self.runtime.settings)
        self.capture.start(paused=self.sites.paused, ask=not first_run)
        self.sync.start()
        if first_run:
            self.show_welcome()
        elif self.capture.question is not None:  # one question at a time: encryption after capture
            self.capture.question.finished.connect(
                lambda _result: None if self._quit.is_set() else self.encryption.offer_at_first_run())
        else:
            self.encryption.offer_at_first_run()
        if self.quick_at_start:
            self.quick.summon("search")
        asyncio.ensure_future(self._start_bridge())

    def _wire(self) -> None:
        self.commands.connect_actions()
        self.hub.subscribe(self.active_page.on_bridge_event)
        self.hub_signals.event.connect(self.commands.bridge_event)
        self.active_page.changed.connect(lambda state: update_actions(self.actions, state))
        self.active_page.changed.connect(self.panel.set_page)
        self.services.events.changed.connect(self.active_page.vault_changed)
        self.services.messages.error_shown.connect(self.commands.show_error)
        self.single_instance.show_requested.connect(self.browser.raise_window)
        self.single_instance.quick_requested.connect(lambda: self.quick.summon("search"))
        self.shortcut.activated.connect(self._quick_from_shortcut)
        self.shortcut.state_changed.connect(self._shortcut_state)
        self.quick.opened.connect(self.open_in_browser)
        self._poll.timeout.connect(self.commands.poll_external)

    def show_welcome(self) -> WelcomeWindow:
        """The first run's window (Help ▸ Welcome… opens it again)."""
        if self.welcome is None or not self.welcome.isVisible():
            self.welcome = WelcomeWindow(self.services, self.runtime.vault.path, self.bridge.tokens, self.shortcut)
            self.welcome.encrypt_requested.connect(self.encryption.encrypt)
            self.welcome.pair_requested.connect(lambda: self.actions["pair"].trigger())
            self.welcome.quick_requested.connect(lambda: self.quick.summon("search"))
            self.welcome.seen.connect(lambda: self.capture.reconfigure(self.runtime.settings))
            self.encryption.done.connect(self.welcome.refresh)
        self.welcome.show()
        self.welcome.raise_()
        self.welcome.activateWindow()
        return self.welcome

    def _quick_from_shortcut(self) -> None:
        self.quick.toggle()
        if self.quick.isVisible():  # over the app in front, with the focus (the press's time vouches)
            QTimer.singleShot(30, lambda: self.shortcut.bring_to_front(int(self.quick.winId())))

    def _shortcut_state(self, state: ShortcutState) -> None:
        show_quick_key(self.actions, state)

    def open_in_browser(self, fact_id: int, text: str) -> None:
        """Ctrl+O in the quick box: the memory browser searching the same words, that memory selected."""
        tab = self.browser.memories
        self.browser.raise_window()
        self.browser.tabs.setCurrentWidget(tab)
        tab.follow(fact_id)
        if tab.search_box.text() == text:
            tab.refresh()
        else:
            tab.search_box.setText(text)

    async def _start_bridge(self) -> None:
        try:
            port = await self.bridge.start(self.bridge_port)
        except KnownError as exc:
            self.services.messages.error(f"The browser bridge is not running: {exc}")
            return
        # Not a status message: it would replace the memory count at every start (the pairing dialog
        # and `vodou doctor` say where the bridge listens).
        log.info("browser bridge listening on 127.0.0.1:%d", port)

    async def shutdown(self) -> None:
        """Close the bridge first (no new requests), then stop the UI's timers and sockets."""
        self._poll.stop()
        self.rolling_backups.stop()
        self.single_instance.close()
        self.shortcut.stop()
        await self.bridge.stop()
        self.capture.stop()
        self.sync.stop()
        if self.tray is not None:
            self.tray.icon.hide()
        self.panel.close()
        self.quick.close()
        if self.welcome is not None:
            self.welcome.hide()  # not "seen": quitting is no answer (it shows at the next start)
        self.browser.close()

    def close(self) -> None:
        """After the event loop stopped: ops finished, bridge services, then the vault (writer drained)."""
        self.services.close()
        self.bridge_services.close()
        self.runtime.close()


def main(args: argparse.Namespace | None = None) -> int:
    """``vodou``: start the tray app, or raise the running one's memory browser and exit."""
    if _no_display():
        print("vodou: error: no graphical display here; run `vodou serve` for the vault and the browser bridge "
              "without the tray app", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Vodou")
    app.setQuitOnLastWindowClosed(False)
    window_keys_out_of_context_menus(app)
    PaletteKeeper(app)  # help text readable (≥ 4.5:1) in the theme in force, and after it changes
    background = bool(getattr(args, "background", False))
    if ask_running_instance_to_show(show=not background):
        if not background:
            print("Vodou is already running: its memory browser was brought to the front.")
        return 0
    _refresh_desktop_entries()
    vault_path = paths.vault_path(getattr(args, "vault", None))
    if locked_out(vault_path) and UnlockDialog(vault_path).exec() != QDialog.DialogCode.Accepted:
        print(f"vodou: error: the encrypted vault {vault_path} was not opened: no key here opens it (run "
              "`vodou key restore` with its recovery key)", file=sys.stderr)
        return 2
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        runtime = Runtime.open(vault_path, background_backfill=True)
    except KnownError as exc:
        QMessageBox.critical(None, "Vodou cannot start", str(exc))
        print(f"vodou: error: {exc}", file=sys.stderr)
        return 2
    desktop = Desktop(runtime, background=background, quick=bool(getattr(args, "quick", False)))
    freeze_startup_objects()  # later full garbage collections never walk them (the GUI thread waits)
    _quit_on_signals(desktop)
    try:
        with loop:
            loop.run_until_complete(desktop.run())
    finally:
        desktop.close()
    return 0


def _refresh_desktop_entries() -> None:
    """The menu and autostart entries name a path; after the bundle moved or a venv was rebuilt,
    point them at this vodou again (a failure is logged, never stops the app)."""
    try:
        for path in desktop_entry.refresh_stale():
            log.info("rewrote %s: the program it named no longer exists", path)
    except (KnownError, OSError) as exc:
        log.warning("could not rewrite a stale menu or autostart entry: %s", exc)


def _no_display() -> bool:
    """On Linux, Qt aborts the process when it finds no display; say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _quit_on_signals(desktop: Desktop) -> None:
    """SIGINT/SIGTERM quit cleanly; a slow timer lets Python run its handlers under Qt's loop."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: desktop.request_quit())
    wake = QTimer(desktop.browser, interval=250)
    wake.timeout.connect(lambda: None)
    wake.start()
