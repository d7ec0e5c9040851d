"""The project wall, soft delete and supersession on every MCP tool (in-process, real vault): a
client in project alpha never reads beta's memories, nor forgotten or replaced ones, through any
tool, in its results or in its error messages. New tools must be added to ``PROBES``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vodou_desktop.errors import KnownError
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, correct, remember
from vodou_desktop.mcp.schemas import TOOLS_BY_NAME
from vodou_desktop.mcp.tools import Caller, MemoryTools
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

SECRET, FORGOTTEN, REPLACED = "betasecretword", "forgottenword", "replacedword"
CALLER = Caller(client="wall-client")


@pytest.fixture
def world(vault_path: Path) -> Iterator[tuple[MemoryTools, dict[str, int]]]:
    runtime = Runtime.open(vault_path, embedder="none")
    vault = runtime.vault
    mcp = Origin(kind="mcp", tier="capture", tool=CALLER.client)  # written by this very client
    ids = {"beta": remember(vault, f"{SECRET} lives in beta", mcp, project="beta"),
           "forgotten": remember(vault, f"{FORGOTTEN} {SECRET} text", mcp, project="alpha"),
           "old": remember(vault, f"{REPLACED} {SECRET} first version", mcp, project="alpha"),
           "alpha": remember(vault, "alpha memory about betasecretwords neighbours", mcp, project="alpha")}
    Forgetting(vault).forget_fact(ids["forgotten"])
    ids["new"] = correct(vault, ids["old"], "the corrected version")  # the memory keeps its id ...
    ids["old"] = vault.read(lambda c: q.get_fact(c, ids["new"], FactFilter(project=ALL_PROJECTS))).predecessor_id
    assert ids["old"] not in (None, ids["new"])  # ... and the replaced text is an earlier revision of it
    yield MemoryTools(runtime), ids
    runtime.close()


def _probes(ids: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    hidden = [ids["beta"], ids["forgotten"], ids["old"]]
    return {
        "search_memory": [{"query": q, "k": 20} for q in (SECRET, FORGOTTEN, REPLACED)]
        + [{"query": f"{op} {SECRET}", "k": 20}  # an operator narrows inside the wall, never past it
           for op in ("project:beta", "project:beta+global", "project:alpha", "kind:fact", "after:2000")]
        + [{"query": "project:beta"}, {"query": "project:global"}],
        "get_memory": [{"id": i} for i in hidden],
        "list_memories": [{"limit": 50}, {"kind": "fact", "limit": 50}, {"tool": CALLER.client}, {"since": "1d"}],
        "recall": [{"query": q} for q in (SECRET, FORGOTTEN, REPLACED)],
        "remember": [{"text": "a new alpha note"}],
        "correct_memory": [{"id": i, "text": "overwrite"} for i in hidden],
        "forget_memory": [{"id": i} for i in hidden],
        "list_projects": [{}],
    }


def test_every_tool_holds_the_wall(world: tuple[MemoryTools, dict[str, int]]) -> None:
    tools, ids = world
    probes = _probes(ids)
    assert set(probes) == set(TOOLS_BY_NAME), "add a probe for every MCP tool"
    for name, calls in probes.items():
        for args in calls:
            try:
                out = json.dumps(tools.call(name, {**args, "project": "alpha"} if name != "list_projects" else args,
                                            CALLER))
            except KnownError as exc:
                out = str(exc)
            for word in (SECRET + " lives", FORGOTTEN, REPLACED):
                assert word not in out, (name, args, out[:300])
    # the hidden ones were neither corrected nor forgotten by the probes
    for key in ("beta", "forgotten", "old"):
        with pytest.raises(KnownError):
            tools.call("get_memory", {"id": ids[key], "project": "alpha"}, CALLER)
    assert SECRET in json.dumps(tools.call("get_memory", {"id": ids["beta"], "project": "beta"}, CALLER))
