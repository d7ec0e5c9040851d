"""Pairing tokens: one random 256-bit token per paired extension id.

Secrets live in the OS keyring. Where the active keyring backend is keyring's "fail" backend (no
Secret Service, no D-Bus session) they live in a 0600 file inside a 0700 folder of the config
directory instead, and ``storage`` says so plainly for the log and the Settings UI. A small index
file (extension ids and pairing times, no secrets) lists the pairings, because a keyring cannot
enumerate; its modification stamp lets a running server notice a revocation made by the CLI.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import keyring.errors

from vodou_desktop import paths
from vodou_desktop.errors import InvalidInput, KnownError, NotFound
from vodou_desktop.vault.clock import now_iso

log = logging.getLogger(__name__)

KEYRING_SERVICE = "vodou-desktop-bridge"
EXTENSION_ID = re.compile(r"^[a-p]{32}$")
INDEX_FILE = "pairings.json"
SECRETS_FILE = "tokens.json"


@dataclass(frozen=True)
class Pairing:
    extension_id: str
    created_at: str
    browser: str = ""  # the browser's name as the extension said it ("Chromium"), for people

    def as_json(self) -> dict[str, str]:
        return {"extensionId": self.extension_id, "created_at": self.created_at, "browser": self.browser}


def browser_name(value: object) -> str:
    """A short, printable browser name from the extension (a label only: never trusted for anything)."""
    if not isinstance(value, str):
        return ""
    cleaned = "".join(c for c in value if c.isprintable()).strip()
    return cleaned[:40]


def check_extension_id(extension_id: object) -> str:
    if not isinstance(extension_id, str) or not EXTENSION_ID.match(extension_id):
        raise InvalidInput("extension id must be 32 letters a-p (a Chromium extension id)")
    return extension_id


def _write_private(path: Path, data: Any) -> None:
    """Write JSON atomically into a file created 0600 (never briefly world-readable)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise KnownError(f"Cannot read the bridge pairing file {path.name}: {exc}") from exc
    return data if isinstance(data, dict) else {}


class TokenStore:
    """Create, check and revoke pairing tokens. Thread-safe; shared by server, CLI and UI."""

    def __init__(self, folder: Path | None = None, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self.folder = folder or paths.config_dir() / "bridge"
        self._keyring = backend or keyring.get_keyring()
        self.uses_file = isinstance(self._keyring, keyring.backends.fail.Keyring)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._tokens: dict[str, str] = {}
        self._index: dict[str, dict[str, str]] = {}
        if self.uses_file:
            log.warning("No OS keyring is available: bridge pairing tokens are kept in a private file "
                        "(mode 0600, folder 0700) in the Vodou config folder.")

    @property
    def storage(self) -> str:
        """A sentence for the Settings UI: where tokens are kept."""
        if self.uses_file:
            return "a private file (0600) in the Vodou config folder: no OS keyring is available"
        return f"the OS keyring ({type(self._keyring).__name__})"

    # -- public API ------------------------------------------------------------------------
    def pair(self, extension_id: str, browser: str | None = None) -> str:
        """A fresh token bound to ``extension_id`` (replacing any previous one); ``browser`` names it."""
        check_extension_id(extension_id)
        token = secrets.token_hex(32)
        with self._lock:
            self._refresh()
            self._put_secret(extension_id, token)
            self._index[extension_id] = {"created_at": now_iso(), "browser": browser_name(browser)}
            self._save_index()
            self._tokens[extension_id] = token
        log.info("bridge: paired extension %s", extension_id)
        return token

    def revoke(self, extension_id: str) -> None:
        with self._lock:
            self._refresh()
            if extension_id not in self._index:
                raise NotFound(f"no pairing for extension {extension_id}")
            self._index.pop(extension_id)
            self._tokens.pop(extension_id, None)
            self._save_index()
            self._delete_secret(extension_id)
        log.info("bridge: revoked pairing of extension %s", extension_id)

    def pairings(self) -> list[Pairing]:
        with self._lock:
            self._refresh()
            return [Pairing(k, v.get("created_at", ""), v.get("browser") or "") for k, v in sorted(self._index.items())]

    def is_paired(self, extension_id: str) -> bool:
        with self._lock:
            self._refresh()
            return extension_id in self._index

    def match(self, token: str) -> str | None:
        """The extension id whose token equals ``token`` (constant time against every token)."""
        with self._lock:
            self._refresh()
            candidates = list(self._tokens.items())
        given = token.encode("utf-8", "surrogateescape")
        found = None
        for extension_id, secret in candidates:
            if hmac.compare_digest(given, secret.encode()):
                found = extension_id
        return found

    # -- storage ---------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Reload when the index file changed (another process paired or revoked)."""
        index_path = self.folder / INDEX_FILE
        try:
            st = index_path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (0, 0)
        if stamp == self._stamp:
            return
        self._index = {k: v for k, v in _read_json(index_path).items() if EXTENSION_ID.match(k)}
        self._tokens = {}
        for extension_id in self._index:
            secret = self._get_secret(extension_id)
            if secret:
                self._tokens[extension_id] = secret
        self._stamp = stamp

    def _ensure_folder(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)

    def _save_index(self) -> None:
        self._ensure_folder()
        _write_private(self.folder / INDEX_FILE, self._index)
        st = (self.folder / INDEX_FILE).stat()
        self._stamp = (st.st_mtime_ns, st.st_size)

    def _get_secret(self, extension_id: str) -> str | None:
        if self.uses_file:
            value = _read_json(self.folder / SECRETS_FILE).get(extension_id)
            return value if isinstance(value, str) else None
        try:
            return self._keyring.get_password(KEYRING_SERVICE, extension_id)
        except keyring.errors.KeyringError as exc:
            raise KnownError(f"The OS keyring could not be read: {exc}") from exc

    def _put_secret(self, extension_id: str, token: str) -> None:
        if self.uses_file:
            self._ensure_folder()
            data = _read_json(self.folder / SECRETS_FILE)
            data[extension_id] = token
            _write_private(self.folder / SECRETS_FILE, data)
            return
        try:
            self._keyring.set_password(KEYRING_SERVICE, extension_id, token)
        except keyring.errors.KeyringError as exc:
            raise KnownError(f"The OS keyring refused to store the pairing token: {exc}") from exc

    def _delete_secret(self, extension_id: str) -> None:
        if self.uses_file:
            data = _read_json(self.folder / SECRETS_FILE)
            if data.pop(extension_id, None) is not None:
                _write_private(self.folder / SECRETS_FILE, data)
            return
        try:
            self._keyring.delete_password(KEYRING_SERVICE, extension_id)
        except keyring.errors.PasswordDeleteError:
            log.info("bridge: keyring had no token for %s", extension_id)
        except keyring.errors.KeyringError as exc:
            raise KnownError(f"The OS keyring could not delete the pairing token: {exc}") from exc
