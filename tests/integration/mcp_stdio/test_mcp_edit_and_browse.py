"""MCP-1 through the real ``vodou mcp`` and the SDK's stdio client: a client corrects and forgets
only what it wrote (soft, in the operation journal, undone by the person's ``vodou mem forget
--undo``), and ``list_memories`` pages through every memory exactly once, with filters."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests.integration.mcp_stdio.harness import CLIENT_NAME, McpClient, text_of
from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault


def _word() -> str:
    return "zq" + uuid.uuid4().hex[:10]


def _cli(vault: Path, *args: str) -> str:
    result = run_cli("--vault", str(vault), *args)
    assert result.code == 0, result.err
    return result.out


def test_correct_and_forget_own_memories_undoably(keyword_server: McpClient) -> None:
    vault, word = keyword_server.vault, _word()
    mine = keyword_server.call("remember", {"text": f"The {word} standup is at 9"})["memory"]
    fixed = keyword_server.call("correct_memory", {"id": mine["id"], "text": f"The {word} standup is at 10"})
    assert fixed["memory"]["id"] == mine["id"] and fixed["revision"] == 2  # corrected in place: the same id
    assert fixed["memory"]["provenance"]["tool"] == CLIENT_NAME

    def found() -> list[tuple[int, str]]:
        return [(r["id"], r["text"]) for r in keyword_server.call("search_memory", {"query": word})["results"]]

    assert found() == [(mine["id"], f"The {word} standup is at 10")]
    assert keyword_server.call("get_memory", {"id": mine["id"]})["memory"]["text"] == f"The {word} standup is at 10"
    listed = json.loads(_cli(vault, "mem", "list", "--tool", CLIENT_NAME, "--json"))
    assert [m["id"] for m in listed].count(mine["id"]) == 1
    shown = _cli(vault, "mem", "show", str(mine["id"]))
    assert f"The {word} standup is at 10" in shown and f"r1: The {word} standup is at 9" in shown
    _cli(vault, "undo", fixed["op"])  # the person undoes the correction
    assert found() == [(mine["id"], f"The {word} standup is at 9")]

    gone = keyword_server.call("forget_memory", {"id": mine["id"]})
    assert gone["forgotten"] is True and gone["op"] in gone["note"]
    assert keyword_server.call("search_memory", {"query": word})["results"] == []
    hidden = json.loads(_cli(vault, "mem", "list", "--tool", CLIENT_NAME, "--forgotten", "--json"))
    assert mine["id"] in [m["id"] for m in hidden]
    _cli(vault, "mem", "forget", "--undo", gone["op"])
    assert [r["id"] for r in keyword_server.call("search_memory", {"query": word})["results"]] == [mine["id"]]


def test_another_writers_memory_is_refused_with_how_the_person_can(keyword_server: McpClient) -> None:
    word = _word()
    with Vault.open(keyword_server.vault) as vault:
        by_person = remember(vault, f"{word} written by the person", Origin(kind="cli", tool="cli"))
        by_other = remember(vault, f"{word} written by another tool", Origin(kind="mcp", tier="capture",
                                                                            tool="other-client"))
    for fact_id in (by_person, by_other):
        for tool, args, how in (("correct_memory", {"text": "rewritten"}, "vodou mem correct"),
                                ("forget_memory", {}, "vodou mem forget --id")):
            refused = keyword_server.raw(tool, {"id": fact_id, **args})
            assert refused.is_error, tool
            assert f"{how} {fact_id}" in text_of(refused) and "only" in text_of(refused)
    found = keyword_server.call("search_memory", {"query": word})["results"]
    assert sorted(r["id"] for r in found) == sorted([by_person, by_other])
    assert all("rewritten" not in r["text"] for r in found)


def test_list_pages_reach_every_memory_exactly_once(keyword_server: McpClient) -> None:
    word = _word()
    with Vault.open(keyword_server.vault) as vault:
        ours = [remember(vault, f"{word} entry {i} " + "padding words " * (i % 10 * 50), Origin(kind="cli"),
                         project="paging", kind="plan" if i % 3 == 0 else "fact") for i in range(37)]
        remember(vault, f"{word} in another project", Origin(kind="cli"), project="elsewhere")
    seen: list[int] = []
    cursor, cut = None, False
    for _ in range(40):  # bounded: at most one page per memory
        args = {"project": "paging", "limit": 20, **({"cursor": cursor} if cursor else {})}
        page = keyword_server.call("list_memories", args)
        assert page["project"] == "paging"
        seen += [m["id"] for m in page["memories"] if word in m["text"]]
        cut = cut or "omitted" in page
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(ours) and len(seen) == len(set(seen))
    assert cut  # a page the budget cut short went on from where it stopped
    plans = keyword_server.call("list_memories", {"project": "paging", "kind": "plan", "limit": 50})
    assert {m["id"] for m in plans["memories"] if word in m["text"]} == {ours[i] for i in range(0, 37, 3)}
    tool = keyword_server.call("list_memories", {"project": "paging", "tool": "nobody-wrote-this"})
    assert tool["memories"] == [] and tool["next_cursor"] is None
    bad = keyword_server.raw("list_memories", {"cursor": "after:5"})
    assert bad.is_error and "next_cursor" in text_of(bad)
    since = keyword_server.raw("list_memories", {"since": "last tuesday"})
    assert since.is_error and "7d" in text_of(since)


def test_prompts_and_resources_list_and_render(keyword_server: McpClient) -> None:
    import pytest
    from mcp import MCPError

    from vodou_desktop.governance.opm import OperatorMemory

    word = _word()
    with Vault.open(keyword_server.vault) as vault:
        OperatorMemory(vault).add("preference", f"Answer briefly {word}")
        for i in range(3):
            remember(vault, f"{word} summary fact {i}", Origin(kind="cli"), project="summaries",
                     kind="decision" if i else "fact")
    portal, session = keyword_server.portal, keyword_server.session
    prompts = {p.name: p for p in portal.call(session.list_prompts).prompts}
    assert set(prompts) == {"recall", "remember-this-conversation"}
    recalled = portal.call(session.get_prompt, "recall", {"topic": word, "project": "summaries"})
    block = recalled.messages[0].content.text
    assert block == keyword_server.call("recall", {"query": word, "project": "summaries"})["text"]
    assert f"Answer briefly {word}" in block and f"{word} summary fact" in block
    saving = portal.call(session.get_prompt, "remember-this-conversation", {"project": "summaries"})
    assert "remember tool" in saving.messages[0].content.text and "'summaries'" in saving.messages[0].content.text
    with pytest.raises(MCPError, match="no prompt"):
        portal.call(session.get_prompt, "nothing", None)

    resources = {r.name: r for r in portal.call(session.list_resources).resources}
    assert "operator-memory" in resources and "project-summaries" in resources
    opm = portal.call(session.read_resource, str(resources["operator-memory"].uri)).contents[0].text
    assert f"Answer briefly {word}" in opm
    summary = json.loads(portal.call(session.read_resource, str(resources["project-summaries"].uri)).contents[0].text)
    assert summary["memories"] == 3 and summary["by_kind"] == {"fact": 1, "decision": 2}
    assert len(summary["recent"]) == 3 and summary["project"] == "summaries"
    with pytest.raises(MCPError, match="no project"):
        portal.call(session.read_resource, "vodou://projects/nowhere/summary")
