"""Fixtures for the ingest tests."""

from __future__ import annotations

from functools import partial

import pytest

from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q


def all_facts(vault: Vault, *, turns: bool = False, **kw: object) -> list[Fact]:
    """The memories in the vault, in id order: what was distilled (``turns``: the person's messages kept
    whole as conversation memories too)."""
    filt = FactFilter(project=ALL_PROJECTS, **kw)  # type: ignore[arg-type]
    found = vault.read(partial(q.facts_after, after_id=0, f=filt, limit=10_000))
    return found if turns else [f for f in found if f.kind != "conversation"]


def turns_of(vault: Vault, **kw: object) -> list[Fact]:
    """The person's messages kept whole (conversation memories), in id order."""
    return [f for f in all_facts(vault, turns=True, **kw) if f.kind == "conversation"]


@pytest.fixture
def facts_of():
    return all_facts
