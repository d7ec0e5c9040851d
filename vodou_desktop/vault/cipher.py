"""Encryption at rest (DATA-3): which key opens a vault file, and applying it to a connection.

The vault is an SQLite3 Multiple Ciphers database (``apsw-sqlite3mc``, default cipher ChaCha20-
Poly1305). A plain SQLite file starts with the 16 bytes ``SQLite format 3\\0``; an encrypted one
does not, so ``is_encrypted`` needs no key. The key must be given before the first statement on
every connection (``open_connection`` does it). Candidates, in order: ``VODOU_PASSPHRASE``, then
the installation's key from ``VaultKeyStore``. Each candidate is tried on a read-only probe
connection, so a wrong key never writes a byte; the key that worked is remembered for this process.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw

from vodou_desktop.errors import VaultUnavailable

PLAIN_HEADER = b"SQLite format 3\x00"
CIPHER = "chacha20"  # ChaCha20-Poly1305, sqlite3mc's default, named so a changed default cannot bite
PASSPHRASE_KDF_ITER = 64007  # sqlite3mc's default for chacha20
GENERATED_KEY = re.compile(r"vodou-key-1:[0-9a-f]{64}")
PASSPHRASE_ENV = "VODOU_PASSPHRASE"

_known: dict[str, str] = {}  # resolved path -> key that opened it in this process
_known_lock = threading.Lock()
Prompt = Callable[[Path], str | None]
_prompt: Prompt | None = None


def set_prompt(prompt: Prompt | None) -> None:
    """Let the CLI ask for a passphrase on the terminal when no stored key opens a vault."""
    global _prompt
    _prompt = prompt


def is_encrypted(path: Path) -> bool:
    """True when ``path`` holds data but not a plain SQLite header (encrypted, or not a database)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(PLAIN_HEADER))
    except FileNotFoundError:
        return False
    return len(head) > 0 and head != PLAIN_HEADER


def quote(key: str) -> str:
    return "'" + key.replace("'", "''") + "'"


def apply_key(conn: apsw.Connection, key: str) -> None:
    """Before any other statement on ``conn``: the cipher and the key to read and write its pages.

    A passphrase goes through the cipher's key derivation (PBKDF2, 64,007 rounds: ~0.2 s per open,
    which is its point). A generated key is already 256 random bits, so stretching it adds no
    strength, only that delay on every connection: it is used with a single round.
    """
    conn.execute(f"PRAGMA cipher={quote(CIPHER)}")
    if is_generated_key(key):
        conn.execute("PRAGMA kdf_iter=1")
    conn.execute(f"PRAGMA key={quote(key)}")


def rekey(conn: apsw.Connection, new_key: str | None) -> None:
    """Re-encrypt the open (rollback-journal) database under ``new_key``; ``None`` decrypts it."""
    if new_key:
        conn.execute(f"PRAGMA cipher={quote(CIPHER)}")
        conn.execute(f"PRAGMA kdf_iter={1 if is_generated_key(new_key) else PASSPHRASE_KDF_ITER}")
    conn.execute(f"PRAGMA rekey={quote(new_key or '')}")


def is_generated_key(key: str) -> bool:
    return bool(GENERATED_KEY.fullmatch(key))


def candidate_keys() -> Iterator[str]:
    """``VODOU_PASSPHRASE``, then the stored key (the keyring is only asked when it comes to that)."""
    from vodou_desktop.vault.keystore import VaultKeyStore  # keyring only when a vault is encrypted

    passphrase = os.environ.get(PASSPHRASE_ENV)
    if passphrase:
        yield passphrase
    stored = VaultKeyStore().get()
    if stored:
        yield stored


def key_opens(path: Path, key: str) -> bool:
    probe = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        apply_key(probe, key)
        probe.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        return True
    except (apsw.NotADBError, apsw.CorruptError):
        return False
    finally:
        probe.close()


def key_for(path: Path) -> str | None:
    """The key of ``path``, or ``None`` for a plain file. ``VaultUnavailable`` when none opens it."""
    if not is_encrypted(path):
        return None
    name = str(path.resolve())
    with _known_lock:
        known = _known.get(name)
    if known is not None:  # a wrong one still fails on the first read, as "damaged"
        return known
    tried = 0
    for key in candidate_keys():
        tried += 1
        if key_opens(path, key):
            remember_key(path, key)
            return key
    if _prompt is not None:
        typed = _prompt(path)
        if typed and key_opens(path, typed):
            remember_key(path, typed)
            return typed
    if not tried and _prompt is None:
        raise VaultUnavailable(
            f"The vault {path} is damaged or is not a Vodou vault, or it is encrypted and no key for it is here "
            f"(set {PASSPHRASE_ENV}, or put the key back with `vodou key restore` and your recovery key). "
            "It was left untouched.")
    raise VaultUnavailable(
        f"The vault {path} is encrypted and the key available here does not open it (wrong {PASSPHRASE_ENV} "
        "or keyring key: `vodou key restore` puts it back from your recovery key), or it is damaged. "
        "It was left untouched.")


def remember_key(path: Path, key: str) -> None:
    with _known_lock:
        _known[str(path.resolve())] = key


def forget_keys() -> None:
    with _known_lock:
        _known.clear()
