"""Page-lane turns (PAGE-1, PAGE-2): persist only what the person typed; page text serves one turn.

``pageContext`` is used for matching and (fenced) for the optional model, then dropped: it is
never passed to the message store, never logged, and never an argument of a write. Every action of
the turn goes through the approval gate with a turn that knows whether it is tainted: it carries
page content, or the model was shown a recalled memory saved from a page or a capture. Recalled
memories reach the model in the user message, fenced as data with their provenance.

A turn with ``pageContext`` must name its page (``url``): the site mode of that page decides
whether it may be read at all, so page text without its URL is refused.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from vodou_desktop.bridge.model import ModelUnavailable
from vodou_desktop.errors import InvalidInput, PolicyRefused
from vodou_desktop.governance.approvals import ApprovalGate, Turn, untrusted_provenance
from vodou_desktop.governance.policy import current_resolution, page_operation
from vodou_desktop.governance.sitemodes import Resolution, SiteModes
from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.search.service import SearchResult, SearchService
from vodou_desktop.vault import FactFilter

log = logging.getLogger(__name__)
MAX_CONTENT_CHARS = 8_000
MATCHES_K = 5


@dataclass(frozen=True)
class TurnRequest:
    content: str
    page_context: str | None = None
    page: str | None = None  # the page URL, resolved through the site-mode policy
    title: str | None = None
    project: str | None = None


def _resolution_as_is(resolution: Resolution) -> Resolution:
    return resolution


class TurnService:
    def __init__(self, sites: SiteModes, search: SearchService, gate: ApprovalGate, model: Any = None) -> None:
        self.sites = sites
        self.search = search
        self.gate = gate
        self.model = model

    @page_operation("read", empty=_resolution_as_is)
    def page_mode(self, url: str) -> Resolution:
        """The site mode of the turn's page (the policy decides; ``off`` skips the body)."""
        return current_resolution()

    async def run(self, req: TurnRequest) -> dict[str, Any]:
        content = strip_context(req.content or "")
        if not content:
            raise InvalidInput("content is required: the turn needs what you typed")
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidInput(f"content is too long (the limit is {MAX_CONTENT_CHARS} characters)")
        page_context = (req.page_context or "").strip() or None
        if page_context and not req.page:
            raise InvalidInput("pageContext needs the page's url: its site mode decides whether it may be read")
        mode = await asyncio.to_thread(self.page_mode, req.page) if req.page else None
        if mode is not None and mode.mode == "off" and page_context:
            raise PolicyRefused(f"{mode.host} is off ({mode.reason}): its page is not read")
        message_id = await asyncio.to_thread(self.gate.record_message, "user", content, req.project)
        semantic = self.search.semantic  # before searching: whether this search may use meaning
        results = await asyncio.to_thread(self._matches, content, page_context, req.project)
        recalls_page_memory = self.model is not None and any(untrusted_provenance(r.fact) for r in results)
        turn = Turn(message_id, has_page_content=page_context is not None, project=req.project,
                    recalls_page_memory=recalls_page_memory)
        reply, model_error, calls = await self._ask_model(content, page_context, results)
        if self.model is None or model_error:
            calls = [("remember", self._note_arguments(content, req, mode))]
        outcomes = [await asyncio.to_thread(self.gate.submit, tool, args, turn) for tool, args in calls]
        if reply and not turn.tainted:
            await asyncio.to_thread(self.gate.record_message, "assistant", reply, req.project)
        return {
            "messageId": message_id, "reply": reply, "modelError": model_error,
            "matches": [r.as_json() for r in results], "semantic": semantic, "tainted": turn.tainted,
            "executed": [o for o in outcomes if o["status"] != "pending"],
            "pending": [o["approval"] for o in outcomes if o["status"] == "pending"],
        }

    def _matches(self, content: str, page_context: str | None, project: str | None) -> list[SearchResult]:
        query = content if not page_context else f"{content}\n{page_context[:2000]}"
        return self.search.search(query, FactFilter(project=project), k=MATCHES_K)

    async def _ask_model(self, content: str, page_context: str | None,
                         results: list[SearchResult]) -> tuple[str | None, str | None, list[Any]]:
        if self.model is None:
            return None, None, []
        try:
            answer = await self.model.answer(content, page_context, [r.fact for r in results])
        except ModelUnavailable as exc:  # the model is optional: a broken endpoint degrades to a plain note
            log.warning("model unavailable for a turn: %s", exc)
            return None, f"{exc}; the turn was recorded as a note", []
        return answer.reply, None, answer.tool_calls

    def _note_arguments(self, content: str, req: TurnRequest, mode: Resolution | None) -> dict[str, Any]:
        if req.page and mode is not None and mode.mode == "collect":
            return {"text": content, "url": req.page, "title": req.title}
        return {"text": content}
