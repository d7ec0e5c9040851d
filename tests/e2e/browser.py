"""A Chromium profile with the extension loaded, and the few things a test does with it:
open pages, click the toolbar button, use the context menu, read the worker's icon state,
drive the side panel page."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page, Playwright, Worker

    from tests.e2e.conftest import VodouServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP *.example 127.0.0.1",
]
MENU_SELECTION = "vodou-send-selection"
MENU_LIBRARY = "vodou-add-to-library"


class Browser:
    def __init__(self, context: Any, worker: Worker, server: VodouServer, page_port: int) -> None:
        self.ctx = context
        self.sw = worker
        self.ext_id = worker.url.split("/")[2]
        self.server = server
        self.page_port = page_port
        self._panel: Page | None = None
        self._cdp: Any = None

    @classmethod
    def launch(cls, playwright: Playwright, profile: Path, extension: Path, server: VodouServer,
               page_port: int) -> Browser:
        args = [*CHROMIUM_ARGS, f"--disable-extensions-except={extension}", f"--load-extension={extension}"]
        ctx = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=args)
        worker = ctx.service_workers[0] if ctx.service_workers else ctx.wait_for_event("serviceworker")
        return cls(ctx, worker, server, page_port)

    def close(self) -> None:
        self.ctx.close()

    # pages and tabs -------------------------------------------------------------------------
    def url(self, host: str, page: str) -> str:
        return f"http://{host}:{self.page_port}/{page}"

    def open(self, url: str) -> Page:
        page = self.ctx.new_page()
        page.goto(url)
        page.bring_to_front()
        return page

    def tab_id(self, page: Page) -> int:
        return int(self.sw.evaluate(
            "async (url) => (await chrome.tabs.query({})).find((t) => t.url === url).id", page.url))

    def click_toolbar(self, page: Page) -> None:
        """A real click on the extension's toolbar button for this tab (DevTools protocol)."""
        if self._cdp is None:
            self._cdp = self.ctx.browser.new_browser_cdp_session()
        targets = self._cdp.send("Target.getTargets", {"filter": [{}]})["targetInfos"]
        tab = next(t for t in targets if t["type"] == "tab" and t["url"] == page.url)
        self._cdp.send("Extensions.triggerAction", {"id": self.ext_id, "targetId": tab["targetId"]})

    def menu_click(self, page: Page, item: str, selection: str | None = None) -> dict[str, Any]:
        """Fire the extension's context-menu listener the way Chrome does; returns the outcome."""
        before = time.time() * 1000
        self.sw.evaluate(
            """async ([item, text, tabId]) => {
                const tab = await chrome.tabs.get(tabId);
                const info = { menuItemId: item, pageUrl: tab.url, editable: false };
                if (text !== null) info.selectionText = text;
                chrome.contextMenus.onClicked.dispatch(info, tab);
            }""",
            [item, selection, self.tab_id(page)],
        )
        return self.wait_for(lambda: self._outcome_after(before), "a context-menu outcome")

    def _outcome_after(self, since_ms: float) -> dict[str, Any] | None:
        outcome = self.sw.evaluate(
            "async () => (await chrome.storage.session.get('vodouLastOutcome')).vodouLastOutcome")
        return outcome if outcome and outcome["at"] >= since_ms else None

    # worker state ---------------------------------------------------------------------------
    def diagnostics(self) -> dict[str, Any]:
        return dict(self.sw.evaluate("() => self.vodouDiagnostics()"))

    def icon_of(self, page: Page) -> str | None:
        return self.diagnostics()["icons"].get(str(self.tab_id(page)))

    def wait_icon(self, page: Page, state: str, timeout: float = 10) -> None:
        self.wait_for(lambda: self.icon_of(page) == state, f"icon {state}", timeout)
        # the icon map is only a mirror: the toolbar title must agree
        title = self.sw.evaluate("(tabId) => chrome.action.getTitle({tabId})", self.tab_id(page))
        assert ("saved memory" in title) == (state == "green") and ("off" in title) == (state == "dimmed"), title

    def token(self) -> str:
        return str(self.sw.evaluate("async () => (await chrome.storage.local.get('vodouToken')).vodouToken || ''"))

    @staticmethod
    def wait_for(check: Any, what: str, timeout: float = 10) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}")

    # side panel -----------------------------------------------------------------------------
    def panel(self) -> Page:
        """The side panel page (opened as a tab: the extension ignores its own pages as 'this page')."""
        if self._panel is None or self._panel.is_closed():
            self._panel = self.ctx.new_page()
            self._panel.goto(f"chrome-extension://{self.ext_id}/panel.html")
        else:
            self._panel.reload()
        return self._panel

    def point_at(self, port: int) -> None:
        """Choose the app's port as the panel's port form does (through the extension's own handler,
        which also forgets a port found earlier), even while the form is hidden."""
        answer = self.panel().evaluate(
            "async (port) => chrome.runtime.sendMessage({action: 'setPort', port: String(port)})", port)
        assert answer is not None, "the extension did not answer"

    def pair(self) -> None:
        panel = self.panel()
        panel.click("#port-box summary")
        panel.fill("#port", str(self.server.port))
        panel.click("#port-form button")
        panel.wait_for_selector("#pairing:not([hidden])")
        printed = self.server.codes_printed()
        panel.click("#pair-start")
        panel.wait_for_selector("#message:has-text('shows a code of 8 characters')")
        panel.fill("#pair-code", self.server.pairing_code(after=printed).lower())
        panel.click("#pair-complete")
        panel.wait_for_selector("#message:has-text('Paired with the Vodou app')")
        assert panel.is_hidden("#pairing")
