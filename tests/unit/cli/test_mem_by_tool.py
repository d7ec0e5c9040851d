"""What an AI tool wrote stays reviewable and forgettable per tool: ``mem list --tool`` and
``mem forget --tool [--dry-run|--undo]`` as one undoable operation that never touches other tools'
memories and never resurrects what another forget hid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, list[int]]]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    path = tmp_path / "v.sqlite"
    with Vault.open(path) as vault:
        ids = {
            "cursor": [remember(vault, f"cursor wrote {i}", Origin(kind="mcp", tier="capture", tool="cursor"),
                                project="alpha" if i else None) for i in range(3)],
            "claude": [remember(vault, "claude wrote this", Origin(kind="mcp", tier="capture", tool="claude-ai"))],
            "cli": [remember(vault, "typed by the person", Origin(kind="cli", tool="cli"))],
            "page": [remember(vault, "cursor quoted a page", Origin(kind="mcp", tier="capture", tool="cursor",
                                                                    url="https://docs.example.com/a"))],
        }
    return path, ids


def visible(path: Path) -> set[int]:
    with Vault.open(path) as vault:
        return {f.id for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=100))}


def test_list_by_tool(seeded: tuple[Path, dict[str, list[int]]]) -> None:
    path, ids = seeded
    out = run_cli("--vault", str(path), "mem", "list", "--tool", "cursor", "--json")
    assert out.code == 0, out.err
    assert {f["id"] for f in json.loads(out.out)} == set(ids["cursor"] + ids["page"])
    assert all(f["tool"] == "cursor" for f in json.loads(out.out))
    assert run_cli("--vault", str(path), "mem", "list", "--tool", "nobody").out.strip() == "no memories match"


def test_forget_by_tool_is_one_undoable_operation(seeded: tuple[Path, dict[str, list[int]]]) -> None:
    path, ids = seeded
    everyone = visible(path)
    dry = run_cli("--vault", str(path), "mem", "forget", "--tool", "cursor", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert json.loads(dry.out) == {"tool": "cursor", "dry_run": True, "facts": 4, "by_source": {"mcp": 4}}
    assert visible(path) == everyone
    done = json.loads(run_cli("--vault", str(path), "mem", "forget", "--tool", "cursor", "--json").out)
    assert done["facts_hidden"] == 4
    assert visible(path) == everyone - set(ids["cursor"] + ids["page"])
    text = run_cli("--vault", str(path), "mem", "forget", "--undo", done["op"])
    assert text.code == 0
    assert "undid “Forget the memories written by cursor” (just now): 4 memories visible again" in text.out
    assert visible(path) == everyone


def test_undo_never_resurrects_what_another_forget_hid(seeded: tuple[Path, dict[str, list[int]]]) -> None:
    path, ids = seeded
    with Vault.open(path) as vault:
        forgetting = Forgetting(vault)
        by_host = forgetting.forget_host("docs.example.com")
        by_tool = forgetting.forget_tool("cursor")
        assert by_tool["facts_hidden"] == 3  # the page memory was already hidden by the host forget
        undone = forgetting.undo(by_host["op"])
        assert undone["facts_still_hidden"] == 1  # still covered by the tool forget
    assert not set(ids["page"]) & visible(path)


def test_forget_by_tool_needs_a_name(seeded: tuple[Path, dict[str, list[int]]]) -> None:
    path, _ = seeded
    out = run_cli("--vault", str(path), "mem", "forget", "--tool", "  ")
    assert out.code == 2 and "name the tool" in out.err
    assert run_cli("--vault", str(path), "mem", "forget", "--id", "1", "--dry-run").code == 2
