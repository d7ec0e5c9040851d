"""The Operator memory tab: the few standing notes kept for the assistant, by category.

Each category shows how full it is against its ceiling and how long its notes last; each note
shows whether it is active or expired (expired notes are never recalled until renewed), its
expiry, revision and source; superseded revisions are listed under it as "never recalled".
Renew (``reauthorize``), correct and erase go through ``governance.opm.OperatorMemory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QPushButton, QTreeView, QVBoxLayout, QWidget

from vodou_desktop.governance.ages import format_age, format_date
from vodou_desktop.governance.opm import CATEGORIES, Category, OwnedMemory
from vodou_desktop.ui.prompts import TextPrompt, ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label
from vodou_desktop.ui.table_model import Column, RecordTreeModel, TreeRow
from vodou_desktop.vault.clock import parse_iso
from vodou_desktop.words import plural

NEVER_RECALLED = "superseded — never recalled"


@dataclass(frozen=True)
class OpmItem:
    kind: str  # "category", "memory" or "revision"
    text: str
    status: str = ""
    expires: str = ""
    revision: str = ""
    source: str = ""
    memory_id: str | None = None
    tooltip: str = ""


COLUMNS: list[Column[OpmItem]] = [
    Column("Memory", lambda i: i.text, lambda i: i.tooltip or i.text),
    Column("Status", lambda i: i.status),
    Column("Expires", lambda i: i.expires),
    Column("Revision", lambda i: i.revision),
    Column("Source", lambda i: i.source),
]


def _expiry(expires_at: str | None, now: datetime) -> str:
    if not expires_at:
        return "never"
    when = parse_iso(expires_at)
    days = (when - now).days
    day = format_date(expires_at)  # "31 March 2026", in local time
    if when <= now:
        return f"expired {day}"
    return f"{day} (in {days} day{'s' if days != 1 else ''})" if days >= 1 else f"{day} (today)"


def _memory_item(owned: OwnedMemory, now: datetime) -> TreeRow[OpmItem]:
    row = owned.memory
    source = row.source_ref if row.source_ref == row.original_source_ref else \
        f"{row.source_ref} (first from {row.original_source_ref})"
    tip = f"{row.content}\n\nid {row.id} · created {format_age(row.created_at)}" + (
        f" · renewed {format_age(row.reauthorized_at)}" if row.reauthorized_at else "") + (
        f" · last recalled {format_age(row.last_used_at)}" if row.last_used_at else " · not recalled yet")
    past = [TreeRow(OpmItem("revision", h.content, NEVER_RECALLED, "", f"r{h.revision} → r{h.successor_revision}",
                            h.source_ref, row.id, f"{h.content}\n\nreplaced {format_age(h.superseded_at)}"))
            for h in sorted(owned.history, key=lambda h: -h.revision)]
    item = OpmItem("memory", row.content, owned.status, _expiry(row.expires_at, now), f"r{row.revision}", source,
                   row.id, tip)
    return TreeRow(item, past)


def _category_item(cat: Category, held: int, expiry_days: int) -> OpmItem:
    name = cat.plural.capitalize()
    return OpmItem("category", f"{name} — {plural(held, 'note')} (at most {cat.ceiling})",
                   expires=f"after {expiry_days} days",
                   tooltip=f"At most {cat.ceiling} {cat.plural} are kept; the categories higher in this list "
                           "are recalled first")


def opm_tree(memories: list[OwnedMemory], expiry: dict[str, Any], now: datetime) -> list[TreeRow[OpmItem]]:
    """Categories (most salient first) → notes → their superseded revisions."""
    tree = []
    for cat in sorted(CATEGORIES.values(), key=lambda c: -c.salience):
        mine = [m for m in memories if m.memory.category == cat.name]
        children = [_memory_item(m, now) for m in mine]
        tree.append(TreeRow(_category_item(cat, len(mine), expiry[cat.name].days), children))
    return tree


class OperatorMemoryTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.model: RecordTreeModel[OpmItem] = RecordTreeModel(COLUMNS, self)
        self.view = QTreeView(alternatingRowColors=True)
        self.view.setAccessibleName("Operator memories")
        self.view.setModel(self.model)
        self.view.setColumnWidth(0, 430)
        self.view.setColumnWidth(1, 190)
        self.view.setColumnWidth(2, 170)
        self.view.setColumnWidth(3, 80)
        self.reauthorize_button = QPushButton("Renew")
        self.reauthorize_button.setToolTip("Keep this note as it is: its time before it expires starts again")
        self.correct_button = QPushButton("Correct…")
        # Erase, not Forget: this deletes for good (Forget hides and can be undone, everywhere in the app)
        self.erase_button = QPushButton("Erase…", toolTip="Delete this note and its history for good (asks first)")
        self.prompt: TextPrompt | None = None
        self.confirm_box: QMessageBox | None = None
        note = help_label("Expired notes are kept but never recalled until you renew them.")
        buttons = QHBoxLayout()
        buttons.addWidget(note, 1)
        for button in (self.reauthorize_button, self.correct_button, self.erase_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.reauthorize_button.clicked.connect(self.reauthorize)
        self.correct_button.clicked.connect(self.correct)
        self.erase_button.clicked.connect(self.erase)
        self.view.selectionModel().currentChanged.connect(lambda _index, _prev: self._update_buttons())
        self._update_buttons()

    def refresh(self) -> None:
        opm = self._services.opm

        def load() -> list[TreeRow[OpmItem]]:
            return opm_tree(opm.list_memories(include_history=True), opm.expiry, opm.clock())

        self._services.ops.run(load, self._loaded, owner=self)

    def _loaded(self, tree: list[TreeRow[OpmItem]]) -> None:
        keep = self.selected()
        self.model.set_rows(tree)
        self.view.expandAll()
        if keep is not None:
            self.select(keep.memory_id)
        self._update_buttons()

    def selected(self) -> OpmItem | None:
        item = self.model.record(self.view.currentIndex())
        return item if item is not None and item.kind == "memory" else None

    def select(self, memory_id: str | None) -> None:
        for row in range(self.model.rowCount()):
            category = self.model.index(row, 0)
            for child in range(self.model.rowCount(category)):
                index = self.model.index(child, 0, category)
                if self.model.record(index).memory_id == memory_id:  # type: ignore[union-attr]
                    self.view.setCurrentIndex(index)
                    return

    def _update_buttons(self) -> None:
        has = self.selected() is not None
        for button in (self.reauthorize_button, self.correct_button, self.erase_button):
            button.setEnabled(has)

    def reauthorize(self) -> None:
        item, opm = self.selected(), self._services.opm
        if item is not None:
            self._services.ops.run(lambda: opm.reauthorize(item.memory_id), owner=self)

    def correct(self) -> None:
        item, opm = self.selected(), self._services.opm
        if item is None:
            return
        self.prompt = TextPrompt("Correct operator memory", "The corrected note (the old text stays in the history, "
                                 "never recalled):", item.text, multiline=True, parent=self)
        self.prompt.run(self._services.ops, lambda text: opm.correct(item.memory_id, text), lambda _outcome: None)

    def erase(self) -> None:
        item, opm = self.selected(), self._services.opm
        if item is None:
            return
        self.confirm_box = ask_to_confirm(
            self, "Erase operator memory", f"Erase “{item.text}” with all its revisions for good? This cannot be "
            "undone.", "Erase", lambda: self._services.ops.run(lambda: opm.erase(item.memory_id), owner=self))
