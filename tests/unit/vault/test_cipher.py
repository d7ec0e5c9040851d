"""Keys and key stretching: a passphrase goes through the cipher's key derivation (many rounds), so
the same passphrase with a single round is another key and opens nothing."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from vodou_desktop.vault import cipher

PASSPHRASE = "correct horse battery staple"


def _one_round_opens(path: Path, key: str) -> bool:
    conn = apsw.Connection(str(path))
    try:
        conn.execute(f"PRAGMA cipher={cipher.quote(cipher.CIPHER)}")
        conn.execute("PRAGMA kdf_iter=1")
        conn.execute(f"PRAGMA key={cipher.quote(key)}")
        conn.execute("SELECT count(*) FROM t").fetchall()
        return True
    except apsw.NotADBError:
        return False
    finally:
        conn.close()


@pytest.mark.parametrize("how", ["created", "rekeyed"])
def test_a_passphrase_vault_does_not_open_with_one_kdf_round(tmp_path: Path, how: str) -> None:
    path = tmp_path / f"{how}.sqlite"
    conn = apsw.Connection(str(path))
    if how == "created":
        cipher.apply_key(conn, PASSPHRASE)
        conn.execute("CREATE TABLE t(x)")
    else:
        conn.execute("CREATE TABLE t(x)")
        cipher.rekey(conn, PASSPHRASE)
    conn.close()
    assert cipher.is_encrypted(path) and cipher.key_opens(path, PASSPHRASE)
    assert not _one_round_opens(path, PASSPHRASE)
