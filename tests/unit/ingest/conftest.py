"""Fixtures for the ingest tests."""

from __future__ import annotations

from functools import partial

import pytest

from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q


def all_facts(vault: Vault, **kw: object) -> list[Fact]:
    filt = FactFilter(project=ALL_PROJECTS, **kw)  # type: ignore[arg-type]
    return vault.read(partial(q.facts_after, after_id=0, f=filt, limit=10_000))


@pytest.fixture
def facts_of():
    return all_facts
