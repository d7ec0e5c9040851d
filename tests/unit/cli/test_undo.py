"""``vodou undo [OP]``: the last action by default (every kind the journal holds), or the one an id
prefix names; said in words; nothing to undo and erase are one-line refusals; ``--list`` and
``--dry-run`` name actions without undoing them."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.vault import Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import retraction as r


@pytest.fixture
def vault_arg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    v = ["--vault", str(tmp_path / "v.sqlite")]
    for text, url in (("The heron nests by the mill", "https://birds.example/heron"), ("Ferns like shade", None)):
        run_cli(*v, "mem", "add", text, *(["--url", url] if url else []))
    with Vault.open(tmp_path / "v.sqlite") as vault:
        save_document(vault, "A saved article", Origin(kind="library", url="https://docs.example/a", title="A"))
    return v


def _visible(v: list[str]) -> list[str]:
    return sorted(f["text"] for f in json.loads(run_cli(*v, "mem", "list", "--json").out))


def _an_ai_tool_corrects_memory_2(v: list[str]) -> None:
    """An AI tool's correction (the MCP ``correct`` tool): journaled with the tool's name."""
    with Vault.open(Path(v[1])) as vault:
        Forgetting(vault).correct_fact(2, "Ferns like deep shade", by="claude")
    assert _visible(v) == ["Ferns like deep shade", "The heron nests by the mill"]


def _an_import(v: list[str]) -> None:
    export = Path(v[1]).with_name("other.jsonl")
    other = Path(v[1]).with_name("other.sqlite")
    assert run_cli("--vault", str(other), "mem", "add", "Imported: owls hunt at night").code == 0
    assert run_cli("--vault", str(other), "export", str(export)).code == 0
    done = run_cli(*v, "import", "vodou", str(export))
    assert done.code == 0 and "Undo: vodou undo " in done.out, done.err


# Every kind the journal can undo, the command (or AI tool) that makes it, and what `vodou undo` then says.
UNDOABLE: dict[str, tuple[list[str] | Callable[[list[str]], None], str]] = {
    r.FORGET_FACT_KIND: (["mem", "forget", "2"], "undid “Forget memory #2” (just now): 1 memory visible again"),
    r.FORGET_FACTS_KIND: (["mem", "forget", "1", "2"], "undid “Forget 2 memories” (just now): 2 memories visible"
                                                       " again"),
    r.FORGET_KIND: (["mem", "forget", "--host", "birds.example"],
                    "undid “Forget the memories from birds.example” (just now): 1 memory visible again"),
    r.FORGET_TOOL_KIND: (["mem", "forget", "--tool", "cli"],
                         "undid “Forget the memories written by cli” (just now): 2 memories visible again"),
    r.FORGET_DOCUMENT_KIND: (["mem", "forget", "--document", "1"],
                             "undid “Forget library document #1” (just now): the document is visible again"),
    r.CORRECT_FACT_KIND: (_an_ai_tool_corrects_memory_2,
                          "undid “Correct memory #2 (by claude)” (just now): memory #2 has its earlier text back"),
    js.MOVE_FACTS_KIND: (["mem", "move", "1", "2", "--project", "garden", "--new"],
                         "undid “Move 2 memories to garden (a new project)” (just now): 2 memories back where they"
                         " were"),
    js.PIN_FACTS_KIND: (["mem", "pin", "1"], "undid “Pin memory #1” (just now): 1 memory as it was before"),
    js.IMPORT_KIND: (_an_import, "undid “Import 1 memory from other.jsonl” (just now): 1 memory it added hidden"
                                 " again (erase deletes them for good)"),
}


def test_every_undoable_kind_is_covered() -> None:
    assert set(UNDOABLE) == set(js.ACTION_KINDS)


@pytest.mark.parametrize("kind", sorted(UNDOABLE))
def test_undo_the_last_forget_in_words(vault_arg: list[str], kind: str) -> None:
    before = _visible(vault_arg)
    make, said = UNDOABLE[kind]
    if callable(make):
        make(vault_arg)
    else:
        done = run_cli(*vault_arg, *make)
        assert done.code == 0 and "Undo: vodou undo " in done.out, done.err
    after = _visible(vault_arg) if kind != js.PIN_FACTS_KIND else None
    dry = run_cli(*vault_arg, "undo", "--dry-run")
    assert dry.code == 0 and dry.out.startswith("would undo “")
    assert after is None or _visible(vault_arg) == after  # a dry run changes nothing
    undone = run_cli(*vault_arg, "undo")
    assert undone.code == 0, undone.err
    assert undone.out.strip() == said
    assert _visible(vault_arg) == before
    again = run_cli(*vault_arg, "undo")
    assert again.code == 2 and again.err.startswith("vodou: error: nothing to undo") and again.err.count("\n") == 1


def test_undo_names_an_operation_by_a_prefix(vault_arg: list[str]) -> None:
    first = json.loads(run_cli(*vault_arg, "mem", "forget", "1", "--json").out)["op"]
    run_cli(*vault_arg, "mem", "forget", "2")
    undone = run_cli(*vault_arg, "undo", first.removeprefix("op-")[:4], "--json")
    assert undone.code == 0, undone.err
    data = json.loads(undone.out)
    assert (data["op"], data["action"]["title"], data["facts_restored"]) == (first, "Forget memory #1", 1)
    assert _visible(vault_arg) == ["The heron nests by the mill"]  # #2 is still forgotten
    assert run_cli(*vault_arg, "undo", first).code == 2  # already undone


def test_an_ambiguous_or_unknown_prefix_is_one_line(vault_arg: list[str], tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v.sqlite") as vault:
        for op in ("op-abcd00000001", "op-abcd00000002"):
            vault.write(lambda c, ch, op=op: c.execute(
                "INSERT INTO operations(id, kind, target, detail, created_at) VALUES (?, 'forget_fact', '1', '{}',"
                " '2026-01-01T00:00:00.000000Z')", (op,)))
    for given, said in (("abcd", "'abcd' starts the ids of 2 operations; give more characters"),
                        ("fff", "no operation 'fff' in this vault")):
        res = run_cli(*vault_arg, "undo", given)
        assert res.code == 2 and said in res.err and res.err.count("\n") == 1, res.err


def test_erase_is_never_undone_and_says_so(vault_arg: list[str]) -> None:
    run_cli(*vault_arg, "mem", "forget", "2")
    erased = json.loads(run_cli(*vault_arg, "mem", "erase", "1", "--yes", "--json").out)["op"]
    refused = run_cli(*vault_arg, "undo", erased)
    assert refused.code == 2 and "was an erase" in refused.err and "cannot be undone" in refused.err
    listed = run_cli(*vault_arg, "undo", "--list").out.splitlines()
    assert listed[0].startswith("final") and "Erase memory #1" in listed[0] and listed[1].startswith("can undo")
    last = run_cli(*vault_arg, "undo")  # the forget before the erase, with a note about the erase
    assert last.code == 0 and last.out.startswith("undid “Forget memory #2”")
    assert "Erase memory #1 (just now), cannot be undone" in last.err
    assert _visible(vault_arg) == ["Ferns like shade"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_mem_erase_asks_on_a_terminal_and_says_it_is_for_good(vault_arg: list[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    kept = run_cli(*vault_arg, "mem", "erase", "1")
    assert kept.code == 2 and "Erase memory #1 and its revisions for good? This cannot be undone." in kept.err
    assert "nothing was erased" in kept.err and len(_visible(vault_arg)) == 2
    monkeypatch.setattr("sys.stdin", _Terminal("yes\n"))
    erased = run_cli(*vault_arg, "mem", "erase", "1")
    assert erased.code == 0 and erased.out == "erased 1 memory (#1) for good\n"
    assert _visible(vault_arg) == ["Ferns like shade"]
