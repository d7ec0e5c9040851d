"""The vector index: exact scan for small vaults, cells (an inverted file) with exact scores for large ones."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from bench.corpus import chunks, queries
from tests.support import delete_rows, fill_vectors, structured_vectors
from vodou_desktop.search import vectors
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault.facts import set_embeddings


@pytest.fixture
def small_coarse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells from 3,000 rows on, few cells probed (a real share of the rows is skipped)."""
    monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 3_000)
    monkeypatch.setattr(vectors, "NPROBE", 8)


def _exact_ids(index: VectorIndex, ids: dict[int, np.ndarray], qv: np.ndarray, k: int) -> list[int]:
    live = sorted(ids)
    mat = np.stack([ids[i] for i in live])
    return [live[j] for j in np.argsort(-(mat @ qv), kind="stable")[:k]]




def test_cells_find_nearly_the_exact_top_10(vault: Vault, small_coarse: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Topic mixtures without clusters are harder for cells than real sentences: a third of them probed."""
    monkeypatch.setattr(vectors, "NPROBE", 24)
    mat = structured_vectors(6_000)
    ids = np.asarray(fill_vectors(vault, mat))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index.coarse and index._cells is not None
    assert 60 < len(index._cells.centroids) < 100  # ~sqrt(n) cells
    queries = structured_vectors(50, seed=11)
    overlap = []
    for qv in queries:
        got = index.top(qv, 10)
        exact = ids[np.argsort(-(mat @ qv))[:10]]
        overlap.append(len({i for i, _ in got} & set(exact.tolist())) / 10)
        for chunk_id, score in got:  # scores are exact cosines of the full vectors
            assert abs(score - float(mat[chunk_id - ids[0]] @ qv)) < 1e-4
    assert np.mean(overlap) >= 0.85  # (0.90 measured; 0.69 with 8 cells)
    index.close()


@pytest.mark.model
def test_cells_find_the_exact_neighbours_of_real_sentences(vault: Vault, model: Embedder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Real MiniLM vectors (corpus bullets): the cells keep most of the exact top 10 and top 100."""
    monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 1_000)
    monkeypatch.setattr(vectors, "NPROBE", 8)  # of ~35 cells
    texts = list(dict.fromkeys(c.text for c in chunks(1_600, seed=5)))[:1_200]
    mat = model.encode(texts)
    ids = np.asarray(fill_vectors(vault, mat))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index.coarse
    recall = {10: [], 100: []}  # type: dict[int, list[float]]
    for qv in model.encode(queries(40, seed=3)):
        for k in recall:
            exact = set(ids[np.argsort(-(mat @ qv))[:k]].tolist())
            recall[k].append(len(exact & {i for i, _ in index.top(qv, k)}) / k)
    assert np.mean(recall[10]) >= 0.9
    assert np.mean(recall[100]) >= 0.85
    index.close()


def test_cells_follow_new_and_erased_vectors(vault: Vault, small_coarse: None) -> None:
    mat = structured_vectors(3_500)
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert index.coarse
    probe = structured_vectors(1, seed=99)[0]
    [new_id] = fill_vectors(vault, probe[None, :])
    assert index.top(probe, 1)[0][0] == new_id  # a new vector is found from the tail at once
    delete_rows(vault, [new_id])
    assert new_id not in {i for i, _ in index.top(probe, 20)}
    # the nearest laid-out rows of the probe are erased: neither the cells nor a full scan return them
    nearest = [i for i, _ in index.top(probe, 30)]
    delete_rows(vault, nearest)
    for n in (30, 500, 4_000):  # cells, more cells, a full scan
        assert not set(nearest) & {i for i, _ in index.top(probe, n)}
    assert len(index) == len(ids) - len(nearest)
    index.close()


def test_many_additions_join_the_layout_and_a_doubled_index_is_refitted(vault: Vault, small_coarse: None) -> None:
    mat = structured_vectors(3_200, seed=4)
    known = dict(zip(fill_vectors(vault, mat), mat, strict=True))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index._cells is not None
    first = index._cells
    assert first.laid == len(known)
    added = structured_vectors(600, seed=5)
    for start in range(0, len(added), 100):  # facts arrive in small batches, one query after each
        part = added[start : start + 100]
        known.update(zip(fill_vectors(vault, part), part, strict=True))
        qv = part[0]
        assert index.top(qv, 1)[0][0] == _exact_ids(index, known, qv, 1)[0]
    assert index._cells is first and first.laid > 3_200  # the tail joined the layout (same centroids)
    more = structured_vectors(3_000, seed=6)
    known.update(zip(fill_vectors(vault, more), more, strict=True))
    assert len(index) == len(known)  # the sync that starts the refit in the background
    index.join_fit(60)
    assert index._cells is not first and index._cells is not None
    assert index._cells.laid == len(known) and index._cells.fit_n == len(known)
    for qv in structured_vectors(5, seed=12):
        got = [i for i, _ in index.top(qv, 200)]
        assert len(got) == 200 and set(got) <= set(known)
    index.close()


def test_a_changed_vector_replaces_the_old_one(vault: Vault, small_coarse: None) -> None:
    mat = structured_vectors(3_100, seed=7)
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    target, probe = ids[10], structured_vectors(1, seed=77)[0]

    def move(conn, change: Change) -> None:  # type: ignore[no-untyped-def]
        set_embeddings(conn, change, [(target, probe)], model="test")

    vault.write(move)
    got = index.top(probe, 1)
    assert got[0][0] == target and abs(got[0][1] - 1.0) < 1e-5
    old = mat[10]  # a full scan: the old vector is gone, the id scores with its new one
    assert abs(dict(index.top(old, 3_000))[target] - float(probe @ old)) < 1e-5
    assert len(index) == len(ids)
    index.close()


def test_small_index_is_exact(vault: Vault) -> None:
    mat = structured_vectors(500)
    ids = np.asarray(fill_vectors(vault, mat))
    index = VectorIndex(vault, model="test")
    index.load()
    assert not index.coarse
    qv = structured_vectors(1, seed=5)[0]
    assert [i for i, _ in index.top(qv, 10)] == ids[np.argsort(-(mat @ qv))[:10]].tolist()
    index.close()


@pytest.mark.parametrize("coarse", [False, True])
def test_top_many_gives_each_query_what_top_gives(vault: Vault, monkeypatch: pytest.MonkeyPatch, coarse: bool) -> None:
    if coarse:
        monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 3_000)
        monkeypatch.setattr(vectors, "NPROBE", 8)
    monkeypatch.setattr(vectors, "MANY_AT_ONCE", 4)  # several matrix passes
    mat = structured_vectors(4_000, seed=9)
    fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert index.coarse is coarse
    queries = structured_vectors(10, seed=10)
    many, one_by_one = index.top_many(queries, 20), [index.top(qv, 20) for qv in queries]
    assert [[i for i, _ in r] for r in many] == [[i for i, _ in r] for r in one_by_one]
    assert np.allclose([[s for _, s in r] for r in many], [[s for _, s in r] for r in one_by_one], atol=1e-5)
    assert index.top_many(np.zeros((2, 16), dtype=np.float32), 5) == [[], []]  # another width: nothing
    index.close()


def test_laying_the_rows_out_adds_blocks_not_a_second_matrix(vault: Vault, small_coarse: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The relayout (after a fit, or when the tail or the free rows grow) moves rows in place a block at
    a time: its peak allocation is a few blocks, not a copy of the matrix (1.5 GB at 1M rows)."""
    import tracemalloc

    monkeypatch.setattr(vectors, "MOVE_ROWS", 256)
    mat = structured_vectors(3_600, seed=13)
    known = dict(zip(fill_vectors(vault, mat), mat, strict=True))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index._cells is not None
    tail = structured_vectors(400, seed=14)  # a tail to join the layout, and erased rows to drop
    known.update(zip(fill_vectors(vault, tail), tail, strict=True))
    erased = list(known)[5:400:3]
    delete_rows(vault, erased)
    for i in erased:
        del known[i]
    with index._lock:  # what sync does, without starting it here
        pending, index._pending = index._pending, set()
    rows = vault.read(lambda conn: vectors.q.embeddings_for(conn, sorted(pending), "test"))
    with index._lock:
        for i in sorted(pending):
            if i in index._row and i not in {r for r, _ in rows}:
                index._remove(i)
        index._append(rows)
        assert index._cells.laid < index._n and len(index._row) < index._n
        matrix_bytes = index._n * mat.shape[1] * 4
        tracemalloc.start()
        try:
            index._relayout()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < matrix_bytes / 4, (peak, matrix_bytes)  # blocks of 256 rows + index arrays
    # every live row holds its own vector, laid out by cell; nothing erased is left
    assert index._cells.laid == index._n == len(known) == len(index._row)
    for chunk_id, row in index._row.items():
        assert np.array_equal(index._mat[row], known[chunk_id])
    cells = index._cell[: index._n]
    assert np.all(np.diff(cells) >= 0)
    assert np.array_equal(index._cells.starts, np.concatenate([[0], np.cumsum(np.bincount(cells, minlength=len(
        index._cells.centroids)))]))
    for qv in structured_vectors(5, seed=15):
        got = index.top(qv, 400)  # more than a quarter of the rows: a full scan, exact
        assert [i for i, _ in got] == _exact_ids(index, known, qv, 400)
    index.close()


def test_near_duplicates_are_found_after_rows_were_moved_in_place(vault: Vault) -> None:
    """Without cells, near_many bounds rows by a sketch that follows them by position; a relayout moves
    rows within the same matrix, so the sketch must be redone, or a moved row is judged by another's."""
    mat = structured_vectors(2_100, seed=21)
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    room = index._mat.shape[0]
    assert not index.coarse and room >= 2_600
    index.near_many(mat[:2], 0.95, 5)  # the sketch covers the 2,100 rows
    more = structured_vectors(500, seed=22)
    more_ids = fill_vectors(vault, more)  # 2,600 rows: the same matrix
    delete_rows(vault, ids[:1_030])  # enough free rows for a relayout: every row after them moves up
    for qv, chunk_id in [(mat[1_500], ids[1_500]), (mat[2_099], ids[2_099]), (more[300], more_ids[300])]:
        got = index.near_many(qv[None, :], 0.95, 5)[0]
        assert got and got[0][0] == chunk_id and abs(got[0][1] - 1.0) < 1e-5
    assert index._n == len(index) == 1_570 and index._mat.shape[0] == room  # laid out in place
    index.close()


def test_a_load_makes_room_for_its_rows_once(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    """The matrix is made for every stored vector at once, not doubled as pages of them come (each
    doubling a copy held beside the old matrix)."""
    mat = structured_vectors(3_000, seed=23)
    fill_vectors(vault, mat)
    grown: list[int] = []
    real_grow = VectorIndex._grow

    def counted(self: VectorIndex, capacity: int) -> None:
        grown.append(capacity)
        real_grow(self, capacity)

    monkeypatch.setattr(VectorIndex, "_grow", counted)
    index = VectorIndex(vault, model="test")
    assert index.load(page=500) == 3_000
    assert len(grown) == 1 and grown[0] >= 3_000
    index.load(page=500)  # a reload refills the same matrix
    assert len(grown) == 1
    more = structured_vectors(300, seed=24)
    fill_vectors(vault, more)
    assert len(index) == 3_300 and len(grown) == 1  # the room left takes the next vectors too
    index.close()


@pytest.mark.parametrize("reload_ends", ["before the fit", "after the fit"])
def test_a_reload_during_a_fit_is_fitted_in_turn(vault: Vault, small_coarse: None, monkeypatch: pytest.MonkeyPatch,
                                                 reload_ends: str) -> None:
    """A reload (the vault reopened after a restore or a conversion) while a fit runs drops that fit's
    result; the reloaded rows get their cells then, not only at the next write (until which every
    query of a large vault would scan every row)."""
    mat = structured_vectors(3_200, seed=7)
    known = dict(zip(fill_vectors(vault, mat), mat, strict=True))
    index = VectorIndex(vault, model="test")
    real_kmeans, real_read = vectors.kmeans, vault.read
    in_fit, fit_goes_on = threading.Event(), threading.Event()
    in_reload, reload_goes_on = threading.Event(), threading.Event()
    fits: list[int] = []

    def held_kmeans(sample: np.ndarray, cells: int) -> np.ndarray:
        fits.append(len(sample))
        if len(fits) == 1:  # the first load's fit waits here while the vault is reloaded
            in_fit.set()
            assert fit_goes_on.wait(60)
        return real_kmeans(sample, cells)

    monkeypatch.setattr(vectors, "kmeans", held_kmeans)
    first = threading.Thread(target=index.load)  # a load fits at its end
    first.start()
    assert in_fit.wait(60)
    reload = threading.Thread(target=index.load)
    if reload_ends == "after the fit":  # the reload is still reading rows when the fit ends
        def held_read(fn: Any) -> Any:
            if threading.current_thread() is reload and not in_reload.is_set():
                in_reload.set()
                assert reload_goes_on.wait(60)
            return real_read(fn)

        monkeypatch.setattr(vault, "read", held_read)
        reload.start()
        assert in_reload.wait(60)
        fit_goes_on.set()
        first.join(60)
        reload_goes_on.set()
    else:
        reload.start()
        reload.join(60)
        fit_goes_on.set()
    first.join(60)
    reload.join(60)
    assert not first.is_alive() and not reload.is_alive()
    assert index.coarse and index._cells is not None and index._cells.laid == len(known)
    assert len(fits) == 2  # the dropped fit and one fit of the reloaded rows, not more
    qv = structured_vectors(1, seed=8)[0]
    assert index.top(qv, 1)[0][0] == _exact_ids(index, known, qv, 1)[0]
    index.close()
