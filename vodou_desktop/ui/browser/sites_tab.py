"""The Sites tab: every site with a rule or with memories — its mode, why, and how many memories.

Modes are read and set through ``SiteModes``, the same service the bridge answers from, so a
mode chosen here is what the extension is told. The list refreshes from the vault's change event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QTableView, QVBoxLayout, QWidget

from vodou_desktop.errors import KnownError
from vodou_desktop.ui.actions import MODES
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label, problem_label
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.words import mode_words


@dataclass(frozen=True)
class SiteRow:
    host: str
    mode: str
    reason: str
    facts: int
    has_rule: bool


@dataclass(frozen=True)
class SitesView:
    rows: list[SiteRow]
    global_default: str
    paused: bool


COLUMNS: list[Column[SiteRow]] = [
    Column("Site", lambda s: s.host),
    Column("Mode", lambda s: mode_words(s.mode)),
    Column("Why", lambda s: s.reason),
    Column("Memories", lambda s: s.facts),
]


def load_sites(vault: Vault, sites: Any) -> SitesView:
    """Sites with a user rule or with visible facts, each resolved now (runs in a worker)."""
    counts = vault.read(lambda c: q.count_facts_by_host(c, FactFilter(project=ALL_PROJECTS)))
    ruled = {rule["host"] for rule in sites.rules()}
    rows = []
    for host in sorted(ruled | set(counts)):
        try:
            resolution = sites.resolve(host)
        except KnownError:
            continue  # a stored host that is not a web host (e.g. a file source): no mode applies
        rows.append(SiteRow(host, resolution.mode, resolution.reason, counts.get(host, 0), host in ruled))
    return SitesView(rows, sites.global_default, sites.paused)


class SitesTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.model: RecordTableModel[SiteRow] = RecordTableModel(COLUMNS, self)
        self.view = QTableView(selectionBehavior=QTableView.SelectionBehavior.SelectRows,
                               selectionMode=QTableView.SelectionMode.SingleSelection)
        self.view.setAccessibleName("Sites")
        self.view.setModel(self.model)
        self.view.verticalHeader().hide()
        self.view.setColumnWidth(0, 280)
        self.view.setColumnWidth(1, 90)
        self.view.setColumnWidth(3, 70)
        self.view.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.summary = help_label(wrap=False)
        self.host = QLineEdit(placeholderText="site, e.g. example.com", clearButtonEnabled=True)
        self.host.setAccessibleName("Site to set a mode for")
        self.mode_buttons = {mode: QPushButton(mode.capitalize()) for mode in MODES}
        self.clear_button = QPushButton("Clear rule")
        self.forget_button = QPushButton("Forget site…", toolTip="Hide every memory from this site (undoable); "
                                         "the dialog shows how many first")
        self.forget_button.setEnabled(False)
        self.forget_dialog: ForgetSiteDialog | None = None
        self.problem = problem_label()
        self._layout()
        for mode, button in self.mode_buttons.items():
            button.clicked.connect(lambda _checked=False, m=mode: self.set_mode(m))
        self.clear_button.clicked.connect(self.clear_rule)
        self.forget_button.clicked.connect(self.forget_site)
        self.host.textChanged.connect(lambda text: self.forget_button.setEnabled(
            bool(text.strip()) and services.forgetting is not None))
        self.view.selectionModel().currentRowChanged.connect(lambda index, _prev: self._selected(index.row()))

    def _layout(self) -> None:
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Site"))
        controls.addWidget(self.host, 1)
        controls.addWidget(QLabel("Mode"))
        for button in self.mode_buttons.values():
            controls.addWidget(button)
        controls.addWidget(self.clear_button)
        controls.addWidget(self.forget_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.view, 1)
        layout.addLayout(controls)
        layout.addWidget(self.problem)

    def refresh(self) -> None:
        vault, sites = self._services.runtime.vault, self._services.sites
        self._services.ops.run(lambda: load_sites(vault, sites), self._loaded, owner=self)

    def _loaded(self, data: SitesView) -> None:
        current = self.host.text().strip()
        self.model.set_rows(data.rows)
        pause = " Collection is paused: every site is off." if data.paused else ""
        self.summary.setText(f"Other sites: {mode_words(data.global_default)} (global default).{pause} "
                             "Rules cover subdomains; the most specific one wins.")
        for row, site in enumerate(data.rows):
            if site.host == current:
                self.view.selectRow(row)

    def _selected(self, row: int) -> None:
        site = self.model.row_record(row)
        if site is not None:
            self.host.setText(site.host)
            self.clear_button.setEnabled(site.has_rule)

    def set_mode(self, mode: str) -> None:
        """Set a user rule through the governance service (the bridge's GET then agrees)."""
        host, sites = self.host.text().strip(), self._services.sites
        if not host:
            self.problem.setText("Choose a site in the list or type one.")
            return
        self.problem.clear()
        self._services.ops.run(lambda: sites.set_rule(host, mode), self._changed, on_failure=self._failed,
                               owner=self)

    def clear_rule(self) -> None:
        host, sites = self.host.text().strip(), self._services.sites
        if host:
            self._services.ops.run(lambda: sites.clear_rule(host), on_failure=self._failed, owner=self)

    def forget_site(self) -> ForgetSiteDialog | None:
        """Forget site… for the site chosen in the list (or typed): its dry run, then the confirmation."""
        host, forgetting = self.host.text().strip(), self._services.forgetting
        if not host or forgetting is None:
            return None
        self.forget_dialog = ForgetSiteDialog(forgetting, self._services.ops, host, parent=self)
        self.forget_dialog.show()
        self.forget_dialog.run_dry_run()
        return self.forget_dialog

    def _changed(self, resolution: Any) -> None:
        self.host.setText(resolution.host)
        self._services.messages.info(f"{resolution.host}: {resolution.mode} ({resolution.reason})")

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, KnownError):
            self.problem.setText(str(exc))
        self._services.ops.report(exc)
