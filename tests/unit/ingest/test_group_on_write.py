"""ING-2 on write: a running app groups a new near-duplicate as soon as it has its vector."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from vodou_desktop.ingest.dedupe import group_via_index, one_blas_thread
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.backfill import Backfiller, backfill
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import insert_fact, set_embeddings
from vodou_desktop.vault.sources import stamp_source

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


def test_two_new_copies_in_one_batch_join_one_group_with_one_canonical(vault: Vault, model: Embedder) -> None:
    """A batch is read at once; a step that changed a group makes the next step read it again."""
    index = VectorIndex(vault, model=model.model_id)
    index.load()
    try:
        old = remember(vault, "Our team standup is at 9:30 every weekday.",
                       Origin(kind="import_chatgpt", tier="import"))
        backfill(vault, model)
        mine = remember(vault, "Our team standup is at 9:30 every weekday", Origin(kind="cli"))
        captured = remember(vault, "our team standup is at 9:30 every weekday!", Origin(kind="capture", tier="capture"))
        batches: list[list[int]] = []

        def group(ids: list[int]) -> None:
            batches.append(ids)
            group_via_index(vault, index, ids)

        backfill(vault, model, embedded=group)
    finally:
        index.close()
    assert [sorted(b) for b in batches] == [sorted([mine, captured])]
    facts = {f.id: f for f in vault.read(lambda c: q.facts_by_ids(c, [old, mine, captured], ALL))}
    assert len({f.fact_group for f in facts.values()}) == 1 and facts[old].fact_group is not None
    assert [i for i, f in facts.items() if f.is_canonical] == [mine]


def test_grouping_runs_numpy_on_one_blas_thread_and_gives_the_rest_back() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() and set(blas_threads()) == {1}
    assert blas_threads() == before


def test_a_grouping_write_does_not_wake_the_embedding_backfill(vault: Vault, model: Embedder) -> None:
    """Grouping changes only a fact's group columns: no text to embed, so no backfill pass for it."""
    index = VectorIndex(vault, model=model.model_id)
    index.load()
    passes: list[int] = []  # every backfill pass reports (0, total) as it starts
    filler = Backfiller(vault, model, progress=lambda done, total: passes.append(total) if done == 0 else None,
                        embedded=lambda ids: group_via_index(vault, index, ids)).start()
    try:
        first = remember(vault, "The boiler service is booked for the second of March", Origin(kind="cli"))
        assert _wait(lambda: vault.read(q.count_unembedded) == 0 and filler.idle.is_set())
        before = len(passes)
        copy = remember(vault, "The boiler service is booked for the second of March.", Origin(kind="cli"))
        assert _wait(lambda: vault.read(lambda c: q.get_fact(c, copy, ALL)).fact_group is not None)
        time.sleep(2.0)  # a wake-up by the grouping write would start a pass within ~0.3 s (settle)
        assert _wait(filler.idle.is_set)
    finally:
        filler.stop()
        index.close()
    assert vault.read(lambda c: q.get_fact(c, first, ALL)).fact_group is not None
    assert passes[before:] == [1]  # the copy's pass only, not a second, empty one for the group write


def test_copies_written_into_a_vault_above_the_cells_threshold_join_their_groups(
        vault: Vault, model: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real sentences and their real vectors, the index in cells (the threshold lowered to this vault's
    size): each new copy of a stored fact joins that fact's group; a copy in another project does not."""
    from bench.corpus import chunks
    from vodou_desktop.search import vectors

    monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 1_000)
    texts = list(dict.fromkeys(c.text for c in chunks(1_600, seed=5)))[:1_200]
    mat = model.encode(texts)

    def job(conn, change):  # type: ignore[no-untyped-def]
        source = stamp_source(conn, change, kind="cli", tier="first_party")
        ids = [insert_fact(conn, change, text=t, source_id=source) for t in texts]
        set_embeddings(conn, change, zip(ids, mat, strict=True), model=model.model_id)
        return ids

    ids = vault.write(job)
    index = VectorIndex(vault, model=model.model_id)
    index.load()
    try:
        assert index.coarse
        picked = list(range(0, 1_200, 60))  # 20 stored facts, each written again, a little changed
        copies = {i: remember(vault, texts[i].rstrip(".") + "!", Origin(kind="capture", tier="capture"))
                  for i in picked}
        elsewhere = remember(vault, texts[0], Origin(kind="cli"), project="other-project")
        backfill(vault, model, embedded=lambda new: group_via_index(vault, index, new))
    finally:
        index.close()
    facts = {f.id: f for f in vault.read(lambda c: q.facts_by_ids(c, [*copies.values(), elsewhere,
                                                                      *(ids[i] for i in picked)], ALL))}
    for i, copy in copies.items():
        assert facts[copy].fact_group is not None and facts[copy].fact_group == facts[ids[i]].fact_group, texts[i]
        assert facts[ids[i]].is_canonical and not facts[copy].is_canonical
    assert facts[elsewhere].fact_group is None
