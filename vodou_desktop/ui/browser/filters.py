"""The memory browser's filter bar: project and scope, trust, kind, site, writing tool, show forgotten →
one FactFilter.

Projects are the vault's own, each with how many memories it holds itself, and the global ones with
theirs (``set_projects``, read by an op). A project is seen in one of the three scopes (``query.Scope``):
only its own memories (the default: the list then holds exactly the count its name shows), with the
global ones, or the global ones alone ("Global only"); the filter is made by ``query.within``, the one
function that narrows a filter to a scope. Trust (the source's tier) and kinds are in words, and the
kinds are every kind the list can show (``words.LIST_KINDS``). On a narrow window the bar takes two
rows, so the site and tool fields keep room for their words."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import normalize_host
from vodou_desktop.ui.style import problem_label
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.query import ProjectCounts, Scope, within
from vodou_desktop.vault.sources import TIERS
from vodou_desktop.words import LIST_KINDS, TIER_WORDS, kind_words

ALL_PROJECTS_LABEL = "All projects"
GLOBAL_ONLY_LABEL = "Global only"
ANY_TIER = "Any trust"
ANY_KIND = "Any kind"
GLOBAL = object()  # the "Global only" choice (None is "no choice" in a combo's data)
SCOPE_LABELS = {Scope.PROJECT_ONLY: "Only this project", Scope.PROJECT_AND_GLOBAL: "This project + global"}


class FilterBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = ProjectCounts({}, 0)
        self.project = QComboBox(toolTip="Every project, the global memories alone, or one project "
                                 "(each with how many memories it holds itself)")
        self.project.addItem(ALL_PROJECTS_LABEL, ALL_PROJECTS)
        self.project.addItem(GLOBAL_ONLY_LABEL, GLOBAL)
        self.project.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.scope = QComboBox(enabled=False, toolTip="A project's own memories, or with the global ones "
                               "(seen from every project)")
        for scope, label in SCOPE_LABELS.items():
            self.scope.addItem(label, scope)
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
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
        for field in (self.host, self.tool):  # room for the placeholder's words, never squeezed below it
            field.setMinimumWidth(field.fontMetrics().horizontalAdvance(field.placeholderText()) + 40)
        self.forgotten = QCheckBox("Show forgotten")
        self.problem = problem_label(wrap=False)
        self._groups: list[QWidget] = []
        for label, widget in (("&Project", self.project), (None, self.scope), ("&Kind", self.kind),
                              ("T&rust", self.tier), ("Si&te", self.host), ("Too&l", self.tool)):
            group = QWidget()
            row = QHBoxLayout(group)
            row.setContentsMargins(0, 0, 0, 0)
            if label is not None:
                buddy = QLabel(label)
                buddy.setBuddy(widget)
                row.addWidget(buddy)
            widget.setAccessibleName((label or "Scope").replace("&", ""))
            row.addWidget(widget, 1)
            self._groups.append(group)
        self._groups.append(self.forgotten)
        self._rows = (QHBoxLayout(), QHBoxLayout())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for row in self._rows:
            row.setContentsMargins(0, 0, 0, 0)
            layout.addLayout(row)
        self._one_row: bool | None = None
        self._lay_out(one_row=False)
        self.project.currentIndexChanged.connect(self._project_chosen)
        self.scope.currentIndexChanged.connect(self.changed)
        self.tier.currentIndexChanged.connect(self.changed)
        self.kind.currentIndexChanged.connect(self.changed)
        self.host.textChanged.connect(self.changed)
        self.tool.textChanged.connect(self.changed)
        self.forgotten.toggled.connect(self.changed)

    def project_names(self) -> list[str]:
        """The vault's projects as this bar lists them (read by an op, never here)."""
        return [str(self.project.itemData(i)) for i in range(2, self.project.count())]

    def _lay_out(self, one_row: bool) -> None:
        """One row when every field fits at its own width, else two (project, scope, kind and trust;
        then site, tool and show forgotten)."""
        if one_row == self._one_row:
            return
        self._one_row = one_row
        for row in self._rows:
            while row.count():
                row.takeAt(0)
        first = len(self._groups) if one_row else 4
        for i, group in enumerate(self._groups):
            self._rows[0 if i < first else 1].addWidget(group, 1 if group in (self._groups[4], self._groups[5]) else 0)
        self._rows[1 if not one_row else 0].addWidget(self.problem, 1)
        if not one_row:
            self._rows[0].addStretch(1)

    def _needed_width(self) -> int:
        spacing = self._rows[0].spacing()
        return sum(g.minimumSizeHint().width() + spacing for g in self._groups) + 80

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        self._lay_out(event.size().width() >= self._needed_width())
        super().resizeEvent(event)

    def _project_chosen(self) -> None:
        self.scope.setEnabled(isinstance(self.project.currentData(), str))
        self.scope.blockSignals(True)
        self._update_scope_counts()
        self.scope.blockSignals(False)
        self.changed.emit()

    def set_projects(self, counts: ProjectCounts) -> None:
        """The vault's projects with their own counts, and the global count; the chosen one stays
        chosen (if it still exists)."""
        chosen, index = self.project.currentData(), self.project.currentIndex()
        self.counts = counts
        self.project.blockSignals(True)
        try:
            self.project.setItemText(1, f"{GLOBAL_ONLY_LABEL} ({counts.global_count:,})")
            while self.project.count() > 2:
                self.project.removeItem(2)
            for name, count in sorted(counts.projects.items(), key=lambda item: item[0].casefold()):
                self.project.addItem(f"{name} ({count:,})", name)
            found = self.project.findData(chosen) if isinstance(chosen, str) else min(index, 1)
            self.project.setCurrentIndex(max(0, found))
        finally:
            self.project.blockSignals(False)
        self._update_scope_counts()
        if isinstance(chosen, str) and self.project.currentData() != chosen:
            self._project_chosen()  # the project chosen is gone: the list shows all again

    def _update_scope_counts(self) -> None:
        project = self.project.currentData()
        for i in range(self.scope.count()):
            scope = self.scope.itemData(i)
            label = SCOPE_LABELS[scope]
            self.scope.setItemText(i, f"{label} ({self.counts.count(project, scope):,})"
                                   if isinstance(project, str) else label)

    def choose_project(self, name: str, scope: Scope = Scope.PROJECT_ONLY) -> bool:
        """Choose ``name`` from the list, seen in ``scope`` (False when the vault has no such project)."""
        found = self.project.findData(name)
        if found >= 0:
            self.scope.setCurrentIndex(self.scope.findData(scope))
            self.project.setCurrentIndex(found)
        return found >= 0

    def choose_global_only(self) -> None:
        self.project.setCurrentIndex(1)

    def choose_all(self) -> None:
        self.project.setCurrentIndex(0)

    def shown_count(self) -> int | None:
        """What the project's own choice says it holds (its name's count, or with the global ones)."""
        project = self.project.currentData()
        if project is GLOBAL:
            return self.counts.global_count
        if isinstance(project, str):
            return self.counts.count(project, self.scope.currentData())
        return None

    def projects(self) -> list[str]:
        return [self.project.itemData(i) for i in range(2, self.project.count())]

    def describe(self) -> list[str]:
        """The filters in force, in words (for "no results" messages)."""
        said = []
        project = self.project.currentData()
        if project is GLOBAL:
            said.append("global memories only")
        elif isinstance(project, str):
            with_global = self.scope.currentData() is Scope.PROJECT_AND_GLOBAL
            said.append(f"project {project}" + (" and the global memories" if with_global else " only"))
        if self.tier.currentData():
            said.append(f"trust: {self.tier.currentText()}")
        if self.kind.currentData():
            said.append(f"kind {self.kind.currentText()}")
        if self.host.text().strip():
            said.append(f"site {self.host.text().strip()}")
        if self.tool.text().strip():
            said.append(f"written by {self.tool.text().strip()}")
        if self.forgotten.isChecked():
            said.append("forgotten ones shown")
        return said

    def current_filter(self) -> FactFilter:
        """The filter the bar describes; an invalid site is shown and left out (never raised)."""
        project = self.project.currentData()
        tier, kind = self.tier.currentData(), self.kind.currentData()
        everything = FactFilter(
            project=ALL_PROJECTS,
            include_forgotten=self.forgotten.isChecked(),
            include_superseded=False,
            host=self._host(),
            tiers=(tier,) if tier else (),
            kinds=(kind,) if kind else (),
            tools=(tool,) if (tool := self.tool.text().strip()) else (),
        )
        if project is GLOBAL:
            return within(everything, None, Scope.GLOBAL_ONLY)
        if isinstance(project, str):
            return within(everything, project, self.scope.currentData())
        return everything

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
