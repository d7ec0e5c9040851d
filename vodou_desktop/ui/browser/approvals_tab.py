"""The Approvals tab: actions the page assistant asked for and parked until the person decides.

Approve and deny go through the bridge's approval gate, the same service the tray panel uses:
approving runs the parked action (the site mode still applies), denying drops it. Decided ones
stay listed with their outcome.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.governance.ages import format_age
from vodou_desktop.governance.approvals import TOOL_WORDS, VOLATILE_NOTE
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.words import mode_words

Approval = dict[str, Any]


def describe_arguments(approval: Approval) -> str:
    """What the parked action would do, in a few words (the text to remember, the site, the mode)."""
    args = approval.get("arguments")
    if not args and approval.get("status") == "denied":
        return "(dropped when denied)"
    if isinstance(args, dict):
        if isinstance(args.get("text"), str):
            return str(args["text"])
        if approval.get("tool") == "site_mode" and {"host", "mode"} <= set(args):
            return f"{args['host']} → {mode_words(str(args['mode']))}"
        if approval.get("tool") == "link" and {"id", "url"} <= set(args):
            return f"memory #{args['id']} → {args['url']}"
        if isinstance(args.get("host"), str):
            return str(args["host"])
        if isinstance(args.get("query"), str):
            return f"“{args['query']}”"
        return ", ".join(f"{k}: {v}" for k, v in sorted(args.items()))
    return json.dumps(args)


def tool_words(approval: Approval) -> str:
    tool = str(approval.get("tool"))
    return TOOL_WORDS.get(tool, tool)


def pending_first(approvals: list[Approval]) -> list[Approval]:
    """Pending ones first (oldest first: they have waited longest), then the decided, newest first."""
    def asked(a: Approval) -> tuple[str, int]:  # kept-in-memory ones have negative ids: -1 is the oldest
        return str(a.get("created_at") or ""), abs(int(a.get("id") or 0))

    waiting = sorted((a for a in approvals if a.get("status") == "pending"), key=asked)
    decided = sorted((a for a in approvals if a.get("status") != "pending"), key=asked, reverse=True)
    return waiting + decided


def _outcome(approval: Approval) -> str:
    result = approval.get("result")
    if approval.get("status") == "failed" and isinstance(result, dict):
        return f"failed: {result.get('error')}"
    return str(approval.get("status"))


def reason_words(approval: Approval) -> str:
    """Why the action asked first: as the gate said it while it waits; in the past tense once decided
    (no "decide before then" on an action already approved or denied)."""
    reason = str(approval.get("reason") or "")
    if approval.get("status") == "pending":
        return reason
    for now, then in ((f" {VOLATILE_NOTE}.", ""),
                      ("anything that changes your memory waits for you", "it waited for your decision"),
                      ("waits for you", "waited for you"), ("always asks first", "asked first")):
        reason = reason.replace(now, then)
    return reason


COLUMNS: list[Column[Approval]] = [
    Column("Action", tool_words),
    Column("What", describe_arguments, describe_arguments),
    Column("Why it asked", reason_words, reason_words),
    Column("Status", _outcome),
    Column("Asked", lambda a: format_age(a["created_at"], "instant") if a.get("created_at") else ""),
]


class _PaddedRows(QStyledItemDelegate):
    """Rows a few pixels taller than the text: the default size hint leaves no room for the grid line
    and the cell's padding, and a wrapped reason lost the bottom of its last line."""

    PADDING = 6

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(hint.width(), hint.height() + self.PADDING)


class ApprovalsTab(QWidget):
    def __init__(self, services: Services, gate: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services, self._gate = services, gate
        self.model: RecordTableModel[Approval] = RecordTableModel(COLUMNS, self)
        self.view = QTableView(selectionBehavior=QTableView.SelectionBehavior.SelectRows,
                               selectionMode=QTableView.SelectionMode.SingleSelection)
        self.view.setModel(self.model)
        self.view.setAccessibleName("Approvals")
        self.view.setWordWrap(True)  # the reason wraps at word boundaries, never cut mid-word
        self.view.setItemDelegate(_PaddedRows(self.view))
        self.view.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.view.verticalHeader().hide()
        for column, width in ((0, 100), (2, 400), (3, 90), (4, 110)):
            self.view.setColumnWidth(column, width)
        self.view.horizontalHeader().setStretchLastSection(False)
        self.view.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.approve_button = QPushButton("Approve")
        self.deny_button = QPushButton("Deny")
        self.summary = help_label(wrap=False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.deny_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(lambda: self.decide("approve"))
        self.deny_button.clicked.connect(lambda: self.decide("deny"))
        self.view.selectionModel().currentRowChanged.connect(lambda _index, _prev: self._update_buttons())
        self._update_buttons()

    def refresh(self) -> None:
        gate = self._gate
        self._services.ops.run(lambda: gate.approvals(pending_only=False), self._loaded, owner=self)

    def _loaded(self, approvals: list[Approval]) -> None:
        approvals = pending_first(approvals)
        self.model.set_rows(approvals)
        self.view.resizeRowsToContents()
        pending = [row for row, a in enumerate(approvals) if a.get("status") == "pending"]
        self.summary.setText(f"{len(pending)} waiting for you" if pending else "Nothing waits for your approval.")
        if pending:
            self.view.selectRow(pending[0])
        self._update_buttons()

    def selected(self) -> Approval | None:
        return self.model.row_record(self.view.currentIndex().row())

    def _update_buttons(self) -> None:
        approval = self.selected()
        pending = approval is not None and approval.get("status") == "pending"
        self.approve_button.setEnabled(pending)
        self.deny_button.setEnabled(pending)

    def decide(self, decision: str) -> None:
        """Approve or deny the selected pending action; the list refreshes when it is done."""
        approval = self.selected()
        if approval is None or approval.get("status") != "pending":
            return
        gate, approval_id = self._gate, int(approval["id"])
        self.approve_button.setEnabled(False)
        self.deny_button.setEnabled(False)
        # Approvals that are not saved (tainted turns) change no vault table: refresh here.
        self._services.ops.run(lambda: gate.resolve(approval_id, decision), lambda _r: self.refresh(), owner=self)
