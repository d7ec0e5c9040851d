"""``python -m vodou_desktop.ui.screenshots OUTDIR``: render the memory browser (Memories, Sites,
Operator memory and Approvals tabs), the panel, the tray menu, the Forget dialog and the icon
states from a seeded temporary vault to PNGs, for a person to look at.

Runs offscreen and without the embedding model (keyword search), so it takes a few seconds.
"""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from vodou_desktop import config  # noqa: E402
from vodou_desktop.governance.approvals import ApprovalGate, ToolBox, Turn  # noqa: E402
from vodou_desktop.governance.forget import Forgetting  # noqa: E402
from vodou_desktop.governance.opm import OperatorMemory  # noqa: E402
from vodou_desktop.governance.page_memory import PageMemory  # noqa: E402
from vodou_desktop.governance.sitemodes import SiteModes  # noqa: E402
from vodou_desktop.ingest.remember import Origin, correct, remember, save_document  # noqa: E402
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
from vodou_desktop.ui.tray import build_menu, update_actions  # noqa: E402
from vodou_desktop.vault import Vault  # noqa: E402

PAGE = "https://en.wikipedia.org/wiki/Heron"
BROWSER_SIZE = (1100, 680)
ICON_SIZE = 64
SHOTS = ("memory-browser.png", "sites.png", "operator-memory.png", "approvals.png", "panel.png", "tray-menu.png",
         "forget-dialog.png", "icon-states.png")


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
    heron = remember(vault, "A heron eats mostly fish", Origin("cli"))
    correct(vault, heron, "A heron eats fish, frogs and small mammals")


def seed_governance(vault: Vault, sites: SiteModes, gate: ApprovalGate) -> None:
    """Site rules, operator memory (one corrected, one expired) and two approvals, one decided."""
    sites.set_rule("mail.example.com", "off")
    sites.set_rule("w3schools.com", "suggest")
    opm = OperatorMemory(vault)
    pref = opm.add("preference", "Answer in British English").memory.id
    opm.correct(pref, "Answer in British English with metric units", source_ref="settings")
    opm.add("initiative", "Finish the heron survey write-up this month")
    past = OperatorMemory(vault, clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    past.add("pinned_context", "Working on the 2023 bird count")
    turn = Turn(None, has_page_content=True)
    gate.submit("remember", {"text": "Herons nest in colonies"}, turn)
    done = gate.submit("remember", {"text": "Grey herons live up to 15 years"}, turn)
    gate.resolve(done["approval"]["id"], "deny")


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
        sites = SiteModes(vault)
        pages = PageMemory(vault, search, sites)
        gate = ApprovalGate(vault, ToolBox(vault, sites, pages, search))
        services = Services.build(runtime, sites=sites, forgetting=Forgetting(vault), page_memory=pages,
                                  opm=OperatorMemory(vault), extras={"gate": gate})
        try:
            return _render_all(outdir, services)
        finally:
            services.close()
            pages.close()
            runtime.close()


def _render_all(outdir: Path, services: Services) -> list[Path]:
    vault, sites, gate = services.runtime.vault, services.sites, services.extras["gate"]
    seed(vault)
    seed_governance(vault, sites, gate)
    paths = {name: outdir / name for name in SHOTS}
    browser = _browser_shots(services, paths)
    actions = ActionRegistry()
    state = read_page_state(vault, sites, PAGE, "Heron — Wikipedia")
    update_actions(actions, state)
    panel = Panel(actions, services.ops, services.page_memory, gate)
    panel.set_page(state)
    settle(services)
    panel.adjustSize()
    grab(panel, paths["panel.png"])
    menu = build_menu(actions)
    menu.adjustSize()
    grab(menu, paths["tray-menu.png"])
    dialog = ForgetSiteDialog(services.forgetting, services.ops, "en.wikipedia.org")
    dialog.run_dry_run()
    settle(services)
    dialog.adjustSize()
    grab(dialog, paths["forget-dialog.png"])
    icon_strip(paths["icon-states.png"])
    for window in (browser, panel, menu, dialog):  # delete widgets while the app and services still exist
        window.close()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return list(paths.values())


def _browser_shots(services: Services, paths: dict[str, Path]) -> MemoryBrowser:
    """The Memories tab with a corrected memory selected (history and actions), then each other tab."""
    browser = MemoryBrowser(services)
    browser.resize(*BROWSER_SIZE)
    browser.memories.search_box.setText("heron")
    settle(services)
    model = browser.memories.model
    rows = [r for r in range(model.rowCount()) if model.results[r].fact.revision > 1] or [0]
    browser.memories.view.expandRecursively(model.index(0, 0), 0)
    browser.memories.view.setCurrentIndex(model.index(rows[0], 0))
    settle(services)
    grab(browser, paths["memory-browser.png"])
    for name, shot in (("Sites", "sites.png"), ("Operator memory", "operator-memory.png"),
                       ("Approvals", "approvals.png")):
        browser.tabs.setCurrentWidget(browser.extra_tabs[name])
        settle(services)
        grab(browser, paths[shot])
    return browser


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
