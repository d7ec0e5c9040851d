"""The screenshot gallery (``python -m vodou_desktop.ui.screenshots docs/screenshots``): every state
renders, and the properties a person relies on hold in what is drawn (issue 14)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QImage
from PySide6.QtWidgets import QLabel, QTabBar

from vodou_desktop.data.sample_vault import sample_text
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui import screenshots
from vodou_desktop.ui.screenshots import (
    BROWSER_SIZE,
    BULK_SIZES,
    CHECKS,
    ICON_PANELS,
    SCALE_MEMORIES,
    SCALE_SHOTS,
    SCALE_SIZES,
    SCREEN,
    SCREENS,
    SHOTS,
    icon_cell,
)

# The gallery writes a vault of 20,000 memories and renders every picture in a subprocess: minutes on
# a loaded machine, counted in the first test that uses it.
pytestmark = pytest.mark.timeout(900)


def argb(image: QImage) -> np.ndarray:
    straight = image.convertToFormat(QImage.Format.Format_ARGB32)
    words = np.frombuffer(straight.constBits(), dtype=np.uint32).copy()
    words = words.reshape(straight.height(), straight.bytesPerLine() // 4)[:, : straight.width()]
    return np.stack([(words >> s) & 0xFF for s in (24, 16, 8, 0)], axis=-1).astype(float)


def luminance(rgb: np.ndarray) -> np.ndarray:
    c = rgb / 255.0
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    out = tmp_path_factory.mktemp("shots")
    done = subprocess.run([sys.executable, "-m", "vodou_desktop.ui.screenshots", str(out)], capture_output=True,
                          text=True, timeout=900)  # with the 20,000-memory vault
    assert done.returncode == 0, done.stderr
    return out


def test_every_state_is_rendered_non_blank(gallery):
    for name in (*SHOTS, *SCALE_SHOTS):
        image = QImage(str(gallery / name))
        assert not image.isNull(), name
        assert image.width() >= 200 and image.height() >= 80, (name, image.size())
        assert len(np.unique(argb(image).reshape(-1, 4), axis=0)) > 20, f"{name} looks blank"
    for name in ("memory-browser.png", "long-memory.png", "empty-vault.png", "no-results.png", "sites.png"):
        browser = QImage(str(gallery / name))
        assert (browser.width(), browser.height()) == BROWSER_SIZE, name


@pytest.mark.parametrize("size", [16, 22])
def test_the_off_icon_in_the_gallery_stands_out_on_a_dark_panel(gallery, size):
    image = QImage(str(gallery / "icon-states.png"))
    cell = argb(image.copy(icon_cell("dimmed", size, "dark")))[..., 1:]
    panel = np.array([int(ICON_PANELS["dark"][i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    figure = cell[np.abs(cell - panel).sum(axis=-1) > 12]  # pixels the icon changed
    assert len(figure) > size * size * 0.3
    lum, bg = luminance(figure), luminance(panel)
    contrast = (np.maximum(lum, bg) + 0.05) / (np.minimum(lum, bg) + 0.05)
    assert np.median(contrast) >= 3.0


def _seeded_long_browser(qtbot, services):  # type: ignore[no-untyped-def]
    remember(services.runtime.vault, screenshots.LONG_MEMORY, Origin("note", url=screenshots.PAGE, title="Heron"),
             project="birds")
    browser = screenshots.long_memory_browser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: browser.memories.details.details is not None)
    return browser


def test_details_of_a_2000_character_memory_keep_project_and_source_in_view(qtbot, services):
    browser = _seeded_long_browser(qtbot, services)
    pane = browser.memories.details
    assert len(pane.details.fact.text) == 2000
    provenance = pane.provenance
    assert "<i>Project</i> birds" in provenance.text() and "<i>Source</i> en.wikipedia.org" in provenance.text()
    inside = pane.rect()
    top_left = provenance.mapTo(pane, provenance.rect().topLeft())
    bottom_right = provenance.mapTo(pane, provenance.rect().bottomRight())
    assert provenance.isVisible() and inside.contains(top_left) and inside.contains(bottom_right)
    assert provenance.height() >= provenance.heightForWidth(provenance.width())  # not cut
    lines = QFontMetrics(pane.title.font()).lineSpacing()
    assert pane.title.height() <= 2 * lines + 6  # the title never swallows the pane
    assert pane.body.verticalScrollBar().maximum() > 0  # the text scrolls instead


def _elided(label: QLabel) -> bool:
    text = label.text().replace("&&", "\0").replace("&", "").replace("\0", "&")  # as drawn: no mnemonic marks
    if not text or label.wordWrap() or label.textFormat() == Qt.TextFormat.RichText or "<" in text:
        return False
    return QFontMetrics(label.font()).horizontalAdvance(text) > label.contentsRect().width() + 1


def test_no_label_is_elided_at_the_default_window_size(qtbot, services):
    browser = _seeded_long_browser(qtbot, services)
    assert (browser.width(), browser.height()) == BROWSER_SIZE
    for tab in range(browser.tabs.count()):
        browser.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
        cut = [label.text() for label in browser.findChildren(QLabel) if label.isVisible() and _elided(label)]
        assert cut == [], browser.tabs.tabText(tab)
    bar = browser.tabs.findChild(QTabBar)
    for i in range(bar.count()):
        needed = QFontMetrics(bar.font()).horizontalAdvance(bar.tabText(i))
        assert bar.tabRect(i).width() >= needed, bar.tabText(i)
    header = browser.memories.view.header()
    for column in range(browser.memories.model.columnCount()):
        title = browser.memories.model.headerData(column, header.orientation())
        assert header.sectionSize(column) >= QFontMetrics(header.font()).horizontalAdvance(title), title


def test_settings_and_recovery_key_pictures_are_the_same_on_every_run(gallery, tmp_path):
    """No temporary path (new on every run) in Settings: the profile's folders read as a person's own."""
    again = subprocess.run([sys.executable, "-m", "vodou_desktop.ui.screenshots", "--small", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    for name in ("settings.png", "recovery-key.png"):
        assert (gallery / name).read_bytes() == (tmp_path / name).read_bytes(), name


# -- the gallery on a vault of 20,000 memories (issue 24): what the pictures show, measured as drawn --

@pytest.fixture(scope="module")
def checks(gallery):
    return json.loads((gallery / CHECKS).read_text("utf-8"))


@pytest.mark.parametrize("palette", ["light", "dark"])
@pytest.mark.parametrize("size", SCALE_SIZES)
def test_the_browser_states_the_total_and_gives_the_text_the_room(checks, gallery, palette, size):
    name = f"vault-20k-{size[0]}x{size[1]}-{palette}.png"
    shot = checks[name]
    assert shot["status"] == f"{SCALE_MEMORIES:,} memories" and tuple(shot["size"]) == size
    assert shot["memory_share"] >= 0.45  # the Memory column: at least 45 % of the table's width
    if size == BROWSER_SIZE:
        assert shot["cut_cells"] == []  # project, kind, source and age whole at the default size
    image = QImage(str(gallery / name))
    assert (image.width(), image.height()) == size  # the window as opened, not resized for the picture


def test_scrolling_to_the_end_reaches_the_oldest_and_a_search_states_its_total(checks):
    end = checks["end"]
    assert end["rows"] == SCALE_MEMORIES and end["current_row"] == SCALE_MEMORIES - 1
    assert end["last_text"] == end["oldest_text"] == sample_text(0)
    search = checks["search"]
    assert search["status"] == f"{SCALE_MEMORIES // 10:,} memories match" and search["rows"] > 100
    assert search["memory_share"] >= 0.45


@pytest.mark.parametrize("size", BULK_SIZES)
def test_bulk_selection_and_one_project_alone_at_every_window_size(checks, gallery, size):
    """Issue 35: 50 rows pinned as one action (the bar over the list, Undo naming it, the count in the
    status bar) and one project alone listing exactly its own count; the filter bar whole."""
    w, h = size
    bulk, scope = checks[f"vault-20k-bulk-{w}x{h}-light.png"], checks[f"vault-20k-scope-{w}x{h}-light.png"]
    assert bulk["status"] == f"{SCALE_MEMORIES:,} memories · 50 selected" and bulk["selected"] == 50
    assert bulk["bar"] == "Pinned 50 memories." and bulk["undo"] == "Undo Pin 50 memories"
    assert bulk["memory_share"] >= 0.45
    assert scope["rows"] == scope["own"] and scope["status"] == f"{scope['own']:,} of {SCALE_MEMORIES:,} shown"
    own = f"{scope['own']:,}"
    assert scope["project"] == f"garden ({own})" and scope["scope"] == f"Only this project ({own})"
    for shot in (bulk, scope):
        assert shot["cut_labels"] == [] and shot["inside"]
        assert min(shot["field_room"].values()) >= 0  # the site and tool fields show their words whole
    for name in (f"vault-20k-bulk-{w}x{h}-light.png", f"vault-20k-scope-{w}x{h}-light.png"):
        image = QImage(str(gallery / name))
        assert (image.width(), image.height()) == size, name


@pytest.mark.parametrize("palette", ["light", "dark"])
def test_settings_fit_the_laptop_screen_without_overlaps_and_help_text_is_readable(checks, palette):
    shot = checks[f"settings-1366x768-{palette}.png"]
    x, y, w, h = shot["save"]
    assert 0 <= x and x + w <= SCREEN[0] and 0 <= y and y + h <= SCREEN[1]  # Save inside 1366×768
    assert shot["dialog"][0] <= SCREEN[0] and shot["dialog"][1] <= SCREEN[1]
    assert shot["overlaps"] == []  # no label drawn over another, on any page
    assert shot["sync_labels"] >= 3  # the Sync page measured with its contents (read by an op), not empty
    assert shot["help_labels"] >= 4 and shot["lowest_help_contrast"] >= 4.5


# -- the AI tools tab and Settings ▸ Sync, as the app opens them --

def test_the_ai_tools_tab_is_in_the_gallery_whole_and_readable(checks, gallery):
    shot = checks["ai-tools.png"]
    picture = QImage(str(gallery / "ai-tools.png"))
    assert tuple(shot["size"]) == BROWSER_SIZE == (picture.width(), picture.height())
    assert shot["set_up"] == ["Cursor"] and shot["writers"] == 2  # what the seeded vault and home hold
    for name in ["ai-tools.png", *(f"ai-tools-{w}x{h}-{p}" for p in ("light", "dark") for w, h in SCALE_SIZES)]:
        tab = checks[name]
        assert tab["inside"] and tab["labels"] >= 4, name
        assert tab["overlaps"] == [] and tab["cut_labels"] == [], name
        assert tab["help_labels"] >= 1 and tab["lowest_help_contrast"] >= 4.5, name
    assert checks["ai-tools.png"]["cut_cells"] == []  # at the default size every cell whole


def test_the_sync_page_is_in_the_gallery_with_its_contents(checks, gallery):
    shot = checks["settings-sync.png"]
    assert shot["inside"] and shot["overlaps"] == [] and shot["cut_labels"] == []
    assert shot["labels"] >= 3  # heading, summary, "Devices seen:" (the contents, read by an op)
    assert [d.split(" — ")[0] for d in shot["devices"]] == ["desktop"]
    assert not any(re.search(r"\d{4}-\d\d-\d\dT", d) for d in shot["devices"])  # a time in words, not ISO


# -- quick access and the welcome window (issue 35): whole, readable, and inside every screen size --

@pytest.mark.parametrize("name", ["quick-search.png", "quick-add.png", "welcome.png"])
def test_quick_access_and_the_welcome_are_in_the_gallery_whole_and_readable(checks, gallery, name):
    shot = checks[name]
    assert shot["inside"] and shot["overlaps"] == [] and shot["cut_labels"] == [] and shot["cut_cells"] == []
    assert shot["help_labels"] >= 1 and shot["lowest_help_contrast"] >= 4.5
    assert not QImage(str(gallery / name)).isNull()
    assert checks["quick-search.png"]["results"] >= 3 and checks["quick-add.png"]["project"] == "birds"
    assert checks["welcome.png"]["tools"] == ["claude-code", "cursor"]  # found in the gallery's home, only those


@pytest.mark.parametrize("palette", ["light", "dark"])
@pytest.mark.parametrize("size", SCREENS)
@pytest.mark.parametrize("window", ["welcome", "quick"])
def test_the_small_windows_fit_every_screen_size_and_stay_readable(checks, window, size, palette):
    shot = checks[f"{window}-{size[0]}x{size[1]}-{palette}"]
    assert shot["on_screen"], shot  # opened inside the screen's available area
    assert shot["overlaps"] == [] and shot["cut_labels"] == [], shot
    assert shot["lowest_help_contrast"] is None or shot["lowest_help_contrast"] >= 4.5, shot
