"""Issue 35's acceptance on a vault of 20,000 memories made as a person makes one from an export
(``vodou import vodou`` of a generated JSONL: 8 projects, 30 % global, two years of dates): "only this
project" lists exactly its count; forgetting 50 is one action and one undo brings the 50 back; a
correction keeps the memory's id (CLI, MCP, API) and its place in the list; ``vodou doctor`` with
search by meaning off passes on these old memories."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli
from vodou_desktop.data.sample_vault import sample_records
from vodou_desktop.governance.edits import Edits
from vodou_desktop.mcp.tools import Caller, MemoryTools
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

COUNT = 20_000
PROJECTS = ("atlas", "birds", "garden", "infra", "kitchen", "thesis", "web", "zoo")


def _records() -> list[dict[str, Any]]:
    records = sample_records(COUNT, PROJECTS)
    for n, record in enumerate(r for r in records if r["type"] == "memory"):
        # 30 % global, as on the vault the issue measured; the rest over the 8 projects
        record["project"] = None if n % 10 in (0, 3, 6) else PROJECTS[n % len(PROJECTS)]
    return records


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Counter[str | None]]:
    records = _records()
    folder = tmp_path_factory.mktemp("at-scale")
    export = folder / "generated.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    vault = folder / "big.sqlite"
    done = run_cli("--vault", str(vault), "import", "vodou", str(export))
    assert done.code == 0 and "imported 20000 memories" in done.out, done.err
    # what the vault holds: a preference is about the person, so it is global whatever its project says
    return vault, Counter(None if r["kind"] == "preference" else r["project"] for r in records if r["type"] == "memory")


@pytest.fixture
def big(made: tuple[Path, Counter[str | None]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], Counter[str | None]]]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    copy = tmp_path / "big.sqlite"
    shutil.copyfile(made[0], copy)
    yield ["--vault", str(copy)], made[1]


def _listed(v: list[str], *args: str) -> list[dict[str, Any]]:
    res = run_cli(*v, "mem", "list", "-n", "100000", "--json", *args)
    assert res.code == 0, res.err
    return list(json.loads(res.out))


def test_only_this_project_lists_exactly_its_count(big: tuple[list[str], Counter[str | None]]) -> None:
    v, counts = big
    assert counts[None] >= 6_000 and sum(counts.values()) == COUNT
    only = _listed(v, "--project", "birds", "--no-global")
    assert len(only) == counts["birds"] and {m["project"] for m in only} == {"birds"}
    assert len(_listed(v, "--project", "birds")) == counts["birds"] + counts[None]
    assert len(_listed(v, "--global-only")) == counts[None]
    said = run_cli(*v, "mem", "list", "--project", "birds", "--no-global").out.splitlines()
    assert said[-1] == f"50 of {counts['birds']:,} shown (-n to see more)"
    assert run_cli(*v, "mem", "list").out.splitlines()[-1] == "50 of 20,000 shown (-n to see more)"
    projects = {p["name"]: p for p in json.loads(run_cli(*v, "projects", "list", "--json").out)}
    assert projects["birds"]["memories"] == counts["birds"]
    assert projects["birds"]["with_global"] == counts["birds"] + counts[None]
    searched = run_cli(*v, "mem", "search", "sourdough starter project:birds", "-k", "50", "--json")
    found = json.loads(searched.out)["results"]
    assert found and {r["project"] for r in found} == {"birds"}


def test_forgetting_50_is_one_action_and_one_undo_brings_them_back(
        big: tuple[list[str], Counter[str | None]]) -> None:
    v, _ = big
    chosen = [str(m["id"]) for m in _listed(v, "--project", "garden", "--no-global")[:50]]
    forgot = run_cli(*v, "mem", "forget", *chosen)
    assert forgot.code == 0 and forgot.out.startswith("forgot 50 memories. Undo: vodou undo "), forgot.err
    assert len(_listed(v)) == COUNT - 50
    assert run_cli(*v, "undo", "--dry-run").out.strip() == "would undo “Forget 50 memories” (just now)"
    undone = run_cli(*v, "undo")
    assert undone.out.strip() == "undid “Forget 50 memories” (just now): 50 memories visible again"
    assert len(_listed(v)) == COUNT


def test_a_correction_keeps_the_id_and_the_place_in_the_list(big: tuple[list[str], Counter[str | None]]) -> None:
    v, _ = big
    newest_first = [m["id"] for m in _listed(v)]
    memory = newest_first[152]
    fixed = run_cli(*v, "mem", "correct", str(memory), "The grey heron moved to the far pond.")
    assert fixed.code == 0 and fixed.out.startswith(f"#{memory} corrected (revision 2;"), fixed.err
    shown = run_cli(*v, "mem", "show", str(memory)).out.splitlines()
    assert shown[:2] == [f"Memory #{memory}", "  The grey heron moved to the far pond."]
    assert [m["id"] for m in _listed(v)] == newest_first  # the same row, the same place
    with Vault.open(Path(v[1])) as vault:  # the API the memory browser calls
        other = newest_first[7]
        assert Edits(vault).correct(other, "Corrected through the API.")["id"] == other
        order = vault.read(lambda c: q.ordered_fact_ids(c, FactFilter(project=ALL_PROJECTS)))
        assert order.index(other) == 7 and order.index(memory) == 152


def test_an_ai_tools_correction_keeps_the_id(big: tuple[list[str], Counter[str | None]]) -> None:
    v, _ = big
    runtime = Runtime.open(Path(v[1]), embedder="none")
    try:
        tools, caller = MemoryTools(runtime), Caller(client="scale-client")
        mine = tools.call("remember", {"text": "The scale test's standup is at nine", "project": "web"}, caller)
        fixed = tools.call("correct_memory", {"id": mine["memory"]["id"], "text": "The standup is at ten",
                                              "project": "web"}, caller)
        assert fixed["memory"]["id"] == mine["memory"]["id"] and fixed["revision"] == 2
        got = tools.call("get_memory", {"id": mine["memory"]["id"], "project": "web"}, caller)
        assert "The standup is at ten" in json.dumps(got)
    finally:
        runtime.close()


def test_doctor_with_search_by_meaning_off_passes_on_old_memories(big: tuple[list[str], Counter[str | None]]) -> None:
    v, _ = big
    res = run_cli(*v, "doctor")
    assert res.code == 0, res.out
    assert "ok    Search by meaning is off (VODOU_EMBEDDER=none)" in res.out and "PROBLEM" not in res.out
