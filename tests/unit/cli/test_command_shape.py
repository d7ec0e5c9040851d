"""Command groups read alike: listing is a `list` action everywhere (`vodou pair list` as
`vodou sites list`); an option such as `--list` is only ever an alias of an action of that name."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.cli.main import build_parser

GROUPS_THAT_LIST = {"mem", "sites", "projects", "opm", "pair"}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                       argparse.ArgumentParser]]:
    yield path, parser
    for name, child in _subcommands(parser).items():
        yield from _walk(child, (*path, name))


def test_groups_that_list_have_a_list_action() -> None:
    top = _subcommands(build_parser())
    assert GROUPS_THAT_LIST <= set(top)
    for group in GROUPS_THAT_LIST:
        assert "list" in _subcommands(top[group]), f"vodou {group} has no `list` action"


def test_an_action_option_is_only_an_alias_of_an_action() -> None:
    """`--list`, `--revoke`, `--show`, …: where a command has such an option, it has the action too."""
    verbs = {"list", "show", "revoke", "remove", "clear", "add", "set"}
    # commands whose action words stand where their one argument goes (an id, which they can never be)
    in_place_of_argument = {("undo",): {"list"}}
    for path, parser in _walk(build_parser()):
        actions = set(_subcommands(parser)) | in_place_of_argument.get(tuple(path), set())
        for option in (o for a in parser._actions for o in a.option_strings):
            verb = option.removeprefix("--")
            if verb in verbs:
                assert verb in actions, f"`vodou {' '.join(path)} {option}` has no `{verb}` action beside it"


def test_undo_list_and_its_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    v = ["--vault", str(tmp_path / "v.sqlite")]
    run_cli(*v, "mem", "add", "a memory")
    run_cli(*v, "mem", "forget", "1")
    listed, alias = run_cli(*v, "undo", "list"), run_cli(*v, "undo", "--list")
    assert listed.code == 0 and listed.out.startswith("can undo  Forget memory #1"), listed.err
    assert (alias.code, alias.out) == (listed.code, listed.out)


def test_pair_list_and_its_alias() -> None:
    listed, alias = run_cli("pair", "list"), run_cli("pair", "--list")
    assert listed.code == 0 and "no paired extensions" in listed.out, listed.err
    assert (alias.code, alias.out) == (listed.code, listed.out)
    revoked = run_cli("pair", "revoke", "nosuchextension")
    assert revoked.code == 2 and revoked.err.strip() == "vodou: error: no pairing for extension nosuchextension"
