"""What the person can do to the selected memories, from the detail pane, the Edit menu or the list's
context menu: one memory or many (the list's extended selection), each action one op through
``governance.edits.Edits`` and one entry in the undo journal (``governance.journal.Journal``).

Correct (in place, in the details pane: the memory keeps its id; the old text stays in its history,
never recalled), pin / unpin, move (to a project the vault has, or a new one named on purpose; the
id is kept), forget, erase (after one confirmation naming the count: final), export selected, link
to page (the page lane's ``page_link``, which obeys the site mode), and one Undo that names the last
action ("Undo Move 12 memories to birds") and reverses it, whatever it was. Every action runs as an
op; the views refresh from the vault's change event, never from here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from vodou_desktop.data.erase_copies import sentence as copies_sentence
from vodou_desktop.errors import KnownError
from vodou_desktop.governance.edits import Edits
from vodou_desktop.governance.journal import Action, Journal, Undone
from vodou_desktop.ui.browser.move_dialog import MoveDialog
from vodou_desktop.ui.browser.undo_bar import UndoBar
from vodou_desktop.ui.prompts import TextPrompt, ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Fact
from vodou_desktop.vault.facts import GLOBAL_KINDS
from vodou_desktop.words import plural

NAMES = ("correct", "pin", "move", "forget", "undo", "erase", "export", "link")
KEYS = {"correct": "F2", "pin": "Ctrl+P", "move": "Ctrl+Shift+M", "forget": "Delete", "undo": "Ctrl+Z",
        "erase": "Shift+Delete", "export": "Ctrl+Shift+E", "link": "Ctrl+L"}
LABELS = {"correct": "Correct…", "pin": "Pin", "move": "Move to project…", "forget": "Forget",
          "undo": "Undo", "erase": "Erase…", "export": "Export selected…", "link": "Link to page…"}
TIPS = {
    "correct": "Correct this memory's text here; the old text stays in its history and is never recalled",
    "pin": "Pinned memories outrank everything else in search and recall",
    "move": "Put the selected memories in another project, or make them global; each keeps its id",
    "forget": "Hide the selected memories everywhere (Undo brings them back)",
    "undo": "Nothing to undo yet (an erase can never be undone)",
    "erase": "Delete the selected memories and their revisions for good (cannot be undone)",
    "export": "Write the selected memories, with their history, to a file (for vodou import vodou, or to read)",
    "link": "Attach this memory to a web page (only on sites in collect mode)",
}
EXPORT_FILTERS = "Vodou export (*.jsonl);;Markdown (*.md)"


class FactActions(QObject):
    """The actions of the Memories tab, for the memories selected (``set_selection``) and the one
    shown in the details (``set_fact``)."""

    editing_wanted = Signal(object)  # Fact: the details pane opens its edit field
    corrected = Signal(int)  # the memory's id (unchanged)

    def __init__(self, services: Services, parent_widget: QWidget, follow: Callable[[int], None] | None = None,
                 after_removal: Callable[[list[int]], None] | None = None) -> None:
        super().__init__(parent_widget)
        self._services = services
        self._widget = parent_widget
        self._follow = follow or (lambda _fact_id: None)
        self._after_removal = after_removal or (lambda _ids: None)
        vault = services.runtime.vault
        self.edits = Edits(vault, services.forgetting)
        self.journal = Journal(vault, services.forgetting)
        self.fact: Fact | None = None
        self.ids: list[int] = []
        self.facts: list[Fact] = []  # the selected memories read so far
        self.last: Action | None = None  # the newest action that can be undone
        self.hid_it: Action | None = None  # the forget that hid the one memory selected, when it can be undone
        self.prompt: TextPrompt | None = None
        self.move_dialog: MoveDialog | None = None
        self.export_dialog: QFileDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.bar = UndoBar()
        self.bar.undo_wanted.connect(self.undo_op)
        self.here = True
        self.actions = {name: QAction(LABELS[name], self, objectName=f"fact.{name}", toolTip=TIPS[name])
                        for name in NAMES}
        for name in NAMES:
            self.actions[name].triggered.connect(getattr(self, name))
            self.actions[name].setShortcut(QKeySequence(KEYS[name]))
            self.actions[name].setIconText(LABELS[name])  # keep the "…" on the buttons
        services.events.changed.connect(self._vault_changed)
        self.set_selection([], [])
        self.read_last()

    def __getitem__(self, name: str) -> QAction:
        return self.actions[name]

    def all(self) -> list[QAction]:
        return [self.actions[name] for name in NAMES]

    # -- what is selected ------------------------------------------------------------------
    def set_selection(self, ids: list[int], facts: list[Fact]) -> None:
        """The selected memories' ids (every one, read or not) and those read so far."""
        self.ids, self.facts = list(ids), list(facts)
        if len(self.ids) != 1:
            self.fact = None
        self._enable()

    def set_fact(self, fact: Fact | None) -> None:
        """The memory shown in the detail pane (freshly read), or None: it alone is selected. A
        forgotten one brings the forget that hid it to Undo, however old (read off the GUI thread)."""
        self.fact = fact
        if fact is None:
            self.ids, self.facts = [], []
        elif self.ids in ([], [fact.id]):
            self.ids, self.facts = [fact.id], [fact]
        self.hid_it = None
        op = fact.invalidated_by if fact is not None and fact.forgotten else None
        if op and op.startswith("op-"):
            journal = self.journal
            self._services.ops.run(lambda: journal.find(op), lambda action: self._hid_it_read(fact, action),
                                   on_failure=self._hid_it_failed, owner=self)
        self._enable()

    def _hid_it_read(self, fact: Fact, action: Action) -> None:
        if self.fact is fact:
            self.hid_it = action
            self._show_last()

    def _hid_it_failed(self, exc: BaseException) -> None:
        """The forget that hid it cannot be undone here (undone, done elsewhere): Undo stays the last action."""
        if not isinstance(exc, KnownError):
            self._services.ops.report(exc)

    @property
    def undoing(self) -> Action | None:
        """What Undo undoes: the forget that hid the selected memory, else the last action."""
        return self.hid_it or self.last

    def _enable(self) -> None:
        n, fact, forgetting = len(self.ids), self.fact, self._services.forgetting
        live = [f for f in self.facts if not f.forgotten and not f.superseded_by]
        one_live = n == 1 and fact is not None and not fact.forgotten and not fact.superseded_by
        self.actions["correct"].setEnabled(one_live)
        self.actions["link"].setEnabled(one_live and self._services.page_memory is not None)
        self.actions["pin"].setEnabled(n > 0 and bool(live))
        pin_text = "Unpin" if live and all(f.tier == "pinned" for f in live) else "Pin"
        self.actions["pin"].setText(pin_text)
        self.actions["pin"].setIconText(pin_text)
        movable = [f for f in live if f.kind not in GLOBAL_KINDS]
        self.actions["move"].setEnabled(n > 0 and (bool(movable) if n == 1 else bool(live)))
        self.actions["forget"].setEnabled(n > 0 and forgetting is not None and (bool(live) or len(self.facts) < n))
        self.actions["erase"].setEnabled(n > 0 and forgetting is not None)
        self.actions["export"].setEnabled(n > 0)
        self._show_last()

    def set_here(self, here: bool) -> None:
        """Whether the Memories tab is the one shown: elsewhere these actions (and their keys, such
        as Delete and Ctrl+Z, which the Library tab uses for its own pages) are off."""
        self.here = here
        self._enable()

    def _unless_here(self) -> None:
        if not self.here:
            for action in self.actions.values():
                action.setEnabled(False)

    # -- the undo journal ------------------------------------------------------------------
    def _vault_changed(self, _change: object) -> None:
        self.read_last()

    def read_last(self) -> None:
        """Read the newest action that can be undone (off the GUI thread): Undo names it."""
        journal = self.journal
        self._services.ops.run(journal.last, self._last_read, owner=self)

    def _last_read(self, action: Action | None) -> None:
        self.last = action
        self._show_last()

    def _show_last(self) -> None:
        undo, action = self.actions["undo"], self.undoing
        undo.setEnabled(action is not None)
        undo.setText(action.undo_title if action else LABELS["undo"])
        undo.setIconText(LABELS["undo"])
        undo.setToolTip(f"{action.undo_title} ({action.when})" if action else TIPS["undo"])
        self._unless_here()

    def undo(self) -> None:
        """Edit ▸ Undo (Ctrl+Z): undo the action the menu names."""
        if self.undoing is not None:
            self.undo_op(self.undoing.op)

    def undo_op(self, op: str) -> None:
        journal = self.journal
        self._services.ops.run(lambda: journal.undo(op), self._undone, on_failure=self._undo_failed, owner=self)

    def _undone(self, done: Undone) -> None:
        sentence = done.sentence[:1].upper() + done.sentence[1:]
        self.bar.show_undone(sentence)  # over the list, where the eye is (one place says it)
        self.read_last()

    def _undo_failed(self, exc: BaseException) -> None:
        self.bar.hide()
        self._services.ops.report(exc)
        self.read_last()

    def _done(self, sentence: str, result: dict[str, Any]) -> None:
        """An action finished: say so over the list, with Undo (its journal entry)."""
        self.bar.show_done(sentence, result.get("op"))
        self.read_last()

    def imported(self, sentence: str, op: str | None) -> None:
        """An import ended (started from File ▸ Import…): its summary over the list, with Undo when
        it added memories (undoing it hides what it added)."""
        self.bar.show_done(sentence, op)
        self.read_last()

    # -- the actions -----------------------------------------------------------------------
    def correct(self) -> None:
        """F2: open the details pane's edit field on the memory (Save there runs ``save_correction``)."""
        if self.fact is not None and self.actions["correct"].isEnabled():
            self.editing_wanted.emit(self.fact)

    def save_correction(self, fact_id: int, text: str, on_failure: Callable[[BaseException], None]) -> None:
        edits = self.edits
        self._services.ops.run(lambda: edits.correct(fact_id, text), self._corrected, on_failure=on_failure,
                               owner=self)

    def _corrected(self, result: dict[str, Any]) -> None:
        self.corrected.emit(int(result["id"]))
        self._done(f"Memory #{result['id']} corrected; its earlier text is in its history, never recalled.", result)

    def move(self) -> None:
        if not self.ids:
            return
        ids, current = list(self.ids), self.fact.project if self.fact is not None else None
        self._services.ops.run(self.edits.projects, lambda projects: self._ask_where(ids, projects, current),
                               owner=self)

    def _ask_where(self, ids: list[int], projects: list[str], current: str | None) -> None:
        edits = self.edits
        self.move_dialog = MoveDialog(len(ids), projects, current, parent=self._widget)
        self.move_dialog.run(self._services.ops, lambda project, new: edits.move(ids, project, new_project=new),
                             lambda result: self._moved(ids, result))

    def _moved(self, ids: list[int], result: dict[str, Any]) -> None:
        where = f"to {result['project']}" if result["project"] else "to the global memories"
        skipped = sum(result["skipped"].values())
        more = f" ({plural(skipped, 'memory')} left as {'it was' if skipped == 1 else 'they were'})" if skipped else ""
        self._done(f"Moved {plural(result['moved'], 'memory')} {where}{more}.", result)

    def pin(self) -> None:
        if not self.ids:
            return
        ids, edits = list(self.ids), self.edits
        live = [f for f in self.facts if not f.forgotten and not f.superseded_by]
        pinned = not (live and all(f.tier == "pinned" for f in live))
        self._services.ops.run(lambda: edits.pin(ids, pinned), self._pinned, owner=self)

    def _pinned(self, result: dict[str, Any]) -> None:
        verb = "Pinned" if result["pinned"] else "Unpinned"
        self._done(f"{verb} {plural(result['changed'], 'memory')}.", result)

    def forget(self) -> None:
        if not self.ids or self._services.forgetting is None:
            return
        ids, edits = list(self.ids), self.edits
        self._after_removal(ids)
        self._services.ops.run(lambda: edits.forget(ids), self._forgot, owner=self)

    def _forgot(self, result: dict[str, Any]) -> None:
        self._done(f"Forgot {plural(result['facts_hidden'], 'memory')}.", result)

    def erase(self) -> None:
        if not self.ids or self._services.forgetting is None:
            return
        ids, edits = list(self.ids), self.edits

        def erase_now() -> None:
            self._after_removal(ids)
            self._services.ops.run(lambda: edits.erase(ids), self._erased, owner=self)

        if len(ids) == 1 and self.fact is not None:
            what = f"“{_short(self.fact.text)}” and all its revisions"
        else:
            what = f"these {len(ids):,} memories and all their revisions"
        self.confirm_box = ask_to_confirm(
            self._widget, "Erase memories" if len(ids) > 1 else "Erase memory",
            f"Erase {what} for good?\n\nThe backups Vodou keeps that hold them are rewritten without them too. "
            "Erase is final: it cannot be undone. Forget can.",
            f"Erase {plural(len(ids), 'memory')} for good", erase_now)

    def _erased(self, result: dict[str, Any]) -> None:
        copies = copies_sentence(result)
        more = f"; {copies}" if copies else ""
        n = int(result.get("memories_erased", len(result["ids"])))
        self.bar.show_done(f"Erased {plural(n, 'memory')} for good{more}. An erase cannot be undone.", None)
        self.read_last()

    def export(self) -> None:
        if not self.ids:
            return
        ids = list(self.ids)
        dialog = QFileDialog(self._widget, f"Export {plural(len(ids), 'memory')}", str(Path.home()),
                             EXPORT_FILTERS)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # opened without a nested loop
        dialog.selectFile("memories.jsonl")
        dialog.fileSelected.connect(lambda path: self.export_to(ids, Path(path)))
        self.export_dialog = dialog
        dialog.open()

    def export_to(self, ids: list[int], path: Path) -> None:
        """Write ``ids`` (with their history) to ``path``: Markdown for ``.md``, else JSON Lines."""
        edits, fmt = self.edits, "markdown" if path.suffix.lower() in (".md", ".markdown") else "jsonl"
        self._services.ops.run(lambda: edits.export(ids, path, fmt),
                               lambda counts: self._exported(len(ids), path), owner=self)

    def _exported(self, n: int, path: Path) -> None:
        self._services.messages.info(f"Exported {plural(n, 'memory')}, with their history, to {path}")

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
