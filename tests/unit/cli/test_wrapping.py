"""CLI wrapping: a list entry hangs (its first line at the margin, the rest indented under it), a
block keeps one indent; never is the first line deeper than its continuation, nor a line too wide."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.cli.output import wrap

LONG = "The grey heron " + "stands very still in the shallow water " * 5


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _check_entry(text: str, width: int) -> None:
    lines = text.splitlines()
    assert len(lines) > 1, text  # long enough to wrap
    assert all(len(line) <= width for line in lines), text
    assert all(_indent(line) > _indent(lines[0]) for line in lines[1:]), text


@pytest.mark.parametrize("width", [40, 60, 100])
@pytest.mark.parametrize("command", [["mem", "list"], ["mem", "search", "heron"]])
def test_memory_lines_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int, command: list[str]) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    monkeypatch.setenv("COLUMNS", str(width))
    vault = ["--vault", str(tmp_path / "v.sqlite")]
    run_cli(*vault, "mem", "add", LONG)
    res = run_cli(*vault, *command)
    assert res.code == 0, res.err
    _check_entry(res.out, width)
    if command[1] == "list":
        assert res.out.startswith("#1 The grey heron")  # at the margin


def test_show_rows_hang_under_their_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    row = wrap("Page title: " + LONG, indent="    ", first="  ")
    _check_entry(row, 40)
    assert row.startswith("  Page title: The grey")


def test_a_block_keeps_one_indent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    lines = wrap(LONG, "  ").splitlines()
    assert len(lines) > 1 and {_indent(line) for line in lines} == {2}
