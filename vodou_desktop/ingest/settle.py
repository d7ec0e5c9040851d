"""What every write path runs on its new facts: contradictions, entities, fact groups.

Order matters: a superseded fact should not be elected canonical, so supersession runs first.
Fact groups need the embedding model; without it (off, loading, failed) they wait for the next
``vodou mem dedupe`` scan — the other two steps are model-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from vodou_desktop.ingest.dedupe import group_new
from vodou_desktop.ingest.entities import extract_entities
from vodou_desktop.ingest.supersede import resolve_contradictions
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Vault


@dataclass
class SettleReport:
    superseded: list[tuple[int, int]] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)
    grouped: bool = False


def settle_new_facts(vault: Vault, fact_ids: Sequence[int], embedder: Embedder | None = None) -> SettleReport:
    report = SettleReport()
    if not fact_ids:
        return report
    report.superseded = resolve_contradictions(vault, fact_ids)
    report.entities = sorted(extract_entities(vault, fact_ids).entities)
    if embedder is not None and embedder.ready:
        report.groups = group_new(vault, embedder, fact_ids).groups
        report.grouped = True
    return report
