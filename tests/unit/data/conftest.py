"""The vault key never reaches a real keyring from tests: keyring's "fail" backend (its file
fallback in the temp VODOU_HOME), here and in subprocesses."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backends.fail import Keyring as FailKeyring

from vodou_desktop.vault import cipher


@pytest.fixture(autouse=True)
def no_real_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv(cipher.PASSPHRASE_ENV, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(FailKeyring())
    cipher.forget_keys()
    yield
    cipher.forget_keys()
    keyring.set_keyring(previous)
