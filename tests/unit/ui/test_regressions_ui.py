"""Tests that each kill a mutation the rest of the suite let through (the desktop's readers)."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.unit.governance.test_policy_invariant import _touches_memory, sql_trace
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.active_page import read_page_state
from vodou_desktop.ui.browser.results_model import fact_age
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

PAGE = "https://docs.example.com/guide"


# 1. the memory browser renders a day-precision fact as a calendar day
def test_fact_age_of_a_day_precision_fact_is_today(vault: Vault) -> None:
    midnight = datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
    fact_id = remember(vault, "Daily log: fed the cat", Origin(kind="cli"), valid_at=midnight, valid_precision="day")
    fact = vault.read(lambda c: q.get_fact(c, fact_id, FactFilter(project=ALL_PROJECTS)))
    assert fact_age(fact) == "today"


# 2. the tray's page state never reads memory for an off site
@pytest.mark.parametrize("mode", ["off", "suggest", "collect"])
def test_read_page_state_reads_no_memory_for_an_off_site(vault: Vault, mode: str) -> None:
    remember(vault, "guide notes", Origin(kind="note", url=PAGE))
    sites = SiteModes(vault)
    sites.set_rule("example.com", mode)
    with sql_trace(vault) as statements:
        state = read_page_state(vault, sites, PAGE, "Guide")
    assert state.mode == mode
    if mode == "off":
        assert state.has_memory is False and _touches_memory(statements) == []
    else:
        assert state.has_memory is True and _touches_memory(statements)
