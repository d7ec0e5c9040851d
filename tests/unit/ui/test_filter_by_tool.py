"""The memory browser's filter bar narrows to what one writing tool (an MCP client) saved."""

from __future__ import annotations

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.browser.filters import FilterBar
from vodou_desktop.vault import query as q


def test_tool_filter(qtbot, vault):
    bar = FilterBar()
    qtbot.addWidget(bar)
    mine = remember(vault, "cursor saved this", Origin(kind="mcp", tier="capture", tool="cursor"))
    remember(vault, "typed by the person", Origin(kind="cli", tool="cli"))
    with qtbot.waitSignal(bar.changed):
        bar.tool.setText(" cursor ")
    facts = vault.read(lambda c: q.list_facts(c, bar.current_filter()))
    assert [f.id for f in facts] == [mine]
    bar.tool.clear()
    assert bar.current_filter().tools == ()
