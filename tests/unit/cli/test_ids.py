"""Every ``vodou mem`` command that acts on one memory takes its id as a positional argument
(``vodou mem forget 3``), with ``--id`` kept as an alias; both given and differing is one-line error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.cli.ids import resolve_id
from vodou_desktop.cli.main import build_parser
from vodou_desktop.errors import InvalidInput

# Each `mem` command that acts on one memory, with the arguments it needs besides the id.
MEM_BY_ID = {
    "show": [], "page-link": ["https://a.example/x"], "correct": ["new text"], "pin": [],
    "move": ["--project", "p"], "unsupersede": [], "forget": [], "erase": ["--yes"],
}
MEM_WITHOUT_ID = {"add", "search", "list", "entity", "dedupe"}


def _mem_commands() -> set[str]:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    mem = top.choices["mem"]
    sub = next(a for a in mem._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def _parsed(*argv: str) -> argparse.Namespace:
    args = build_parser().parse_args(list(argv))
    resolve_id(args)
    return args


def test_every_mem_command_is_classified() -> None:
    """A new `mem` command must be added to one of the two lists (and then tested below)."""
    assert _mem_commands() == set(MEM_BY_ID) | MEM_WITHOUT_ID


@pytest.mark.parametrize("command", sorted(MEM_BY_ID))
def test_positional_id_and_its_alias(command: str) -> None:
    extra = MEM_BY_ID[command]
    assert _parsed("mem", command, "3", *extra).id == 3
    assert _parsed("mem", command, "--id", "3", *extra).id == 3
    assert _parsed("mem", command, "3", *extra, "--id", "3").id == 3  # the same id twice is fine
    with pytest.raises(InvalidInput, match=r"two different ids given \(3 and --id 4\)"):
        _parsed("mem", command, "3", *extra, "--id", "4")


@pytest.fixture
def vault_arg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    return ["--vault", str(tmp_path / "v.sqlite")]


def test_mem_forget_3_and_mem_erase_3(vault_arg: list[str]) -> None:
    for text in ("The heron nests by the mill", "Ferns like shade", "Tea at four"):
        run_cli(*vault_arg, "mem", "add", text)
    forgot = run_cli(*vault_arg, "mem", "forget", "1")
    assert forgot.code == 0 and forgot.out.startswith("forgot memory #1"), forgot.err
    erased = run_cli(*vault_arg, "mem", "erase", "2", "--yes", "--json")
    assert erased.code == 0 and json.loads(erased.out)["facts_erased"] == 1, erased.err
    alias = run_cli(*vault_arg, "mem", "forget", "--id", "3", "--json")
    assert alias.code == 0 and json.loads(alias.out)["id"] == 3, alias.err


@pytest.mark.parametrize("argv, message", [
    (["mem", "forget", "1", "--id", "2"], "two different ids given (1 and --id 2); give one"),
    (["mem", "forget", "1", "--host", "a.example"], "give the memory's id or --host, not both"),
    (["mem", "forget"], "say what to forget: a memory's id (vodou mem forget 3)"),
    (["mem", "erase", "--yes"], "say what to erase: a memory's id (vodou mem erase 3 --yes)"),
    (["mem", "show"], "give the memory's id, e.g. `vodou mem show 3`"),
])
def test_id_mistakes_are_one_line(vault_arg: list[str], argv: list[str], message: str) -> None:
    run_cli(*vault_arg, "mem", "add", "first")
    result = run_cli(*vault_arg, *argv)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1, result.err
