"""The active tab the extension reports, so the tray can follow it (only when the site is not off)."""

from __future__ import annotations

from typing import Any

from vodou_desktop.governance.policy import current_resolution, page_operation
from vodou_desktop.governance.sitemodes import Resolution, SiteModes
from vodou_desktop.pages import page_key


def _refused(resolution: Resolution) -> dict[str, Any]:
    return {"accepted": False, **resolution.as_json()}


class ActivePage:
    def __init__(self, sites: SiteModes) -> None:
        self.sites = sites

    @page_operation("read", empty=_refused)
    def report(self, url: str, title: str | None = None) -> dict[str, Any]:
        """The event payload for an accepted report; ``off`` sites are refused by the policy."""
        resolution = current_resolution()
        return {"accepted": True, "url": url, "pageKey": page_key(url), "title": title, **resolution.as_json()}
