"""The first run (issue 35, item 7): one welcome window that fits this computer.

It says where the vault lives, whether it is encrypted and where its key really goes (the keyring,
or a file in the config folder when this computer has none), how to add the browser extension and
pair it, the quick-access shortcut as it stands here, and which AI tools were found on this computer
(only those), each with a button to connect it. Nothing changes before a button is pressed; Done
(or closing it) records that the welcome was seen, and the first-run questions it replaces (capture
Claude Code sessions, encrypt) are answered by what was chosen in it.

What it shows is read off the GUI thread (the key store may ask D-Bus; the AI tools' files are read).
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop import config, paths, resources
from vodou_desktop.ingest.capture_watchers import with_capture
from vodou_desktop.mcp.overview import ClientSetup, found_clients, set_up
from vodou_desktop.ui.encryption_flow import OFFERED_KEY, KeyPlace, key_place
from vodou_desktop.ui.global_shortcut import ShortcutState
from vodou_desktop.ui.ops import failure_words
from vodou_desktop.ui.pair_dialog import browser_label
from vodou_desktop.ui.screen_fit import fit_on_screen
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label, problem_label
from vodou_desktop.vault import cipher

SHOWN_KEY = "welcome.shown"  # settings.extra: the welcome was seen (shown once per installation)
TITLE = "Welcome to Vodou"
SIZE = (640, 620)
CLAUDE_CODE = "claude-code"


@dataclass
class WelcomeFacts:
    """What the welcome says, read in a worker."""

    vault: Path
    encrypted: bool
    key: KeyPlace
    paired: list[str]
    tools: list[ClientSetup] = field(default_factory=list)


def read_facts(vault: Path, tokens: Any) -> WelcomeFacts:
    pairings = tokens.pairings() if tokens is not None else []
    return WelcomeFacts(vault, cipher.is_encrypted(vault), key_place(), [browser_label(p) for p in pairings],
                        found_clients())


def needs_welcome(settings: config.Settings) -> bool:
    return not settings.extra.get(SHOWN_KEY)


def _heading(text: str) -> QLabel:
    label = QLabel(f"<b>{html.escape(text)}</b>", textFormat=Qt.TextFormat.RichText)
    return label


class WelcomeWindow(QDialog):
    """Non-modal: the tray and the memory browser stay usable while it is open."""

    encrypt_requested = Signal()
    pair_requested = Signal()
    quick_requested = Signal()
    seen = Signal()  # recorded as seen (the settings were written)

    def __init__(self, services: Services, vault_path: Path, tokens: Any = None, shortcut: Any = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self._services, self._vault_path, self._tokens, self._shortcut = services, vault_path, tokens, shortcut
        self.facts: WelcomeFacts | None = None
        self.vault = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_folder = QPushButton("&Open folder")
        self.open_folder.clicked.connect(self.show_vault_folder)
        self.encryption = QLabel(wordWrap=True)
        self.encrypt_button = QPushButton("&Encrypt…")
        self.encrypt_button.clicked.connect(self.encrypt_requested)
        self.browser = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pair_button = QPushButton("&Pair browser extension…")
        self.pair_button.clicked.connect(self.pair_requested)
        self.quick = QLabel(wordWrap=True)
        self.quick_button = QPushButton("&Try quick access")
        self.quick_button.clicked.connect(self.quick_requested)
        self.tools_intro = QLabel(wordWrap=True)
        self.tools = QGridLayout()
        self.connect_buttons: dict[str, QPushButton] = {}
        self.capture_claude = QCheckBox("Also keep the prompts you type to Claude Code as memories", visible=False)
        self.capture_claude.setToolTip("Settings ▸ Capture turns it on or off later")
        self.problem = problem_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setText("&Done")
        self.buttons.rejected.connect(self.reject)
        self.finished.connect(self._seen)
        self._layout()
        self.resize(*SIZE)
        if shortcut is not None:
            self.show_shortcut(shortcut.state)
            shortcut.state_changed.connect(self.show_shortcut)
        self.refresh()

    def _layout(self) -> None:
        body = QWidget()
        grid = QGridLayout(body)
        grid.setColumnStretch(0, 1)
        rows: list[tuple[str, QLabel, QPushButton | None]] = [
            ("Your memory", self.vault, self.open_folder), ("Encryption", self.encryption, self.encrypt_button),
            ("Web pages", self.browser, self.pair_button), ("Quick access", self.quick, self.quick_button)]
        row = 0
        gap = self.fontMetrics().lineSpacing() // 2
        for heading, text, button in rows:
            grid.addWidget(_heading(heading), row, 0, 1, 2)
            grid.addWidget(text, row + 1, 0)
            if button is not None:
                button.setAutoDefault(False)  # Enter is Done, never Encrypt… or Pair
                grid.addWidget(button, row + 1, 1, Qt.AlignmentFlag.AlignTop)
            grid.setRowMinimumHeight(row + 2, gap)
            row += 3
        grid.addWidget(_heading("AI tools on this computer"), row, 0, 1, 2)
        grid.addWidget(self.tools_intro, row + 1, 0, 1, 2)
        grid.addLayout(self.tools, row + 2, 0, 1, 2)
        grid.addWidget(self.capture_claude, row + 3, 0, 1, 2)
        grid.setRowStretch(row + 4, 1)
        scroller = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroller.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(help_label("Vodou keeps your AI memory on this computer. Here is how it is set up here; "
                                    "each part can be changed later in Settings."))
        layout.addWidget(scroller, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        fit_on_screen(self)

    # -- what it says ---------------------------------------------------------------------------
    def refresh(self) -> None:
        vault, tokens = self._vault_path, self._tokens
        self._services.ops.run(lambda: read_facts(vault, tokens), self._show, owner=self,
                               on_failure=lambda exc: self.problem.setText(failure_words(exc)))

    def _show(self, facts: WelcomeFacts) -> None:
        self.facts = facts
        self.vault.setText(f"Your memories are kept in one file on this computer, {facts.vault}. Nothing leaves "
                           "it unless you send it.")
        place = facts.key.words()
        if facts.encrypted:
            self.encryption.setText(f"Your vault is encrypted. Its key is kept in {place}. Keep your recovery key "
                                    "somewhere safe: only it opens the vault on another computer.")
        else:
            self.encryption.setText("Your vault is not encrypted. Encrypted, a copy of the file (a lost laptop, a "
                                    f"synced folder) cannot be read without its key, which would be kept in {place}. "
                                    "You first see a recovery key to save.")
        self.encrypt_button.setVisible(not facts.encrypted)
        extension = resources.resource_path("extension")
        if facts.paired:
            self.browser.setText(f"Paired with {', '.join(facts.paired)}. The browser extension saves the notes, "
                                 "selections and pages you choose and shows what you saved from the page you are on.")
        else:
            self.browser.setText("The browser extension saves the notes, selections and pages you choose, and shows "
                                 "what you saved from the page you are on. In Chromium or Chrome open "
                                 f"chrome://extensions, turn on Developer mode, choose Load unpacked and pick "
                                 f"{extension}; then pair it.")
        self._show_tools(facts.tools)

    def show_shortcut(self, state: ShortcutState) -> None:
        self.quick.setText("A small box over whatever app is in front, to search your memories or add one. "
                           + state.words)

    def _show_tools(self, tools: list[ClientSetup]) -> None:
        while self.tools.count():
            item = self.tools.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.connect_buttons = {}
        if not tools:
            self.tools_intro.setText("No AI tool that Vodou connects to (Claude Desktop, Claude Code, Cursor, VS Code, "
                                     "Windsurf, Codex, Zed, Gemini CLI) was found on this computer. When you install "
                                     "one, connect it in the memory browser's AI tools tab.")
        else:
            self.tools_intro.setText("Connected, an AI tool can search your memories and save new ones (you review "
                                     "them in the memory browser).")
        for row, tool in enumerate(tools):
            connected = tool.state == "set up"
            self.tools.addWidget(QLabel(tool.title), row, 0)
            state = help_label("connected" if connected else "not connected", wrap=False)
            self.tools.addWidget(state, row, 1)
            button = QPushButton("Connected" if connected else "Connect", enabled=not connected, autoDefault=False)
            button.setAccessibleName(f"Connect {tool.title}")
            button.clicked.connect(lambda _c=False, name=tool.client: self.connect_tool(name))
            self.tools.addWidget(button, row, 2)
            self.connect_buttons[tool.client] = button
        self.tools.setColumnStretch(0, 1)
        self.capture_claude.setVisible(any(t.client == CLAUDE_CODE for t in tools))

    def connect_tool(self, client: str) -> None:
        vault = None if self._vault_path == paths.vault_path() else str(self._vault_path)
        self.connect_buttons[client].setEnabled(False)
        self._services.ops.run(lambda: set_up(client, vault), lambda change: self._connected(client, change),
                               on_failure=self._not_connected, owner=self)

    def _connected(self, client: str, change: Any) -> None:
        self._services.messages.info(f"Vodou is set up in {client}: {change.path}. Restart that tool to use it.")
        self.refresh()

    def _not_connected(self, exc: BaseException) -> None:
        self.problem.setText(f"Not connected: {failure_words(exc)}")
        self.refresh()

    def show_vault_folder(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._vault_path.parent)))

    # -- done -----------------------------------------------------------------------------------
    def _seen(self, _result: int) -> None:
        """Done, Esc or the window's close: not shown again; the questions it replaces are answered
        by what was chosen here (no capture unless ticked; encryption was offered)."""
        capture = self.capture_claude.isChecked()

        def mark(settings: config.Settings) -> config.Settings:
            marked = with_capture(settings, claude_code=capture)
            return dataclasses.replace(marked, extra={**marked.extra, SHOWN_KEY: True, OFFERED_KEY: True})

        services = self._services

        def saved(_value: config.Settings) -> None:  # only these answers: another may have landed meanwhile
            services.runtime.settings = mark(services.runtime.settings)
            self.seen.emit()

        services.ops.run(lambda: config.update(mark), saved)

