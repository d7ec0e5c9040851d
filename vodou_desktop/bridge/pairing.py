"""One-time pairing codes: the app shows a short code, the extension exchanges it for a token.

A code is 8 characters from an alphabet without look-alikes, valid for 3 minutes, usable once,
void after 5 wrong tries, and bound to the extension id that asked for it. The current code is
raised as a ``pairing_code`` event (the tray shows it, ``vodou serve`` prints it) and written to a
0600 file in the runtime folder so that ``vodou pair`` can print it for a headless server.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.bridge import events
from vodou_desktop.bridge.tokens import TokenStore, browser_name, check_extension_id
from vodou_desktop.errors import KnownError

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL_S = 180
MAX_ATTEMPTS = 5
MAX_STARTS_PER_MINUTE = 10
CODE_FILE = "pairing-code.json"


class PairingRefused(KnownError):
    """A wrong, expired or used code (the bridge answers 401)."""

    status = 401


class TooManyRequests(KnownError):
    status = 429


@dataclass
class PendingCode:
    code: str
    extension_id: str
    expires_at: float
    attempts: int = 0


def code_file() -> Path:
    return paths.runtime_dir() / CODE_FILE


def read_current_code() -> dict[str, object] | None:
    """The code a running server is showing now (for ``vodou pair``), or None."""
    try:
        data = json.loads(code_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    if not isinstance(data, dict) or float(data.get("expires_at_epoch", 0)) < time.time():
        return None
    return data


class PairingCodes:
    def __init__(self, tokens: TokenStore, hub: events.EventHub,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.tokens = tokens
        self.hub = hub
        self.clock = clock
        self._pending: dict[str, PendingCode] = {}
        self._starts: list[float] = []

    def start(self, extension_id: str) -> PendingCode:
        check_extension_id(extension_id)
        now = self.clock()
        self._starts = [t for t in self._starts if now - t < 60]
        if len(self._starts) >= MAX_STARTS_PER_MINUTE:
            raise TooManyRequests("too many pairing attempts; wait a minute")
        self._starts.append(now)
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        pending = PendingCode(code, extension_id, now + CODE_TTL_S)
        self._pending[extension_id] = pending
        self._publish(pending)
        return pending

    def complete(self, extension_id: str, code: object, browser: str | None = None) -> str:
        """Exchange a code for a token bound to ``extension_id`` (``browser``: its name, for people)."""
        check_extension_id(extension_id)
        pending = self._pending.get(extension_id)
        if pending is None or pending.expires_at < self.clock():
            self._drop(extension_id)
            raise PairingRefused("no pairing code is waiting for this extension (or it expired): start again")
        given = code.strip().upper().replace("-", "").replace(" ", "") if isinstance(code, str) else ""
        if not hmac.compare_digest(given.encode(), pending.code.encode()):
            pending.attempts += 1
            if pending.attempts >= MAX_ATTEMPTS:
                self._drop(extension_id)
                raise PairingRefused("wrong pairing code; too many tries, start pairing again")
            raise PairingRefused("wrong pairing code")
        self._drop(extension_id)
        token = self.tokens.pair(extension_id, browser)
        self.hub.emit(events.PAIRED, {"extensionId": extension_id, "browser": browser_name(browser)})
        return token

    def clear(self) -> None:
        for extension_id in list(self._pending):
            self._drop(extension_id)

    def _publish(self, pending: PendingCode) -> None:
        ttl = max(0.0, pending.expires_at - self.clock())
        payload: dict[str, object] = {"code": pending.code, "extensionId": pending.extension_id,
                                      "expiresIn": int(ttl)}
        folder = paths.runtime_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / (CODE_FILE + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({**payload, "expires_at_epoch": time.time() + ttl}, fh)
        os.replace(tmp, code_file())
        self.hub.emit(events.PAIRING_CODE, payload)

    def _drop(self, extension_id: str) -> None:
        pending = self._pending.pop(extension_id, None)
        current = read_current_code()
        if pending and current and current.get("code") == pending.code:
            code_file().unlink(missing_ok=True)
