"""``vodou projects default``: show (also without an action), set NAME, clear; each for every AI tool
or for one (``--client``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_cli


def test_set_show_and_clear_the_default_projects(tmp_path: Path) -> None:
    v = ["--vault", str(tmp_path / "v.sqlite")]
    blank = run_cli(*v, "projects", "default", "set", "  ")
    assert blank.code == 2 and blank.err == "vodou: error: project name is empty\n"
    assert not (tmp_path / "v.sqlite").exists()
    assert run_cli(*v, "projects", "default", "set", "family").code == 0  # makes the vault (first use)
    assert run_cli(*v, "projects", "default", "set", "work", "--client", "claude-code").code == 0
    assert run_cli(*v, "projects", "default").out == "every AI tool\tfamily\nclaude-code\twork\n"
    assert json.loads(run_cli(*v, "projects", "default", "show", "--json").out) == {
        "all_clients": "family", "clients": {"claude-code": "work"}}
    cleared = run_cli(*v, "projects", "default", "clear", "--client", "claude-code")
    assert cleared.code == 0 and cleared.out == "every AI tool\tfamily\n"
    assert run_cli(*v, "projects", "default", "clear").code == 0
    assert run_cli(*v, "projects", "default").out.startswith("no default project")
