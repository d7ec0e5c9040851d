"""The memory browser's "AI tools" page: which AI tools have Vodou in their configuration, what
each AI tool wrote, and the default project each one searches when nothing else says.

The data comes from ``mcp.overview`` (Qt-free) in a worker; a default project is set through the
vault's settings, the same ones ``vodou projects default`` writes and every ``vodou mcp`` reads.
"Set up in the selected tool" writes Vodou's server into that tool's configuration, as
``vodou mcp install CLIENT`` does (a ``.bak`` of the file first).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QTableView, QVBoxLayout, QWidget

from vodou_desktop import paths
from vodou_desktop.errors import InvalidInput
from vodou_desktop.mcp.overview import ClientSetup, ToolWriter, client_setups, set_up, tool_writers
from vodou_desktop.mcp.projects import set_default_project
from vodou_desktop.ui.ops import failure_words
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label, problem_label
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.vault.facts import clean_project

CLIENT_COLUMNS: list[Column[ClientSetup]] = [
    Column("AI tool", lambda c: c.title),
    Column("Vodou", lambda c: c.state, tooltip=lambda c: str(c.path)),
    Column("Set up with", lambda c: f"vodou mcp install {c.client}"),
]
WRITER_COLUMNS: list[Column[ToolWriter]] = [
    Column("Writing tool", lambda w: w.tool),
    Column("Memories", lambda w: w.memories),
    Column("Default project", lambda w: w.default_project or "—"),
]


class AiToolsPage(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.clients: RecordTableModel[ClientSetup] = RecordTableModel(CLIENT_COLUMNS, self)
        self.writers: RecordTableModel[ToolWriter] = RecordTableModel(WRITER_COLUMNS, self)
        self.client_view = self._table(self.clients, "AI tools and their configuration")
        self.writer_view = self._table(self.writers, "What each AI tool wrote")
        self.summary = help_label()
        self.project = QLineEdit(placeholderText="project, e.g. alpha", clearButtonEnabled=True)
        self.project.setAccessibleName("Default project")
        self.set_button = QPushButton("Set default project")
        self.setup_button = QPushButton("Set up in the selected tool", enabled=False)
        self.setup_button.setToolTip("Add Vodou to the selected AI tool's configuration (as vodou mcp install does)")
        self.problem = problem_label()
        self._layout()
        self.set_button.clicked.connect(self.set_default)
        self.setup_button.clicked.connect(self.set_up_selected)
        self.client_view.selectionModel().selectionChanged.connect(lambda *_: self._update_setup())

    @staticmethod
    def _table(model: Any, name: str) -> QTableView:
        view = QTableView(selectionBehavior=QTableView.SelectionBehavior.SelectRows,
                          selectionMode=QTableView.SelectionMode.SingleSelection)
        view.setAccessibleName(name)
        view.setModel(model)
        view.verticalHeader().hide()
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        return view

    def _layout(self) -> None:
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Default project for the selected tool (none selected: every tool)"))
        controls.addWidget(self.project, 1)
        controls.addWidget(self.set_button)
        layout = QVBoxLayout(self)
        heading = QHBoxLayout()
        heading.addWidget(QLabel("Which AI tools have Vodou in their configuration"), 1)
        heading.addWidget(self.setup_button)
        layout.addLayout(heading)
        layout.addWidget(self.client_view, 1)
        layout.addWidget(QLabel("What each AI tool wrote (review it in Memories with the Tool filter)"))
        layout.addWidget(self.writer_view, 1)
        layout.addWidget(self.summary)
        layout.addLayout(controls)
        layout.addWidget(self.problem)

    def refresh(self) -> None:
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: (client_setups(), tool_writers(vault)), self._loaded, owner=self)

    def _loaded(self, data: tuple[list[ClientSetup], tuple[list[ToolWriter], str | None]]) -> None:
        setups, (writers, default_all) = data
        chosen = self.selected_client()
        self.clients.set_rows(setups)
        for row, setup in enumerate(setups):
            if chosen is not None and setup.client == chosen.client:
                self.client_view.selectRow(row)
        self._update_setup()
        self.writers.set_rows(writers)
        self.summary.setText(f"Default project for every AI tool: {default_all or 'none (global memories only)'}."
                             " A tool's own default wins; a pinned server (vodou mcp --project) wins over both.")

    def selected_client(self) -> ClientSetup | None:
        rows = self.client_view.selectionModel().selectedRows()
        return self.clients.row_record(rows[0].row()) if rows else None

    def _update_setup(self) -> None:
        chosen = self.selected_client()
        self.setup_button.setEnabled(chosen is not None and chosen.state != "set up")

    def set_up_selected(self) -> None:
        chosen = self.selected_client()
        if chosen is None:
            return
        vault_path = self._services.runtime.vault.path
        vault = None if vault_path == paths.vault_path() else str(vault_path)
        self.setup_button.setEnabled(False)
        self.problem.clear()
        self._services.ops.run(lambda: set_up(chosen.client, vault), lambda change: self._was_set_up(chosen, change),
                               on_failure=self._not_set_up, owner=self)

    def _was_set_up(self, chosen: ClientSetup, change: Any) -> None:
        self._services.messages.info(f"Vodou is set up in {chosen.title} ({change.path}). Restart it to use Vodou.")
        self.refresh()

    def _not_set_up(self, exc: BaseException) -> None:
        self.problem.setText(f"Not set up: {failure_words(exc, self._services.ops.vault_path)}")
        self._update_setup()

    def selected_tool(self) -> str | None:
        rows = self.writer_view.selectionModel().selectedRows()
        record = self.writers.row_record(rows[0].row()) if rows else None
        return record.tool if record is not None else None

    def set_default(self) -> None:
        """Set (an empty field: clear) the default project of the selected tool, or of every tool."""
        text, tool = self.project.text().strip(), self.selected_tool()
        try:
            name = clean_project(text) if text else None
        except InvalidInput as exc:
            self.problem.setText(str(exc))
            return
        self.problem.clear()
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: vault.write(lambda c, ch: set_default_project(c, ch, name, tool)),
                               lambda _r: self._set(name, tool), owner=self)

    def _set(self, name: str | None, tool: str | None) -> None:
        who = tool or "every AI tool"
        self._services.messages.info(f"Default project for {who}: {name or 'none'}")
        self.refresh()
