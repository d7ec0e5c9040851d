"""ING-2 on write: a running app groups a new near-duplicate as soon as it has its vector."""

from __future__ import annotations

import time
from pathlib import Path

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

ALL = FactFilter(project=ALL_PROJECTS)


def _wait(predicate, timeout: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_running_app_groups_a_new_duplicate_and_first_party_keeps_canonical(tmp_path: Path, model: Embedder) -> None:
    with Runtime.open(tmp_path / "v.sqlite", embedder=model, background_backfill=True) as rt:
        mine = remember(rt.vault, "Our team standup is at 9:30 every weekday", Origin(kind="cli"))
        other = remember(rt.vault, "Bread flour is stored in the left cupboard", Origin(kind="cli"))
        imported = remember(rt.vault, "Our team standup is at 9:30 every weekday.", Origin(kind="import_chatgpt",
                                                                                             tier="import"))

        def grouped() -> bool:
            return rt.vault.read(lambda c: q.get_fact(c, imported, ALL)).fact_group is not None

        assert _wait(grouped)
        facts = {f.id: f for f in rt.vault.read(lambda c: q.facts_by_ids(c, [mine, other, imported], ALL))}
        assert facts[mine].fact_group == facts[imported].fact_group and facts[other].fact_group is None
        assert facts[mine].is_canonical and not facts[imported].is_canonical
