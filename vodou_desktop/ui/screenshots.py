"""``python -m vodou_desktop.ui.screenshots docs/screenshots``: the gallery of every state a person
sees, rendered offscreen from a temporary vault to PNGs: the memory browser (search results, a
2,000-character memory's details, each empty state, Sites, Operator memory, Approvals), the tray
panel (with and without a page), the tray menu, Add memory, Settings, the recovery key shown before
encrypting, Forget site…, the pairing dialog once paired, quick access (searching and adding), the
first run's welcome window, and the icon states at 16 and 22 px on dark and light panels.

Runs offscreen and without the embedding model (keyword search), so it takes a few seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent, QPoint, QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage, QKeyEvent, QPainter, QPalette  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QStyle,
    QTableView,
    QWidget,
)

from vodou_desktop import APP_ID, config, paths, resources  # noqa: E402
from vodou_desktop.app import app_browser  # noqa: E402
from vodou_desktop.cli.sync import setup_secret  # noqa: E402
from vodou_desktop.data.recovery import to_recovery  # noqa: E402
from vodou_desktop.data.sample_vault import fill_vault, sample_text  # noqa: E402
from vodou_desktop.governance.approvals import ApprovalGate, ToolBox, Turn  # noqa: E402
from vodou_desktop.governance.forget import Forgetting  # noqa: E402
from vodou_desktop.governance.opm import OperatorMemory  # noqa: E402
from vodou_desktop.governance.page_memory import PageMemory  # noqa: E402
from vodou_desktop.governance.sitemodes import SiteModes  # noqa: E402
from vodou_desktop.ingest.remember import Origin, correct, remember, save_document  # noqa: E402
from vodou_desktop.mcp import install  # noqa: E402
from vodou_desktop.runtime import Runtime  # noqa: E402
from vodou_desktop.search.embedder import Embedder  # noqa: E402
from vodou_desktop.search.service import SearchService  # noqa: E402
from vodou_desktop.search.vectors import VectorIndex  # noqa: E402
from vodou_desktop.sync.engine import SyncEngine, resolve_join_key  # noqa: E402
from vodou_desktop.ui.actions import ActionRegistry  # noqa: E402
from vodou_desktop.ui.active_page import read_page_state  # noqa: E402
from vodou_desktop.ui.add_memory_dialog import AddMemoryDialog  # noqa: E402
from vodou_desktop.ui.browser.window import DEFAULT_SIZE, MemoryBrowser  # noqa: E402
from vodou_desktop.ui.encryption_flow import KeyPlace, RecoveryKeyDialog  # noqa: E402
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog  # noqa: E402
from vodou_desktop.ui.global_shortcut import GlobalShortcut, ShortcutState  # noqa: E402
from vodou_desktop.ui.icon import STATES, state_image  # noqa: E402
from vodou_desktop.ui.pair_dialog import PairDialog  # noqa: E402
from vodou_desktop.ui.panel import Panel  # noqa: E402
from vodou_desktop.ui.quick_box import QuickBox  # noqa: E402
from vodou_desktop.ui.screen_fit import fit_on_screen  # noqa: E402
from vodou_desktop.ui.services import Services  # noqa: E402
from vodou_desktop.ui.settings_dialog import SettingsDialog  # noqa: E402
from vodou_desktop.ui.site_projects import SiteProjects  # noqa: E402
from vodou_desktop.ui.style import PaletteKeeper, apply_readable_palette, contrast, over  # noqa: E402
from vodou_desktop.ui.sync_settings import SyncSettingsPage  # noqa: E402
from vodou_desktop.ui.tray import (  # noqa: E402
    build_menu,
    show_quick_key,
    update_actions,
    window_keys_out_of_context_menus,
)
from vodou_desktop.ui.vault_swap import VaultSwap  # noqa: E402
from vodou_desktop.ui.welcome import WelcomeWindow  # noqa: E402
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault  # noqa: E402
from vodou_desktop.vault.query import project_counts  # noqa: E402

PAGE = "https://en.wikipedia.org/wiki/Heron"
# What the temporary profile's folders read as in the pictures: where they are for a person on Linux.
SHOWN_DATA = f"/home/you/.local/share/{APP_ID}"
SHOWN_CONFIG = "/home/you/.config"  # XDG_CONFIG_HOME, where the autostart entry goes
BROWSER_SIZE = DEFAULT_SIZE
ICON_SIZES = (16, 22)
ICON_PANELS = {"dark": "#1f1f1f", "light": "#f0f0f0"}
ICON_CELL, ICON_ZOOM = 32, 4
SHOTS = ("memory-browser.png", "long-memory.png", "empty-vault.png", "no-results.png", "empty-library.png",
         "sites.png", "operator-memory.png", "approvals.png", "ai-tools.png", "panel.png", "panel-no-page.png",
         "tray-menu.png", "add-memory.png", "settings.png", "settings-sync.png", "recovery-key.png",
         "forget-dialog.png", "paired.png", "quick-search.png", "quick-add.png", "welcome.png", "icon-states.png")
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
    for text in ("The heron survey script lives in tools/survey.py", "Counts are kept per colony, not per nest"):
        remember(vault, text, Origin("mcp", tier="capture", tool="claude-code"), project="birds")
    remember(vault, "Run the linter before each commit", Origin("mcp", tier="capture", tool="cursor"), project="web")


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


SCALE_MEMORIES = 20_000
SCALE_SIZES = ((1100, 700), (800, 560))
SCREEN = (1366, 768)
SCREENS = (*SCALE_SIZES, SCREEN)  # the small windows are measured fitted into each of these
# The X11 state of the shortcut, as the app says it where it holds the key (offscreen holds none).
HELD = ShortcutState("active", "Ctrl+Shift+Space", "Ctrl+Shift+Space opens quick access from any app.")
SHOWN_EXTENSION = "/home/you/.local/lib/vodou/extension"  # where the extension folder reads in the picture
SCALE_SHOTS = tuple(f"vault-20k-{w}x{h}-{p}.png" for p in ("light", "dark") for w, h in SCALE_SIZES) + (
    "vault-20k-search-light.png", "vault-20k-end-light.png", "settings-1366x768-light.png",
    "settings-1366x768-dark.png")
BULK_SIZES = (*SCALE_SIZES, SCREEN)  # the bulk selection and the project scope, at each window size
BULK_SHOTS = tuple(f"vault-20k-{kind}-{w}x{h}-light.png" for kind in ("bulk", "scope") for w, h in BULK_SIZES)
SCALE_SHOTS += BULK_SHOTS
CHECKS = "gallery-checks.json"


def dark_palette() -> QPalette:
    """A dark theme as a desktop would give one (its help text role at half strength, as many do)."""
    palette = QPalette(QColor("#2d2d2d"))
    for role, colour in ((QPalette.ColorRole.Window, "#2d2d2d"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                         (QPalette.ColorRole.Base, "#1f1f1f"), (QPalette.ColorRole.AlternateBase, "#292929"),
                         (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#353535"),
                         (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d6fb4"),
                         (QPalette.ColorRole.HighlightedText, "#ffffff"), (QPalette.ColorRole.ToolTipBase, "#1f1f1f"),
                         (QPalette.ColorRole.ToolTipText, "#e6e6e6")):
        palette.setColor(role, QColor(colour))
    faint = QColor("#e6e6e6")
    faint.setAlpha(128)
    palette.setColor(QPalette.ColorRole.PlaceholderText, faint)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#8a8a8a"))  # greyed, as a theme has it
    return palette


def wait_for(done: Callable[[], bool], ms: int = 120_000) -> bool:
    clock = QElapsedTimer()
    clock.start()
    while not done():
        QCoreApplication.processEvents()
        if clock.elapsed() > ms:
            return False
    return True


def label_overlaps(dialog: QWidget, labels: list[QLabel]) -> list[str]:
    """Labels drawn over each other, or wrapped ones shorter than their text needs."""
    def rect(w: QWidget) -> QRect:
        return QRect(w.mapTo(dialog, QPoint(0, 0)), w.size())

    shown = [w for w in labels if w.isVisibleTo(dialog) and w.text()]
    found = [f"{a.text()[:30]} / {b.text()[:30]}" for i, a in enumerate(shown) for b in shown[i + 1:]
             if rect(a).intersects(rect(b))]
    cut = [f"{w.text()[:30]} (cut)" for w in shown if w.wordWrap() and w.height() < w.heightForWidth(w.width())]
    return found + cut


def cut_width(view: QTableView) -> int:
    """How much narrower than its column a cell's text room is: the style's text margin on each side
    (what ``QCommonStyle`` takes off before it elides)."""
    return 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)


def elided_cells(view: QTableView, first_column: int = 1) -> list[str]:
    """The cells on screen, from ``first_column`` on, whose text is too wide for its column (drawn cut)."""
    model, metrics, margin = view.model(), view.fontMetrics(), cut_width(view)
    top = max(0, view.rowAt(0))
    bottom = view.rowAt(view.viewport().height() - 1)
    bottom = model.rowCount() - 1 if bottom < 0 else bottom
    cut = []
    for row in range(top, bottom + 1):
        for column in range(first_column, model.columnCount()):
            text = str(model.index(row, column).data() or "")
            if metrics.horizontalAdvance(text) > view.columnWidth(column) - margin:
                cut.append(f"{model.headerData(column, Qt.Orientation.Horizontal)}: {text}")
    return cut


def label_cut(label: QLabel) -> bool:
    """A one-line plain label whose text is wider than the room it is given (drawn cut)."""
    text = label.text().replace("&&", "\0").replace("&", "").replace("\0", "&")  # as drawn: no mnemonic marks
    if not text or label.wordWrap() or label.textFormat() == Qt.TextFormat.RichText or "<" in text:
        return False
    return label.fontMetrics().horizontalAdvance(text) > label.contentsRect().width() + 1


def page_checks(top: QWidget, page: QWidget) -> dict[str, Any]:
    """What a page shows, measured as drawn inside ``top``: labels over each other or cut, table cells
    cut, the page inside the window, and its help text's contrast on the window's background."""
    labels = [w for w in page.findChildren(QLabel) if w.isVisibleTo(top)]
    helps = [w for w in labels if w.property("help_text")]
    window = top.palette().color(QPalette.ColorRole.Window)
    ratios = [contrast(over(w.palette().color(w.foregroundRole()), window), window) for w in helps]
    at = page.mapTo(top, QPoint(0, 0))
    return {"overlaps": label_overlaps(top, labels), "cut_labels": [w.text()[:40] for w in labels if label_cut(w)],
            "cut_cells": [c for v in page.findChildren(QTableView) if v.isVisibleTo(top) for c in elided_cells(v, 0)],
            "inside": top.rect().contains(QRect(at, page.size())), "labels": len(labels), "help_labels": len(helps),
            "lowest_help_contrast": round(min(ratios), 2) if ratios else None}


def memory_share(browser: MemoryBrowser) -> float:
    view = browser.memories.view
    return view.header().sectionSize(0) / max(1, view.viewport().width())


def _scale_browser(services: Services, size: tuple[int, int], outdir: Path, name: str,
                   checks: dict[str, Any]) -> MemoryBrowser:
    browser = app_browser(services)
    browser.resize(*size)
    browser.show()
    model = browser.memories.model
    wait_for(lambda: model.listing.complete and model.rowCount() > 0 and model.result_at(0) is not None)
    settle(services, 500)
    grab(browser, outdir / name)
    checks[name] = {"status": browser.count_label.text(), "memory_share": round(memory_share(browser), 3),
                    "size": [browser.width(), browser.height()], "cut_cells": elided_cells(browser.memories.view)}
    return browser


def _tools_checks(browser: MemoryBrowser, services: Services) -> dict[str, Any]:
    """The AI tools tab of ``browser`` measured as drawn (then back to Memories)."""
    tools = browser.extra_tabs["AI tools"]
    browser.tabs.setCurrentWidget(tools)
    wait_for(lambda: tools.clients.rowCount() > 0, 20_000)  # type: ignore[attr-defined]
    settle(services, 300)
    found = page_checks(browser, tools)
    browser.tabs.setCurrentWidget(browser.memories)
    return found


def _scale_ends(browser: MemoryBrowser, services: Services, outdir: Path, checks: dict[str, Any]) -> None:
    """The end of the list (the oldest memory), then a search with thousands of matches."""
    view, model = browser.memories.view, browser.memories.model
    view.setCurrentIndex(model.index(0, 0))
    view.setFocus()
    end = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    QCoreApplication.sendEvent(view, end)  # Ctrl+End, as a person reaches the oldest
    last = model.rowCount() - 1
    wait_for(lambda: model.result_at(last) is not None and browser.memories.details.details is not None)
    settle(services, 500)
    grab(browser, outdir / "vault-20k-end-light.png")
    checks["end"] = {"rows": model.rowCount(), "last_text": model.result_at(last).fact.text,  # type: ignore[union-attr]
                     "oldest_text": sample_text(0), "current_row": view.currentIndex().row()}
    browser.memories.search_box.setText("heron")
    wait_for(lambda: model.searching and model.listing.complete and model.result_at(0) is not None)
    view.setCurrentIndex(model.index(0, 0))
    wait_for(lambda: browser.memories.details.details is not None)
    settle(services, 500)
    grab(browser, outdir / "vault-20k-search-light.png")
    checks["search"] = {"status": browser.count_label.text(), "rows": model.rowCount(),
                        "memory_share": round(memory_share(browser), 3)}


def _filter_checks(browser: MemoryBrowser) -> dict[str, Any]:
    """The filter bar as drawn: labels cut, and the site and tool fields' room against their words."""
    filters = browser.memories.filters
    room = {f.accessibleName(): f.width() - f.fontMetrics().horizontalAdvance(f.placeholderText())
            for f in (filters.host, filters.tool)}
    return {"cut_labels": [w.text() for w in filters.findChildren(QLabel) if w.isVisibleTo(browser) and label_cut(w)],
            "field_room": room, "inside": browser.rect().contains(QRect(filters.mapTo(browser, QPoint(0, 0)),
                                                                         filters.size()))}


def _bulk_shots(services: Services, outdir: Path, checks: dict[str, Any]) -> list[QWidget]:
    """At each window size: 50 memories selected and pinned as one action (the undo bar over the list,
    the count in the status bar), then undone; and one project alone, its count exact."""
    return [_bulk_at(services, size, outdir, checks) for size in BULK_SIZES]


def _bulk_at(services: Services, size: tuple[int, int], outdir: Path, checks: dict[str, Any]) -> MemoryBrowser:
    browser = app_browser(services)
    browser.resize(*size)
    browser.show()
    tab, model = browser.memories, browser.memories.model
    bar, actions = tab.fact_actions.bar, tab.fact_actions
    wait_for(lambda: model.listing.complete and model.result_at(0) is not None and tab.vault_total > 0)
    tab.select_rows(0, 49)
    actions["pin"].trigger()
    wait_for(lambda: bar.isVisible() and actions.last is not None and actions.last.title == "Pin 50 memories"
             and len(tab.selected_ids()) == 50)
    settle(services, 500)
    name = f"vault-20k-bulk-{size[0]}x{size[1]}-light.png"
    grab(browser, outdir / name)
    checks[name] = {"status": browser.count_label.text(), "bar": bar.text.text(), "undo": actions["undo"].text(),
                    "selected": len(tab.selected_ids()), "memory_share": round(memory_share(browser), 3),
                    **_filter_checks(browser)}
    actions.undo()
    wait_for(lambda: bar.text.text().startswith("Undid"))
    bar.hide()
    counts = services.runtime.vault.read(lambda c: project_counts(c, FactFilter(project=ALL_PROJECTS)))
    tab.filters.choose_project("garden")
    own = counts.count("garden")
    wait_for(lambda: model.listing.complete and model.total == own and model.result_at(0) is not None)
    settle(services, 500)
    browser.statusBar().clearMessage()  # the count, not the last message
    name = f"vault-20k-scope-{size[0]}x{size[1]}-light.png"
    grab(browser, outdir / name)
    checks[name] = {"status": browser.count_label.text(), "rows": model.total, "own": own,
                    "project": tab.filters.project.currentText(), "scope": tab.filters.scope.currentText(),
                    **_filter_checks(browser)}
    return browser


def _scale_settings(services: Services, outdir: Path, name: str, checks: dict[str, Any]) -> SettingsDialog:
    """Settings as the app opens it, drawn in the middle of a 1366×768 screen."""
    settings = settings_for_screenshot(services)
    settings.vault.setText(f"{SHOWN_DATA}/{paths.DEFAULT_PROFILE}.vodou.sqlite")  # not the temporary one
    settings.vault.setCursorPosition(0)
    settings.show()
    settle(services, 500)
    screen = QImage(*SCREEN, QImage.Format.Format_ARGB32)
    screen.fill(QApplication.palette().color(QPalette.ColorRole.Dark))
    at = QPoint((SCREEN[0] - settings.width()) // 2, (SCREEN[1] - settings.height()) // 2)
    painter = QPainter(screen)
    painter.drawPixmap(at, settings.grab())
    painter.end()
    screen.save(str(outdir / name))
    save = settings.buttons.button(QDialogButtonBox.StandardButton.Save)
    save_rect = QRect(save.mapTo(settings, QPoint(0, 0)) + at, save.size())
    overlaps, sync_labels = [], 0
    for row in range(settings.sections.count()):
        settings.sections.setCurrentRow(row)
        settle(services, 100)
        page = settings.stack.currentWidget()
        if page.findChild(SyncSettingsPage) is not None:  # its contents come from a read: wait for them
            wait_for(lambda: bool(sync_page(settings).status), 20_000)
            settle(services, 100)
            sync_labels = sum(w.isVisibleTo(settings) and bool(w.text()) for w in page.findChildren(QLabel))
        labels = [*page.findChildren(QLabel), settings.restart_note, settings.problem]
        overlaps += label_overlaps(settings, labels)
    settings.sections.setCurrentRow(0)
    palette = QApplication.palette()
    window = palette.color(QPalette.ColorRole.Window)
    helps = [w for w in settings.findChildren(QLabel) if w.property("help_text")]
    ratios = [contrast(over(w.palette().color(w.foregroundRole()), window), window) for w in helps]
    checks[name] = {"dialog": [settings.width(), settings.height()], "screen": list(SCREEN),
                    "save": [save_rect.x(), save_rect.y(), save_rect.width(), save_rect.height()],
                    "overlaps": overlaps, "sync_labels": sync_labels,
                    "help_labels": len(helps), "lowest_help_contrast": round(min(ratios), 2)}
    return settings


def render_scale(outdir: Path) -> list[Path]:
    """The browser on a generated vault of 20,000 memories in 6 projects at 1100×700 and 800×560, and
    Settings on a 1366×768 screen, in a light and a dark palette; what each shows is measured into
    gallery-checks.json (the tests assert on it)."""
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    light = app.style().standardPalette()
    checks: dict[str, Any] = {}
    keep: list[QWidget] = []
    person = os.environ.get("HOME")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp  # the AI tools' configuration files: none
        vault = Vault.open(Path(tmp) / "scale.vodou.sqlite")
        fill_vault(vault, SCALE_MEMORIES)
        embedder = Embedder("none")
        index = VectorIndex(vault)
        search = SearchService(vault, embedder, index)
        runtime = Runtime(config.Settings(), vault, embedder, index, search)
        services = Services.build(runtime, sites=SiteModes(vault), forgetting=Forgetting(vault))
        try:
            for name, palette in (("light", light), ("dark", dark_palette())):
                app.setPalette(palette)
                apply_readable_palette(app)
                for w, h in SCALE_SIZES:
                    keep.append(_scale_browser(services, (w, h), outdir, f"vault-20k-{w}x{h}-{name}.png", checks))
                    checks[f"ai-tools-{w}x{h}-{name}"] = _tools_checks(keep[-1], services)
                if name == "light":
                    _scale_ends(keep[0], services, outdir, checks)
                keep += _fit_checks(services, name, checks)
                keep.append(_scale_settings(services, outdir, f"settings-1366x768-{name}.png", checks))
            app.setPalette(light)
            apply_readable_palette(app)
            keep += _bulk_shots(services, outdir, checks)
            for widget in keep:
                widget.close()
                widget.deleteLater()
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        finally:
            app.setPalette(light)
            services.close()
            runtime.close()
            if person is not None:
                os.environ["HOME"] = person
    small = outdir / CHECKS  # the states' checks, written by ``render`` first
    earlier = json.loads(small.read_text("utf-8")) if small.exists() else {}
    small.write_text(json.dumps({**earlier, **checks}, indent=1, ensure_ascii=False), encoding="utf-8")
    return [outdir / name for name in SCALE_SHOTS]


def render(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    PaletteKeeper(app)  # as the app starts: help text readable in the theme in force
    window_keys_out_of_context_menus(app)
    person = {k: os.environ.get(k) for k in ("HOME", "CODEX_HOME")}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VODOU_HOME"] = tmp  # window size, per-site projects: never the person's own files
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")  # the autostart entry Settings names
        os.environ["HOME"] = tmp  # the AI tools' configuration files: Cursor's set up, the others absent
        os.environ.pop("CODEX_HOME", None)
        install.apply(install.plan_install("cursor", "vodou", ["mcp"], install.server_env()))
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
            os.environ.update({k: v for k, v in person.items() if v is not None})


def _render_all(outdir: Path, services: Services) -> list[Path]:
    vault, sites, gate = services.runtime.vault, services.sites, services.extras["gate"]
    paths = {name: outdir / name for name in SHOTS}
    keep: list[QWidget] = [*_empty_shots(services, paths, outdir)]
    seed(vault)
    seed_governance(vault, sites, gate)
    checks: dict[str, Any] = {}
    keep.append(_browser_shots(services, paths, checks))
    actions = ActionRegistry()
    state = read_page_state(vault, sites, PAGE, "Heron — Wikipedia")
    update_actions(actions, state)
    show_quick_key(actions, HELD)  # as on X11, where the app holds the key
    panel = Panel(actions, services.ops, services.page_memory, gate, site_projects=SiteProjects(outdir / ".unused"))
    panel.set_page(state)
    panel.popup_near(QRect(0, 0, 22, 22))  # as the tray opens it
    settle(services)
    grab(panel, paths["panel.png"])
    menu = build_menu(actions)
    menu.popup(QPoint(0, 0))  # as the tray opens its menu
    settle(services)
    grab(menu, paths["tray-menu.png"])
    dialog = ForgetSiteDialog(services.forgetting, services.ops, "en.wikipedia.org")
    dialog.show()
    dialog.run_dry_run()
    settle(services)
    grab(dialog, paths["forget-dialog.png"])
    keep += [panel, menu, dialog, *_dialog_shots(services, paths, checks)]
    icon_strip(paths["icon-states.png"])
    for window in keep:  # delete widgets while the app and services still exist
        window.close()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    (outdir / CHECKS).write_text(json.dumps(checks, indent=1, ensure_ascii=False), encoding="utf-8")
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
    panel.popup_near(QRect(0, 0, 22, 22))
    settle(services)
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


def _browser_shots(services: Services, paths: dict[str, Path], checks: dict[str, Any]) -> MemoryBrowser:
    """The Memories tab with a corrected memory selected (history and actions), then each other tab,
    AI tools last (the browser as the app opens it, with the tab the app adds)."""
    browser = app_browser(services)
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
    tools = browser.extra_tabs["AI tools"]
    browser.tabs.setCurrentWidget(tools)
    wait_for(lambda: tools.writers.rowCount() > 0 and tools.clients.rowCount() > 0, 20_000)  # type: ignore[attr-defined]
    settle(services)
    grab(browser, paths["ai-tools.png"])
    checks["ai-tools.png"] = {**page_checks(browser, tools), "size": [browser.width(), browser.height()],
                              "writers": tools.writers.rowCount(),  # type: ignore[attr-defined]
                              "set_up": [c.title for c in tools.clients.rows if c.state == "set up"]}  # type: ignore[attr-defined]
    long = long_memory_browser(services)
    grab(long, paths["long-memory.png"])
    long.close()
    return browser


def _dialog_shots(services: Services, paths: dict[str, Path], checks: dict[str, Any]) -> list[QWidget]:
    add = AddMemoryDialog(services)
    add.text.setPlainText("The heron survey is on the first Sunday of each month")
    settle(services)
    add.project.setCurrentText("birds")
    add.show()  # every dialog as the app opens it: its own size, never adjustSize()d for the picture
    settle(services)
    grab(add, paths["add-memory.png"])
    settings = settings_for_screenshot(services)
    settings.show()
    settle(services)
    grab(settings, paths["settings.png"])
    synced = _sync_shot(services, paths["settings-sync.png"], checks)
    recovery = RecoveryKeyDialog(to_recovery(SHOWN_KEY), services, place=KeyPlace(True, "SecretService"))
    recovery.status.setText("Copied to the clipboard: paste it into your password manager now.")
    recovery.kept.setEnabled(True)
    recovery.show()
    settle(services)
    grab(recovery, paths["recovery-key.png"])
    paired = PairDialog(None, services.ops, code={"code": "ABCD2345"})
    paired.paired({"extensionId": "abcdefghijklmnopabcdefghijklmnop", "browser": "Chromium"})
    paired.show()
    settle(services)
    grab(paired, paths["paired.png"])
    return [add, settings, synced, recovery, paired, *_quick_shots(services, paths, checks)]


def held_shortcut() -> GlobalShortcut:
    shortcut = GlobalShortcut()
    shortcut._say(HELD)
    return shortcut


def quick_box(services: Services, mode: str, text: str) -> QuickBox:
    """The quick box as the shortcut opens it, with ``text`` typed (the add mode: in project birds)."""
    box = QuickBox(services)
    box.summon("search")
    settle(services, 300)
    box.text.setText(text)
    settle(services, 500)
    if mode == "add":
        box._set_mode("add")
        box.project.setCurrentIndex(max(0, box.project.findData("birds")))
        settle(services, 200)
    return box


def welcome_window(services: Services, shortcut: GlobalShortcut) -> WelcomeWindow:
    """The first run's window, its folders as a person's own (the temporary ones change every run)."""
    welcome = WelcomeWindow(services, services.runtime.vault.path, None, shortcut)
    welcome.show()
    wait_for(lambda: welcome.facts is not None, 20_000)
    settle(services, 300)
    data = str(paths.data_dir())
    for label in welcome.findChildren(QLabel):
        text = label.text().replace(data, SHOWN_DATA).replace(str(paths.config_dir()), SHOWN_CONFIG + "/vodou")
        label.setText(text.replace(str(resources.resource_path("extension")), SHOWN_EXTENSION))
    settle(services, 100)
    return welcome


def _quick_shots(services: Services, paths: dict[str, Path], checks: dict[str, Any]) -> list[QWidget]:
    """Quick access searching "heron", then adding a memory; the welcome window with the AI tools of
    this (temporary) home: Cursor set up, Claude Code found."""
    found = quick_box(services, "search", "heron")
    grab(found, paths["quick-search.png"])
    checks["quick-search.png"] = {**page_checks(found, found), "results": found.results.rowCount()}
    add = quick_box(services, "add", "The heron survey starts at the old mill")
    grab(add, paths["quick-add.png"])
    checks["quick-add.png"] = {**page_checks(add, add), "project": add.project.currentData()}
    (Path(os.environ["HOME"]) / ".claude").mkdir(exist_ok=True)  # Claude Code is on this computer
    welcome = welcome_window(services, held_shortcut())
    grab(welcome, paths["welcome.png"])
    checks["welcome.png"] = {**page_checks(welcome, welcome), "tools": sorted(welcome.connect_buttons),
                             "size": [welcome.width(), welcome.height()]}
    return [found, add, welcome]


def _fit_checks(services: Services, palette: str, checks: dict[str, Any]) -> list[QWidget]:
    """The welcome window and the quick box fitted into each screen size, measured as drawn."""
    keep: list[QWidget] = []
    for w, h in SCREENS:
        area = QRect(0, 0, w, h)
        welcome = welcome_window(services, held_shortcut())
        fit_on_screen(welcome, area)
        settle(services, 200)
        box = quick_box(services, "search", "heron")
        fit_on_screen(box, area)
        settle(services, 100)
        for name, window in (("welcome", welcome), ("quick", box)):
            frame = window.frameGeometry()
            checks[f"{name}-{w}x{h}-{palette}"] = {**page_checks(window, window),
                                                   "on_screen": area.contains(frame)}
        keep += [welcome, box]
    return keep


def sync_page(settings: SettingsDialog) -> SyncSettingsPage:
    found = settings.findChild(SyncSettingsPage)
    assert found is not None
    return found


def _sync_shot(services: Services, path: Path, checks: dict[str, Any]) -> SettingsDialog:
    """Settings turned to Sync, as the app opens it, on a vault that syncs with a second computer."""
    vault = services.runtime.vault
    home = paths.data_dir().parent
    folder = home / "Sync" / "vodou"
    folder.mkdir(parents=True)
    secret, shown = setup_secret(vault.path)
    SyncEngine(vault).setup(folder, "laptop", secret, joining=False)
    SyncEngine(vault).run(force_snapshot=True)
    with Vault.open(home / "desktop.vodou.sqlite") as other:
        remember(other, "Written on the desktop computer", Origin("cli"))
        SyncEngine(other).setup(folder, "desktop", resolve_join_key(shown), joining=True)
        SyncEngine(other).run()
    SyncEngine(vault).run()
    settings = settings_for_screenshot(services)
    settings.show_section("Sync")
    settings.show()
    page = sync_page(settings)
    wait_for(lambda: bool(page.status.get("set_up")), 20_000)
    settle(services)
    for label in page.findChildren(QLabel):
        label.setText(label.text().replace(str(home), "/home/you"))
    grab(settings, path)
    checks[path.name] = {**page_checks(settings, page), "devices": [page.devices.item(i).text()
                                                                    for i in range(page.devices.count())]}
    return settings


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
        field.setCursorPosition(0)
    return settings


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    small = "--small" in args  # the states only, without the 20,000-memory vault
    args = [a for a in args if a != "--small"]
    if len(args) != 1:
        print("usage: python -m vodou_desktop.ui.screenshots [--small] OUTDIR", file=sys.stderr)
        return 2
    shots = render(Path(args[0]))
    if not small:
        shots += render_scale(Path(args[0]))
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
