"""Settings: vault location (shown), global default mode, bridge port, meaning search on/off,
model endpoint, paired browsers with revoke. Saved through ``config.save``; a bad value is
refused with a message and nothing is written."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QListView,
    QListWidget,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop import config
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.ages import format_age
from vodou_desktop.ui.actions import MODES
from vodou_desktop.ui.backup_settings import BackupSettings
from vodou_desktop.ui.capture_settings import CaptureSettings
from vodou_desktop.ui.ops import failure_words
from vodou_desktop.ui.pair_dialog import browser_label
from vodou_desktop.ui.quick_settings import QuickAccessSettings
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.settings_autostart import AutostartSection
from vodou_desktop.ui.style import as_help, help_label, problem_label
from vodou_desktop.ui.sync_settings import SyncSettingsPage
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.words import mode_words

PAIRING_COLUMNS: list[Column[Any]] = [
    Column("Paired browser", lambda p: f"{browser_label(p)}, paired {format_age(p.created_at, 'instant')}",
           lambda p: p.extension_id)]
# Opened at DEFAULT_SIZE, never smaller than MINIMUM_SIZE: both inside a 1366×768 screen at 125 %
# scaling (1093×614 logical pixels, less a panel); pages scroll rather than grow.
DEFAULT_SIZE = (760, 540)
MINIMUM_SIZE = (560, 380)
RESTART_NOTE = "Port and meaning-search changes apply the next time Vodou starts."
ENDPOINT_HELP = ("Optional. An OpenAI-compatible chat model (for example a local server at "
                 "http://127.0.0.1:8080/v1) that answers questions you send from a web page in the extension. "
                 "Leave it empty to keep everything on memory search alone; nothing is sent anywhere then.")


def _page(*parts: QLayout | QWidget) -> QWidget:
    """One settings page: its parts from the top, the room left below them."""
    page = QWidget()
    layout = QVBoxLayout(page)
    for part in parts:
        if isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part)
    layout.addStretch(1)
    return page


def meaning_state(settings: config.Settings, embedder: Any) -> str:
    """Search by meaning as it really is now: the setting, an environment override, the model's state."""
    choice = config.embedder_choice(settings)
    override = os.environ.get("VODOU_EMBEDDER", "").strip()
    states = {"ready": "on (model loaded)", "loading": "on (model loading…)",
              "failed": "on, but the model failed to load", "off": "off"}
    said = states.get(str(getattr(embedder, "state", "")), "on" if choice != "none" else "off")
    if override:
        said += f" — set by the environment (VODOU_EMBEDDER={override}), which wins over this setting"
    elif said == "off" and settings.embedder != "none":
        said += " for this run (Vodou started without the model); it is on from the next start"
    return f"Search by meaning is {said}."


# The embedding models Settings offers (a model folder set in the settings file is offered too).
MEANING_MODELS = (("bge-small-en-v1.5 (default)", "default"), ("all-MiniLM-L6-v2 (the earlier default)", "minilm"))
MODEL_HELP = ("Changing the model embeds every memory again in the background, with progress in the status bar; "
              "until a memory is done, search finds it by its words.")


def settings_from_form(base: config.Settings, port_text: str, semantic: bool, endpoint: str,
                       model: str, meaning_model: str | None = None, distil: bool | None = None) -> config.Settings:
    """A validated copy of ``base`` with the form's values; InvalidInput explains a bad one.
    ``meaning_model``: the embedder chosen ("default", "minilm" or a model folder); None keeps it.
    ``distil``: whether imports ask the local model; None keeps it."""
    try:
        port = int(port_text.strip())
    except ValueError:
        raise InvalidInput(f"bridge port must be a number between 1024 and 65535, not {port_text!r}") from None
    kept = base.embedder if base.embedder != "none" else "default"
    embedder = (meaning_model or kept) if semantic else "none"
    updated = dataclasses.replace(base, bridge_port=port, embedder=embedder, model_base_url=endpoint.strip(),
                                  model_name=model.strip(), extra=dict(base.extra),
                                  distil_with_model=base.distil_with_model if distil is None else distil)
    return updated.validate()


class SettingsDialog(QDialog):
    def __init__(self, services: Services, sites: Any, tokens: Any, *, vault_path: Path,
                 config_path: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vodou settings")
        self._services, self._sites, self._tokens, self._config_path = services, sites, tokens, config_path
        self.base = services.runtime.settings
        self.saved: config.Settings | None = None
        self.vault = QLineEdit(str(vault_path), readOnly=True)  # a long path scrolls, never wraps or overlaps
        self.vault.setAccessibleName("Vault file")
        self.vault.setCursorPosition(0)
        self.vault_path = vault_path
        self.open_folder = QPushButton("&Open folder")
        self.open_folder.setToolTip("Show the vault's folder in the file manager")
        self.open_folder.clicked.connect(self.show_vault_folder)
        self.effective = QLabel(meaning_state(self.base, services.runtime.embedder), wordWrap=True)
        self.effective.setAccessibleName("Search by meaning now")
        self.endpoint_help = help_label(ENDPOINT_HELP)
        self.default_mode = QComboBox()
        for mode in MODES:
            self.default_mode.addItem(mode_words(mode), mode)
        self.default_mode.setEnabled(sites is not None)
        self.port = QLineEdit(str(self.base.bridge_port))
        self.semantic = QCheckBox("Search by meaning (embedding model)", checked=self.base.embedder != "none")
        self.meaning_model = QComboBox()
        self.meaning_model.setAccessibleName("Embedding model")
        for label, choice in MEANING_MODELS:
            self.meaning_model.addItem(label, choice)
        if self.base.embedder not in ("default", "minilm", "none"):
            self.meaning_model.addItem(f"Model folder: {Path(self.base.embedder).name}", self.base.embedder)
        chosen = self.meaning_model.findData(self.base.embedder)
        self.meaning_model.setCurrentIndex(max(0, chosen))
        self.meaning_model.setEnabled(self.semantic.isChecked())
        self.semantic.toggled.connect(self.meaning_model.setEnabled)
        self.model_help = help_label(MODEL_HELP)
        self.endpoint = QLineEdit(self.base.model_base_url, placeholderText="http://127.0.0.1:8080/v1 (optional)")
        self.model_name = QLineEdit(self.base.model_name, placeholderText="model name (optional)")
        self.distil = QCheckBox("&Distil imported and captured conversations with this model",
                                checked=self.base.distil_with_model)
        self.distil.setToolTip("Off: rules on this computer distil them. On: your messages are sent to the endpoint "
                               "above only; the rules take over for any answer it fails to give.")
        self.pairings: RecordTableModel[Any] = RecordTableModel(PAIRING_COLUMNS, self)
        self.pairings_view = QListView()
        self.pairings_view.setModel(self.pairings)
        self.revoke_button = QPushButton("Revoke")
        self.storage = as_help(QLabel(f"Pairing tokens are kept in {tokens.storage}." if tokens is not None else
                              "The browser bridge is not running here: no pairings to show.",
                              wordWrap=True))
        self.backups = BackupSettings(self.base, vault_path, services)
        self.capture = CaptureSettings(services.extras.get("capture"), self.base)
        self.quick = QuickAccessSettings(services.extras.get("quick_shortcut"), self.base)
        self.problem = problem_label()
        self.autostart = AutostartSection()
        self.restart_note = help_label(RESTART_NOTE)
        self.sections = QListWidget()
        self.stack = QStackedWidget()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self._layout()
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.revoke_button.clicked.connect(self.revoke_selected)
        self._load()

    def _layout(self) -> None:
        """A list of sections beside one page at a time, each page scrolling on its own; the
        problem line and Save/Cancel stay below, visible at any size the dialog allows."""
        for name, page in self._pages():
            self.sections.addItem(name)
            scroller = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
            scroller.setWidget(page)
            self.stack.addWidget(scroller)
        self.sections.setAccessibleName("Settings sections")
        char = self.sections.fontMetrics().averageCharWidth()
        self.sections.setFixedWidth(max(self.sections.sizeHintForColumn(0), 18 * char) + 4 * char)
        self.sections.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.sections.setCurrentRow(0)
        body = QHBoxLayout()
        body.addWidget(self.sections)
        body.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.restart_note)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.setMinimumSize(*MINIMUM_SIZE)
        self.resize(*DEFAULT_SIZE)

    def show_section(self, name: str) -> None:
        """Turn to the page called ``name`` (as a click in the list of sections does)."""
        found = self.sections.findItems(name, Qt.MatchFlag.MatchExactly)
        if found:
            self.sections.setCurrentItem(found[0])

    def _pages(self) -> list[tuple[str, QWidget]]:
        general = QFormLayout()
        vault_row = QHBoxLayout()
        vault_row.addWidget(self.vault, 1)
        vault_row.addWidget(self.open_folder)
        general.addRow("Vault", vault_row)
        general.addRow("&Default mode for sites", self.default_mode)
        search = QFormLayout()
        search.addRow(self.semantic)
        search.addRow("Embedding &model", self.meaning_model)
        search.addRow(self.model_help)
        search.addRow(self.effective)
        search.addRow("Model &endpoint", self.endpoint)
        search.addRow(self.endpoint_help)
        search.addRow("Model &name", self.model_name)
        search.addRow(self.distil)
        browsers = QFormLayout()
        browsers.addRow("Bridge &port", self.port)
        revoke_row = QHBoxLayout()
        revoke_row.addWidget(self.pairings_view, 1)
        revoke_row.addWidget(self.revoke_button, 0, Qt.AlignmentFlag.AlignTop)
        browsers.addRow(QLabel("Paired browsers"))
        browsers.addRow(revoke_row)
        browsers.addRow(self.storage)
        return [("General", _page(general, self.autostart)), ("Quick access", _page(self.quick)),
                ("Search", _page(search)),
                ("Browsers", _page(browsers)), ("Backups and encryption", _page(self.backups)),
                ("Capture", _page(self.capture)), ("Sync", _page(SyncSettingsPage(self._services)))]

    def _load(self) -> None:
        sites, tokens = self._sites, self._tokens
        self._services.ops.run(lambda: (sites.global_default if sites else None,
                                        tokens.pairings() if tokens else []), self._loaded, owner=self)

    def _loaded(self, data: tuple[str | None, list[Any]]) -> None:
        mode, pairings = data
        if mode:
            self.default_mode.setCurrentIndex(max(0, self.default_mode.findData(mode)))
        self.pairings.set_rows(pairings)
        self.revoke_button.setEnabled(bool(pairings))

    def save(self) -> None:
        try:
            settings = settings_from_form(self.base, self.port.text(), self.semantic.isChecked(),
                                          self.endpoint.text(), self.model_name.text(),
                                          self.meaning_model.currentData(), self.distil.isChecked())
            settings = self.quick.apply(self.backups.apply(self.capture.apply(settings))).validate()
        except InvalidInput as exc:
            self.problem.setText(f"Not saved: {exc}")
            return
        self.problem.clear()
        sites, mode, path = self._sites, self.default_mode.currentData(), self._config_path

        def work() -> config.Settings:
            config.save(settings, path)
            if sites is not None:
                sites.set_global_default(mode)
            return settings

        self._services.ops.run(work, self._saved, owner=self,
                               on_failure=lambda exc: self.problem.setText(f"Not saved: {failure_words(exc)}"))

    def _saved(self, settings: config.Settings) -> None:
        self.saved = settings
        self._services.runtime.settings = settings
        self.capture.saved(settings)
        if self.autostart.apply():
            self.accept()

    def show_vault_folder(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.vault_path).parent)))

    def revoke_selected(self) -> None:
        pairing = self.pairings.row_record(self.pairings_view.currentIndex().row())
        if pairing is None or self._tokens is None:
            return
        tokens = self._tokens
        self._services.ops.run(lambda: tokens.revoke(pairing.extension_id), lambda _r: self._load(), owner=self)
