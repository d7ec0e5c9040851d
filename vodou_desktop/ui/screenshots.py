"""``python -m vodou_desktop.ui.screenshots OUTDIR``: render the memory browser, the panel, the
Forget dialog and the icon states from a seeded temporary vault to PNGs, for a person to look at.

Runs offscreen and without the embedding model (keyword search), so it takes a few seconds.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from vodou_desktop import config  # noqa: E402
from vodou_desktop.governance.approvals import Turn  # noqa: E402
from vodou_desktop.governance.forget import Forgetting  # noqa: E402
from vodou_desktop.governance.page_memory import PageMemory  # noqa: E402
from vodou_desktop.governance.sitemodes import SiteModes  # noqa: E402
from vodou_desktop.ingest.remember import Origin, remember, save_document  # noqa: E402
from vodou_desktop.runtime import Runtime  # noqa: E402
from vodou_desktop.search.embedder import Embedder  # noqa: E402
from vodou_desktop.search.service import SearchService  # noqa: E402
from vodou_desktop.search.vectors import VectorIndex  # noqa: E402
from vodou_desktop.ui.actions import ActionRegistry  # noqa: E402
from vodou_desktop.ui.active_page import read_page_state  # noqa: E402
from vodou_desktop.ui.browser.window import MemoryBrowser  # noqa: E402
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog  # noqa: E402
from vodou_desktop.ui.icon import STATES, state_image  # noqa: E402
from vodou_desktop.ui.panel import Panel  # noqa: E402
from vodou_desktop.ui.services import Services  # noqa: E402
from vodou_desktop.ui.tray import update_actions  # noqa: E402
from vodou_desktop.vault import Vault  # noqa: E402

PAGE = "https://en.wikipedia.org/wiki/Heron"
BROWSER_SIZE = (1100, 680)
ICON_SIZE = 64
SHOTS = ("memory-browser.png", "panel.png", "forget-dialog.png", "icon-states.png")


def seed(vault: Vault) -> None:
    notes = [
        ("Herons hunt by standing still in shallow water", Origin("selection", url=PAGE, title="Heron")),
        ("The grey heron is the commonest heron in Europe", Origin("note", url=PAGE, title="Heron")),
        ("Staging database password rotates every Monday", Origin("cli")),
        ("Use pnpm, not npm, in the web repository", Origin("cli")),
        ("Quarterly report due on the fifth", Origin("import_chatgpt", tier="import")),
        ("Flexbox: justify-content aligns along the main axis",
         Origin("note", url="https://www.w3schools.com/css/css3_flexbox.asp")),
    ]
    for text, origin in notes:
        remember(vault, text, origin)
    remember(vault, "Prefers dark mode in every editor", Origin("cli"), kind="preference", valid_at="2024-05-01",
             valid_precision="day")
    save_document(vault, "# Heron\n\nHerons are long-legged wading birds.\n\nThey live near water.",
                  Origin("library", url=PAGE, title="Heron — Wikipedia"))


def settle(services: Services, ms: int = 3000) -> None:
    """Let debounce timers fire and ops deliver (offscreen, no event loop of our own)."""
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < ms:
        QCoreApplication.processEvents()
        if services.ops.pending == 0 and clock.elapsed() > 400:
            break


def grab(widget: QWidget, path: Path) -> None:
    widget.grab().save(str(path))


def icon_strip(path: Path) -> None:
    strip = QImage(len(STATES) * (ICON_SIZE + 16) + 16, ICON_SIZE + 32, QImage.Format.Format_ARGB32)
    strip.fill(QColor("#f0f0f0"))
    painter = QPainter(strip)
    for i, state in enumerate(STATES):
        painter.drawImage(16 + i * (ICON_SIZE + 16), 16, state_image(state, ICON_SIZE))
    painter.end()
    strip.save(str(path))


def render(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        vault = Vault.open(Path(tmp) / "screens.vodou.sqlite")
        embedder = Embedder("none")
        index = VectorIndex(vault)
        search = SearchService(vault, embedder, index)
        runtime = Runtime(config.Settings(), vault, embedder, index, search)
        services = Services.build(runtime)
        try:
            return _render_all(outdir, services)
        finally:
            services.close()
            runtime.close()


def _render_all(outdir: Path, services: Services) -> list[Path]:
    vault = services.runtime.vault
    seed(vault)
    sites = SiteModes(vault)
    pages = PageMemory(vault, services.runtime.search, sites)
    paths = [outdir / name for name in SHOTS]
    browser = MemoryBrowser(services)
    browser.resize(*BROWSER_SIZE)
    browser.memories.search_box.setText("heron")
    settle(services)
    browser.memories.view.expandRecursively(browser.memories.model.index(0, 0), 0)
    browser.memories.view.setCurrentIndex(browser.memories.model.index(0, 0))
    settle(services)
    grab(browser, paths[0])
    actions = ActionRegistry()
    gate = _gate_with_one_approval(services, sites, pages)
    panel = Panel(actions, services.ops, pages, gate)
    state = read_page_state(vault, sites, PAGE, "Heron — Wikipedia")
    update_actions(actions, state)
    panel.set_page(state)
    settle(services)
    panel.adjustSize()
    grab(panel, paths[1])
    dialog = ForgetSiteDialog(Forgetting(vault), services.ops, "en.wikipedia.org")
    dialog.run_dry_run()
    settle(services)
    dialog.adjustSize()
    grab(dialog, paths[2])
    icon_strip(paths[3])
    for window in (browser, panel, dialog):  # delete widgets while the app and services still exist
        window.close()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    pages.close()
    return paths


def _gate_with_one_approval(services: Services, sites: SiteModes, pages: PageMemory):  # type: ignore[no-untyped-def]
    from vodou_desktop.governance.approvals import ApprovalGate, ToolBox

    gate = ApprovalGate(services.runtime.vault, ToolBox(services.runtime.vault, sites, pages, services.runtime.search))
    gate.submit("remember", {"text": "Herons nest in colonies"}, Turn(None, has_page_content=True))
    return gate


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m vodou_desktop.ui.screenshots OUTDIR", file=sys.stderr)
        return 2
    for path in render(Path(args[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
