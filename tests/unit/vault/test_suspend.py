"""``Vault.suspended()``: a running process lets go of its vault file (restore, encryption) and
reopens whatever file is then under its name; reads and writes asked for meanwhile wait, then run."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from vodou_desktop.data.backup import exclusive_hold
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, Change, FactFilter, Vault
from vodou_desktop.vault import query as q


def texts(vault: Vault) -> list[str]:
    return sorted(f.text for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS))))


def test_suspended_vault_lets_go_of_the_file_and_reopens_what_is_there(tmp_path: Path) -> None:
    path, other = tmp_path / "vault.sqlite", tmp_path / "other.sqlite"
    with Vault.open(other) as second:
        remember(second, "only in the other file", Origin("cli"))
    with Vault.open(path) as vault:
        remember(vault, "only in the first file", Origin("cli"))
        assert texts(vault) == ["only in the first file"]  # this thread has a reader connection open
        changes: list[Change] = []
        vault.subscribe(changes.append)
        seen: list[list[str]] = []
        with vault.suspended():
            with exclusive_hold(path):  # nobody has the file open now, this process included
                pass
            reader = threading.Thread(target=lambda: seen.append(texts(vault)))
            reader.start()
            written = vault.submit(lambda c, ch: None)  # a queued write
            time.sleep(0.3)
            assert reader.is_alive() and not written.done()  # both wait while the vault is let go of
            os.replace(other, path)
        reader.join(10)
        written.result(10)
        assert seen == [["only in the other file"]]
        assert texts(vault) == ["only in the other file"]  # this thread's old connection was replaced too
        remember(vault, "written after reopening", Origin("cli"))
        assert texts(vault) == ["only in the other file", "written after reopening"]
        assert any(change.external for change in changes)  # listeners reload everything


def test_suspend_gives_up_on_a_read_that_does_not_end_and_changes_nothing(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "vault.sqlite") as vault:
        remember(vault, "still here", Origin("cli"))
        inside, release = threading.Event(), threading.Event()

        def long_read() -> None:
            vault.read(lambda c: (inside.set(), release.wait(10)))

        reader = threading.Thread(target=long_read)
        reader.start()
        assert inside.wait(5)
        with pytest.raises(VaultUnavailable, match="busy with a long read"), vault.suspended(timeout=0.3):
            pass
        release.set()
        reader.join(10)
        assert texts(vault) == ["still here"]
        remember(vault, "and writes go on", Origin("cli"))
        assert texts(vault) == ["and writes go on", "still here"]
