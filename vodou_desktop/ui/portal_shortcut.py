"""The quick-access shortcut on a desktop where no app may grab a key (Wayland): the XDG desktop
portal's GlobalShortcuts interface, over the session D-Bus.

In a worker thread with a D-Bus connection of its own (jeepney, pure Python; the GUI thread never
waits on the bus): ``CreateSession``, then ``BindShortcuts`` with one shortcut, ``quick-access``, and
the person's choice as its preferred trigger. The desktop asks the person to confirm (or to pick
another key) and answers with the trigger it gave; from then on each ``Activated`` signal of the
session is a press. No portal, no GlobalShortcuts in it, or a refusal: said in words, and
``vodou quick`` remains the command to bind in the desktop's keyboard settings.

Every call answers through a ``Request`` object whose path the caller can know in advance (its
unique bus name and a token of its own): the ``Response`` signal is subscribed to before the call,
so an answer that comes at once is never missed.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

from vodou_desktop.shortcuts import Shortcut

log = logging.getLogger(__name__)
PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS_INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"
SESSION_INTERFACE = "org.freedesktop.portal.Session"
SHORTCUT_ID = "quick-access"
DESCRIPTION = "Open Vodou quick access (search or add a memory)"
ANSWER_WAIT_S = 120.0  # the desktop may show the person a dialog before it answers
CALL_WAIT_S = 5.0
POLL_S = 0.25  # how often the listening thread looks at its stop flag


class PortalUnavailable(Exception):
    """No portal, or no GlobalShortcuts in it, or the person (or the desktop) said no: in words."""


def portal_trigger(shortcut: Shortcut) -> str:
    """The portal's spelling of a shortcut (the XDG shortcuts specification): CTRL+SHIFT+space."""
    names = {"Ctrl": "CTRL", "Shift": "SHIFT", "Alt": "ALT", "Meta": "LOGO"}
    order = ("Ctrl", "Alt", "Shift", "Meta")
    return "+".join([names[m] for m in order if m in shortcut.modifiers] + [shortcut.keysym])


class PortalGrab:
    """One GlobalShortcuts session for the quick-access shortcut, in a thread of its own.

    ``on_state(state, words, trigger)`` is told once the desktop answered (``active``) or could not
    (``unavailable``); ``on_press()`` on every press. ``bus`` names the bus (the session bus unless
    a test gives its own address)."""

    def __init__(self, shortcut: Shortcut, *, on_press: Callable[[], Any],
                 on_state: Callable[[str, str, str], Any], bus: str = "SESSION") -> None:
        self.shortcut = shortcut
        self._on_press, self._on_state = on_press, on_state
        self._bus = bus
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vodou-portal-shortcut", daemon=True)
        self.ready = threading.Event()  # the desktop answered (or could not)
        self._portal_owner: str | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(CALL_WAIT_S)

    def _run(self) -> None:
        from jeepney.io.blocking import open_dbus_connection

        try:
            conn = open_dbus_connection(bus=self._bus)
        except (OSError, KeyError, ValueError) as exc:  # no session bus (KeyError: no address set)
            self._told("unavailable", f"There is no session bus to reach the desktop's portal ({exc}).", "")
            return
        session = None
        try:
            session = self._create_session(conn)
            trigger = self._bind(conn, session)
            self._listen(conn, session, trigger)
        except PortalUnavailable as exc:
            self._told("unavailable", str(exc), "")
        except (OSError, TimeoutError) as exc:
            log.warning("the desktop portal's connection closed: %s", exc)
            self._told("unavailable", f"The desktop's portal stopped answering ({exc}).", "")
        finally:
            if session is not None:
                self._close_session(conn, session)
            conn.close()

    # -- the calls -------------------------------------------------------------------------------
    def _call(self, conn: Any, method: str, signature: str, body: tuple[Any, ...],
              token: str) -> dict[str, Any]:
        """Call ``method`` and wait for its Request's Response: the results, or PortalUnavailable."""
        from jeepney import DBusAddress, MatchRule, MessageType, new_method_call
        from jeepney.bus_messages import message_bus

        sender = conn.unique_name.lstrip(":").replace(".", "_")
        request = f"{PORTAL_PATH}/request/{sender}/{token}"
        rule = MatchRule(type="signal", interface=REQUEST_INTERFACE, member="Response", path=request)
        conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=CALL_WAIT_S)
        portal = DBusAddress(PORTAL_PATH, bus_name=PORTAL_NAME, interface=SHORTCUTS_INTERFACE)
        with conn.filter(rule) as answers:
            reply = conn.send_and_get_reply(new_method_call(portal, method, signature, body), timeout=CALL_WAIT_S)
            if reply.header.message_type == MessageType.error:
                error = str(reply.header.fields.get(4, "an error"))  # 4: the error's name
                if error.endswith(("UnknownMethod", "UnknownInterface", "ServiceUnknown", "UnknownObject")):
                    raise PortalUnavailable("This desktop's portal has no global shortcuts.")
                raise PortalUnavailable(f"The desktop's portal refused the shortcut ({error}).")
            self._portal_owner = _sender(reply)  # the portal's unique name: the sender of every answer
            response = conn.recv_until_filtered(answers, timeout=ANSWER_WAIT_S)
            while _sender(response) != self._portal_owner:
                response = conn.recv_until_filtered(answers, timeout=ANSWER_WAIT_S)
        code, results = response.body
        if code != 0:
            raise PortalUnavailable("The desktop did not give Vodou the shortcut (it was cancelled or refused)."
                                    if code == 1 else "The desktop's portal could not set the shortcut.")
        return {k: v[1] for k, v in dict(results).items()}

    def _create_session(self, conn: Any) -> str:
        token = f"vodou{secrets.token_hex(6)}"
        results = self._call(conn, "CreateSession", "a{sv}",
                             ({"handle_token": ("s", token), "session_handle_token": ("s", f"vodou{token[5:]}s")},),
                             token)
        session = results.get("session_handle")
        if not isinstance(session, str) or not session:
            raise PortalUnavailable("The desktop's portal opened no session for the shortcut.")
        return session

    def _bind(self, conn: Any, session: str) -> str:
        token = f"vodou{secrets.token_hex(6)}"
        wanted = [(SHORTCUT_ID, {"description": ("s", DESCRIPTION),
                                 "preferred_trigger": ("s", portal_trigger(self.shortcut))})]
        results = self._call(conn, "BindShortcuts", "oa(sa{sv})sa{sv}",
                             (session, wanted, "", {"handle_token": ("s", token)}), token)
        given = {sid: {k: v[1] for k, v in dict(props).items()} for sid, props in results.get("shortcuts", [])}
        if SHORTCUT_ID not in given:
            raise PortalUnavailable("The desktop did not give Vodou the shortcut.")
        return str(given[SHORTCUT_ID].get("trigger_description") or self.shortcut.text)

    def _listen(self, conn: Any, session: str, trigger: str) -> None:
        """Tell that the shortcut works once its presses are subscribed to (a press right after is
        never lost), then tell each press of it until stopped."""
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus

        rule = MatchRule(type="signal", interface=SHORTCUTS_INTERFACE, member="Activated", path=PORTAL_PATH)
        conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=CALL_WAIT_S)
        with conn.filter(rule) as presses:
            self._told("active", f"{trigger} opens quick access from any app (your desktop's own shortcut "
                                 "settings can change it).", trigger)
            while not self._stop.is_set():
                try:
                    signal = conn.recv_until_filtered(presses, timeout=POLL_S)
                except TimeoutError:
                    continue
                handle, shortcut_id = signal.body[0], signal.body[1]
                # only the portal's own signal counts (another program on the bus could send one too)
                if handle == session and shortcut_id == SHORTCUT_ID and _sender(signal) == self._portal_owner:
                    self._on_press()

    def _close_session(self, conn: Any, session: str) -> None:
        from jeepney import DBusAddress, new_method_call

        try:
            conn.send_and_get_reply(new_method_call(
                DBusAddress(session, bus_name=PORTAL_NAME, interface=SESSION_INTERFACE), "Close"), timeout=1.0)
        except (OSError, TimeoutError) as exc:
            log.info("closing the portal session: %s", exc)

    def _told(self, state: str, words: str, trigger: str) -> None:
        self._on_state(state, words, trigger)
        self.ready.set()


def _sender(message: Any) -> str | None:
    """The unique bus name a message came from (header field 7)."""
    sender = message.header.fields.get(7)
    return None if sender is None else str(sender)
