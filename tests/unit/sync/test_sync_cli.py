"""`vodou sync …` end to end in this process: setup prints the key once or writes a 0600 file, join takes it
from a file, the environment or nowhere (a clear error), status in words and JSON, leave."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.support import run_cli


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")


def test_setup_join_now_status_leave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = ["--vault", str(tmp_path / "a.sqlite")], ["--vault", str(tmp_path / "b.sqlite")]
    folder_a, folder_b = tmp_path / "sync-a", tmp_path / "sync-b"
    folder_a.mkdir()
    folder_b.mkdir()
    assert run_cli(*a, "mem", "add", "the heron nests by the lake").code == 0
    key_file = tmp_path / "join-key.txt"
    done = run_cli(*a, "sync", "setup", str(folder_a), "--name", "laptop", "--key-file", str(key_file))
    assert done.code == 0, done.err
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "VSK1-" in key_file.read_text() and "VSK1-" not in done.out

    shutil.copytree(folder_a, folder_b, dirs_exist_ok=True)  # the engine's part
    monkeypatch.setenv("VODOU_SYNC_KEY", "VSK1-AAAA-BBBB")
    wrong = run_cli(*b, "sync", "join", str(folder_b), "--name", "desktop")
    assert wrong.code == 2 and wrong.err.count("\n") == 1 and "sync key" in wrong.err
    monkeypatch.delenv("VODOU_SYNC_KEY")
    joined = run_cli(*b, "sync", "join", str(folder_b), "--name", "desktop", "--key-file", str(key_file))
    assert joined.code == 0, joined.err
    assert "joined" in joined.out and "laptop" in joined.out
    found = run_cli(*b, "mem", "search", "heron", "--json")
    assert "the heron nests by the lake" in found.out

    assert run_cli(*b, "mem", "add", "otters visit at dawn").code == 0
    assert run_cli(*b, "sync", "now").code == 0
    shutil.copytree(folder_b, folder_a, dirs_exist_ok=True)
    assert run_cli(*a, "sync", "now", "--json").code == 0
    assert "otters visit at dawn" in run_cli(*a, "mem", "search", "otters", "--json").out
    status = json.loads(run_cli(*a, "sync", "status", "--json").out)
    assert [d["name"] for d in status["devices"]] == ["desktop"]
    assert status["devices"][0]["last_applied"] >= 1 and status["problems"] == []
    words = run_cli(*a, "sync", "status").out
    assert "desktop: applied through change" in words

    left = run_cli(*b, "sync", "leave")
    assert left.code == 0 and "left" in left.out
    assert json.loads(run_cli(*b, "sync", "status", "--json").out) == {"set_up": False}
    assert run_cli(*b, "sync", "now").code == 2


def test_setup_prints_the_key_once_and_refuses_a_second_setup(tmp_path: Path) -> None:
    a = ["--vault", str(tmp_path / "a.sqlite")]
    folder = tmp_path / "sync"
    folder.mkdir()
    done = run_cli(*a, "sync", "setup", str(folder), "--name", "laptop")
    assert done.code == 0 and "VSK1-" in done.out and "shown once" in done.err
    again = run_cli(*a, "sync", "setup", str(folder), "--name", "laptop")
    assert again.code == 2 and "already syncs" in again.err
    other = run_cli("--vault", str(tmp_path / "b.sqlite"), "sync", "setup", str(folder), "--name", "x")
    assert other.code == 2 and "join" in other.err
    missing = run_cli("--vault", str(tmp_path / "c.sqlite"), "sync", "setup", str(tmp_path / "nope"))
    assert missing.code == 2 and "does not exist" in missing.err


def test_join_without_a_key_or_with_another_vaults_key_is_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "sync"
    folder.mkdir()
    assert run_cli("--vault", str(tmp_path / "a.sqlite"), "sync", "setup", str(folder), "--name", "a").code == 0
    b = ["--vault", str(tmp_path / "b.sqlite")]
    monkeypatch.delenv("VODOU_SYNC_KEY", raising=False)
    nokey = run_cli(*b, "sync", "join", str(folder))
    assert nokey.code == 2 and "--key-file" in nokey.err
    other = tmp_path / "other"
    other.mkdir()
    printed = run_cli("--vault", str(tmp_path / "o.sqlite"), "sync", "setup", str(other), "--name", "o").out
    monkeypatch.setenv("VODOU_SYNC_KEY", next(line for line in printed.splitlines() if line.startswith("VSK1-")))
    wrong = run_cli(*b, "sync", "join", str(folder))
    assert wrong.code == 2 and "does not open" in wrong.err
    assert os.path.exists(tmp_path / "b.sqlite")
    assert json.loads(run_cli(*b, "sync", "status", "--json").out) == {"set_up": False}
