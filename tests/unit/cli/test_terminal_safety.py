"""CLI-1: what a command prints cannot drive the terminal. A memory's text (or a project's name, an
operator memory, a file's name) may hold ESC, BEL, CR, DEL or C1 controls; every command shows them
escaped (``\\u001b``), and ``--json`` stays exact JSON of the very same text."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.cli import main as cli_main
from vodou_desktop.controls import escape_controls

HOSTILE = "heron \x1b]0;OWNED\x07 title \x1b[2J\rcleared \x9b31m red \x7f end"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                            argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*prefix, name))
    if prefix and parser.get_default("func") is not None:
        yield prefix, parser


def _argv(prefix: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str] | None:
    """The command with a value for each positional; ``None`` if it has a required option."""
    argv = list(prefix)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:
            argv.append(str(next(iter(action.choices))) if action.choices else "1")
        elif action.required:
            return None
    for group in parser._mutually_exclusive_groups:
        if group.required:  # one of them must be given: the first, with a value if it takes one
            first = group._group_actions[0]
            argv += [first.option_strings[0]] + ([] if first.nargs == 0 else ["x"])
    return argv


LEAVES = [(p, a) for p, parser in _leaves(cli_main.build_parser()) if (a := _argv(p, parser)) is not None]


def test_the_enumeration_reaches_the_commands_that_print_memories() -> None:
    names = {" ".join(p) for p, _ in LEAVES}
    assert {"mem list", "mem search", "mem show", "recall", "opm list", "export", "import vodou", "projects list",
            "sites list", "mcp install", "doctor"} <= names
    assert len(names) >= 40


@pytest.mark.parametrize(("prefix", "argv"), LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_every_command_prints_through_the_escaping_stream(prefix: tuple[str, ...], argv: list[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command's own function replaced by one that prints a hostile text: whatever a command
    prints on standard output, now or in a later version, is escaped on the way out."""
    vault = tmp_path / "v.sqlite"
    assert run_cli("--vault", str(vault), "mem", "add", "a memory").code == 0
    real = cli_main.build_parser

    def emitting() -> argparse.ArgumentParser:
        parser = real()
        for _, leaf in _leaves(parser):
            leaf.set_defaults(func=lambda args: print(HOSTILE) or 0)
        return parser

    monkeypatch.setattr(cli_main, "build_parser", emitting)
    done = run_cli("--vault", str(vault), *argv)
    assert done.code == 0, done.err
    assert done.out == escape_controls(HOSTILE) + "\n"
    assert not RAW.search(done.out)


@pytest.fixture
def hostile_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    arg = ["--vault", str(tmp_path / "v.sqlite")]
    assert run_cli(*arg, "mem", "add", HOSTILE, "--project", "birds\x9b", "--url", "https://herons.example.org/p",
                   "--title", "Herons \x1b[5m blink").code == 0
    assert run_cli(*arg, "opm", "add", "preference", f"answer about {HOSTILE}").code == 0
    return arg


REAL = [
    ["mem", "list"], ["mem", "list", "--forgotten"], ["mem", "search", "heron"],
    ["mem", "search", "heron", "--explain"],
    ["mem", "show", "1"], ["recall", "-q", "heron", "--project", "birds\x9b"], ["opm", "list"], ["projects", "list"],
    ["export", "--format", "markdown"],
]


@pytest.mark.parametrize("argv", REAL, ids=[" ".join(a) for a in REAL])
def test_commands_that_show_memories_escape_their_controls(hostile_vault: list[str], argv: list[str]) -> None:
    done = run_cli(*hostile_vault, *argv)
    assert done.code in (0, 1), done.err
    assert not RAW.search(done.out + done.err), repr(done.out)
    shown = "birds\\u009b" if argv[0] == "projects" else "OWNED"  # what was shown (recall drops controls itself)
    assert shown in done.out
    if argv[0] not in ("recall", "projects"):
        assert "u001b" in done.out


@pytest.mark.parametrize("argv", [["mem", "list", "--json"], ["mem", "show", "1", "--json"], ["export"],
                                  ["mem", "search", "heron", "--json"]])
def test_json_output_stays_exact(hostile_vault: list[str], argv: list[str]) -> None:
    done = run_cli(*hostile_vault, *argv)
    assert done.code == 0, done.err
    assert not RAW.search(done.out)
    if argv == ["export"]:
        texts = [json.loads(line).get("text") for line in done.out.splitlines()]
    else:
        data = json.loads(done.out)
        items = data if isinstance(data, list) else data.get("results", [data])
        texts = [item.get("text") or item.get("fact", {}).get("text") for item in items]
    assert HOSTILE in texts


def test_markdown_export_cannot_open_a_heading_or_a_list(tmp_path: Path) -> None:
    arg = ["--vault", str(tmp_path / "v.sqlite")]
    text = "first line\n## a heading of its own\n- a list item\n1. an ordered one\n<script>alert(1)</script>\n    code"
    assert run_cli(*arg, "mem", "add", text).code == 0
    md = run_cli(*arg, "export", "--format", "markdown").out
    body = md.split("## Global (every project)", 1)[1]
    lines = body.strip("\n").splitlines()
    assert [line for line in lines if re.match(r"^\s*(#|[-*+] |\d+[.)] |<|>)", line) and "first line" not in line] == []
    assert all(line.startswith("  ") for line in lines[1:] if line.strip())  # continuation stays in its item
    assert "<script>" not in md and "\\<script\\>" in md


def test_an_error_line_quoting_a_file_name_is_escaped(tmp_path: Path) -> None:
    name = tmp_path / "bad\x1b[2J.jsonl"
    done = run_cli("--vault", str(tmp_path / "v.sqlite"), "import", "vodou", str(name))
    assert done.code == 2 and not RAW.search(done.err) and "bad\\u001b[2J.jsonl" in done.err
