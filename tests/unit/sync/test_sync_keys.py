"""Join keys and sealing: a sync key round-trips and catches typos; the recovery key of an encrypted vault
is a join key too; a sealed file opens only under its own kind, device and number."""

from __future__ import annotations

import pytest

from vodou_desktop.data.recovery import to_recovery
from vodou_desktop.errors import InvalidInput
from vodou_desktop.sync import sealing
from vodou_desktop.sync.engine import resolve_join_key
from vodou_desktop.vault.keystore import new_key


def test_sync_key_round_trip_and_typo() -> None:
    secret = sealing.new_secret()
    shown = sealing.format_sync_key(secret)
    assert shown.startswith("VSK1-")
    assert resolve_join_key(shown.lower().replace("-", " ")) == secret
    typo = shown[:-1] + ("A" if shown[-1] != "A" else "B")
    with pytest.raises(InvalidInput, match="mistyped"):
        resolve_join_key(typo)


def test_the_recovery_key_of_a_generated_vault_key_joins() -> None:
    key = new_key()
    assert resolve_join_key(to_recovery(key)) == bytes.fromhex(key.removeprefix("vodou-key-1:"))
    with pytest.raises(InvalidInput):
        resolve_join_key("not a key at all")


@pytest.mark.parametrize("kind, device, seq", [("s", "aaaaaaaaaaaaaaaa", 1), ("c", "bbbbbbbbbbbbbbbb", 1),
                                               ("c", "aaaaaaaaaaaaaaaa", 2)])
def test_a_sealed_file_opens_only_in_its_own_place(kind: str, device: str, seq: int) -> None:
    keys = sealing.FolderKeys.from_secret(bytes(32))
    data = sealing.seal(keys, "c", "aaaaaaaaaaaaaaaa", 1, {"records": [1]})
    assert sealing.unseal(keys, "c", "aaaaaaaaaaaaaaaa", 1, data) == {"records": [1]}
    assert sealing.seal(keys, "c", "aaaaaaaaaaaaaaaa", 1, {"records": [1]}) == data  # same content, same bytes
    with pytest.raises(sealing.Refused, match="fails authentication"):
        sealing.unseal(keys, kind, device, seq, data)


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1000, (1 << 20) + 3])
def test_the_tag_checked_before_decrypting_agrees_with_the_aead(size: int) -> None:
    """``unseal`` checks the tag in place first (so junk costs no second copy): for authentic bytes and every
    kind of alteration it must say what ChaCha20-Poly1305 itself says."""
    import os

    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    keys = sealing.FolderKeys.from_secret(bytes(range(32)))
    nonce, aad, plain = os.urandom(12), b"VSF1|c|aaaaaaaaaaaaaaaa|7", os.urandom(size)
    sealed = ChaCha20Poly1305(keys.aead).encrypt(nonce, plain, aad)
    variants = [sealed, sealed[:-1], sealed + b"x", bytes([sealed[0] ^ 1]) + sealed[1:],
                sealed[:-1] + bytes([sealed[-1] ^ 0x80])]
    for body in variants:
        try:
            ChaCha20Poly1305(keys.aead).decrypt(nonce, body, aad)
            expected = True
        except InvalidTag:
            expected = False
        assert sealing._authentic(keys.aead, nonce, aad, memoryview(body)) is expected
        assert sealing._authentic(keys.aead, nonce, aad + b"x", memoryview(body)) is False
