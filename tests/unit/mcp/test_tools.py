"""The MCP tools over a real vault (keyword path): a call with no project and no mapped folder reads
global memories only, recall included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.mcp.tools import Caller, MemoryTools
from vodou_desktop.runtime import Runtime

SENTINEL = "zanzibarquokka"


@pytest.fixture
def tools(vault_path: Path) -> Iterator[MemoryTools]:
    runtime = Runtime.open(vault_path, embedder="none")
    yield MemoryTools(runtime)
    runtime.close()


def test_recall_without_a_project_never_returns_another_projects_memory(tools: MemoryTools,
                                                                        tmp_path: Path) -> None:
    vault = tools.runtime.vault
    remember(vault, f"The {SENTINEL} budget is secret to client B", Origin(kind="cli"), project="B")
    remember(vault, f"The {SENTINEL} mascot is public", Origin(kind="cli"))
    nowhere = Caller(client="unit", roots=[tmp_path.as_uri()], cwd=str(tmp_path))  # maps to no project
    block = tools.call("recall", {"query": SENTINEL}, nowhere)
    assert block["project"] is None
    assert "mascot is public" in block["text"] and "secret to client B" not in block["text"]
    inside = tools.call("recall", {"query": SENTINEL, "project": "B"}, nowhere)
    assert "secret to client B" in inside["text"]  # the memory is there to be found


def test_list_memories_pages_by_limit_alone(tools: MemoryTools) -> None:
    """Three small memories, ``limit: 2``: the first page is full with a ``next_cursor`` and the next
    page holds the third — the limit alone ends a page, far under the answer's size budget."""
    vault = tools.runtime.vault
    ids = [remember(vault, f"{SENTINEL} short memory {i}", Origin(kind="cli")) for i in range(3)]
    caller = Caller(client="unit")
    first = tools.call("list_memories", {"limit": 2}, caller)
    assert "omitted" not in first  # not the size-budget branch
    assert [m["id"] for m in first["memories"]] == [ids[2], ids[1]] and first["next_cursor"]
    second = tools.call("list_memories", {"limit": 2, "cursor": first["next_cursor"]}, caller)
    assert [m["id"] for m in second["memories"]] == [ids[0]] and second["next_cursor"] is None
    assert "omitted" not in second
