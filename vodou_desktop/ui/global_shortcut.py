"""The quick-access shortcut from any app (UI-6): a key grab on X11, said plainly where there is none.

On X11 the key is grabbed on the root window with python-xlib, on a connection of its own in a
worker thread (the GUI thread never waits on the X server): once for each NumLock / CapsLock /
ScrollLock state, since X matches modifiers exactly. A key another program holds is refused by the
server (BadAccess), and Settings says so in words.

Where no program may grab a key (a Wayland session), the XDG desktop portal's GlobalShortcuts asks
the desktop for the key (``portal_shortcut``): the desktop confirms it with the person and tells each
press. Where there is no such portal either, the desktop's own keyboard settings can run ``vodou
quick``, which shows the running app's quick box through its single-instance socket; the Settings
page says so, with the command to bind.
"""

from __future__ import annotations

import logging
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from vodou_desktop.errors import InvalidInput
from vodou_desktop.shortcuts import Shortcut, parse_shortcut
from vodou_desktop.ui.portal_shortcut import PortalGrab

log = logging.getLogger(__name__)
BIND_COMMAND = "vodou quick"
STOP_WAIT_S = 2.0


@dataclass(frozen=True)
class ShortcutState:
    """Where the shortcut stands, for Settings and the tray menu: ``active`` (it works from any app),
    ``asking`` (the desktop's portal was asked and has not answered yet), ``taken`` (another program
    holds it), ``unavailable`` (this desktop allows no grab), ``off``."""

    state: str
    text: str  # the shortcut as shown, "" when off
    words: str  # one or two sentences for a person

    @property
    def active(self) -> bool:
        return self.state == "active"


def wayland_session() -> bool:
    return bool(os.environ.get("WAYLAND_DISPLAY")) or os.environ.get("XDG_SESSION_TYPE", "").lower() == "wayland"


def unavailable_words(why: str) -> str:
    return (f"{why} Bind the command “{BIND_COMMAND}” to a key in your desktop's keyboard settings: it opens "
            "quick access in the running Vodou (or starts it).")


class GlobalShortcut(QObject):
    """The one quick-access shortcut of the app: ``start(text)`` grabs it (again), ``activated`` fires
    on each press from any app, ``state_changed`` tells Settings where it stands."""

    activated = Signal()
    state_changed = Signal(object)  # ShortcutState

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = ShortcutState("off", "", "No shortcut is set for quick access.")
        self._grab: X11Grab | None = None
        self._portal: PortalGrab | None = None
        self.portal_bus = "SESSION"  # the bus the portal is asked on (a test gives its own)

    def start(self, text: str) -> ShortcutState:
        """Take ``text`` ("" = none) as the shortcut, letting go of the one held before."""
        self.stop()
        if not text.strip():
            return self._say(ShortcutState("off", "", unavailable_words("No shortcut is set for quick access.")))
        try:
            shortcut = parse_shortcut(text)
        except InvalidInput as exc:
            return self._say(ShortcutState("unavailable", text, str(exc)))
        platform = QGuiApplication.platformName()
        if platform != "xcb" and wayland_session():
            return self.start_portal(shortcut)
        if platform != "xcb":
            why = "There is no X11 display here to take a key on."
            return self._say(ShortcutState("unavailable", shortcut.text, unavailable_words(why)))
        self._grab = X11Grab(shortcut, on_press=self.activated.emit, on_state=self._say)
        self._grab.start()
        return self.state

    def start_portal(self, shortcut: Shortcut) -> ShortcutState:
        """Ask the desktop's portal for ``shortcut`` (a Wayland session): it answers in a while (the
        desktop may ask the person first); until then Settings says it is being asked."""
        self.stop()

        def told(state: str, words: str, trigger: str) -> None:
            if state == "active":
                self._say(ShortcutState("active", trigger or shortcut.text, words))
            else:
                self._say(ShortcutState("unavailable", shortcut.text, unavailable_words(words)))

        self._portal = PortalGrab(shortcut, on_press=self.activated.emit, on_state=told, bus=self.portal_bus)
        self._say(ShortcutState("asking", shortcut.text, f"Asking your desktop for {shortcut.text}…"))
        self._portal.start()
        return self.state

    def stop(self) -> None:
        if self._grab is not None:
            self._grab.stop()
            self._grab = None
        if self._portal is not None:
            self._portal.stop()
            self._portal = None

    def bring_to_front(self, window_id: int) -> None:
        """Ask the window manager to give ``window_id`` the focus, with the key press's own time: a
        window shown after a key another app's window had would otherwise open behind it, or open
        without the focus (focus-stealing prevention compares that time with the user's last action)."""
        if self._grab is not None:
            self._grab.activate(window_id)

    def _say(self, state: ShortcutState) -> ShortcutState:
        self.state = state
        self.state_changed.emit(state)
        if state.state in ("taken", "unavailable"):
            log.warning("quick-access shortcut: %s", state.words)
        elif state.active:
            log.info("quick-access shortcut %s grabbed", state.text)
        return state


class X11Grab:
    """The key grab on X11, in a thread of its own with its own display connection."""

    def __init__(self, shortcut: Shortcut, *, on_press: Callable[[], Any],
                 on_state: Callable[[ShortcutState], Any], display_name: str | None = None) -> None:
        self.shortcut = shortcut
        self._on_press, self._on_state = on_press, on_state
        self._display_name = display_name
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="vodou-shortcut", daemon=True)
        self.ready = threading.Event()  # the grab was tried (its state told)
        self._pressed_at = 0  # the X server time of the last press (X.CurrentTime before any)
        self._activate: int | None = None  # a window to bring to the front, with that time

    def activate(self, window_id: int) -> None:
        self._activate = window_id
        if self._thread.is_alive():
            os.write(self._wake_w, b"a")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Let the key go and end the thread (it wakes at once: a byte on its pipe)."""
        if self._thread.is_alive():
            os.write(self._wake_w, b"x")
            self._thread.join(STOP_WAIT_S)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass  # closed already (a second stop)

    def _run(self) -> None:
        from Xlib import XK, X, error
        from Xlib.display import Display

        text = self.shortcut.text
        try:
            display = Display(self._display_name)
        except (error.DisplayError, error.ConnectionClosedError, OSError) as exc:
            said = unavailable_words(f"The X11 display did not answer ({exc}).")
            self._told(ShortcutState("unavailable", text, said))
            return
        try:
            root = display.screen().root
            keycode = display.keysym_to_keycode(XK.string_to_keysym(self.shortcut.keysym))
            if not keycode:
                self._told(ShortcutState("unavailable", text, f"This keyboard has no {text.split('+')[-1]} key; "
                                                               "choose another shortcut in Settings."))
                return
            masks = modifier_masks(display)
            wanted = sum(masks[m] for m in self.shortcut.modifiers)
            variants = lock_variants(masks)
            caught = error.CatchError(error.BadAccess)
            for extra in variants:
                root.grab_key(keycode, wanted | extra, True, X.GrabModeAsync, X.GrabModeAsync, onerror=caught)
            display.sync()
            if caught.get_error() is not None:
                for extra in variants:
                    root.ungrab_key(keycode, wanted | extra)
                display.sync()
                self._told(ShortcutState("taken", text, f"{text} is already taken by another program, so it cannot "
                                                        "open quick access. Choose another shortcut here, or free "
                                                        "it in that program."))
                return
            self._told(ShortcutState("active", text, f"{text} opens quick access from any app."))
            self._listen(display, keycode, wanted, sum(variants_of(masks)))
            for extra in variants:
                root.ungrab_key(keycode, wanted | extra)
            display.sync()
        except (error.ConnectionClosedError, OSError) as exc:
            log.warning("the X11 connection of the quick-access shortcut closed: %s", exc)
        finally:
            display.close()

    def _listen(self, display: Any, keycode: int, wanted: int, ignored: int) -> None:
        from Xlib import X

        relevant = X.ShiftMask | X.ControlMask | X.Mod1Mask | X.Mod2Mask | X.Mod3Mask | X.Mod4Mask | X.Mod5Mask
        while True:
            while display.pending_events():
                event = display.next_event()
                if event.type == X.KeyPress and event.detail == keycode \
                        and event.state & relevant & ~ignored == wanted:
                    self._pressed_at = event.time
                    self._on_press()
            readable, _, _ = select.select([display.fileno(), self._wake_r], [], [])
            if self._wake_r in readable:
                if os.read(self._wake_r, 1) != b"a":
                    return
                self._send_activate(display)

    def _send_activate(self, display: Any) -> None:
        """_NET_ACTIVE_WINDOW from an application (source 1) with the press's time (EWMH)."""
        from Xlib import X
        from Xlib.protocol import event as xevent

        window_id, self._activate = self._activate, None
        if window_id is None:
            return
        root = display.screen().root
        message = xevent.ClientMessage(window=display.create_resource_object("window", window_id),
                                       client_type=display.intern_atom("_NET_ACTIVE_WINDOW"),
                                       data=(32, [1, self._pressed_at, 0, 0, 0]))
        root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        display.flush()

    def _told(self, state: ShortcutState) -> None:
        self._on_state(state)
        self.ready.set()


def modifier_masks(display: Any) -> dict[str, int]:
    """Each modifier's X mask on this display: Alt, Meta (Super), NumLock and ScrollLock sit on
    whichever Mod1..Mod5 the keyboard map gives them (usually Mod1, Mod4, Mod2 and none)."""
    from Xlib import XK, X

    masks = {"Ctrl": X.ControlMask, "Shift": X.ShiftMask, "CapsLock": X.LockMask}
    mods = (X.ShiftMask, X.LockMask, X.ControlMask, X.Mod1Mask, X.Mod2Mask, X.Mod3Mask, X.Mod4Mask, X.Mod5Mask)
    by_code = {code: mods[i] for i, codes in enumerate(display.get_modifier_mapping()) for code in codes if code}
    for name, keysyms, default in (("Alt", ("Alt_L", "Alt_R"), X.Mod1Mask),
                                   ("Meta", ("Super_L", "Super_R"), X.Mod4Mask),
                                   ("NumLock", ("Num_Lock",), X.Mod2Mask), ("ScrollLock", ("Scroll_Lock",), 0)):
        found = [by_code.get(display.keysym_to_keycode(XK.string_to_keysym(k))) for k in keysyms]
        masks[name] = next((m for m in found if m), default)
    return masks


def variants_of(masks: dict[str, int]) -> list[int]:
    """The lock modifiers a press may carry without meaning anything: CapsLock, NumLock, ScrollLock."""
    return sorted({masks[k] for k in ("CapsLock", "NumLock", "ScrollLock") if masks.get(k)})


def lock_variants(masks: dict[str, int]) -> list[int]:
    """Every combination of the lock modifiers (X matches a grab's modifiers exactly)."""
    combos = [0]
    for mask in variants_of(masks):
        combos += [c | mask for c in combos]
    return combos
