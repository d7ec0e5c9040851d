"""Key combinations for the quick-access shortcut, as a person writes them ("Ctrl+Shift+Space").

Qt-free, so the settings file is checked without a display. ``parse_shortcut`` gives the modifiers
and the key as X11 names its keysym (``space``, ``k``, ``F5``), which the global grab turns into a
keycode on the display it runs on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vodou_desktop.errors import InvalidInput

DEFAULT_QUICK_SHORTCUT = "Ctrl+Shift+Space"
MODIFIERS = {"ctrl": "Ctrl", "control": "Ctrl", "shift": "Shift", "alt": "Alt", "meta": "Meta", "super": "Meta",
             "win": "Meta"}
# Keys a shortcut may end with, by the name a person (or Qt's portable text) gives them -> X keysym.
NAMED_KEYS = {"space": "space", "return": "Return", "enter": "Return", "ins": "Insert", "insert": "Insert",
              "del": "Delete", "delete": "Delete", "home": "Home", "end": "End", "pgup": "Prior",
              "pageup": "Prior", "pgdown": "Next", "pagedown": "Next", "left": "Left", "right": "Right",
              "up": "Up", "down": "Down", "pause": "Pause", "print": "Print", "backspace": "BackSpace"}
PUNCTUATION = {"/": "slash", ".": "period", ",": "comma", ";": "semicolon", "'": "apostrophe",
               "[": "bracketleft", "]": "bracketright", "\\": "backslash", "-": "minus", "=": "equal",
               "`": "grave"}


@dataclass(frozen=True)
class Shortcut:
    modifiers: frozenset[str]  # of "Ctrl", "Shift", "Alt", "Meta"
    keysym: str  # the key's X11 keysym name
    text: str  # as shown: "Ctrl+Shift+Space"


def parse_shortcut(text: str) -> Shortcut:
    """"Ctrl+Shift+Space" -> its modifiers and key; InvalidInput says what is wrong with another."""
    parts = [p.strip() for p in re.split(r"\+(?!$)", text.strip())] if text.strip() else []
    if not parts or any(not p for p in parts):
        raise InvalidInput(f"a shortcut is modifiers and a key, such as {DEFAULT_QUICK_SHORTCUT}; not {text!r}")
    *mods, key = parts
    modifiers = set()
    for mod in mods:
        name = MODIFIERS.get(mod.casefold())
        if name is None:
            raise InvalidInput(f"{mod!r} is not a modifier key (Ctrl, Shift, Alt or Meta) in the shortcut {text!r}")
        modifiers.add(name)
    keysym, shown = _key(key, text)
    function_key = re.fullmatch(r"F([1-9]|[12][0-9]|3[0-5])", keysym) is not None
    if not modifiers & {"Ctrl", "Alt", "Meta"} and not function_key:
        raise InvalidInput(f"the shortcut {text!r} needs Ctrl, Alt or Meta, or it would take a key you type with")
    order = [m for m in ("Ctrl", "Alt", "Shift", "Meta") if m in modifiers]
    return Shortcut(frozenset(modifiers), keysym, "+".join([*order, shown]))


def _key(key: str, text: str) -> tuple[str, str]:
    if len(key) == 1 and key.isascii() and key.isalnum():
        return key.lower(), key.upper()
    if key in PUNCTUATION:
        return PUNCTUATION[key], key
    if re.fullmatch(r"[Ff]([1-9]|[12][0-9]|3[0-5])", key):
        return key.upper(), key.upper()
    named = NAMED_KEYS.get(key.casefold())
    if named is None:
        raise InvalidInput(f"{key!r} is not a key Vodou can use in the shortcut {text!r} (a letter, a digit, "
                           "F1–F35, Space or an arrow, for example)")
    return named, key[:1].upper() + key[1:].lower() if key.casefold() not in ("pgup", "pgdown") else key


def validate_shortcut(text: str) -> str:
    """The setting as stored: "" (quick access by shortcut off) or a shortcut in its shown form."""
    return parse_shortcut(text).text if text.strip() else ""
