"""MCP-1 through the real ``vodou mcp`` and the SDK's stdio client: the project a person chooses
(a pinned server, a default in settings, projects that hold memories without a folder, roots asked
once per session) and the size budget of an answer (previews, get_memory in parts, "left out")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from tests.integration.mcp_stdio.harness import McpClient, text_of
from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault


def _seed(vault: Path) -> dict[str, int]:
    with Vault.open(vault) as v:
        return {"alpha": remember(v, "alphaword deploys on Tuesdays", Origin(kind="cli"), project="alpha"),
                "beta": remember(v, "betaword lives in beta", Origin(kind="cli"), project="beta"),
                "global": remember(v, "globalword for everyone", Origin(kind="cli"))}


def test_pinned_server_searches_only_its_project(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    ids = _seed(vault)
    with McpClient(vault, tmp_path, extra=["--project", "alpha"]) as client:
        found = client.call("search_memory", {"query": "alphaword"})
        assert [r["id"] for r in found["results"]] == [ids["alpha"]]
        assert found["project"] == "alpha" and found["project_reason"] == "pinned: vodou mcp --project alpha"
        assert client.call("search_memory", {"query": "betaword"})["results"] == []
        refused = client.raw("search_memory", {"query": "betaword", "project": "beta"})
        assert refused.is_error and "pinned to project 'alpha'" in text_of(refused) and "betaword" not in text_of(
            refused)
        assert client.call("remember", {"text": "pinned memory"})["memory"]["project"] == "alpha"
        listed = client.call("list_projects")
        assert [p["name"] for p in listed["projects"]] == ["alpha"] and listed["pinned"] is True
        offered = client.portal.call(client.session.list_resources).resources
        assert {r.name for r in offered} == {"operator-memory", "project-alpha"}


def test_projects_without_folders_and_the_default_in_settings(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    ids = _seed(vault)
    with McpClient(vault, tmp_path, cwd=tmp_path) as client:  # no roots, an unmapped folder
        listed = client.call("list_projects")
        assert listed["project"] is None and "global memories only" in listed["project_reason"]
        assert {(p["name"], p["memories"], p["folder"]) for p in listed["projects"]} == {("alpha", 1, None),
                                                                                         ("beta", 1, None)}
        assert listed["global_memories"] == 1
        assert run_cli("--vault", str(vault), "projects", "default", "set", "beta").code == 0
        found = client.call("search_memory", {"query": "betaword"})  # the setting is read on each call
        assert [r["id"] for r in found["results"]] == [ids["beta"]]
        assert found["project"] == "beta" and found["project_reason"] == "default project in settings"
        assert run_cli("--vault", str(vault), "projects", "default", "set", "alpha",
                       "--client", client.client_name).code == 0
        mine = client.call("search_memory", {"query": "alphaword"})
        assert mine["project"] == "alpha" and mine["project_reason"] == f"default project for {client.client_name}" \
                                                                        " in settings"
        shown = run_cli("--vault", str(vault), "projects", "default", "show", "--json")
        assert json.loads(shown.out) == {"all_clients": "beta", "clients": {client.client_name: "alpha"}}


def test_roots_are_asked_once_and_a_silent_client_costs_one_wait(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    _seed(vault)
    assert run_cli("--vault", str(vault), "projects", "default", "set", "beta").code == 0
    asked: list[int] = []

    async def never_answers(context: Any) -> types.ListRootsResult:
        asked.append(1)
        await anyio.sleep(3600)
        raise AssertionError("unreachable")

    with McpClient(vault, tmp_path, roots_callback=never_answers) as client:
        for _ in range(3):
            found = client.call("search_memory", {"query": "betaword"})
            assert found["project"] == "beta"
            assert "did not answer roots/list within 1 s" in found["project_reason"]
        assert len(asked) == 1  # once per session, not once per call
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.portal.call(client.session.send_roots_list_changed)
        client.call("list_projects")
        assert len(asked) == 2  # asked again after roots/list_changed


def test_a_search_of_long_memories_stays_under_the_budget(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    with Vault.open(vault) as v:
        ids = [remember(v, f"longword memory {i} " + ("the quarterly planning notes say " * 250)[:7_970],
                        Origin(kind="cli"), project="alpha") for i in range(20)]
    with McpClient(vault, tmp_path) as client:
        raw = client.raw("search_memory", {"query": "longword", "project": "alpha", "k": 20})
        size = len(text_of(raw)) + len(json.dumps(raw.structured_content, ensure_ascii=False, separators=(",", ":")))
        assert size <= 20_000
        data = client.call("search_memory", {"query": "longword", "project": "alpha", "k": 20})
        shown, left = data["results"], data["omitted"]
        assert len(shown) + left["results"] == 20 and left["results"] > 0 and left["chars"] > 0
        assert f"{left['results']} more results" in left["note"] and "get_memory" in left["note"]
        assert all(len(r["text"]) <= 402 and r["complete"] is False and r["text_chars"] > 7_900 for r in shown)
        assert "longword" not in json.dumps(raw.structured_content)  # bodies travel once
        full = client.call("get_memory", {"id": ids[0], "project": "alpha"})["memory"]
        assert full["complete"] is True and len(full["text"]) == full["text_chars"] > 7_900
        assert full["next_offset"] is None


def test_get_memory_pages_a_long_memory_under_a_small_budget(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    text = "".join(f"sentence {i:04d} of the long memory. " for i in range(230))[:8_000]
    with Vault.open(vault) as v:
        fact_id = remember(v, text, Origin(kind="cli"))
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "settings.json").write_text(json.dumps({"mcp_max_chars": 6_000}))
    with McpClient(vault, tmp_path) as client:
        parts, offset = [], 0
        while offset is not None:
            raw = client.raw("get_memory", {"id": fact_id, "offset": offset})
            assert len(text_of(raw)) <= 6_000, len(text_of(raw))
            memory = client.call("get_memory", {"id": fact_id, "offset": offset})["memory"]
            parts.append(memory["text"])
            offset = memory["next_offset"]
        assert len(parts) > 1 and "".join(parts) == text.strip()
        past = client.raw("get_memory", {"id": fact_id, "offset": 9_000})
        assert past.is_error and "past the end" in text_of(past)
