"""Fixtures for governance tests: real vault files, real search, an injectable clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import DateClock
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import Vault


class ManualClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def sites(vault: Vault) -> SiteModes:
    return SiteModes(vault)


@pytest.fixture
def page_memory(vault: Vault, keyword_search: SearchService, sites: SiteModes,
                clock: ManualClock) -> Iterator[PageMemory]:
    pm = PageMemory(vault, keyword_search, sites, clock=clock)
    yield pm
    pm.close()


@pytest.fixture
def forgetting(vault: Vault, clock: ManualClock) -> Forgetting:
    return Forgetting(vault, clock=clock)


def add_fact(vault: Vault, text: str, url: str | None = None, *, kind: str = "note", tier: str = "first_party",
             project: str | None = None) -> int:
    """Store a fact the way every entry point does (provenance stamped)."""
    origin = Origin(kind=kind if url else "cli", tier=tier, url=url, title="Page" if url else None, tool="test")
    return remember(vault, text, origin, project=project)


@pytest.fixture
def day_clock() -> DateClock:
    return DateClock()


@pytest.fixture
def opm(vault: Vault, day_clock: DateClock) -> OperatorMemory:
    return OperatorMemory(vault, clock=day_clock)
