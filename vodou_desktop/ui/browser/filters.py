"""The memory browser's filter bar: project, tier, host, kind, writing tool, show forgotten → one FactFilter."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import normalize_host
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.sources import TIERS
from vodou_desktop.words import LIST_KINDS

ALL_PROJECTS_LABEL = "All projects"
GLOBAL_ONLY_LABEL = "Global only"
ANY_TIER = "Any tier"
ANY_KIND = "Any kind"
KNOWN_KINDS = LIST_KINDS  # the one list (words.py), as the CLI and MCP offer


class FilterBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = QComboBox(editable=True, toolTip="Type a project name: its memories plus global ones")
        self.project.addItems([ALL_PROJECTS_LABEL, GLOBAL_ONLY_LABEL])
        self.tier = QComboBox()
        self.tier.addItems([ANY_TIER, *TIERS])
        self.kind = QComboBox(editable=True)
        self.kind.addItems([ANY_KIND, *KNOWN_KINDS])
        self.host = QLineEdit(placeholderText="site, e.g. example.com", clearButtonEnabled=True)
        self.tool = QLineEdit(placeholderText="writing tool, e.g. claude-code", clearButtonEnabled=True,
                              toolTip="Only memories written by this tool (an AI tool's name over MCP, cli, …)")
        self.forgotten = QCheckBox("Show forgotten")
        self.problem = QLabel(styleSheet="color: #b00020")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("&Project", self.project), ("T&ier", self.tier), ("&Kind", self.kind),
                              ("Si&te", self.host), ("Too&l", self.tool)):
            buddy = QLabel(label)
            buddy.setBuddy(widget)
            widget.setAccessibleName(label.replace("&", ""))
            layout.addWidget(buddy)
            layout.addWidget(widget)
        layout.addWidget(self.forgotten)
        layout.addWidget(self.problem, 1)
        self.project.currentTextChanged.connect(self.changed)
        self.tier.currentTextChanged.connect(self.changed)
        self.kind.currentTextChanged.connect(self.changed)
        self.host.textChanged.connect(self.changed)
        self.tool.textChanged.connect(self.changed)
        self.forgotten.toggled.connect(self.changed)

    def describe(self) -> list[str]:
        """The filters in force, in words (for "no results" messages)."""
        said = []
        project = self.project.currentText().strip()
        if project and project != ALL_PROJECTS_LABEL:
            said.append("global memories only" if project == GLOBAL_ONLY_LABEL else f"project {project}")
        if self.tier.currentText() != ANY_TIER:
            said.append(f"tier {self.tier.currentText()}")
        kind = self.kind.currentText().strip()
        if kind and kind != ANY_KIND:
            said.append(f"kind {kind}")
        if self.host.text().strip():
            said.append(f"site {self.host.text().strip()}")
        if self.forgotten.isChecked():
            said.append("forgotten ones shown")
        return said

    def current_filter(self) -> FactFilter:
        """The filter the bar describes; an invalid site is shown and left out (never raised)."""
        project_text = self.project.currentText().strip()
        project = {ALL_PROJECTS_LABEL: ALL_PROJECTS, "": ALL_PROJECTS, GLOBAL_ONLY_LABEL: None}.get(
            project_text, project_text)
        tier, kind = self.tier.currentText(), self.kind.currentText().strip()
        return FactFilter(
            project=project,
            include_forgotten=self.forgotten.isChecked(),
            include_superseded=False,
            host=self._host(),
            tiers=() if tier == ANY_TIER else (tier,),
            kinds=() if kind in (ANY_KIND, "") else (kind,),
            tools=(tool,) if (tool := self.tool.text().strip()) else (),
        )

    def _host(self) -> str | None:
        text = self.host.text().strip()
        self.problem.clear()
        if not text:
            return None
        try:
            return normalize_host(text)
        except InvalidInput as exc:
            self.problem.setText(str(exc))
            return None
