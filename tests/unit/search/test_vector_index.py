"""The vector index: exact scan for small vaults, coarse projection + exact re-rank for large ones."""

from __future__ import annotations

import numpy as np
import pytest

from vodou_desktop.search import vectors
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault.facts import insert_fact, set_embeddings
from vodou_desktop.vault.sources import stamp_source


def _structured(n: int, seed: int = 3) -> np.ndarray:
    """Unit vectors with the low-rank structure of sentence embeddings (topics + noise)."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(40, 384))
    mix = rng.dirichlet(np.full(40, 0.3), size=n)
    mat = mix @ topics + rng.normal(scale=0.2, size=(n, 384))
    return (mat / np.linalg.norm(mat, axis=1, keepdims=True)).astype(np.float32)


def _fill(vault: Vault, mat: np.ndarray) -> list[int]:
    def job(conn, change: Change) -> list[int]:  # type: ignore[no-untyped-def]
        source = stamp_source(conn, change, kind="bench", tier="first_party")
        ids = [insert_fact(conn, change, text=f"fact {i}", source_id=source) for i in range(len(mat))]
        set_embeddings(conn, change, zip(ids, mat, strict=True), model="test")
        return ids

    return list(vault.write(job))


@pytest.fixture
def small_coarse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 3_000)
    monkeypatch.setattr(vectors, "RERANK", 300)


def test_coarse_pass_finds_nearly_the_exact_top_10(vault: Vault, small_coarse: None) -> None:
    mat = _structured(6_000)
    ids = np.asarray(_fill(vault, mat))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index._basis is not None  # the coarse stage is on
    queries = _structured(50, seed=11)
    overlap = []
    for qv in queries:
        got = index.top(qv, 10)
        exact = ids[np.argsort(-(mat @ qv))[:10]]
        overlap.append(len({i for i, _ in got} & set(exact.tolist())) / 10)
        for chunk_id, score in got:  # scores are exact cosines, not projected ones
            assert abs(score - float(mat[chunk_id - ids[0]] @ qv)) < 1e-4
    assert np.mean(overlap) >= 0.95
    index.close()


def test_coarse_index_follows_new_and_erased_vectors(vault: Vault, small_coarse: None) -> None:
    mat = _structured(3_500)
    _fill(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    probe = _structured(1, seed=99)[0]
    [new_id] = _fill(vault, probe[None, :])
    assert index.top(probe, 1)[0][0] == new_id

    def erase(conn, change: Change) -> None:  # type: ignore[no-untyped-def]
        conn.execute("DELETE FROM chunks WHERE id = ?", (new_id,))
        change.touch("chunks", chunk_ids=[new_id])

    vault.write(erase)
    assert new_id not in {i for i, _ in index.top(probe, 20)}
    index.close()


def test_small_index_is_exact(vault: Vault) -> None:
    mat = _structured(500)
    ids = np.asarray(_fill(vault, mat))
    index = VectorIndex(vault, model="test")
    index.load()
    assert index._basis is None
    qv = _structured(1, seed=5)[0]
    assert [i for i, _ in index.top(qv, 10)] == ids[np.argsort(-(mat @ qv))[:10]].tolist()
    index.close()


@pytest.mark.parametrize("coarse", [False, True])
def test_top_many_gives_each_query_what_top_gives(vault: Vault, monkeypatch: pytest.MonkeyPatch, coarse: bool) -> None:
    if coarse:
        monkeypatch.setattr(vectors, "COARSE_MIN_ROWS", 3_000)
        monkeypatch.setattr(vectors, "RERANK", 300)
    monkeypatch.setattr(vectors, "MANY_AT_ONCE", 4)  # several matrix passes
    mat = _structured(4_000, seed=9)
    _fill(vault, mat)
    index = VectorIndex(vault, model="test")
    index.load()
    assert (index._basis is not None) is coarse
    queries = _structured(10, seed=10)
    many, one_by_one = index.top_many(queries, 20), [index.top(qv, 20) for qv in queries]
    assert [[i for i, _ in r] for r in many] == [[i for i, _ in r] for r in one_by_one]
    assert np.allclose([[s for _, s in r] for r in many], [[s for _, s in r] for r in one_by_one], atol=1e-5)
    assert index.top_many(np.zeros((2, 16), dtype=np.float32), 5) == [[], []]  # another width: nothing
    index.close()
