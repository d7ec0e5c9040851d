"""``python -m vodou_desktop.ui.screenshots docs/screenshots``: the gallery of every state a person
sees, rendered offscreen from a temporary vault to PNGs: the memory browser (search results, a
2,000-character memory's details, each empty state, Sites, Operator memory, Approvals), the tray
panel (with and without a page), the tray menu, Add memory, Settings, the recovery key shown before
encrypting, Forget site…, the pairing dialog once paired, and the icon states at 16 and 22 px on
dark and light panels.

Runs offscreen and without the embedding model (keyword search), so it takes a few seconds.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent, QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QWidget  # noqa: E402

from vodou_desktop import APP_ID, config, paths  # noqa: E402
from vodou_desktop.data.recovery import to_recovery  # noqa: E402
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
from vodou_desktop.ui.add_memory_dialog import AddMemoryDialog  # noqa: E402
from vodou_desktop.ui.browser.window import DEFAULT_SIZE, MemoryBrowser  # noqa: E402
from vodou_desktop.ui.encryption_flow import RecoveryKeyDialog  # noqa: E402
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog  # noqa: E402
from vodou_desktop.ui.icon import STATES, state_image  # noqa: E402
from vodou_desktop.ui.pair_dialog import PairDialog  # noqa: E402
from vodou_desktop.ui.panel import Panel  # noqa: E402
from vodou_desktop.ui.services import Services  # noqa: E402
from vodou_desktop.ui.settings_dialog import SettingsDialog  # noqa: E402
from vodou_desktop.ui.site_projects import SiteProjects  # noqa: E402
from vodou_desktop.ui.tray import build_menu, update_actions  # noqa: E402
from vodou_desktop.ui.vault_swap import VaultSwap  # noqa: E402
from vodou_desktop.vault import Vault  # noqa: E402

PAGE = "https://en.wikipedia.org/wiki/Heron"
# What the temporary profile's folders read as in the pictures: where they are for a person on Linux.
SHOWN_DATA = f"/home/you/.local/share/{APP_ID}"
SHOWN_CONFIG = "/home/you/.config"  # XDG_CONFIG_HOME, where the autostart entry goes
BROWSER_SIZE = DEFAULT_SIZE
ICON_SIZES = (16, 22)
ICON_PANELS = {"dark": "#1f1f1f", "light": "#f0f0f0"}
ICON_CELL, ICON_ZOOM = 32, 4
SHOTS = ("memory-browser.png", "long-memory.png", "empty-vault.png", "no-results.png", "empty-library.png",
         "sites.png", "operator-memory.png", "approvals.png", "panel.png", "panel-no-page.png", "tray-menu.png",
         "add-memory.png", "settings.png", "recovery-key.png", "forget-dialog.png", "paired.png", "icon-states.png")
SHOWN_KEY = "vodou-key-1:" + hashlib.sha256(b"the recovery key in the screenshots").hexdigest()  # not a real one
LONG_MEMORY = ("Field notes from the heron colony at the old mill. " + " ".join(
    f"Visit {i}: the grey herons stood in the shallows at dawn, nests counted on the alders, water level noted, "
    "two juveniles fishing near the sluice, a kingfisher on the far bank." for i in range(1, 14)))[:2000]


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
    for (text, origin), project in zip(notes, ("birds", "birds", "infra", "web", None, None), strict=True):
        remember(vault, text, origin, project=project)
    remember(vault, LONG_MEMORY, Origin("note", url=PAGE, title="Heron"), project="birds")
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


def icon_cell(state: str, size: int, panel: str) -> QRect:
    """Where the icon of ``state`` at ``size`` px on ``panel`` sits (actual size) in icon-states.png."""
    col = STATES.index(state)
    row = ICON_SIZES.index(size) + len(ICON_SIZES) * list(ICON_PANELS).index(panel)
    return QRect(8 + col * ICON_CELL, 8 + row * ICON_CELL, size, size)


def icon_strip(path: Path) -> None:
    """Each state at 16 and 22 px on a dark and a light panel, at actual size (left) and enlarged
    4x pixel for pixel (right), so a person can judge both what is shown and what each pixel does."""
    rows = len(ICON_SIZES) * len(ICON_PANELS)
    actual_w = 16 + len(STATES) * ICON_CELL
    strip = QImage(actual_w + len(STATES) * ICON_CELL * ICON_ZOOM + 8, 16 + rows * ICON_CELL * ICON_ZOOM,
                   QImage.Format.Format_ARGB32)
    strip.fill(QColor("#808080"))
    painter = QPainter(strip)
    for p_index, (panel, colour) in enumerate(ICON_PANELS.items()):
        for s_index, size in enumerate(ICON_SIZES):
            row = s_index + len(ICON_SIZES) * p_index
            painter.fillRect(0, 8 + row * ICON_CELL, actual_w, ICON_CELL, QColor(colour))
            zoom_y = 8 + row * ICON_CELL * ICON_ZOOM
            painter.fillRect(actual_w, zoom_y, strip.width() - actual_w, ICON_CELL * ICON_ZOOM, QColor(colour))
            for col, state in enumerate(STATES):
                image = state_image(state, size)
                cell = icon_cell(state, size, panel)
                painter.drawImage(cell.topLeft(), image)
                big = image.scaled(size * ICON_ZOOM, size * ICON_ZOOM, Qt.AspectRatioMode.KeepAspectRatio,
                                   Qt.TransformationMode.FastTransformation)
                painter.drawImage(actual_w + 8 + col * ICON_CELL * ICON_ZOOM, zoom_y + 8, big)
    painter.end()
    strip.save(str(path))


def render(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VODOU_HOME"] = tmp  # window size, per-site projects: never the person's own files
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")  # the autostart entry Settings names
        vault_path = paths.data_dir() / f"{paths.DEFAULT_PROFILE}.vodou.sqlite"  # under the temporary VODOU_HOME
        vault_path.parent.mkdir(parents=True)
        vault = Vault.open(vault_path)
        embedder = Embedder("none")
        index = VectorIndex(vault)
        search = SearchService(vault, embedder, index)
        runtime = Runtime(config.Settings(), vault, embedder, index, search)
        sites = SiteModes(vault)
        pages = PageMemory(vault, search, sites)
        gate = ApprovalGate(vault, ToolBox(vault, sites, pages, search))
        services = Services.build(runtime, sites=sites, forgetting=Forgetting(vault), page_memory=pages,
                                  opm=OperatorMemory(vault), extras={"gate": gate})
        services.extras["vault_swap"] = VaultSwap(services)  # Settings as in the app: Encrypt this vault…
        try:
            return _render_all(outdir, services)
        finally:
            services.close()
            pages.close()
            runtime.close()


def _render_all(outdir: Path, services: Services) -> list[Path]:
    vault, sites, gate = services.runtime.vault, services.sites, services.extras["gate"]
    paths = {name: outdir / name for name in SHOTS}
    keep: list[QWidget] = [*_empty_shots(services, paths, outdir)]
    seed(vault)
    seed_governance(vault, sites, gate)
    keep.append(_browser_shots(services, paths))
    actions = ActionRegistry()
    state = read_page_state(vault, sites, PAGE, "Heron — Wikipedia")
    update_actions(actions, state)
    panel = Panel(actions, services.ops, services.page_memory, gate, site_projects=SiteProjects(outdir / ".unused"))
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
    keep += [panel, menu, dialog, *_dialog_shots(services, paths)]
    icon_strip(paths["icon-states.png"])
    for window in keep:  # delete widgets while the app and services still exist
        window.close()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return list(paths.values())


def _empty_shots(services: Services, paths: dict[str, Path], outdir: Path) -> list[QWidget]:
    """Before anything is saved: the empty vault, the empty Library, the tray panel with no page."""
    browser = MemoryBrowser(services)
    browser.resize(*BROWSER_SIZE)
    settle(services)
    grab(browser, paths["empty-vault.png"])
    browser.tabs.setCurrentWidget(browser.library)
    settle(services)
    grab(browser, paths["empty-library.png"])
    panel = Panel(ActionRegistry(), services.ops, services.page_memory, services.extras["gate"],
                  site_projects=SiteProjects(outdir / ".unused"))
    panel.set_page(read_page_state(services.runtime.vault, services.sites, None, None))
    settle(services)
    panel.adjustSize()
    grab(panel, paths["panel-no-page.png"])
    return [browser, panel]


def long_memory_browser(services: Services) -> MemoryBrowser:
    """The browser at its default size with the 2,000-character memory selected."""
    browser = MemoryBrowser(services)
    browser.resize(*BROWSER_SIZE)
    browser.show()
    browser.memories.search_box.setText("colony")
    settle(services)
    model = browser.memories.model
    row = next((r for r in range(model.rowCount()) if len(model.results[r].fact.text) >= 1500), 0)
    browser.memories.view.setCurrentIndex(model.index(row, 0))
    settle(services)
    return browser


def _browser_shots(services: Services, paths: dict[str, Path]) -> MemoryBrowser:
    """The Memories tab with a corrected memory selected (history and actions), then each other tab."""
    browser = MemoryBrowser(services)
    browser.resize(*BROWSER_SIZE)
    browser.memories.search_box.setText("heron")
    settle(services)
    model = browser.memories.model
    rows = [r for r in range(model.rowCount()) if model.results[r].fact.revision > 1] or [0]
    browser.memories.view.setCurrentIndex(model.index(rows[0], 0))
    settle(services)
    grab(browser, paths["memory-browser.png"])
    browser.memories.filters.kind.setCurrentText("decision")
    browser.memories.search_box.setText("kingfisher")
    settle(services)
    grab(browser, paths["no-results.png"])
    browser.memories.filters.kind.setCurrentText("Any kind")
    for name, shot in (("Sites", "sites.png"), ("Operator memory", "operator-memory.png"),
                       ("Approvals", "approvals.png")):
        browser.tabs.setCurrentWidget(browser.extra_tabs[name])
        settle(services)
        grab(browser, paths[shot])
    long = long_memory_browser(services)
    grab(long, paths["long-memory.png"])
    long.close()
    return browser


def _dialog_shots(services: Services, paths: dict[str, Path]) -> list[QWidget]:
    add = AddMemoryDialog(services)
    add.text.setPlainText("The heron survey is on the first Sunday of each month")
    settle(services)
    add.project.setCurrentText("birds")
    add.adjustSize()
    grab(add, paths["add-memory.png"])
    settings = settings_for_screenshot(services)
    settings.adjustSize()
    grab(settings, paths["settings.png"])
    recovery = RecoveryKeyDialog(to_recovery(SHOWN_KEY), services)
    recovery.status.setText("Copied to the clipboard: paste it into your password manager now.")
    recovery.kept.setEnabled(True)
    recovery.adjustSize()
    grab(recovery, paths["recovery-key.png"])
    paired = PairDialog(None, services.ops, code={"code": "ABCD2345"})
    paired.paired({"extensionId": "abcdefghijklmnopabcdefghijklmnop", "browser": "Chromium"})
    paired.adjustSize()
    grab(paired, paths["paired.png"])
    return [add, settings, recovery, paired]


def settings_for_screenshot(services: Services) -> SettingsDialog:
    """Settings as drawn in the gallery: the temporary profile's paths (new on every run) read as a
    person's usual profile, so the picture is the same from one run to the next."""
    settings = SettingsDialog(services, services.sites, None, vault_path=services.runtime.vault.path)
    settle(services)
    data, config_home = str(paths.data_dir()), os.environ["XDG_CONFIG_HOME"]  # both set by ``render``

    def shown(text: str) -> str:
        return text.replace(data, SHOWN_DATA).replace(config_home, SHOWN_CONFIG)

    for label in settings.findChildren(QLabel):
        label.setText(shown(label.text()))
    for field in settings.findChildren(QLineEdit):
        field.setPlaceholderText(shown(field.placeholderText()))
        field.setText(shown(field.text()))
    return settings


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
