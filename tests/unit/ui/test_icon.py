"""Pixel-level tests of the tray/toolbar icon (UI-2): only brand blue turns green, nothing else moves."""

from __future__ import annotations

import colorsys
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from vodou_desktop.resources import resource_path
from vodou_desktop.ui import icon_art
from vodou_desktop.ui.icon import (
    ARTWORK_SIZES,
    DIM_OPACITY,
    GREEN_HUE,
    MIN_CHROMA,
    STATES,
    apply_state,
    artwork_image,
    dim,
    icon_for_state,
    is_brand_blue,
    recolor_brand_blue,
    state_image,
)

# Before any QApplication exists; tests/conftest.py may already have set it.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

BRAND = (0x2D, 0x6C, 0xDF)
WHITE = (255, 255, 255)


def argb(img: QImage) -> np.ndarray:
    """(h, w, 4) int array of straight A, R, G, B, whatever the image's format."""
    straight = img.convertToFormat(QImage.Format.Format_ARGB32)
    words = np.frombuffer(straight.constBits(), dtype=np.uint32)
    words = words.reshape(straight.height(), straight.bytesPerLine() // 4)[:, : straight.width()]
    return np.stack([(words >> s) & 0xFF for s in (24, 16, 8, 0)], axis=-1).astype(int)


def premultiplied(img: QImage) -> np.ndarray:
    """What each pixel adds when composited: premultiplied A, R, G, B."""
    pre = img.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    words = np.frombuffer(pre.constBits(), dtype=np.uint32)
    words = words.reshape(pre.height(), pre.bytesPerLine() // 4)[:, : pre.width()]
    return np.stack([(words >> s) & 0xFF for s in (24, 16, 8, 0)], axis=-1).astype(int)


def hue(rgb) -> float:
    r, g, b = (c / 255 for c in rgb)
    return colorsys.rgb_to_hsv(r, g, b)[0] * 360.0


def hue_distance(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def shifted(rgb, target=GREEN_HUE) -> tuple[int, int, int]:
    """Independent oracle: the colour with the same HSL S and L at hue ``target``."""
    _, light, sat = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    return tuple(round(c * 255) for c in colorsys.hls_to_rgb(target / 360.0, light, sat))


def solid(colours: list[tuple[int, int, int, int]]) -> QImage:
    """A one-row image with one pixel per (r, g, b, a) colour."""
    img = QImage(len(colours), 1, QImage.Format.Format_ARGB32)
    for x, (r, g, b, a) in enumerate(colours):
        img.setPixelColor(x, 0, QColor(r, g, b, a))
    return img


def eye_ellipses() -> list[tuple[float, float, float, float]]:
    """The eye whites (cx, cy, rx, ry) in SVG units, read from the artwork itself."""
    root = ET.parse(resource_path("icons", "vodou.svg")).getroot()
    eyes = [e for e in root.iter("{http://www.w3.org/2000/svg}ellipse") if e.get("class") == "eye-white"]
    return [tuple(float(e.get(k)) for k in ("cx", "cy", "rx", "ry")) for e in eyes]


def eye_pixels(size: int) -> list[tuple[int, int]]:
    """Pixels whose whole square lies inside an eye white (so no body colour is blended in)."""
    scale = size / 64.0
    inside = []
    for cx, cy, rx, ry in eye_ellipses():
        for y in range(size):
            for x in range(size):
                corners = [(x + dx, y + dy) for dx in (0, 1) for dy in (0, 1)]
                if all(((px / scale - cx) / rx) ** 2 + ((py / scale - cy) / ry) ** 2 < 1 for px, py in corners):
                    inside.append((x, y))
    return inside


@pytest.mark.parametrize("size", ARTWORK_SIZES)
def test_every_eye_pixel_is_identical_after_recolouring(size):
    before = argb(artwork_image(size))
    after = argb(recolor_brand_blue(artwork_image(size)))
    eyes = eye_pixels(size)
    assert len(eyes) >= 4, "the eyes must be at least a few whole pixels at every size"
    for x, y in eyes:
        a, r, g, b = before[y, x]
        assert a == 255 and max(r, g, b) - min(r, g, b) <= 2, "the artwork's eyes are white or grey"
        assert (after[y, x] == before[y, x]).all(), (x, y)


@pytest.mark.parametrize("size", ARTWORK_SIZES)
def test_every_brand_blue_pixel_ends_green(size):
    before = argb(artwork_image(size))
    after = argb(recolor_brand_blue(artwork_image(size)))
    blue = [
        (y, x) for y in range(size) for x in range(size) if before[y, x, 0] > 0 and is_brand_blue(*before[y, x, 1:])
    ]
    assert len(blue) > size * size * 0.4, "most of the figure is brand blue"
    for y, x in blue:
        assert hue_distance(hue(after[y, x, 1:]), GREEN_HUE) <= 3.0, (x, y, before[y, x], after[y, x])
    assert not any(is_brand_blue(*after[y, x, 1:]) for y in range(size) for x in range(size) if after[y, x, 0] > 0), (
        "no brand blue is left anywhere"
    )


@pytest.mark.parametrize("size", ARTWORK_SIZES)
def test_alpha_is_unchanged_everywhere(size):
    before = argb(artwork_image(size))
    after = argb(recolor_brand_blue(artwork_image(size)))
    assert (after[..., 0] == before[..., 0]).all()
    assert 0 < (before[..., 0] == 0).sum() < size * size, "the artwork has a transparent background"


def test_the_brand_colour_becomes_the_green_with_its_saturation_and_lightness():
    out = argb(recolor_brand_blue(solid([(*BRAND, 255), (*BRAND, 77)])))
    assert tuple(out[0, 0, 1:]) == shifted(BRAND) == (0x2D, 0xDF, 0x68)
    assert tuple(out[0, 1]) == (77, *shifted(BRAND))


@given(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)), st.integers(1, 255))
def test_a_shift_keeps_lightness_and_saturation_and_touches_nothing_else(rgb, alpha):
    out = tuple(argb(recolor_brand_blue(solid([(*rgb, alpha)])))[0, 0])
    if is_brand_blue(*rgb):
        # HSL lightness and saturation are both fixed exactly when the max and min channels are.
        assert abs(max(out[1:]) - max(rgb)) <= 1 and abs(min(out[1:]) - min(rgb)) <= 1
        assert hue_distance(hue(out[1:]), GREEN_HUE) <= 3.0
        assert out[0] == alpha
    else:
        assert out == (alpha, *rgb)


WHITES = [(255, 255, 255), (250, 250, 252), (245, 247, 250), (240, 244, 255)]
GREYS = [(128, 128, 128), (60, 62, 66), (30, 30, 30), (0, 0, 0)]  # the pupils are #1E1E1E
OTHER_HUES = [(230, 40, 40), (240, 150, 20), (20, 200, 220), (140, 60, 220), (40, 200, 90)]
NEUTRAL = WHITES + GREYS + OTHER_HUES


def test_white_grey_transparent_and_other_hues_are_untouched():
    colours = [(*c, a) for c in NEUTRAL for a in (255, 128, 1)] + [(*BRAND, 0), (0, 0, 0, 0)]
    before = solid(colours)
    assert (argb(recolor_brand_blue(before)) == argb(before)).all()


def blend(a, b, t: float) -> tuple[int, int, int]:
    return tuple(round(x * t + y * (1 - t)) for x, y in zip(a, b, strict=True))


def test_a_blue_to_white_blend_becomes_the_same_green_to_white_blend():
    """The antialiased rim between body and eye: recolour(mix(blue, white)) == mix(green, white)."""
    steps = [blend(BRAND, WHITE, t / 255) for t in range(256)]
    out = argb(recolor_brand_blue(solid([(*c, 255) for c in steps])))[0]
    green = shifted(BRAND)
    for t, before in enumerate(steps):
        after = tuple(out[t, 1:])
        if max(before) - min(before) < MIN_CHROMA:
            assert after == before, "a tint too faint to see is left alone"
        else:
            expected = blend(green, WHITE, t / 255)
            assert max(abs(p - q) for p, q in zip(after, expected, strict=True)) <= 2, (t, after, expected)


def paint(size: int, scene) -> QImage:
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    painter = QPainter(img)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    scene(painter)
    painter.end()
    return img


def disc_on_transparency(colour):
    return lambda p: (p.setBrush(QColor(*colour)), p.drawEllipse(QPointF(20.3, 19.7), 13.4, 11.1))


def eye_on_body(colour):
    def scene(p):
        p.setBrush(QColor(*colour))
        p.drawRoundedRect(QRectF(3.5, 4.2, 33, 31.6), 9.3, 9.3)
        p.setBrush(QColor(*WHITE))
        p.drawEllipse(QPointF(17.6, 18.3), 6.2, 8.4)

    return scene


@pytest.mark.parametrize("scene", [disc_on_transparency, eye_on_body], ids=["on-transparency", "eye-on-body"])
def test_antialiased_edges_leave_no_halo(scene):
    """Recolouring a blue drawing must look exactly like drawing it green in the first place."""
    recoloured = recolor_brand_blue(paint(40, scene(BRAND)))
    drawn_green = paint(40, scene(shifted(BRAND)))
    assert (argb(recoloured)[..., 0] == argb(drawn_green)[..., 0]).all()
    # Compare what each pixel adds when composited; a dark or blue fringe would show up here.
    difference = np.abs(premultiplied(recoloured) - premultiplied(drawn_green)).max(axis=-1)
    # Only a tint too faint to recolour may differ, and by less than that tint's own chroma.
    original = argb(paint(40, scene(BRAND)))
    faint = (original[..., 1:].max(axis=-1) - original[..., 1:].min(axis=-1)) < MIN_CHROMA
    assert (argb(recoloured)[faint] == original[faint]).all()
    assert difference[~faint].max() <= 2
    assert difference[faint].max(initial=0) < MIN_CHROMA


def test_the_input_image_is_not_modified():
    img = artwork_image(32)
    before = argb(img)
    recolor_brand_blue(img)
    dim(img)
    assert (argb(img) == before).all()


def test_premultiplied_input_gives_the_same_result_as_straight_input():
    straight = artwork_image(48)
    pre = straight.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    a, b = argb(recolor_brand_blue(straight)), argb(recolor_brand_blue(pre))
    visible = a[..., 0] >= 32  # below that, premultiplying has already thrown colour away
    assert (a[..., 0] == b[..., 0]).all()
    assert np.abs(a[visible] - b[visible]).max() <= 8


@pytest.mark.parametrize("size", ARTWORK_SIZES)
def test_dimmed_is_grey_and_keeps_its_shape(size):
    before = argb(artwork_image(size))
    after = argb(dim(artwork_image(size)))
    assert (after[..., 1] == after[..., 2]).all() and (after[..., 2] == after[..., 3]).all()
    assert (after[..., 0] == np.rint(before[..., 0] * DIM_OPACITY)).all()


def luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB rows (..., 3) in 0-255."""
    c = rgb / 255.0
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]


def figure_contrast(state: str, size: int, panel: tuple[int, int, int]) -> float:
    """Contrast (WCAG) of the figure's body against the panel, composited as the panel shows it:
    the median over the icon's mostly opaque pixels (body, eyes and marks alike)."""
    img = argb(state_image(state, size))
    alpha = img[..., 0:1] / 255.0
    shown = img[..., 1:] * alpha + np.array(panel) * (1 - alpha)
    solid = img[..., 0] >= 128
    lum, bg = luminance(shown[solid]), luminance(np.array(panel, dtype=float))
    ratio = (np.maximum(lum, bg) + 0.05) / (np.minimum(lum, bg) + 0.05)
    return float(np.median(ratio))


DARK_PANEL, LIGHT_PANEL = (0x1F, 0x1F, 0x1F), (0xF0, 0xF0, 0xF0)


@pytest.mark.parametrize("size", [16, 22])
@pytest.mark.parametrize("state", ["dimmed", "paused"])
def test_off_and_paused_icons_stand_out_on_dark_and_light_panels(state, size):
    """Issue 14 defect 4: the grey off icon vanished on a dark panel (1.9:1 before)."""
    assert figure_contrast(state, size, DARK_PANEL) >= 3.0
    assert figure_contrast(state, size, LIGHT_PANEL) >= 2.9


def _luma(img: np.ndarray) -> np.ndarray:
    return np.rint(0.299 * img[..., 1] + 0.587 * img[..., 2] + 0.114 * img[..., 3])


@pytest.mark.parametrize("size", [16, 22])
def test_states_differ_by_shape_not_colour_alone(size):
    """In grey (as a colour-blind person or a monochrome panel sees it) every state still differs."""
    grey = {state: _luma(argb(state_image(state, size))) for state in STATES}
    for one, other in [("neutral", "green"), ("green", "dimmed"), ("dimmed", "paused"), ("neutral", "dimmed")]:
        changed = np.abs(grey[one] - grey[other]) > 60
        assert changed.sum() >= size // 2, (one, other, int(changed.sum()))


@pytest.mark.parametrize("size", [16, 22])
def test_pupils_stay_visible_at_small_sizes(size):
    """The pupils vanished at 16 px: each eye keeps dark pixels inside its white."""
    img = argb(state_image("neutral", size))
    scale = size / 64.0
    for cx, cy, rx, ry in eye_ellipses():
        box = img[int((cy - ry) * scale):int((cy + ry) * scale) + 1, int((cx - rx) * scale):int((cx + rx) * scale) + 1]
        assert (box[..., 1:].max(axis=-1) < 110).any(), (size, cx)
        assert (box[..., 1:].min(axis=-1) > 200).any(), (size, cx)


@pytest.mark.parametrize("size", [*ARTWORK_SIZES, 20, 24, 256])
def test_every_state_renders_at_every_size_and_the_states_differ(size):
    images = {state: argb(state_image(state, size)) for state in STATES}
    for image in images.values():
        assert image.shape == (size, size, 4)
    assert (images["neutral"] == argb(artwork_image(size))).all()
    for one, other in [("neutral", "green"), ("neutral", "dimmed"), ("green", "dimmed")]:
        assert (images[one] != images[other]).any(axis=-1).mean() > 0.3, (one, other)


def test_an_unknown_state_is_refused():
    with pytest.raises(ValueError, match="unknown icon state"):
        state_image("blue", 16)
    with pytest.raises(ValueError, match="unknown icon state"):
        apply_state(artwork_image(16), "red")


def test_icon_for_state_holds_every_size(qapp):
    icon = icon_for_state("green")
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} == set(ARTWORK_SIZES)
    assert [s.width() for s in icon_for_state("dimmed", 22).availableSizes()] == [22]


def test_the_committed_pngs_match_the_svg(qapp):
    for size in ARTWORK_SIZES:
        committed = argb(QImage(str(resource_path("icons", f"vodou-{size}.png"))))
        assert np.abs(committed - argb(icon_art.render_artwork(size))).max() <= 8, size
    for size in icon_art.EXTENSION_SIZES:
        artwork = icon_art.render_artwork(size)
        for state in STATES:
            path = resource_path("extension", "icons", f"{state}-{size}.png")
            committed = argb(QImage(str(path)))
            assert np.abs(committed - argb(apply_state(artwork, state))).max() <= 8, path.name


def test_the_generator_writes_every_png(qapp, tmp_path, capsys):
    assert icon_art.main([str(tmp_path)]) == 0
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")}
    expected = {f"icons/vodou-{n}.png" for n in ARTWORK_SIZES} | {
        f"extension/icons/{s}-{n}.png" for s in STATES for n in icon_art.EXTENSION_SIZES
    }
    assert written == expected
    assert len(capsys.readouterr().out.splitlines()) == len(expected)


def bar_columns(img: np.ndarray) -> list[list[int]]:
    """Columns of the lower right quarter holding a vertical run (≥ 3 px) of opaque white pixels with an
    opaque dark pixel right above and right below it, grouped into runs of neighbouring columns."""
    size = img.shape[0]
    opaque = img[..., 0] == 255
    light = opaque & (img[..., 1:].min(axis=-1) >= 230)
    dark = opaque & (img[..., 1:].max(axis=-1) <= 60)
    found: list[int] = []
    for x in range(size // 2, size):
        y = size // 2
        while y < size:
            if light[y, x]:
                end = y
                while end < size and light[end, x]:
                    end += 1
                if end - y >= 3 and dark[y - 1, x] and end < size and dark[end, x]:
                    found.append(x)
                    break
                y = end
            y += 1
    groups: list[list[int]] = []
    for x in found:
        if groups and x == groups[-1][-1] + 1:
            groups[-1].append(x)
        else:
            groups.append([x])
    return groups


@pytest.mark.parametrize("size", [16, 22, 32])
def test_the_pause_badge_is_two_bars_apart_not_a_blob(size):
    """Issue 24: at 16 px the pause badge was a grey blob. Two vertical runs of white on the dark
    badge, a dark column between them; the badge's rim stands out on a dark panel and its square on a
    light one."""
    img = argb(state_image("paused", size))
    bars = bar_columns(img)
    assert len(bars) == 2, bars
    gap = range(bars[0][-1] + 1, bars[1][0])
    assert len(gap) >= 1
    bar_rows = np.nonzero((img[:, bars[0][0], 1:].min(axis=-1) >= 230) & (np.arange(size) >= size // 2))[0]
    middle = int(bar_rows[len(bar_rows) // 2])
    assert all(img[middle, x, 1:].max() <= 60 for x in gap)  # dark between the bars
    corner = img[size - 1, size - 1]  # the rim, outermost
    inside = img[middle, bars[0][0] - 1]  # the dark square beside a bar
    for panel, part in ((DARK_PANEL, corner), (LIGHT_PANEL, inside)):
        lum, bg = luminance(part[1:].astype(float)), luminance(np.array(panel, dtype=float))
        assert (max(lum, bg) + 0.05) / (min(lum, bg) + 0.05) >= 4.5, (panel, part)
    assert bar_columns(argb(state_image("dimmed", size))) == []  # the off icon has no pause mark
