"""One list of memory kinds for MCP, the CLI and the app: whatever ``remember`` accepts over MCP,
``vodou mem add`` accepts and ``vodou mem list --kind`` filters on (the app's filter offers it too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.mcp.schemas import TOOLS_BY_NAME
from vodou_desktop.words import FACT_KINDS, LIST_KINDS

MCP_KINDS = TOOLS_BY_NAME["remember"].schema["properties"]["kind"]["enum"]


def test_mcp_offers_exactly_the_kinds_a_person_may_add() -> None:
    assert list(MCP_KINDS) == list(FACT_KINDS) and set(FACT_KINDS) <= set(LIST_KINDS)
    assert "note" in MCP_KINDS and "plan" in MCP_KINDS


@pytest.mark.parametrize("kind", MCP_KINDS)
def test_every_mcp_kind_is_added_and_listed_by_the_cli(kind: str, tmp_path: Path) -> None:
    vault = str(tmp_path / "v.sqlite")
    added = run_cli("--vault", vault, "mem", "add", f"a {kind} to keep", "--kind", kind, "--json")
    assert added.code == 0, added.err
    listed = run_cli("--vault", vault, "mem", "list", "--kind", kind, "--json")
    assert listed.code == 0, listed.err
    assert [m["kind"] for m in json.loads(listed.out)] == [kind]
