"""Where the vault key is kept: the OS keyring, or a private file when there is no keyring.

The key is random (256 bits, as hex) and made once per installation; every vault this Vodou
encrypts, and every backup of it, uses it. Where keyring's active backend is its "fail" backend
(no Secret Service, no D-Bus session), the key lives in a 0600 file inside a 0700 folder of the
config directory instead, the same arrangement as the bridge's pairing tokens, and ``storage``
says so plainly. A person may instead use a passphrase of their own (``VODOU_PASSPHRASE``), which
is never stored.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from pathlib import Path

import keyring
import keyring.backends.fail
import keyring.errors

from vodou_desktop import paths
from vodou_desktop.errors import KnownError

log = logging.getLogger(__name__)

KEYRING_SERVICE = "vodou-desktop-vault"
KEYRING_USER = "vault-key"
KEY_FILE = "vault-key.json"


def new_key() -> str:
    """256 random bits, marked as generated (``cipher.is_generated_key``: no key stretching)."""
    return f"vodou-key-1:{secrets.token_hex(32)}"


class VaultKeyStore:
    def __init__(self, folder: Path | None = None, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self.folder = folder or paths.config_dir() / "keys"
        self._keyring = backend or keyring.get_keyring()
        self.uses_file = isinstance(self._keyring, keyring.backends.fail.Keyring)

    @property
    def backend_name(self) -> str:
        """The keyring backend in use (SecretService, KWallet, macOS Keychain…)."""
        return type(self._keyring).__name__

    @property
    def storage(self) -> str:
        """A sentence for the CLI and Settings: where the key is kept."""
        if self.uses_file:
            return ("a private file (0600) in the Vodou config folder, because no OS keyring is available: "
                    "anyone who can read your files can read the key")
        return f"the OS keyring ({type(self._keyring).__name__})"

    def get(self) -> str | None:
        if self.uses_file:
            value = self._read_file().get(KEYRING_USER)
            return value if isinstance(value, str) else None
        try:
            return self._keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
        except keyring.errors.KeyringError as exc:
            raise KnownError(f"The OS keyring could not be read for the vault key: {exc}") from exc

    def get_or_create(self) -> str:
        key = self.get()
        if key is None:
            key = new_key()
            self.put(key)
        return key

    def put(self, key: str) -> None:
        if self.uses_file:
            log.warning("No OS keyring is available: the vault key is kept in a private file (0600) "
                        "in the Vodou config folder.")
            self._write_file({KEYRING_USER: key})
            return
        try:
            self._keyring.set_password(KEYRING_SERVICE, KEYRING_USER, key)
        except keyring.errors.KeyringError as exc:
            raise KnownError(f"The OS keyring refused to store the vault key: {exc}") from exc

    def _read_file(self) -> dict[str, object]:
        try:
            data = json.loads((self.folder / KEY_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise KnownError(f"Cannot read the vault key file {KEY_FILE}: {exc}") from exc
        return data if isinstance(data, dict) else {}

    def _write_file(self, data: dict[str, str]) -> None:
        """Atomically, into a file created 0600 inside a 0700 folder (never briefly world-readable)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)
        path = self.folder / KEY_FILE
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
