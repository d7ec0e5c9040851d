"""The recovery key: the vault key in a form a person can see, write down and type back (DATA-3).

The vault key lives in the OS keyring (or a 0600 file where there is none); losing that entry
would lose the vault and every backup made with it. The recovery key is the same 256 bits, shown
as base32 (letters A–Z and digits 2–7; case, spaces and dashes do not matter, and 0/1/8 typed for
O/I/B are read as meant) with a version and a checksum, in groups of four::

    version (1 byte) + key (32 bytes) + checksum (2 bytes: SHA-256 of the first 33) = 35 bytes
    = 56 base32 characters = 14 groups of four

so a mistyped or cut key is told apart from a wrong one before any vault is touched.
``restore_key`` checks the key against the vault (or a backup) with a read-only probe and only
then puts it back where the vault key is kept. A vault encrypted with a passphrase of the
person's own has no stored key: the passphrase is its recovery.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from vodou_desktop.errors import Conflict, InvalidInput, KnownError
from vodou_desktop.vault import cipher, schema_objects
from vodou_desktop.vault.atomic import write_text
from vodou_desktop.vault.keystore import VaultKeyStore

VERSION = 1
GROUP = 4
LENGTH = 56  # base32 characters
RECOVERY_ENV = "VODOU_RECOVERY_KEY"
_KEY_PREFIX = "vodou-key-1:"
_TYPO = str.maketrans({"0": "O", "1": "I", "8": "B"})
_SHAPE = re.compile(r"(?:[A-Z2-7]{4}-){13}[A-Z2-7]{4}")
FILE_HEAD = ("Vodou vault recovery key\n"
             "Keep this file somewhere safe and private (a password manager, a printout in a drawer).\n"
             "Anyone with it and a copy of your vault can read your memories.\n"
             "If the vault key is ever lost from this computer's keyring, or to open a backup on another\n"
             "computer, run `vodou key restore --from THIS-FILE`.\n\n")


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(body).digest()[:2]


def to_recovery(key: str) -> str:
    """The recovery form of a generated vault key (``vodou-key-1:<64 hex>``)."""
    if not cipher.is_generated_key(key):
        raise KnownError("This vault is encrypted with your own passphrase, which Vodou never stores: "
                         "the passphrase is its recovery; there is no recovery key to show.")
    body = bytes([VERSION]) + bytes.fromhex(key.removeprefix(_KEY_PREFIX))
    text = base64.b32encode(body + _checksum(body)).decode("ascii")
    return "-".join(text[i:i + GROUP] for i in range(0, len(text), GROUP))


def from_recovery(typed: str) -> str:
    """The vault key back from a typed recovery key; ``InvalidInput`` (one line) when mistyped."""
    text = re.sub(r"[\s\-_.]", "", typed).upper().translate(_TYPO)
    if not text:
        raise InvalidInput("No recovery key was given; nothing was changed.")
    wrong = sorted({c for c in text if not ("A" <= c <= "Z" or "2" <= c <= "7")})
    if wrong:
        raise InvalidInput(f"The recovery key has characters a recovery key never has ({''.join(wrong)!r}): "
                           "it uses only letters and the digits 2 to 7; nothing was changed.")
    if len(text) != LENGTH:
        raise InvalidInput(f"The recovery key has {len(text)} letters and digits where it should have {LENGTH} "
                           f"({LENGTH // GROUP} groups of {GROUP}): a group is missing or doubled; nothing was "
                           "changed.")
    try:
        raw = base64.b32decode(text)
    except binascii.Error as exc:  # pragma: no cover - the alphabet and length are checked above
        raise InvalidInput(f"The recovery key cannot be read: {exc}; nothing was changed.") from exc
    body, check = raw[:-2], raw[-2:]
    if body[0] != VERSION or _checksum(body) != check:
        raise InvalidInput("The recovery key is mistyped: its checksum does not match. Compare it group by group "
                           "with the one you saved; nothing was changed.")
    return _KEY_PREFIX + body[1:].hex()


def read_recovery_file(path: Path) -> str:
    """The recovery key in a file written by ``save_recovery_file`` (or any file holding one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"Cannot read the recovery key file {path}: {exc.strerror or exc}") from exc
    for line in text.splitlines():
        candidate = line.strip().upper()
        if _SHAPE.fullmatch(candidate):
            return candidate
    return text  # a file holding only the key, typed another way: ``from_recovery`` judges it


def save_recovery_file(key: str, path: Path) -> Path:
    """Write the recovery key of ``key`` into the new file ``path`` (0600; never overwrites)."""
    shown = to_recovery(key)
    if not path.parent.is_dir():
        raise InvalidInput(f"The folder does not exist: {path.parent}")
    if path.exists():
        raise InvalidInput(f"{path} already exists; choose another name (a recovery key file is never "
                           "overwritten)")
    write_text(path, FILE_HEAD + shown + "\n")  # 0600, whole or not at all (vault.atomic)
    return path


def key_to_show(vault: Path, store: VaultKeyStore | None = None) -> str:
    """The vault key whose recovery form to show: the one that opens ``vault`` when it is
    encrypted, else the one ``vodou encrypt`` (or Settings) will use, made now if needed."""
    store = store or VaultKeyStore()
    if cipher.is_encrypted(vault):
        key = cipher.key_for(vault)  # one clear line when no key here opens it
        assert key is not None
        return key
    return store.get_or_create()


@dataclass(frozen=True)
class KeyRestored:
    checked: Path | None  # the vault or backup the key was proved to open (None: nothing to check)
    storage: str
    already_there: bool

    def sentence(self) -> str:
        proof = f"it opens {self.checked}" if self.checked else "no encrypted vault was here to check it against"
        if self.already_there:
            return f"The recovery key matches the vault key already kept in {self.storage} ({proof})."
        return f"The vault key was put back into {self.storage} ({proof})."


def restore_key(typed: str, check: Path | None, store: VaultKeyStore | None = None, *,
                replace: bool = False) -> KeyRestored:
    """Parse ``typed``, prove it opens ``check`` (the vault or a backup; skipped when that file is
    missing or plain), then keep it as the vault key. A different stored key is never replaced
    unless ``replace`` (it may be the only key of another vault)."""
    key = from_recovery(typed)
    store = store or VaultKeyStore()
    target = check if check is not None and check.exists() and cipher.is_encrypted(check) else None
    if target is not None and not cipher.key_opens(target, key):
        raise InvalidInput(f"This recovery key is well formed but does not open {target}: it belongs to another "
                           "vault or installation; nothing was changed.")
    if check is not None and check.is_file():  # the file the key is for must be one Vodou would open
        schema_objects.refuse_foreign_file(check, key if target is not None else None, what="file",
                                           outcome="the key was not kept and nothing was changed")
    stored = store.get()
    if stored == key:
        return KeyRestored(target, store.storage, already_there=True)
    if stored is not None and not replace:
        raise Conflict(f"A different vault key is already kept in {store.storage}. Save its recovery key first "
                       "(`vodou key save PATH`), then run `vodou key restore --replace`; nothing was changed.")
    store.put(key)
    cipher.forget_keys()
    if target is not None:
        cipher.remember_key(target, key)
    return KeyRestored(target, store.storage, already_there=False)
