"""Several memories at once from the command line: ``vodou mem forget 3 5 9`` (one action, one undo),
``mem erase 3 5 9`` (one confirmation naming the count), ``mem pin``, ``mem move`` and ``export --id``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.support import run_cli


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def v(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    vault = ["--vault", str(tmp_path / "v.sqlite")]
    for i in range(10):
        assert run_cli(*vault, "mem", "add", f"bird sighting number {i}", "--project", "birds").code == 0
    return vault


def _shown(v: list[str]) -> list[int]:
    return [m["id"] for m in json.loads(run_cli(*v, "mem", "list", "--json").out)]


def test_forget_several_then_one_undo(v: list[str]) -> None:
    done = run_cli(*v, "mem", "forget", "3", "5", "9")
    assert done.code == 0 and done.out.startswith("forgot 3 memories. Undo: vodou undo "), done.err
    assert sorted(_shown(v)) == [1, 2, 4, 6, 7, 8, 10]
    assert run_cli(*v, "undo").out.startswith("undid “Forget 3 memories” (just now): 3 memories visible again")
    assert len(_shown(v)) == 10
    refused = run_cli(*v, "mem", "forget", "3", "99")
    assert refused.code == 2 and "no memory with id 99" in refused.err and len(_shown(v)) == 10  # all or nothing


def test_erase_several_asks_once_naming_the_count(v: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    kept = run_cli(*v, "mem", "erase", "2", "4")
    assert kept.code == 2 and "Erase 2 memories (#2, #4) and their revisions for good? This cannot be undone." \
        in kept.err and len(_shown(v)) == 10
    monkeypatch.setattr("sys.stdin", _Terminal("yes\n"))
    erased = run_cli(*v, "mem", "erase", "2", "4")
    assert erased.code == 0 and erased.out.startswith("erased 2 memories and their 2 revisions for good")
    assert sorted(_shown(v)) == [1, 3, 5, 6, 7, 8, 9, 10]
    listed = run_cli(*v, "undo", "--list").out.splitlines()
    assert listed[0].startswith("final") and "Erase 2 memories" in listed[0]


def test_pin_and_move_several_and_export_a_selection(v: list[str], tmp_path: Path) -> None:
    pinned = run_cli(*v, "mem", "pin", "1", "2", "3")
    assert pinned.out.startswith("pinned 3 memories. Undo: vodou undo ")
    again = run_cli(*v, "mem", "pin", "3", "4")
    assert again.out.startswith("pinned 1 memory (1 was already pinned).")
    moved = run_cli(*v, "mem", "move", "1", "2", "--project", "owls", "--new")
    assert moved.out.startswith("moved 2 memories, now in owls (a new project).")
    assert run_cli(*v, "mem", "show", "1").out.splitlines()[1].strip() == "bird sighting number 0"  # same id
    out = tmp_path / "two.jsonl"
    exported = run_cli(*v, "export", "--id", "1", "--id", "5", str(out))
    assert exported.code == 0, exported.err
    memories = [json.loads(line) for line in out.read_text().splitlines() if '"memory"' in line]
    assert sorted((m["id"], m["project"]) for m in memories if m["superseded_by"] is None) == [
        (1, "owls"), (5, "birds")]
    assert len(memories) == 3  # memory 1's move is in its history
