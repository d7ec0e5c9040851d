"""Sealing change files (SYNC-2): ChaCha20-Poly1305 from ``cryptography`` under HKDF-derived keys.

The folder key comes from one 32-byte secret: the vault key behind the recovery key when the vault is
encrypted with a generated key, else a random sync key made by ``vodou sync setup``. A file's kind,
device id and sequence number are the AEAD's associated data, so a file renamed to another device or
number fails to open, exactly as a truncated, altered or foreign one does.

The nonce is synthetic: an HMAC of the associated data and the plaintext under a second derived key.
Sealing the same content twice gives the same bytes (a change file re-written after a crash is the
same file, not a "replay"), and two different contents never share a nonce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import zlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.poly1305 import Poly1305

from vodou_desktop.errors import InvalidInput

MAGIC = b"VSF1"
NONCE = 12
SALT = b"vodou-sync"
SYNC_KEY_PREFIX = "VSK1"


class Refused(Exception):
    """A file that is not one of ours: the reason is one line for the person."""


def _derive(secret: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=SALT, info=info).derive(secret)


@dataclass(frozen=True)
class FolderKeys:
    aead: bytes
    nonce: bytes
    host: bytes  # the keyed hash of an erased host, the same on every computer of the vault

    @classmethod
    def from_secret(cls, secret: bytes) -> FolderKeys:
        if len(secret) != 32:
            raise InvalidInput("a sync key is 32 bytes")
        return cls(_derive(secret, b"vodou sync folder v1"), _derive(secret, b"vodou sync nonce v1"),
                   _derive(secret, b"vodou sync erased host v1"))


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def _aad(kind: str, device: str, seq: int) -> bytes:
    return MAGIC + f"|{kind}|{device}|{seq}".encode("ascii")


def seal(keys: FolderKeys, kind: str, device: str, seq: int, payload: dict[str, Any]) -> bytes:
    plain = zlib.compress(json.dumps(payload, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode("utf-8"), 6)
    aad = _aad(kind, device, seq)
    nonce = hmac.new(keys.nonce, aad + plain, hashlib.sha256).digest()[:NONCE]
    return MAGIC + nonce + ChaCha20Poly1305(keys.aead).encrypt(nonce, plain, aad)


def unseal(keys: FolderKeys, kind: str, device: str, seq: int, data: bytes, *,
           max_plain: int = 256 << 20) -> dict[str, Any]:
    """The payload, or ``Refused`` with the reason. The ciphertext is read in place (no copy of it), the
    decompressed text is bounded by ``max_plain`` (a small file cannot expand into gigabytes), and the
    compressed plaintext is let go before the JSON is parsed."""
    if len(data) < len(MAGIC) + NONCE + 16 or not data.startswith(MAGIC):
        raise Refused("is not a Vodou sync file (too short or another format)")
    view = memoryview(data)
    nonce = bytes(view[len(MAGIC):len(MAGIC) + NONCE])
    aad = _aad(kind, device, seq)
    try:
        if not _authentic(keys.aead, nonce, aad, view[len(MAGIC) + NONCE:]):
            raise InvalidTag
        plain = ChaCha20Poly1305(keys.aead).decrypt(nonce, view[len(MAGIC) + NONCE:], aad)
    except InvalidTag:
        raise Refused("fails authentication (sealed under another key, altered, cut short or renamed)") from None
    finally:
        view.release()
    inflate = zlib.decompressobj()
    try:
        text = inflate.decompress(plain, max_plain + 1)
    except zlib.error as exc:  # authenticated but unreadable: a bug of the writer
        raise Refused(f"is authentic but cannot be read ({exc})") from exc
    del plain
    if len(text) > max_plain:
        raise Refused(f"is authentic but expands to more than {max_plain >> 20} MiB; it was not read further")
    if not inflate.eof:
        raise Refused("is authentic but cannot be read (its compressed text ends too early)")
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise Refused(f"is authentic but cannot be read ({exc})") from exc
    if not isinstance(payload, dict):
        raise Refused("is authentic but holds no changes")
    return payload


def _authentic(key: bytes, nonce: bytes, aad: bytes, sealed: memoryview) -> bool:
    """The AEAD's tag checked before anything is decrypted (RFC 8439, section 2.8: Poly1305 under the first
    ChaCha20 block, over the associated data and the ciphertext, each padded, then both lengths), reading
    the ciphertext in place: a file that is not ours (junk of any size up to the limit) costs no second copy
    of it. Authentic files are then opened by the library's AEAD, which checks the tag again."""
    if len(sealed) < 16:
        return False
    body, tag = sealed[:-16], bytes(sealed[-16:])
    one_time = Cipher(algorithms.ChaCha20(key, b"\0\0\0\0" + nonce), mode=None).encryptor().update(bytes(32))
    mac = Poly1305(one_time)
    mac.update(aad + bytes(-len(aad) % 16))
    for start in range(0, len(body), 1 << 20):
        mac.update(body[start:start + (1 << 20)])
    mac.update(bytes(-len(body) % 16) + len(aad).to_bytes(8, "little") + len(body).to_bytes(8, "little"))
    try:
        mac.verify(tag)
    except InvalidSignature:
        return False
    return True


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check(body: bytes) -> bytes:
    return hashlib.sha256(b"vodou sync key" + body).digest()[:3]


def format_sync_key(secret: bytes) -> str:
    """The join key of a vault without a recovery key: ``VSK1-`` and base32 groups with a checksum."""
    text = base64.b32encode(secret + _check(secret)).decode("ascii").rstrip("=")
    return SYNC_KEY_PREFIX + "-" + "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def parse_sync_key(typed: str) -> bytes | None:
    """The secret of a ``VSK1-`` key; ``None`` when ``typed`` is not one; ``InvalidInput`` when mistyped."""
    text = "".join(typed.split()).upper().replace("-", "")
    if not text.startswith(SYNC_KEY_PREFIX):
        return None
    body = text[len(SYNC_KEY_PREFIX):]
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except ValueError:
        raise InvalidInput("The sync key cannot be read: it uses only letters and the digits 2 to 7.") from None
    if len(raw) != 35 or _check(raw[:32]) != raw[32:]:
        raise InvalidInput("The sync key is mistyped: its checksum does not match. Compare it group by group.")
    return raw[:32]
