"""The memory browser's filter bar: project, trust, site, kind, writing tool, show forgotten → one FactFilter.

Projects are the vault's own, each with how many memories it holds (``set_projects``, read by an op);
trust (the source's tier) and kinds are in words, and the kinds are every kind the list can show
(``words.LIST_KINDS``: what a person adds, and the selections and links that pages add)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import normalize_host
from vodou_desktop.ui.style import problem_label
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.sources import TIERS
from vodou_desktop.words import LIST_KINDS, TIER_WORDS, kind_words

ALL_PROJECTS_LABEL = "All projects"
GLOBAL_ONLY_LABEL = "Global only"
ANY_TIER = "Any trust"
ANY_KIND = "Any kind"
GLOBAL = object()  # the "Global only" choice (None is "no choice" in a combo's data)


class FilterBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = QComboBox(toolTip="A project's memories plus global ones")
        self.project.addItem(ALL_PROJECTS_LABEL, ALL_PROJECTS)
        self.project.addItem(GLOBAL_ONLY_LABEL, GLOBAL)
        self.project.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.tier = QComboBox()
        self.tier.addItem(ANY_TIER, None)
        for tier in TIERS:
            self.tier.addItem(TIER_WORDS.get(tier, tier), tier)
        self.kind = QComboBox()
        self.kind.addItem(ANY_KIND, None)
        for kind in LIST_KINDS:
            self.kind.addItem(kind_words(kind), kind)
        self.host = QLineEdit(placeholderText="site, e.g. example.com", clearButtonEnabled=True)
        self.tool = QLineEdit(placeholderText="writing tool, e.g. claude-code", clearButtonEnabled=True,
                              toolTip="Only memories written by this tool (an AI tool's name over MCP, cli, …)")
        self.forgotten = QCheckBox("Show forgotten")
        self.problem = problem_label(wrap=False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("&Project", self.project), ("T&rust", self.tier), ("&Kind", self.kind),
                              ("Si&te", self.host), ("Too&l", self.tool)):
            buddy = QLabel(label)
            buddy.setBuddy(widget)
            widget.setAccessibleName(label.replace("&", ""))
            layout.addWidget(buddy)
            layout.addWidget(widget)
        layout.addWidget(self.forgotten)
        layout.addWidget(self.problem, 1)
        self.project.currentIndexChanged.connect(self.changed)
        self.tier.currentIndexChanged.connect(self.changed)
        self.kind.currentIndexChanged.connect(self.changed)
        self.host.textChanged.connect(self.changed)
        self.tool.textChanged.connect(self.changed)
        self.forgotten.toggled.connect(self.changed)

    def project_names(self) -> list[str]:
        """The vault's projects as this bar lists them (read by an op, never here)."""
        return [str(self.project.itemData(i)) for i in range(2, self.project.count())]

    def set_projects(self, counts: dict[str, int]) -> None:
        """The vault's projects with their counts; the chosen one stays chosen (if it still exists)."""
        chosen, index = self.project.currentData(), self.project.currentIndex()
        self.project.blockSignals(True)
        try:
            while self.project.count() > 2:
                self.project.removeItem(2)
            for name, count in sorted(counts.items(), key=lambda item: item[0].casefold()):
                self.project.addItem(f"{name} ({count:,})", name)
            found = self.project.findData(chosen) if isinstance(chosen, str) else min(index, 1)
            self.project.setCurrentIndex(max(0, found))
        finally:
            self.project.blockSignals(False)
        if isinstance(chosen, str) and self.project.currentData() != chosen:
            self.changed.emit()  # the project chosen is gone: the list shows all again

    def choose_project(self, name: str) -> bool:
        """Choose ``name`` from the list (False when the vault has no such project)."""
        found = self.project.findData(name)
        if found >= 0:
            self.project.setCurrentIndex(found)
        return found >= 0

    def projects(self) -> list[str]:
        return [self.project.itemData(i) for i in range(2, self.project.count())]

    def describe(self) -> list[str]:
        """The filters in force, in words (for "no results" messages)."""
        said = []
        project = self.project.currentData()
        if project is GLOBAL:
            said.append("global memories only")
        elif isinstance(project, str):
            said.append(f"project {project}")
        if self.tier.currentData():
            said.append(f"trust: {self.tier.currentText()}")
        if self.kind.currentData():
            said.append(f"kind {self.kind.currentText()}")
        if self.host.text().strip():
            said.append(f"site {self.host.text().strip()}")
        if self.forgotten.isChecked():
            said.append("forgotten ones shown")
        return said

    def current_filter(self) -> FactFilter:
        """The filter the bar describes; an invalid site is shown and left out (never raised)."""
        project = self.project.currentData()
        tier, kind = self.tier.currentData(), self.kind.currentData()
        return FactFilter(
            project=None if project is GLOBAL else project if isinstance(project, str) else ALL_PROJECTS,
            include_forgotten=self.forgotten.isChecked(),
            include_superseded=False,
            host=self._host(),
            tiers=(tier,) if tier else (),
            kinds=(kind,) if kind else (),
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
