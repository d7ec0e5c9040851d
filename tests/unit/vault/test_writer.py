"""One writer thread, concurrent readers, change events, a second process on the same vault."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support import break_not_null, sha256_of
from vodou_desktop.errors import InvalidInput, VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, Change, FactFilter, Vault
from vodou_desktop.vault import query as q


def test_write_returns_result_and_emits_one_change(vault: Vault) -> None:
    changes: list[Change] = []
    vault.subscribe(changes.append)
    fact_id = remember(vault, "the boiler was serviced in March", Origin(kind="cli"))
    assert len(changes) == 1
    assert fact_id in changes[0].chunk_ids and "chunks" in changes[0].tables


def test_failed_job_rolls_back_everything(vault: Vault) -> None:
    with pytest.raises(InvalidInput):
        remember(vault, "   ", Origin(kind="cli"))  # source stamped, then the fact is refused
    assert vault.reader().execute("SELECT count(*) FROM memory_sources").fetchone()[0] == 0


def test_readers_run_while_writes_continue(vault: Vault) -> None:
    stop = threading.Event()
    seen: list[list[int]] = [[], [], []]

    def read_loop(mine: list[int]) -> None:
        while not stop.is_set():
            mine.append(vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))))

    readers = [threading.Thread(target=read_loop, args=(mine,)) for mine in seen]
    for t in readers:
        t.start()
    for i in range(60):
        remember(vault, f"fact number {i}", Origin(kind="cli"))
    stop.set()
    for t in readers:
        t.join()
    assert all(mine and mine == sorted(mine) for mine in seen)  # each reader saw a monotone count
    assert vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))) == 60


def test_close_drains_queued_writes(vault_path: Path) -> None:
    vault = Vault.open(vault_path)
    futures = [vault.submit(_add(f"queued {i}")) for i in range(50)]
    vault.close()
    assert all(f.done() and f.exception() is None for f in futures)
    with Vault.open(vault_path) as again:
        assert again.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))) == 50


def _add(text: str):  # type: ignore[no-untyped-def]
    from vodou_desktop.vault.facts import insert_fact
    from vodou_desktop.vault.sources import stamp_source

    def job(conn, change):  # type: ignore[no-untyped-def]
        return insert_fact(conn, change, text=text, source_id=stamp_source(conn, change, kind="cli",
                                                                          tier="first_party"))

    return job


def test_app_notices_a_second_process_writing(vault: Vault) -> None:
    changes: list[Change] = []
    vault.subscribe(changes.append)
    assert vault.poll_external() is False
    subprocess.run(
        [sys.executable, "-m", "vodou_desktop", "--vault", str(vault.path), "mem", "add", "from the CLI"],
        check=True, capture_output=True,
    )
    assert vault.poll_external() is True
    assert changes and changes[-1].external
    facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert [f.text for f in facts] == ["from the CLI"]
    assert vault.poll_external() is False


def test_a_damaged_file_swapped_in_while_suspended_is_refused_and_left_alone(tmp_path: Path) -> None:
    """The file found after ``suspended()`` may be another one (restored, converted): it is checked
    again before the next write."""
    path, damaged = tmp_path / "vault.sqlite", tmp_path / "damaged.sqlite"
    with Vault.open(damaged) as other:
        remember(other, "in the damaged file", Origin("cli"))
    break_not_null(damaged)
    with Vault.open(path) as vault:
        remember(vault, "in the first file", Origin("cli"))
        with vault.suspended():
            os.replace(damaged, path)
        digest = sha256_of(path)
        with pytest.raises(VaultUnavailable, match="is damaged"):
            remember(vault, "written after the swap", Origin("cli"))
    assert sha256_of(path) == digest
