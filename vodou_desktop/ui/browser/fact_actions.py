"""What the person can do to one memory from the detail pane or the results' context menu.

Correct (in place: the memory keeps its id; the old text stays in its history, never recalled), pin /
unpin, move to another project (also a revision, so the move is in the history; the id is kept), forget and
undo (soft, through the retraction service's operation id), erase (hard, after a confirmation)
and link to page (the page lane's ``page_link``, which obeys the site mode). Every action runs as
an op; the views refresh from the vault's change event, never from here.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QWidget

from vodou_desktop.data.erase_copies import sentence as copies_sentence
from vodou_desktop.ingest import remember as ingest
from vodou_desktop.ui.prompts import TextPrompt, ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Fact
from vodou_desktop.vault.facts import GLOBAL_KINDS
from vodou_desktop.words import plural

NAMES = ("correct", "pin", "move", "forget", "undo", "erase", "link")
KEYS = {"correct": "F2", "pin": "Ctrl+P", "move": "Ctrl+Shift+M", "forget": "Delete", "undo": "Ctrl+Z",
        "erase": "Shift+Delete", "link": "Ctrl+L"}
LABELS = {"correct": "Correct…", "pin": "Pin", "move": "Move to project…", "forget": "Forget",
          "undo": "Undo forget", "erase": "Erase…", "link": "Link to page…"}
GLOBAL_WORD = "global"
TIPS = {
    "correct": "Write a corrected version; the old text stays in the history and is never recalled",
    "pin": "Pinned memories outrank everything else in search and recall",
    "move": "Put this memory in another project, or make it global; the move stays in its history",
    "forget": "Hide this memory everywhere (undoable)",
    "undo": "Bring back the last memory you forgot",
    "erase": "Delete this memory and its revisions for good (cannot be undone)",
    "link": "Attach this memory to a web page (only on sites in collect mode)",
}


class FactActions(QObject):
    """The actions of the Memories tab, enabled for the selected memory (``set_fact``)."""

    def __init__(self, services: Services, parent_widget: QWidget, follow: Any = None) -> None:
        super().__init__(parent_widget)
        self._services = services
        self._widget = parent_widget
        self._follow = follow or (lambda _fact_id: None)
        self.fact: Fact | None = None
        self.last_forget: str | None = None
        self.prompt: TextPrompt | None = None
        self.confirm_box: QMessageBox | None = None
        self.here = True
        self.actions = {name: QAction(LABELS[name], self, objectName=f"fact.{name}", toolTip=TIPS[name])
                        for name in NAMES}
        for name in NAMES:
            self.actions[name].triggered.connect(getattr(self, name))
            self.actions[name].setShortcut(QKeySequence(KEYS[name]))
            self.actions[name].setIconText(LABELS[name])  # keep the "…" on the buttons
        self.set_fact(None)

    def __getitem__(self, name: str) -> QAction:
        return self.actions[name]

    def all(self) -> list[QAction]:
        return [self.actions[name] for name in NAMES]

    def set_fact(self, fact: Fact | None) -> None:
        """The memory shown in the detail pane (freshly read), or None."""
        self.fact = fact
        live = fact is not None and not fact.forgotten and not fact.superseded_by
        self.actions["correct"].setEnabled(live)
        self.actions["pin"].setEnabled(live)
        pin_text = "Unpin" if fact is not None and fact.tier == "pinned" else "Pin"
        self.actions["pin"].setText(pin_text)
        self.actions["pin"].setIconText(pin_text)
        self.actions["move"].setEnabled(live and fact is not None and fact.kind not in GLOBAL_KINDS)
        self.actions["forget"].setEnabled(live and self._services.forgetting is not None)
        self._update_undo()
        self.actions["erase"].setEnabled(fact is not None and self._services.forgetting is not None)
        self.actions["link"].setEnabled(live and self._services.page_memory is not None)
        self._unless_here()

    def set_here(self, here: bool) -> None:
        """Whether the Memories tab is the one shown: elsewhere these actions (and their keys, such
        as Delete and Ctrl+Z, which the Library tab uses for its own pages) are off."""
        self.here = here
        self.set_fact(self.fact)

    def _unless_here(self) -> None:
        if not self.here:
            for action in self.actions.values():
                action.setEnabled(False)

    def _update_undo(self) -> None:
        op, fact = self._undo_op(), self.fact
        undo = self.actions["undo"]
        undo.setEnabled(op is not None)
        if op is not None and fact is not None and fact.invalidated_by == op:
            undo.setToolTip(f"Undo the forget that hid this memory ({op}); a Forget site is undone for the whole site")
        else:
            undo.setToolTip(TIPS["undo"])
        self._unless_here()

    def _undo_op(self) -> str | None:
        if self._services.forgetting is None:
            return None
        fact = self.fact
        if fact is not None and fact.forgotten and (fact.invalidated_by or "").startswith("op-"):
            return fact.invalidated_by
        return self.last_forget

    # -- the actions ------------------------------------------------------------------------
    def correct(self) -> None:
        fact, vault = self.fact, self._services.runtime.vault
        if fact is None:
            return
        self.prompt = TextPrompt("Correct memory", "The corrected text (the old one stays in the history, never "
                                 "recalled):", fact.text, multiline=True, parent=self._widget)
        self.prompt.run(self._services.ops, lambda text: ingest.correct(vault, fact.id, text), self._corrected)

    def _corrected(self, fact_id: int) -> None:
        self._follow(fact_id)
        self._services.messages.info(f"Memory #{fact_id} corrected; the old text is kept in its history")

    def move(self) -> None:
        fact, vault = self.fact, self._services.runtime.vault
        if fact is None:
            return
        self.prompt = TextPrompt("Move memory", f"The project this memory belongs to (type “{GLOBAL_WORD}” to make "
                                 "it global, seen from every project):", fact.project or GLOBAL_WORD, ok_text="Move",
                                 parent=self._widget)

        def work(text: str) -> int:
            project = text.strip()
            # the person types the project in this prompt: an existing one or a new one
            return ingest.move(vault, fact.id, None if project.casefold() == GLOBAL_WORD else project,
                               new_project=None)

        self.prompt.run(self._services.ops, work, self._moved)

    def _moved(self, fact_id: int) -> None:
        self._follow(fact_id)
        self._services.messages.info(f"Memory #{fact_id} moved; the move is in its history")

    def pin(self) -> None:
        fact, vault = self.fact, self._services.runtime.vault
        if fact is None:
            return
        pinned = fact.tier != "pinned"
        self._services.ops.run(lambda: ingest.pin(vault, fact.id, pinned), owner=self)

    def forget(self) -> None:
        fact, forgetting = self.fact, self._services.forgetting
        if fact is None or forgetting is None:
            return
        self._services.ops.run(lambda: forgetting.forget_fact(fact.id), self._forgot, owner=self)

    def _forgot(self, result: dict[str, Any]) -> None:
        self.last_forget = result["op"]
        self._update_undo()
        self._services.messages.info(f"Memory #{result['id']} forgotten. Undo forget brings it back.")

    def undo(self) -> None:
        op, forgetting = self._undo_op(), self._services.forgetting
        if op is None:
            return
        self._services.ops.run(lambda: forgetting.undo(op), self._undone, owner=self)

    def _undone(self, result: dict[str, Any]) -> None:
        if result["op"] == self.last_forget:
            self.last_forget = None
        self._update_undo()
        self._services.messages.info(f"Undone: {plural(result['facts_restored'], 'memory')} visible again")

    def erase(self) -> None:
        fact, forgetting = self.fact, self._services.forgetting
        if fact is None or forgetting is None:
            return

        def erase_now() -> None:
            self._services.ops.run(lambda: forgetting.erase_fact(fact.id), self._erased, owner=self)

        self.confirm_box = ask_to_confirm(
            self._widget, "Erase memory",
            f"Erase “{_short(fact.text)}” and all its revisions for good?\n\nThe backups Vodou keeps that hold it are "
            "rewritten without it too. Erase cannot be undone; Forget can.",
            "Erase for good", erase_now)

    def _erased(self, result: dict[str, Any]) -> None:
        copies = copies_sentence(result)
        more = f"; {copies}" if copies else ""
        self._services.messages.info(f"Erased {plural(result['facts_erased'], 'memory')} for good "
                                     f"(#{result['id']} and its revisions){more}")

    def link(self) -> None:
        fact, pages = self.fact, self._services.page_memory
        if fact is None or pages is None:
            return
        self.prompt = TextPrompt("Link to page", "The web page this memory belongs to:",
                                 fact.link or "", ok_text="Link", parent=self._widget)
        self.prompt.run(self._services.ops, lambda url: pages.page_link(fact.id, url.strip()), self._linked)

    def _linked(self, fact: Fact) -> None:
        self._services.messages.info(f"Memory #{fact.id} linked to {fact.page_url}")


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
