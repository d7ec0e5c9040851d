"""A command that reads the vault, or changes what is already in it, on a path with no vault says
so in one line, exits 2 and creates nothing; a command that adds something makes the vault (first use).
The lists enumerate every command, so a new one must be placed in one of them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.cli.main import build_parser

# Commands that only read the vault (with the arguments they need).
READS = {
    "backup": [], "doctor": [], "export": [], "key show": [], "key save": ["KEYFILE"], "mem search": ["heron"],
    "mem show": ["1"], "mem list": [], "mem entity": ["Ann"], "opm list": [], "opm export": [],
    "projects list": [], "projects default": [], "projects default show": [], "recall": [], "sites list": [],
    "sites get": ["a.example"], "sites default": [], "stats": [], "sync status": [], "secrets list": [],
}
# Commands that change what is already in a vault: with none, there is nothing for them to act on.
CHANGES_EXISTING = {
    "decrypt": [], "encrypt": [], "mem page-link": ["1", "https://a.example/"], "mem dedupe": [],
    "mem correct": ["1", "new"], "mem pin": ["1"], "mem move": ["1", "--global"], "mem forget": ["1"],
    "mem erase": ["1", "--yes"], "mem unsupersede": ["1"], "opm correct": ["opm-1", "new"], "opm reauth": ["opm-1"],
    "opm erase": ["opm-1", "--yes"], "opm erase-all": ["--yes"], "projects remove": ["p"],
    "sites clear": ["a.example"], "undo": [], "projects default clear": [], "sync now": [], "sync pause": [],
    "sync resume": [], "sync leave": [], "sync remove": ["laptop"],
}
# Commands that add something: they make the vault on first use (sites default MODE sets a mode).
CREATES = {"capture watch", "capture flush", "capture add", "import chatgpt", "import claude", "import vodou", "mcp",
           "mem add", "opm add", "projects add", "projects default set", "restore", "serve", "sites set",
           "sites pause", "sync setup", "sync join", "secrets on", "secrets off",
           "quick"}  # quick: the running app's box, or the app
NO_VAULT = {"key restore", "pair", "pair list", "pair revoke", "opm forget", "opm forget-all"}  # refusals
# Commands that never open a vault: they write an AI tool's or the desktop's configuration.
OUTSIDE_THE_VAULT = {"mcp install", "mcp uninstall", "desktop install", "desktop uninstall"}


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[str]:
    if parser.get_default("func") is not None:
        yield " ".join(path)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _leaves(child, (*path, name))


def test_every_command_is_placed() -> None:
    placed = [*READS, *CHANGES_EXISTING, *CREATES, *NO_VAULT, *OUTSIDE_THE_VAULT]
    assert set(_leaves(build_parser())) == set(placed)


def _tree(*roots: Path) -> set[str]:
    return {str(p) for root in roots for p in root.rglob("*")}


@pytest.mark.parametrize("where", ["--vault", "--vault in a missing folder", "VODOU_VAULT"])
def test_reading_a_missing_vault_creates_nothing(tmp_path: Path, vodou_home: Path, where: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / ("nofolder/v.sqlite" if "folder" in where else "v.sqlite")
    if where == "VODOU_VAULT":
        monkeypatch.setenv("VODOU_VAULT", str(missing))
        vault_arg: list[str] = []
    else:
        vault_arg = ["--vault", str(missing)]
    before = _tree(tmp_path, vodou_home)
    given = "$VODOU_VAULT" if where == "VODOU_VAULT" else "--vault"
    every = {**READS, **CHANGES_EXISTING}
    commands = every if where == "--vault" else {c: every[c] for c in ("mem list", "stats", "undo")}
    for command, extra in commands.items():
        argv = [*vault_arg, *command.split(), *(str(tmp_path / "key.txt") if a == "KEYFILE" else a for a in extra)]
        res = run_cli(*argv)
        assert res.code == 2, (command, res.out, res.err)
        assert res.err == f"vodou: error: no vault at {missing}; check {given} (nothing was created)\n", command
        assert _tree(tmp_path, vodou_home) == before, command


# What a fresh install answers (the default vault not made yet): a state, not an error.
FRESH_ANSWERS = {
    "mem list": "no memories yet: add one with `vodou mem add TEXT`",
    "mem search": "no memories yet: add one with `vodou mem add TEXT`",
    "sites get": "a.example: collect (global default)",
}


def _answers_without_vault() -> set[str]:
    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[str]:
        if parser.get_default("without_vault") is not None:
            yield " ".join(path)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    yield from walk(child, (*path, name))

    return set(walk(build_parser()))


def test_the_default_vault_not_made_yet(vodou_home: Path) -> None:
    assert _answers_without_vault() == set(FRESH_ANSWERS)
    for command, extra in READS.items():
        argv = [*command.split(), *(str(vodou_home / "key.txt") if a == "KEYFILE" else a for a in extra)]
        res = run_cli(*argv)
        if command in FRESH_ANSWERS:
            assert res.code == 0 and res.out.startswith(FRESH_ANSWERS[command]) and res.err == "", (command, res)
            assert run_cli(*argv, "--json").code == 0, command
        elif command != "doctor":  # doctor checks what is there: no vault yet passes (test_doctor.py)
            assert res.code == 2 and "no vault yet at" in res.err and "vodou mem add TEXT" in res.err, command
    assert run_cli("sites", "get", "www.chase.com").out.strip() == "www.chase.com: off (sensitive default: bank)"
    assert list(vodou_home.rglob("*.sqlite")) == []


def test_adding_makes_the_vault_on_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    vault = tmp_path / "new.sqlite"
    assert run_cli("--vault", str(vault), "sites", "default").code == 2 and not vault.exists()
    assert run_cli("--vault", str(vault), "sites", "default", "suggest").code == 0 and vault.is_file()
    assert run_cli("--vault", str(tmp_path / "other.sqlite"), "mem", "add", "first").code == 0
    listed = run_cli("--vault", str(tmp_path / "other.sqlite"), "mem", "list", "--json")
    assert [f["text"] for f in json.loads(listed.out)] == ["first"]


def test_installing_into_an_ai_tool_opens_no_vault(tmp_path: Path) -> None:
    missing = tmp_path / "v.sqlite"
    for action in ("install", "uninstall"):
        res = run_cli("--vault", str(missing), "mcp", action, "claude-desktop", "--dry-run",
                      "--config", str(tmp_path / "claude.json"))
        assert res.code == 0, (action, res.err)
    assert not missing.exists() and not (tmp_path / "claude.json").exists()
