"""``vodou opm`` and ``vodou recall`` end to end, in-process, on the temp profile's vault."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from tests.support import run_cli


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")  # recall --query: keyword search, no model load


def ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.code == 0, result.err
    return result.out


def fails(*args: str) -> str:
    result = run_cli(*args)
    assert result.code == 2, (result.out, result.err)
    assert result.err.startswith("vodou: error: ") and result.err.count("\n") == 1, result.err
    return result.err


def add(category: str, text: str, *extra: str) -> dict:
    return json.loads(ok("opm", "add", category, text, "--json", *extra))


def test_add_correct_reauth_and_list() -> None:
    first = add("preference", "Use metric units", "--source", "chat:1")
    assert first["action"] == "added" and first["memory"]["revision"] == 1
    mid = first["memory"]["id"]
    corrected = json.loads(ok("opm", "correct", mid, "Use SI units", "--source", "chat:2", "--json"))
    assert (corrected["action"], corrected["memory"]["id"], corrected["memory"]["revision"]) == ("corrected", mid, 2)
    reauth = json.loads(ok("opm", "reauth", mid, "--source", "chat:3", "--json"))
    assert reauth["memory"]["revision"] == 2 and reauth["memory"]["source_ref"] == "chat:3"
    assert reauth["memory"]["original_source_ref"] == "chat:1"

    [listed] = json.loads(ok("opm", "list", "--json"))
    assert listed["status"] == "active" and "history" not in listed
    [full] = json.loads(ok("opm", "list", "--json", "--all"))
    assert [(h["revision"], h["content"]) for h in full["history"]] == [(1, "Use metric units")]
    text = ok("opm", "list", "--all")
    assert mid in text and "r1 replaced" in text and "Use metric units" in text


def test_identical_add_reauthorizes_and_equivalent_add_is_refused() -> None:
    add("preference", "Use metric units")
    assert add("preference", "Use metric units", "--source", "chat:9")["action"] == "reauthorized"
    assert "already stored" in fails("opm", "add", "preference", "use METRIC units!")
    assert len(json.loads(ok("opm", "list", "--json"))) == 1


def test_errors_are_one_line_with_exit_two() -> None:
    assert "unknown operator-memory category" in fails("opm", "add", "mood", "text")
    add("initiative", "Ship 1.0")
    assert "ceiling is 1" in fails("opm", "add", "initiative", "Ship 2.0")
    assert "no operator memory" in fails("opm", "correct", "opm-nope", "text")
    assert "no operator memory" in fails("opm", "reauth", "opm-nope")
    assert "no operator memory" in fails("opm", "erase", "opm-nope", "--yes")
    assert "--yes" in fails("opm", "erase-all")
    assert "empty" in fails("opm", "add", "preference", "   ")
    assert len(json.loads(ok("opm", "list", "--json"))) == 1


def test_erase_and_erase_all() -> None:
    a = add("preference", "First one")["memory"]["id"]
    ok("opm", "correct", a, "First one, corrected")
    b = add("pinned_context", "Second one")["memory"]["id"]
    assert "--yes" in fails("opm", "erase", a)  # no terminal to ask on, no --yes: nothing erased
    assert len(json.loads(ok("opm", "list", "--json"))) == 2
    assert ok("opm", "erase", a, "--yes") == f"erased operator memory {a} and 1 earlier revision for good\n"
    assert [m["id"] for m in json.loads(ok("opm", "list", "--json"))] == [b]
    assert json.loads(ok("opm", "erase-all", "--yes", "--json")) == {"current": 1, "history": 0}
    assert json.loads(ok("opm", "list", "--json")) == []
    assert "no operator memory" in ok("opm", "list")


@pytest.mark.parametrize("argv, instead", [(["forget", "opm-1"], "vodou opm erase ID"),
                                           (["forget-all", "--yes"], "vodou opm erase-all")])
def test_forget_is_refused_and_points_to_erase(argv: list[str], instead: str) -> None:
    mid = add("preference", "Keep me")["memory"]["id"]
    said = fails("opm", *[mid if a == "opm-1" else a for a in argv])
    assert "cannot be hidden and brought back" in said and f"`{instead}`" in said
    assert [m["id"] for m in json.loads(ok("opm", "list", "--json"))] == [mid]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer, erased", [("yes\n", True), ("n\n", False), ("\n", False)])
def test_erase_asks_on_a_terminal(monkeypatch: pytest.MonkeyPatch, answer: str, erased: bool) -> None:
    mid = add("preference", "Ask before erasing me")["memory"]["id"]
    monkeypatch.setattr("sys.stdin", Terminal(answer))
    result = run_cli("opm", "erase", mid)
    assert f"Erase operator memory {mid} and its history for good? This cannot be undone." in result.err
    assert result.code == (0 if erased else 2) and ("nothing was erased" in result.err) != erased
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert len(json.loads(ok("opm", "list", "--json"))) == (0 if erased else 1)


def test_export_to_stdout_and_to_a_private_file(tmp_path: Path) -> None:
    a = add("preference", "Answer in French")["memory"]["id"]
    ok("opm", "correct", a, "Answer in English")
    data = json.loads(ok("opm", "export"))
    assert [m["content"] for m in data["memories"]] == ["Answer in English"]
    assert [h["content"] for h in data["history"]] == ["Answer in French"]
    target = tmp_path / "opm.json"
    assert "exported 1 operator memory and 1 earlier revision" in ok("opm", "export", str(target))
    assert json.loads(target.read_text())["history"] == data["history"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert "cannot write" in fails("opm", "export", str(tmp_path / "missing" / "x.json"))


def test_recall_prints_the_bounded_block_with_facts_inside_the_project() -> None:
    add("preference", "Prefer short answers")
    ok("mem", "add", "The apollo launch checklist lives in the wiki", "--project", "apollo")
    ok("mem", "add", "The zephyr launch checklist is on paper", "--project", "zephyr")
    text = ok("recall", "--query", "launch checklist", "--project", "apollo")
    assert "Prefer short answers" in text and "apollo launch checklist" in text and "zephyr" not in text
    assert "Precedence:" in text
    data = json.loads(ok("recall", "--json"))
    assert data["chars"] <= data["max_chars"] == 4096 and len(data["memory_ids"]) == 1
    assert data["fact_ids"] == []
