"""The approval gate (PAGE-2): ``decide(tool, turn)`` — a function of the turn, not only the tool.

A turn is *tainted* while it carries page content, or when the model was shown a recalled memory
whose provenance is a web page or a capture (``untrusted_provenance``): text a stranger wrote
that reached the model, in this turn or saved in an earlier one. Every side-effecting tool
(remember, forget, erase, link, site-mode change) of a tainted turn escalates from ``auto`` to
``ask``. A page — or a memory saved from one — that tells a model "forget example.com" can
therefore only ever produce a pending card.

Where a parked call waits: a tainted turn's proposals are kept in this process's memory only
(negative ids), so page-derived text never reaches the vault file even while it waits; they
are lost when Vodou quits, and each says so. Other parked calls (erase always asks) go to the
``approvals`` table. Approving runs the call; denying drops it (its arguments are erased). A
``remember`` approved from a tainted turn is stored as a capture, so that recalling it later
taints that turn too: approval does not launder a stranger's words into the person's own.

Tools take one ``arguments`` dict (as a model proposes them). Page tools run through
``PageMemory``, so the site mode still applies when an approved action finally runs.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vodou_desktop.errors import Conflict, InvalidInput, KnownError, NotFound
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Fact, Vault
from vodou_desktop.vault import approvals_store as store
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.sources import PAGE_KINDS

log = logging.getLogger(__name__)

AUTO, ASK = "auto", "ask"
SIDE_EFFECTING = frozenset({"remember", "forget", "erase", "link", "site_mode"})
# The answer for a turn without page content. Erase cannot be undone, so it always asks.
BASE_DECISION = {"search": AUTO, "remember": AUTO, "link": AUTO, "site_mode": AUTO, "forget": AUTO, "erase": ASK}
TOOLS = frozenset(BASE_DECISION)
PAGE_REASON = ("A web page was part of this message, so anything that changes your memory waits for you "
               "(the page could have asked for it)")
RECALL_REASON = ("This message used a memory saved from a web page or a capture, so anything that changes your "
                 "memory waits for you")
VOLATILE_NOTE = "It is not saved: it ends when you quit Vodou, so decide before then"
UNSAVED_ENDS = "an approval that was not saved ends when Vodou quits"
MAX_VOLATILE = 500  # in-memory approvals kept; the oldest decided ones go first, then the oldest pending


@dataclass(frozen=True)
class Turn:
    """What the gate may know about the turn a tool call came from."""

    message_id: int | None
    has_page_content: bool
    project: str | None = None
    recalls_page_memory: bool = False  # the model was shown a memory from a page or a capture

    @property
    def tainted(self) -> bool:
        """Text a stranger wrote reached the model in this turn."""
        return self.has_page_content or self.recalls_page_memory


def untrusted_provenance(fact: Fact) -> bool:
    """A memory whose words may be a stranger's: saved from a web page (or linked to one), or captured."""
    return bool(fact.source_url or fact.page_url or fact.source_kind in PAGE_KINDS or fact.tier == "capture")


def decide(tool: str, turn: Turn) -> str:
    """``auto`` or ``ask`` for ``tool`` in ``turn``: every side-effecting tool of a tainted turn asks."""
    if tool not in TOOLS:
        raise InvalidInput(f"unknown tool {tool!r}")
    if tool in SIDE_EFFECTING and turn.tainted:
        return ASK
    return BASE_DECISION[tool]


TOOL_WORDS = {"remember": "Remember", "forget": "Forget site", "erase": "Erasing a site", "link": "Link to page",
              "site_mode": "Change site mode", "search": "Search"}


def _reason(tool: str, turn: Turn) -> str:
    if turn.has_page_content:
        return f"{PAGE_REASON}. {VOLATILE_NOTE}."
    if turn.recalls_page_memory:
        return f"{RECALL_REASON}. {VOLATILE_NOTE}."
    return f"{TOOL_WORDS.get(tool, tool)} cannot be undone, so it always asks first"


ToolFn = Callable[[dict[str, Any], Turn], Any]


class ToolBox:
    """The actions a turn (or its model) may propose, each taking one ``arguments`` dict."""

    def __init__(self, vault: Vault, sites: SiteModes, pages: Any, search: Any, forgetting: Any = None) -> None:
        self.vault, self.sites, self.pages, self.search, self.forgetting = vault, sites, pages, search, forgetting
        self.tools: dict[str, ToolFn] = {
            "search": self._search, "remember": self._remember, "link": self._link,
            "site_mode": self._site_mode, "forget": self._forget, "erase": self._erase,
        }

    def run(self, tool: str, arguments: dict[str, Any], turn: Turn) -> Any:
        if tool not in self.tools:
            raise InvalidInput(f"unknown tool {tool!r}")
        return self.tools[tool](arguments, turn)

    def _search(self, args: dict[str, Any], turn: Turn) -> Any:
        from vodou_desktop.vault import FactFilter

        results = self.search.search(_text(args, "query"), FactFilter(project=turn.project), k=5)
        return [{"id": r.fact.id, "text": r.fact.text, "score": round(r.score, 4)} for r in results]

    def _remember(self, args: dict[str, Any], turn: Turn) -> Any:
        text = strip_context(_text(args, "text"))
        if args.get("url"):
            fact = self.pages.note(args["url"], args.get("title"), text, project=turn.project)
            return {"id": fact.id, "secrets_removed": fact.extra.get("secrets_removed", [])}
        # What a tainted turn remembers (approved by the person) stays marked as not typed by them:
        # stored as a capture, a later turn that recalls it is tainted too.
        tier = "capture" if turn.tainted else "first_party"
        fact_id = remember(self.vault, text, Origin(kind="turn", tier=tier, tool="bridge"), project=turn.project)
        return {"id": int(fact_id), "secrets_removed": list(fact_id.secrets_removed)}

    def _link(self, args: dict[str, Any], turn: Turn) -> Any:
        fact = self.pages.page_link(_fact_id(args), _text(args, "url"))
        return {"id": fact.id, "page_url": fact.page_url}

    def _site_mode(self, args: dict[str, Any], turn: Turn) -> Any:
        return self.sites.set_rule(_text(args, "host"), _text(args, "mode")).as_json()

    def _forget(self, args: dict[str, Any], turn: Turn) -> Any:
        forgetting = self._need_forgetting()
        plan = forgetting.plan(_text(args, "host"))
        return as_json(forgetting.confirm(as_json(plan)["token"]))

    def _erase(self, args: dict[str, Any], turn: Turn) -> Any:
        erase = getattr(self._need_forgetting(), "erase_host", None)
        if erase is None:
            raise KnownError("erasing a site is not available in this build")
        return as_json(erase(_text(args, "host")))

    def _need_forgetting(self) -> Any:
        if self.forgetting is None:
            raise KnownError("forgetting is not available in this build")
        return self.forgetting


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"the tool argument {name!r} is required")
    return value.strip()


def _fact_id(args: dict[str, Any]) -> int:
    value = args.get("id")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise InvalidInput("the tool argument 'id' must be a memory id (a whole number)")
    return value


def as_json(value: Any) -> Any:
    """A service result as JSON: ``as_json()`` when it has one, dataclasses and dicts as they are."""
    if hasattr(value, "as_json"):
        return value.as_json()
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return value


class ApprovalGate:
    """Runs or parks tool calls, and carries out the person's decisions on parked ones."""

    def __init__(self, vault: Vault, tools: ToolBox, on_change: Callable[[int], None] | None = None) -> None:
        self.vault = vault
        self.tools = tools
        self.on_change = on_change
        # Tainted turns' proposals: this process only, never the vault (negative ids, newest first).
        self._volatile: dict[int, dict[str, Any]] = {}
        self._volatile_ids = itertools.count(-1, -1)
        self._lock = threading.Lock()

    def record_message(self, role: str, content: str, project: str | None) -> int:
        return int(self.vault.write(lambda c, ch: store.insert_message(c, ch, role, content, project)))

    def submit(self, tool: str, arguments: dict[str, Any], turn: Turn) -> dict[str, Any]:
        """Run ``tool`` now (auto) or park it (ask). Returns what happened."""
        if tool not in TOOLS:  # a model may name anything: that call fails, the turn goes on
            return {"tool": str(tool)[:100], "status": "failed", "error": f"unknown tool {str(tool)[:100]!r}"}
        if decide(tool, turn) == ASK:
            if turn.project:
                arguments = {**arguments, "project": turn.project}
            if turn.tainted:
                approval_id = self._park_in_memory(tool, arguments, _reason(tool, turn), turn.message_id)
            else:
                approval_id = self.vault.write(lambda c, ch: store.insert_approval(
                    c, ch, tool, arguments, _reason(tool, turn), turn.message_id))
            self._changed()
            return {"tool": tool, "status": "pending", "approval": self.get(approval_id)}
        try:
            return {"tool": tool, "status": "executed", "result": self.tools.run(tool, arguments, turn)}
        except KnownError as exc:
            return {"tool": tool, "status": "failed", "error": str(exc)}

    def _park_in_memory(self, tool: str, arguments: dict[str, Any], reason: str, message_id: int | None) -> int:
        with self._lock:
            approval_id = next(self._volatile_ids)
            self._volatile[approval_id] = {
                "id": approval_id, "tool": tool, "arguments": arguments, "reason": reason, "message_id": message_id,
                "status": "pending", "result": None, "created_at": now_iso(), "decided_at": None, "volatile": True}
            self._prune()
        return approval_id

    def _prune(self) -> None:
        """Bound the in-memory list (a flood of tainted turns must not grow it without end)."""
        excess = len(self._volatile) - MAX_VOLATILE
        if excess <= 0:
            return
        oldest_first = sorted(self._volatile.values(), key=lambda r: (r["status"] == "pending", -r["id"]))
        for row in oldest_first[:excess]:
            del self._volatile[row["id"]]

    def _volatile_rows(self, pending_only: bool) -> list[dict[str, Any]]:
        with self._lock:
            rows = [dict(r) for r in self._volatile.values() if r["status"] == "pending" or not pending_only]
        return sorted(rows, key=lambda r: r["id"])  # newest (most negative) first

    def get(self, approval_id: int) -> dict[str, Any]:
        if approval_id < 0:
            with self._lock:
                row = self._volatile.get(approval_id)
                if row is None:
                    raise NotFound(f"no approval with id {approval_id} ({UNSAVED_ENDS})")
                return dict(row)
        return {**self.vault.read(lambda c: store.get_approval(c, approval_id)), "volatile": False}

    def approvals(self, pending_only: bool = True) -> list[dict[str, Any]]:
        stored = self.vault.read(lambda c: store.list_approvals(c, pending_only))
        return self._volatile_rows(pending_only) + [{**r, "volatile": False} for r in stored]

    def pending_count(self) -> int:
        return int(self.vault.read(store.count_pending)) + len(self._volatile_rows(pending_only=True))

    def resolve(self, approval_id: int, decision: str) -> dict[str, Any]:
        """``approve`` runs the parked action (the site mode still applies); ``deny`` drops it."""
        if decision not in ("approve", "deny"):
            raise InvalidInput("decision must be 'approve' or 'deny'")
        status = "approved" if decision == "approve" else "denied"
        if approval_id < 0:
            parked = self._claim_volatile(approval_id, status)
        else:
            parked = self.vault.write(lambda c, ch: store.claim_pending(c, ch, approval_id, status))
        if status == "approved":
            self._execute(parked)
        self._changed()
        return self.get(approval_id)

    def _claim_volatile(self, approval_id: int, status: str) -> dict[str, Any]:
        with self._lock:
            row = self._volatile.get(approval_id)
            if row is None:
                raise NotFound(f"no approval with id {approval_id} ({UNSAVED_ENDS})")
            if row["status"] != "pending":
                raise Conflict(f"approval {approval_id} was already {row['status']}")
            parked = dict(row)
            row.update(status=status, decided_at=now_iso())
            if status == "denied":
                row["arguments"] = {}
        return parked

    def _execute(self, parked: dict[str, Any]) -> None:
        tainted = bool(parked.get("volatile"))  # only a tainted turn's calls are parked in memory
        turn = Turn(parked["message_id"], has_page_content=False, project=self._project_of(parked),
                    recalls_page_memory=tainted)
        try:
            result, status = self.tools.run(parked["tool"], parked["arguments"], turn), "approved"
        except KnownError as exc:
            result, status = {"error": str(exc)}, "failed"
        erased = parked["tool"] == "erase" and status == "approved"
        if erased and isinstance(result, dict):
            result = {k: v for k, v in result.items() if k != "host"}  # an erase keeps no name of the site
        if parked["id"] < 0:
            with self._lock:
                self._volatile[parked["id"]].update(status=status, result=as_json(result))
                if erased:
                    self._volatile[parked["id"]]["arguments"] = {}
            return
        self.vault.write(lambda c, ch: store.set_result(c, ch, parked["id"], status, result, clear_arguments=erased))

    def _project_of(self, parked: dict[str, Any]) -> str | None:
        project = parked["arguments"].get("project") if isinstance(parked["arguments"], dict) else None
        return project if isinstance(project, str) else None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.pending_count())
