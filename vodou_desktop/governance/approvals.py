"""The approval gate (PAGE-2): ``decide(tool, turn)`` — a function of the turn, not only the tool.

While a turn carries page content, every side-effecting tool (remember, forget, erase, link,
site-mode change) escalates from ``auto`` to ``ask``: the call is parked in the ``approvals``
table and returned as pending; approving runs it, denying drops it (its arguments are erased).
A page that tells a model "forget example.com" can therefore only ever produce a pending card.

Tools take one ``arguments`` dict (as a model proposes them). Page tools run through
``PageMemory``, so the site mode still applies when an approved action finally runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault
from vodou_desktop.vault import approvals_store as store

log = logging.getLogger(__name__)

AUTO, ASK = "auto", "ask"
SIDE_EFFECTING = frozenset({"remember", "forget", "erase", "link", "site_mode"})
# The answer for a turn without page content. Erase cannot be undone, so it always asks.
BASE_DECISION = {"search": AUTO, "remember": AUTO, "link": AUTO, "site_mode": AUTO, "forget": AUTO, "erase": ASK}
TOOLS = frozenset(BASE_DECISION)
PAGE_REASON = ("A web page was part of this message, so anything that changes your memory waits for you "
               "(the page could have asked for it)")


@dataclass(frozen=True)
class Turn:
    """What the gate may know about the turn a tool call came from."""

    message_id: int | None
    has_page_content: bool
    project: str | None = None


def decide(tool: str, turn: Turn) -> str:
    """``auto`` or ``ask`` for ``tool`` in ``turn``."""
    if tool not in TOOLS:
        raise InvalidInput(f"unknown tool {tool!r}")
    if tool in SIDE_EFFECTING and turn.has_page_content:
        return ASK
    return BASE_DECISION[tool]


TOOL_WORDS = {"remember": "Remember", "forget": "Forget site", "erase": "Erasing a site", "link": "Link to page",
              "site_mode": "Change site mode", "search": "Search"}


def _reason(tool: str, turn: Turn) -> str:
    if turn.has_page_content:
        return PAGE_REASON
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
            return {"id": fact.id}
        fact_id = remember(self.vault, text, Origin(kind="turn", tool="bridge"), project=turn.project)
        return {"id": fact_id}

    def _link(self, args: dict[str, Any], turn: Turn) -> Any:
        fact = self.pages.page_link(int(args.get("id", 0)), _text(args, "url"))
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

    def record_message(self, role: str, content: str, project: str | None) -> int:
        return int(self.vault.write(lambda c, ch: store.insert_message(c, ch, role, content, project)))

    def submit(self, tool: str, arguments: dict[str, Any], turn: Turn) -> dict[str, Any]:
        """Run ``tool`` now (auto) or park it (ask). Returns what happened."""
        if decide(tool, turn) == ASK:
            if turn.project:
                arguments = {**arguments, "project": turn.project}
            approval_id = self.vault.write(lambda c, ch: store.insert_approval(
                c, ch, tool, arguments, _reason(tool, turn), turn.message_id))
            self._changed()
            return {"tool": tool, "status": "pending", "approval": self.get(approval_id)}
        try:
            return {"tool": tool, "status": "executed", "result": self.tools.run(tool, arguments, turn)}
        except KnownError as exc:
            return {"tool": tool, "status": "failed", "error": str(exc)}

    def get(self, approval_id: int) -> dict[str, Any]:
        return self.vault.read(lambda c: store.get_approval(c, approval_id))

    def approvals(self, pending_only: bool = True) -> list[dict[str, Any]]:
        return self.vault.read(lambda c: store.list_approvals(c, pending_only))

    def pending_count(self) -> int:
        return int(self.vault.read(store.count_pending))

    def resolve(self, approval_id: int, decision: str) -> dict[str, Any]:
        """``approve`` runs the parked action (the site mode still applies); ``deny`` drops it."""
        if decision not in ("approve", "deny"):
            raise InvalidInput("decision must be 'approve' or 'deny'")
        status = "approved" if decision == "approve" else "denied"
        parked = self.vault.write(lambda c, ch: store.claim_pending(c, ch, approval_id, status))
        if status == "approved":
            self._execute(parked)
        self._changed()
        return self.get(approval_id)

    def _execute(self, parked: dict[str, Any]) -> None:
        turn = Turn(parked["message_id"], has_page_content=False, project=self._project_of(parked))
        try:
            result, status = self.tools.run(parked["tool"], parked["arguments"], turn), "approved"
        except KnownError as exc:
            result, status = {"error": str(exc)}, "failed"
        self.vault.write(lambda c, ch: store.set_result(c, ch, parked["id"], status, result))

    def _project_of(self, parked: dict[str, Any]) -> str | None:
        project = parked["arguments"].get("project") if isinstance(parked["arguments"], dict) else None
        return project if isinstance(project, str) else None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.pending_count())
