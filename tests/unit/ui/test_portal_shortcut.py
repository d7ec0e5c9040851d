"""The quick-access shortcut through the XDG desktop portal (a Wayland session), against a scripted
portal on a private session bus: a real dbus-daemon, a real D-Bus connection on each side. The portal
itself (the desktop's) cannot run here; the script answers as the GlobalShortcuts specification says."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from vodou_desktop.shortcuts import parse_shortcut
from vodou_desktop.ui.global_shortcut import GlobalShortcut
from vodou_desktop.ui.portal_shortcut import (
    PORTAL_NAME,
    PORTAL_PATH,
    REQUEST_INTERFACE,
    SHORTCUT_ID,
    SHORTCUTS_INTERFACE,
    PortalGrab,
    portal_trigger,
)

pytestmark = pytest.mark.skipif(shutil.which("dbus-daemon") is None, reason="dbus-daemon is not installed")


@pytest.fixture
def bus() -> Iterator[str]:
    """A private session bus: its address."""
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert daemon.stdout is not None
        yield daemon.stdout.readline().strip()
    finally:
        daemon.terminate()
        daemon.wait(10)
        if daemon.stdout is not None:
            daemon.stdout.close()


@dataclass
class ScriptedPortal:
    """GlobalShortcuts as a desktop's portal answers it: ``bind_code`` 0 (given), 1 (the person
    cancelled) or 2 (failed); ``trigger`` what the desktop says it gave."""

    address: str
    bind_code: int = 0
    trigger: str = "Ctrl+Shift+Space"
    asked: list[tuple[str, Any]] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import Proxy, open_dbus_connection

        self.conn = open_dbus_connection(bus=self.address)
        Proxy(message_bus, self.conn).RequestName(PORTAL_NAME)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        from jeepney import MessageType

        while not self._stop.is_set():
            try:
                msg = self.conn.receive(timeout=0.2)
            except TimeoutError:
                continue
            if msg.header.message_type == MessageType.method_call:
                self._answer(msg)

    def _answer(self, msg: Any) -> None:
        from jeepney import DBusAddress, new_method_return, new_signal

        member = msg.header.fields.get(3)  # 3: the member
        sender = str(msg.header.fields.get(7)).lstrip(":").replace(".", "_")  # 7: the sender
        if member == "Close":
            self.closed.append(str(msg.header.fields.get(1)))  # 1: the path
            self.conn.send(new_method_return(msg))
            return
        options = msg.body[-1]
        token = options["handle_token"][1]
        request = f"{PORTAL_PATH}/request/{sender}/{token}"
        self.asked.append((member, msg.body))
        self.conn.send(new_method_return(msg, "o", (request,)))
        emitter = DBusAddress(request, interface=REQUEST_INTERFACE)
        if member == "CreateSession":
            session = f"{PORTAL_PATH}/session/{sender}/{options['session_handle_token'][1]}"
            self.sessions.append(session)
            body: tuple[Any, ...] = (0, {"session_handle": ("s", session)})
        else:
            given = [(SHORTCUT_ID, {"description": ("s", "x"), "trigger_description": ("s", self.trigger)})]
            body = (self.bind_code, {"shortcuts": ("a(sa{sv})", given)} if self.bind_code == 0 else {})
        self.conn.send(new_signal(emitter, "Response", "ua{sv}", body))

    def press(self, shortcut_id: str = SHORTCUT_ID, session: str | None = None) -> None:
        from jeepney import DBusAddress, new_signal

        emitter = DBusAddress(PORTAL_PATH, interface=SHORTCUTS_INTERFACE)
        self.conn.send(new_signal(emitter, "Activated", "osta{sv}",
                                  (session or self.sessions[-1], shortcut_id, 0, {})))

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)
        self.conn.close()


@pytest.fixture
def portal(bus: str) -> Iterator[ScriptedPortal]:
    scripted = ScriptedPortal(bus)
    yield scripted
    scripted.close()


def _spoof_press(address: str, session: str) -> None:
    from jeepney import DBusAddress, new_signal
    from jeepney.io.blocking import open_dbus_connection

    other = open_dbus_connection(bus=address)
    try:
        emitter = DBusAddress(PORTAL_PATH, interface=SHORTCUTS_INTERFACE)
        other.send(new_signal(emitter, "Activated", "osta{sv}", (session, SHORTCUT_ID, 0, {})))
    finally:
        other.close()


class Seen:
    def __init__(self) -> None:
        self.states: list[tuple[str, str, str]] = []
        self.presses = threading.Semaphore(0)

    def state(self, state: str, words: str, trigger: str) -> None:
        self.states.append((state, words, trigger))

    def press(self) -> None:
        self.presses.release()


def test_the_portal_gives_the_shortcut_and_tells_each_press(portal: ScriptedPortal, bus: str) -> None:
    seen = Seen()
    grab = PortalGrab(parse_shortcut("Ctrl+Shift+Space"), on_press=seen.press, on_state=seen.state, bus=bus)
    grab.start()
    try:
        assert grab.ready.wait(10)
        assert seen.states[0][0] == "active" and seen.states[0][2] == "Ctrl+Shift+Space", seen.states
        bind = next(body for member, body in portal.asked if member == "BindShortcuts")
        assert bind[0] == portal.sessions[-1]
        (shortcut_id, props), = bind[1]
        assert shortcut_id == SHORTCUT_ID and props["preferred_trigger"][1] == "CTRL+SHIFT+space"
        portal.press("another-apps-shortcut")  # another shortcut, or another session: not ours
        portal.press(session=f"{PORTAL_PATH}/session/someone/else")
        _spoof_press(bus, portal.sessions[-1])  # ours, but sent by another program on the bus
        portal.press()
        assert seen.presses.acquire(timeout=10)
        assert not seen.presses.acquire(timeout=1.0)  # exactly one press was ours
    finally:
        grab.stop()
    assert portal.closed == [portal.sessions[-1]]  # the session is closed when the shortcut is let go


@pytest.mark.parametrize(("code", "said"), [(1, "cancelled or refused"), (2, "could not set")])
def test_a_desktop_that_says_no_is_said_in_words(portal: ScriptedPortal, bus: str, code: int, said: str) -> None:
    portal.bind_code = code
    seen = Seen()
    grab = PortalGrab(parse_shortcut("Ctrl+Alt+M"), on_press=seen.press, on_state=seen.state, bus=bus)
    grab.start()
    try:
        assert grab.ready.wait(10)
    finally:
        grab.stop()
    assert seen.states[0][0] == "unavailable" and said in seen.states[0][1], seen.states


def test_a_bus_without_the_portal_is_said_in_words(bus: str) -> None:
    seen = Seen()
    grab = PortalGrab(parse_shortcut("Ctrl+Shift+Space"), on_press=seen.press, on_state=seen.state, bus=bus)
    grab.start()
    assert grab.ready.wait(10)
    grab.stop()
    assert seen.states == [("unavailable", "This desktop's portal has no global shortcuts.", "")]


def test_no_session_bus_is_said_in_words() -> None:
    seen = Seen()
    grab = PortalGrab(parse_shortcut("Ctrl+Shift+Space"), on_press=seen.press, on_state=seen.state,
                      bus="unix:path=/nonexistent/vodou-test-bus")
    grab.start()
    assert grab.ready.wait(10)
    assert seen.states[0][0] == "unavailable" and "session bus" in seen.states[0][1]


def test_the_shortcut_in_the_portals_spelling() -> None:
    assert portal_trigger(parse_shortcut("Ctrl+Shift+Space")) == "CTRL+SHIFT+space"
    assert portal_trigger(parse_shortcut("Meta+Alt+K")) == "ALT+LOGO+k"


def test_a_wayland_session_asks_the_portal_and_the_app_opens_quick_access(
        qtbot: Any, portal: ScriptedPortal, bus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")  # the platform here is offscreen, not xcb
    shortcut = GlobalShortcut()
    shortcut.portal_bus = bus
    states: list[str] = []
    shortcut.state_changed.connect(lambda s: states.append(s.state))
    with qtbot.waitSignal(shortcut.state_changed, timeout=10_000, check_params_cb=lambda s: s.state == "active"):
        assert shortcut.start("Ctrl+Shift+Space").state == "asking"
    try:
        assert "Ctrl+Shift+Space opens quick access from any app" in shortcut.state.words
        with qtbot.waitSignal(shortcut.activated, timeout=10_000):
            portal.press()
    finally:
        shortcut.stop()
    assert states[:2] == ["asking", "active"]
