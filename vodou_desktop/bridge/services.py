"""The services the bridge's thin handlers call. Built once per running app (tray or ``vodou serve``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from vodou_desktop import config
from vodou_desktop.bridge import events
from vodou_desktop.bridge.model import ChatModel
from vodou_desktop.bridge.turns import TurnService
from vodou_desktop.governance.approvals import ApprovalGate, ToolBox
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import Vault


@dataclass
class Services:
    vault: Vault
    search: SearchService
    sites: SiteModes
    pages: PageMemory
    forgetting: Forgetting
    gate: ApprovalGate
    turns: TurnService

    @classmethod
    def build(cls, vault: Vault, search: SearchService, hub: events.EventHub,
              settings: config.Settings | None = None, clock: Callable[[], float] = time.monotonic,
              sites: SiteModes | None = None, forgetting: Forgetting | None = None) -> Services:
        """Wire the services; pass ``sites``/``forgetting`` to share the tray's instances."""
        settings = settings or config.Settings()
        sites = sites or SiteModes(vault)
        pages = PageMemory(vault, search, sites, clock)
        forgetting = forgetting or Forgetting(vault, clock)
        tools = ToolBox(vault, sites, pages, search, forgetting)
        gate = ApprovalGate(vault, tools, lambda n: hub.emit(events.APPROVALS_CHANGED, {"pending": n}))
        model = ChatModel(settings.model_base_url, settings.model_name or "default") \
            if settings.model_base_url else None
        return cls(vault, search, sites, pages, forgetting, gate, TurnService(sites, search, gate, model))

    def close(self) -> None:
        self.pages.close()
