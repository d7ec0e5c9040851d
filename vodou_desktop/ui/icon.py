"""The tray and toolbar icon: the project's artwork, recoloured for the state of the current page.

States (UI-2, EXT-2):

- ``neutral``: no page, or nothing saved from it. The artwork as drawn, brand blue.
- ``green``: exact facts or documents saved from this page. Only the brand-blue pixels are
  hue-shifted to green; the white eyes, the edges and the transparency stay as they are.
- ``dimmed``: the page's mode is ``off``. Grey, crossed by a slash.
- ``paused``: collection is paused (every site is off). Grey, with a pause badge.

A state is never told by colour alone: green carries a dot badge, off a slash, paused a pause
badge (two bars, in whole pixels), each drawn dark with a white rim so it reads on dark and light
panels at 16 px. The grey
of off and paused keeps a contrast of at least 3:1 against both a dark and a light panel.
The browser extension's toolbar icons are rendered by the same functions (see ``icon_art``).
"""

from __future__ import annotations

import colorsys
import functools

import numpy as np
from PySide6.QtCore import QPointF, QRect, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPen, QPixmap

from vodou_desktop.resources import resource_path

STATES = ("neutral", "green", "dimmed", "paused")
ARTWORK_SIZES = (16, 22, 32, 48, 64, 128)

BRAND_HUE_BAND = (195.0, 250.0)
"""Hues (degrees) that count as brand blue. The artwork's blue, #2D6CDF, sits at 219°. The band
is wide enough to catch the few degrees of hue noise that 8-bit antialiased blends pick up, and
narrow enough to leave cyan (below 195°) and violet (above 250°) alone."""

MIN_CHROMA = 20
"""How saturated a pixel must be to be recoloured, as chroma: max − min channel, 0–255. Chroma,
not HSL saturation, because HSL saturation runs to 1 near white and near black: (246, 249, 255)
has S = 1 yet looks white. Below 20 a pixel is white, near-white, grey, or a blend whose tint no
one can see; leaving those alone keeps the eyes and every neutral pixel bit-identical."""

GREEN_HUE = 140.0
"""The hue (degrees) brand blue becomes: at the artwork's saturation and lightness, #2DDF68."""

DIM_OPACITY = 1.0
"""The share of each pixel's alpha the grey icons keep. Fading made the off icon vanish on dark
panels; the grey alone says "not active", and the slash or pause badge says which."""

GREY_SPAN = 0.8
"""Grey is ``255 − (255 − luma) × GREY_SPAN``: white stays white, the brand blue's luma (102) becomes
133 (#858585), which is 4.4:1 against a #1F1F1F panel and 3.3:1 against #F0F0F0."""

BADGE_INK = QColor(0x1E, 0x1E, 0x1E)  # the pupils' dark grey: no chroma, so never taken for brand blue
BADGE_RIM = QColor(0xFF, 0xFF, 0xFF)


def is_brand_blue(red: int, green: int, blue: int) -> bool:
    """Whether a colour is brand blue enough to recolour (see ``BRAND_HUE_BAND``, ``MIN_CHROMA``)."""
    if max(red, green, blue) - min(red, green, blue) < MIN_CHROMA:
        return False
    hue = colorsys.rgb_to_hsv(red / 255, green / 255, blue / 255)[0] * 360.0
    return BRAND_HUE_BAND[0] <= hue <= BRAND_HUE_BAND[1]


def recolor_brand_blue(img: QImage, target_hue: float = GREEN_HUE) -> QImage:
    """A copy of ``img`` (``Format_ARGB32``) whose brand-blue pixels have hue ``target_hue`` (degrees).

    Each shifted pixel keeps its HSL saturation and lightness and its alpha; every other pixel is
    copied unchanged. The work is done on straight (non-premultiplied) ARGB, where an edge pixel
    half-covering transparency carries the full blue with alpha 128. In premultiplied data its
    channels are scaled by its alpha, so coverage would be mixed into the colour being judged and
    rewritten; a premultiplied input is converted first.
    A hue rotation at fixed S and L keeps each pixel's largest and smallest channel, so an
    antialiased blend of blue with white or grey becomes the same blend of green with white or
    grey: edges stay smooth and no blue halo is left behind.
    """
    out = img.convertToFormat(QImage.Format.Format_ARGB32)
    pixels = _pixels(out)
    colours, index = np.unique(pixels, return_inverse=True)
    shifted = [_shift_pixel(int(colour), target_hue % 360.0) for colour in colours]
    pixels[...] = np.asarray(shifted, dtype=np.uint32)[index].reshape(pixels.shape)
    return out


def dim(img: QImage) -> QImage:
    """A copy of ``img`` (``Format_ARGB32``) turned grey and faded to ``DIM_OPACITY`` of its alpha.

    Grey as well as faded: a faded blue or green would still read as "nothing here" or "memory
    here", and a dimmed icon must say neither. Grey is Rec. 601 luma, so the white eyes stay white
    and the figure stays recognisable.
    """
    out = img.convertToFormat(QImage.Format.Format_ARGB32)
    pixels = _pixels(out)
    alpha, red, green, blue = ((pixels >> shift) & 0xFF for shift in (24, 16, 8, 0))
    luma = 0.299 * red + 0.587 * green + 0.114 * blue
    luma = np.rint(255 - (255 - luma) * GREY_SPAN).astype(np.uint32)
    faded = np.rint(alpha * DIM_OPACITY).astype(np.uint32)
    pixels[...] = (faded << 24) | (luma << 16) | (luma << 8) | luma
    return out


def apply_state(artwork: QImage, state: str) -> QImage:
    """The artwork as it looks in ``state`` (one of ``STATES``), as ``Format_ARGB32``."""
    if state == "neutral":
        return artwork.convertToFormat(QImage.Format.Format_ARGB32)
    if state == "green":
        return add_badge(recolor_brand_blue(artwork), "dot")
    if state == "dimmed":
        return add_badge(dim(artwork), "slash")
    if state == "paused":
        return add_badge(dim(artwork), "pause")
    raise ValueError(f"unknown icon state {state!r}; expected one of {', '.join(STATES)}")


def add_badge(img: QImage, shape: str) -> QImage:
    """A copy of ``img`` with a state mark: ``dot`` (white, dark rim) in the lower right corner below
    the eye, ``pause`` (see ``pause_badge``) there, or a ``slash`` (dark, white rim) across the figure;
    at least 1 px of each colour at 16 px, so it reads on dark and light panels."""
    out = img.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    size = out.width()
    rim = max(1.0, size / 16)
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if shape == "slash":
        for colour, width in ((BADGE_RIM, rim * 4), (BADGE_INK, rim * 2)):
            painter.setPen(QPen(colour, width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawLine(QPointF(size * 0.14, size * 0.14), QPointF(size * 0.86, size * 0.86))
    elif shape == "pause":
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for rect, colour in pause_badge(size):
            painter.fillRect(rect, colour)
    else:
        radius = size * 0.2
        centre = QPointF(size - radius - rim * 0.5, size - radius - rim * 0.5)
        painter.setPen(QPen(BADGE_INK, rim))
        painter.setBrush(BADGE_RIM)
        painter.drawEllipse(centre, radius, radius)
    painter.end()
    return out.convertToFormat(QImage.Format.Format_ARGB32)


def pause_badge(size: int) -> list[tuple[QRect, QColor]]:
    """The pause mark in whole pixels (no antialiasing, which blurred 1.3-px bars into a grey blob at
    16 px): a white rim, a dark square, and two white bars with a dark gap between them, in the lower
    right corner. The rim reads on a dark panel, the dark square on a light one, and the bars on the
    square at 16:1, whatever the panel. At 16 px: an 8-px square, 1-px bars 2 px apart."""
    bar = max(1, size // 11)
    gap = max(2, bar)
    pad = max(1, size // 22)
    rim = max(1, size // 16)
    side = 2 * (rim + pad + bar) + gap
    x0 = y0 = size - side
    inner = QRect(x0 + rim, y0 + rim, side - 2 * rim, side - 2 * rim)
    top, height = inner.top() + pad, inner.height() - 2 * pad
    left = inner.left() + pad
    return [(QRect(x0, y0, side, side), BADGE_RIM), (inner, BADGE_INK),
            (QRect(left, top, bar, height), BADGE_RIM), (QRect(left + bar + gap, top, bar, height), BADGE_RIM)]


def artwork_image(size: int) -> QImage:
    """The rendered artwork at ``size`` px, scaled down from the nearest larger PNG if needed."""
    source = next((n for n in ARTWORK_SIZES if n >= size), ARTWORK_SIZES[-1])
    path = resource_path("icons", f"vodou-{source}.png")
    image = QImage(str(path))
    if image.isNull():
        raise FileNotFoundError(f"icon artwork missing or unreadable: {path}")
    if source != size:
        mode = Qt.TransformationMode.SmoothTransformation
        image = image.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio, mode)
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def state_image(state: str, size: int) -> QImage:
    """The icon for ``state`` at ``size`` px (a fresh copy; the rendering is cached)."""
    return _cached_state_image(state, size).copy()


def icon_for_state(state: str, size: int | None = None) -> QIcon:
    """A QIcon for ``state``: one pixmap at ``size`` px, or one per artwork size if ``size`` is None."""
    icon = QIcon()
    for n in ARTWORK_SIZES if size is None else (size,):
        icon.addPixmap(QPixmap.fromImage(state_image(state, n)))
    return icon


@functools.lru_cache(maxsize=64)
def _cached_state_image(state: str, size: int) -> QImage:
    if state not in STATES:
        raise ValueError(f"unknown icon state {state!r}; expected one of {', '.join(STATES)}")
    return apply_state(artwork_image(size), state)


def _pixels(img: QImage) -> np.ndarray:
    """A writable (height, width) uint32 view of an ARGB32 image's pixels, 0xAARRGGBB each."""
    rows = np.frombuffer(img.bits(), dtype=np.uint32).reshape(img.height(), img.bytesPerLine() // 4)
    return rows[:, : img.width()]


def _shift_pixel(argb: int, target_hue: float) -> int:
    alpha, red, green, blue = ((argb >> shift) & 0xFF for shift in (24, 16, 8, 0))
    if alpha == 0 or not is_brand_blue(red, green, blue):
        return argb
    _, lightness, saturation = colorsys.rgb_to_hls(red / 255, green / 255, blue / 255)
    channels = colorsys.hls_to_rgb(target_hue / 360.0, lightness, saturation)
    red, green, blue = (min(255, max(0, round(c * 255))) for c in channels)
    return (alpha << 24) | (red << 16) | (green << 8) | blue
