"""``VectorIndex.near_many``: every live row above a cosine (near-duplicates), without cells (a sketch
that bounds distances, so nothing is missed) and with cells (the nearest few cells)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import delete_rows, fill_vectors, structured_vectors, unit_rows
from vodou_desktop.search import vectors
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault

GATE = 0.88


def _near(base: np.ndarray, scale: float, seed: int) -> np.ndarray:
    """Copies of ``base`` rows a little off (cosine ~0.97 at 0.01: near-duplicates)."""
    return unit_rows(base + np.random.default_rng(seed).normal(scale=scale, size=base.shape))




def _exact(ids: list[int], mat: np.ndarray, qv: np.ndarray, gone: set[int] = frozenset()) -> set[int]:  # type: ignore[assignment]
    return {ids[j] for j in np.flatnonzero(mat @ qv >= GATE)} - gone


def _found(index: VectorIndex, qs: np.ndarray) -> list[set[int]]:
    return [{i for i, s in hits} for hits in index.near_many(qs, GATE, 10_000)]


@pytest.mark.parametrize("coarse", [False, True])
def test_every_near_duplicate_is_found_and_erased_rows_never(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                                            coarse: bool) -> None:
    if coarse:
        monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 3_000)
    base = structured_vectors(4_000, seed=1)
    copies = _near(base[:60], 0.01, seed=2)  # 60 stored facts with a stored near-duplicate each
    mat = np.vstack([base, copies])
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert index.coarse is coarse
    queries = _near(base[:60], 0.012, seed=3)  # a third copy of each arrives
    truth = [_exact(ids, mat, qv) for qv in queries]
    assert all(len(t) >= 2 for t in truth)
    assert _found(index, queries) == truth
    hits = index.near_many(queries[:1], GATE, 10_000)[0]
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)  # best first, exact cosines
    assert all(abs(s - float(mat[ids.index(i)] @ queries[0])) < 1e-5 for i, s in hits)
    assert len(index.near_many(queries[:1], GATE, 1)[0]) == 1
    # new rows are found at once (cells: from the tail; no cells: the sketch follows), erased never
    [new] = fill_vectors(vault, _near(base[:1], 0.01, seed=4))
    assert new in _found(index, queries[:1])[0]
    gone = [ids[0], ids[4_000]]
    delete_rows(vault, gone)
    assert not set(gone) & _found(index, queries[:1])[0]
    # enough erased to lay the rows out again (a new matrix): still every live near-duplicate
    dropped = ids[100:2_000]
    delete_rows(vault, dropped)
    assert _found(index, queries) == [_exact(ids, mat, qv, set(gone) | set(dropped)) | ({new} if j == 0 else set())
                                      for j, qv in enumerate(queries)]
    assert index.near_many(np.zeros((2, 16), dtype=np.float32), GATE, 5) == [[], []]  # another width
    index.close()


# A pass goes block by block over the rows: one block, and several with a part block at the end
BLOCKS = pytest.mark.parametrize("block", [vectors.SKETCH_BLOCK, 700])


@BLOCKS
def test_without_cells_nothing_above_the_cosine_is_missed(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                                          block: int) -> None:
    """The sketch's bound is exact: every row above the cosine, however it lies (here: copies at
    cosines from ~0.80 to ~0.99, many near the gate)."""
    monkeypatch.setattr(vectors, "SKETCH_BLOCK", block)
    base = structured_vectors(3_000, seed=5)
    rng = np.random.default_rng(6)
    copies = unit_rows(base[:300] + rng.normal(size=(300, 384)) * rng.uniform(0.002, 0.03, size=(300, 1)))
    mat = np.vstack([base, copies])
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert not index.coarse
    queries = base[:300]
    truth = [_exact(ids, mat, qv) for qv in queries]
    close_to_gate = sum(1 for j, qv in enumerate(queries) if 0.86 < float(copies[j] @ qv) < 0.90)
    assert close_to_gate >= 10
    assert _found(index, queries) == truth
    index.close()


@BLOCKS
def test_a_large_index_before_its_cells_are_fitted_scans_exactly(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                                                   block: int) -> None:
    monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 1_000)
    monkeypatch.setattr(vectors, "SKETCH_BLOCK", block)
    monkeypatch.setattr(VectorIndex, "fit_if_due", lambda self: None)  # the fit has not run yet
    base = structured_vectors(1_500, seed=7)
    copies = _near(base[:20], 0.01, seed=8)
    mat = np.vstack([base, copies])
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert not index.coarse
    assert _found(index, base[:20]) == [_exact(ids, mat, qv) for qv in base[:20]]
    index.close()


def test_the_sketch_follows_a_reload_into_the_same_matrix(vault: Vault) -> None:
    """A reload (another process wrote the vault) refills the matrix from its first row: every row
    has moved, and the sketch must not keep the old rows' projections."""
    base = structured_vectors(2_000, seed=9)
    copies = _near(base[500:540], 0.01, seed=10)
    mat = np.vstack([base, copies])
    ids = fill_vectors(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    queries = _near(base[500:540], 0.012, seed=11)
    assert _found(index, queries) == [_exact(ids, mat, qv) for qv in queries]  # the sketch is made
    gone = ids[:300]
    delete_rows(vault, gone)
    index.load()  # the same matrix, refilled: each row 300 places earlier
    assert _found(index, queries) == [_exact(ids, mat, qv, set(gone)) for qv in queries]
    index.close()
