"""One undo for everything reversible (UI-7): the journal of actions on memories, named in words.

Every reversible action (forget one, many, a site, a tool or a Library document; correct; move one or
many; pin or unpin one or many; an import) is one entry in the vault's operation journal
(``vault/journal_store.py``). ``Journal.last()`` names the newest one that can be undone ("Move 12
memories to birds": the Edit menu says "Undo Move 12 memories to birds"), ``Journal.undo()`` reverses
it, ``Journal.actions()`` lists them with their state. Erase is final: it is listed as such and
``undo`` of it is refused in words. Undo never brings back what another operation hid (GOV-6): a
forget's undo re-hides what another active forget covers, and a move or correction whose memory
changed since is left as it is and counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.governance.ages import format_age
from vodou_desktop.governance.forget import Forgetting, operation_named
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import retraction as r
from vodou_desktop.vault.revisions import shown_id
from vodou_desktop.words import plural

UNDOABLE = "undoable"
UNDONE = "undone"
FINAL = "final"  # an erase: deleted for good
ELSEWHERE = "elsewhere"  # a move, pin or import made on another computer: undone there


@dataclass(frozen=True)
class Action:
    """One journal entry as a person sees it."""

    op: str
    kind: str
    title: str  # "Move 12 memories to birds"
    created_at: str
    undone_at: str | None
    state: str  # UNDOABLE, UNDONE, FINAL or ELSEWHERE

    @property
    def undo_title(self) -> str:
        """The Edit menu's words: "Undo Move 12 memories to birds"."""
        return f"Undo {self.title}"

    @property
    def when(self) -> str:
        return format_age(self.created_at, "instant")

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "undo_title": self.undo_title}


@dataclass(frozen=True)
class Undone:
    """What an undo did: the action, the counts, and one sentence for a status line or the CLI."""

    action: Action
    result: dict[str, Any]
    sentence: str

    def as_json(self) -> dict[str, Any]:
        return {**self.result, "action": self.action.as_json(), "sentence": self.sentence}


class Journal:
    """The undo journal of one vault (the CLI, the app and its undo toast use the same one)."""

    def __init__(self, vault: Vault, forgetting: Forgetting | None = None) -> None:
        self.vault = vault
        self.forgetting = forgetting or Forgetting(vault, copies=False)

    # -- reading --------------------------------------------------------------------------------
    def actions(self, limit: int = 20) -> list[Action]:
        """The newest ``limit`` actions, newest first, each with its state."""
        def read(conn: apsw.Connection) -> list[Action]:
            kinds = (*js.ACTION_KINDS, *js.FINAL_KINDS)
            rows = conn.execute(f"SELECT id FROM operations WHERE kind IN ({','.join('?' * len(kinds))})"
                                " ORDER BY created_at DESC, rowid DESC LIMIT ?", (*kinds, limit))
            return [_action(conn, record) for (op,) in list(rows) if (record := r.get_operation(conn, str(op)))]

        return self.vault.read(read)

    def last(self) -> Action | None:
        """The newest action that can be undone here, or None (nothing to undo)."""
        def read(conn: apsw.Connection) -> Action | None:
            kinds = js.ACTION_KINDS
            rows = list(conn.execute(f"SELECT id FROM operations WHERE kind IN ({','.join('?' * len(kinds))})"
                                     " AND undone_at IS NULL ORDER BY created_at DESC, rowid DESC", kinds))
            for (op,) in rows:  # read whole first: a statement left part-read would hold this snapshot
                record = r.get_operation(conn, str(op))
                if record is not None and (action := _action(conn, record)).state == UNDOABLE:
                    return action
            return None

        return self.vault.read(read)

    def final_since(self, action: Action) -> Action | None:
        """The newest erase made after ``action`` (undo says that it was not undone: it cannot be)."""
        newer = [a for a in self.actions(limit=50) if a.state == FINAL and a.created_at > action.created_at]
        return newer[0] if newer else None

    def find(self, given: str | None) -> Action:
        """The action ``given`` names (the first characters of its id, with or without ``op-``), else
        the newest one that can be undone. An erase, or an action already undone, is refused in words."""
        if given is None:
            action = self.last()
            if action is None:
                raise NotFound("nothing to undo: no action is waiting to be undone (an erase can never be undone)")
            return action
        record = operation_named(self.vault, given)
        action = self.vault.read(lambda c: _action(c, record))
        if action.state == FINAL:
            raise InvalidInput(f"operation {action.op} was an erase: erased memories are deleted for good and"
                               " cannot be undone")
        if action.kind not in js.ACTION_KINDS:
            raise InvalidInput(f"operation {action.op} cannot be undone")
        if action.state == UNDONE:
            raise Conflict(f"{action.title} was already undone ({format_age(action.undone_at, 'instant')})")
        if action.state == ELSEWHERE:
            raise Conflict(f"{action.title} was done on another computer: undo it there")
        return action

    # -- undoing --------------------------------------------------------------------------------
    def undo(self, given: str | None = None) -> Undone:
        """Undo the action ``given`` names, else the last one; what it did, in words."""
        action = self.find(given)
        if action.kind in r.UNDOABLE_KINDS:
            result = self.forgetting.undo(action.op)
        else:
            undo = {js.MOVE_FACTS_KIND: js.undo_move, js.PIN_FACTS_KIND: js.undo_pin,
                    js.IMPORT_KIND: js.undo_import}[action.kind]

            def job(conn: apsw.Connection, change: Change) -> dict[str, Any]:
                record = r.get_operation(conn, action.op)
                if record is None or record["undone_at"]:
                    raise Conflict(f"{action.title} was already undone")
                return undo(conn, change, action.op)

            result = dict(self.vault.write(job))
        return Undone(action, result, undone_words(action, result))


def _action(conn: apsw.Connection, record: dict[str, Any]) -> Action:
    kind = record["kind"]
    if kind in js.FINAL_KINDS:
        state = FINAL
    elif record["undone_at"]:
        state = UNDONE
    elif kind in js.LOCAL_ITEM_KINDS and not js.has_items(conn, record["id"]):
        state = ELSEWHERE
    else:
        state = UNDOABLE
    return Action(record["id"], kind, title(conn, record), record["created_at"], record["undone_at"], state)


def _first_item_memory(conn: apsw.Connection, op: str) -> str | None:
    items = js.items_of(conn, op)
    rows = js.row_ids_of(conn, [items[0][0]]) if items else {}
    return shown_id(conn, next(iter(rows.values()))) if rows else None


def title(conn: apsw.Connection, record: dict[str, Any]) -> str:
    """An action in words, as the Edit menu and ``vodou undo --list`` say it: "Move 12 memories to birds"."""
    kind, target, detail = record["kind"], record["target"], record.get("detail") or {}
    n = int(detail.get("facts", 0) or 0)
    by = f" (by {detail['tool']})" if detail.get("tool") else ""
    site = "a site erased since" if (target or "").startswith("host-hmac:") else target
    if kind in (r.FORGET_FACT_KIND, r.CORRECT_FACT_KIND):
        verb = "Forget" if kind == r.FORGET_FACT_KIND else "Correct"
        return f"{verb} memory #{shown_id(conn, target)}{by}"
    if kind in (js.MOVE_FACTS_KIND, js.PIN_FACTS_KIND):
        one = _first_item_memory(conn, record["id"]) if n == 1 else None
        what = f"memory #{one}" if one else plural(n, "memory")
        if kind == js.PIN_FACTS_KIND:
            return f"{'Pin' if detail.get('pinned') else 'Unpin'} {what}"
        project = detail.get("project")
        return f"Move {what} to {project}" + (" (a new project)" if detail.get("new_project") else "") \
            if project else f"Make {what} global"
    words = {
        r.FORGET_FACTS_KIND: f"Forget {plural(n, 'memory')}{by}",
        r.FORGET_KIND: f"Forget the memories from {site}",
        r.FORGET_TOOL_KIND: f"Forget the memories written by {target}",
        r.FORGET_DOCUMENT_KIND: f"Forget library document #{target}",
        js.IMPORT_KIND: f"Import {plural(n, 'memory')} from {target}",
        "erase_fact": f"Erase memory #{target}",
        r.ERASE_FACTS_KIND: f"Erase {plural(int(detail.get('memories', 0) or 0), 'memory')}",
        r.ERASE_HOST_KIND: "Erase the memories from a site",
        "erase_document": f"Erase library document #{target}",
    }
    return words.get(kind, kind.replace("_", " ").capitalize())


def undone_words(action: Action, result: dict[str, Any]) -> str:
    """``undid “Move 12 memories to birds” (5 minutes ago): 12 memories back where they were``."""
    kind = action.kind
    if result.get("correction"):
        back = f"memory #{result['id']} has its earlier text back"
    elif kind == r.FORGET_DOCUMENT_KIND:
        back = "the document is visible again" if result.get("documents_restored") else "nothing was hidden any more"
    elif kind == js.MOVE_FACTS_KIND:
        back = f"{plural(result['facts_restored'], 'memory')} back where {_they_were(result['facts_restored'])}"
    elif kind == js.PIN_FACTS_KIND:
        back = f"{plural(result['facts_restored'], 'memory')} as {_they_were(result['facts_restored'])} before"
    elif kind == js.IMPORT_KIND:
        back = f"{plural(result['facts_hidden'], 'memory')} it added hidden again (erase deletes them for good)"
    else:
        back = f"{plural(result['facts_restored'], 'memory')} visible again"
        if result.get("documents_restored"):
            back += f", and {plural(result['documents_restored'], 'library document')}"
        if result.get("facts_still_hidden"):
            back += f"; {result['facts_still_hidden']} still hidden by another forget"
    if result.get("facts_changed_since"):
        back += f"; {plural(result['facts_changed_since'], 'memory')} changed since and left as it is"
    return f"undid “{action.title}” ({action.when}): {back}"


def _they_were(n: int) -> str:
    return "it was" if n == 1 else "they were"
