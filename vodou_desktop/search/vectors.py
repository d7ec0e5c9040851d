"""An in-memory float32 matrix of chunk embeddings, kept in step with the vault.

Loaded once from the vault, then updated from the vault's change events: ids touched by a write
are queued and fetched at the next query, so the writer thread never waits on us. A query is one
matrix-vector product (memory-bandwidth bound: ~60 ms at 1M x 384 on 2 cores) — no per-query SQL
read of all vectors. Policy is NOT applied here: candidates go through the vault's query builder.

One model per index: it loads only vectors recorded with its model (``chunks.embed_model``), and
its width is that of the first vector it sees (the model's). A vector of another model — left
from before a model change, until search/backfill.py replaces it — is never loaded, so old and
new vectors are never mixed; such chunks are found by the keyword path meanwhile.

Large vaults: a full product over 1M x 384 float32 reads 1.5 GB per query (~110 ms here). From
``COARSE_MIN_ROWS`` on, a coarse pass runs first over a 96-dimensional projection of every vector
(the top principal directions of a sample, refitted as the index doubles; a quarter of the bytes),
and only its best ``RERANK`` rows are scored exactly with the full vectors.
"""

from __future__ import annotations

import threading
from functools import partial

import numpy as np

from vodou_desktop.search.embedder import DEFAULT_MODEL
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import query as q

COARSE_MIN_ROWS = 150_000  # below this an exact scan takes under ~20 ms
COARSE_DIM = 96
COARSE_SAMPLE = 20_000
RERANK = 2_000
MANY_AT_ONCE = 32  # queries per matrix pass in top_many (a 1M x 32 float32 score block is 128 MB)


class VectorIndex:
    def __init__(self, vault: Vault, model: str = DEFAULT_MODEL, dim: int | None = None) -> None:
        self._vault = vault
        self.model = model
        self._dim = dim or 0  # 0 until the first vector (or the loaded model) gives the width
        self._lock = threading.Lock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._mat = np.zeros((0, self._dim), dtype=np.float32)
        self._n = 0
        self._row: dict[int, int] = {}
        self._basis: np.ndarray | None = None  # dim x COARSE_DIM projection, once the index is large
        self._low = np.zeros((0, COARSE_DIM), dtype=np.float32)
        self._fit_n = 0
        self._pending: set[int] = set()
        self._reload = False
        self._unsubscribe = vault.subscribe(self._on_change)

    def __len__(self) -> int:
        self.sync()
        return len(self._row)

    @property
    def dim(self) -> int:
        return self._dim

    def close(self) -> None:
        self._unsubscribe()

    def load(self, page: int = 50_000) -> int:
        """Read every stored embedding once (start-up)."""
        after = 0
        with self._lock:
            self._n, self._row, self._basis, self._fit_n = 0, {}, None, 0
        while True:
            rows = self._vault.read(partial(q.embeddings_after, after_id=after, limit=page, model=self.model))
            if not rows:
                with self._lock:
                    self._maybe_fit()
                return len(self._row)
            with self._lock:
                self._append(rows, fit=False)
            after = rows[-1][0]

    def _on_change(self, change: Change) -> None:
        with self._lock:
            if change.external:
                self._reload = True
            else:  # any touched chunk may have gained, changed or lost its vector (erase)
                self._pending.update(change.chunk_ids)

    def sync(self) -> None:
        """Apply queued changes (called before each query)."""
        with self._lock:
            reload, self._reload = self._reload, False
            pending, self._pending = self._pending, set()
        if reload:
            self.load()
            return
        if not pending:
            return
        ids = sorted(pending)
        rows = self._vault.read(lambda conn: q.embeddings_for(conn, ids, self.model))
        present = {i for i, _ in rows}
        with self._lock:
            for chunk_id in ids:
                if chunk_id not in present and chunk_id in self._row:
                    self._remove(chunk_id)
            self._append(rows)

    def _append(self, rows: list[tuple[int, bytes]], fit: bool = True) -> None:
        if not self._dim and rows:
            self._dim = len(rows[0][1]) // 4
            self._mat = np.zeros((0, self._dim), dtype=np.float32)
        fresh = [(i, b) for i, b in rows if len(b) == self._dim * 4]
        for chunk_id, blob in fresh:
            vec = np.frombuffer(blob, dtype="<f4")
            row = self._row.get(chunk_id)
            if row is None:
                if self._n == self._mat.shape[0]:
                    self._grow(max(1024, self._n * 2))
                row = self._n
                self._ids[row] = chunk_id
                self._row[chunk_id] = row
                self._n += 1
            self._mat[row] = vec
            if self._basis is not None:
                self._low[row] = vec @ self._basis
        if fit:
            self._maybe_fit()

    def _maybe_fit(self) -> None:
        """(Re)fit the coarse projection when the index first gets large and each time it doubles."""
        if self._n < COARSE_MIN_ROWS or (self._basis is not None and self._n < 2 * self._fit_n):
            return
        rng = np.random.default_rng(0)
        sample = self._mat[rng.choice(self._n, min(self._n, COARSE_SAMPLE), replace=False)]
        _, _, vt = np.linalg.svd(sample, full_matrices=False)
        self._basis = np.ascontiguousarray(vt[:COARSE_DIM].T, dtype=np.float32)
        self._low = np.zeros((self._mat.shape[0], COARSE_DIM), dtype=np.float32)
        for start in range(0, self._n, 100_000):
            end = min(start + 100_000, self._n)
            self._low[start:end] = self._mat[start:end] @ self._basis
        self._fit_n = self._n

    def _grow(self, capacity: int) -> None:
        mat = np.zeros((capacity, self._dim), dtype=np.float32)
        ids = np.full(capacity, -1, dtype=np.int64)
        mat[: self._n] = self._mat[: self._n]
        ids[: self._n] = self._ids[: self._n]
        self._mat, self._ids = mat, ids
        if self._basis is not None:
            low = np.zeros((capacity, COARSE_DIM), dtype=np.float32)
            low[: self._n] = self._low[: self._n]
            self._low = low

    def _remove(self, chunk_id: int) -> None:
        row = self._row.pop(chunk_id)
        self._mat[row] = 0.0
        self._ids[row] = -1
        if self._basis is not None:
            self._low[row] = 0.0

    def top(self, query: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The ``n`` nearest chunk ids by cosine (vectors are unit length)."""
        return self.top_many(np.asarray(query, dtype=np.float32).reshape(1, -1), n)[0]

    def top_many(self, queries: np.ndarray, n: int) -> list[list[tuple[int, float]]]:
        """``top`` for several query vectors at once: one pass over the matrix per ``MANY_AT_ONCE``
        queries instead of one per query (on-write grouping of a batch of new facts)."""
        self.sync()
        out: list[list[tuple[int, float]]] = []
        with self._lock:
            qs = np.asarray(queries, dtype=np.float32)
            if self._n == 0 or qs.ndim != 2 or qs.shape[1] != self._dim:  # empty, or another model's width
                return [[] for _ in range(len(qs))]
            n = min(n, self._n)
            coarse = self._basis is not None and n < RERANK
            for start in range(0, len(qs), MANY_AT_ONCE):
                part = qs[start : start + MANY_AT_ONCE]
                pass_scores = (self._low[: self._n] @ (part @ self._basis).T if coarse and self._basis is not None
                               else self._mat[: self._n] @ part.T)
                for j, qv in enumerate(part):
                    if coarse:
                        rows = _best(pass_scores[:, j], RERANK)
                        scores = self._mat[rows] @ qv
                    else:
                        rows, scores = np.arange(self._n), pass_scores[:, j]
                    best = _best(scores, n)
                    best = best[np.argsort(-scores[best])]
                    ids = self._ids[rows[best]]
                    out.append([(int(i), float(s)) for i, s in zip(ids, scores[best], strict=True) if i >= 0])
        return out


def _best(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` highest scores, unordered."""
    if n >= scores.shape[0]:
        return np.arange(scores.shape[0])
    return np.argpartition(-scores, n - 1)[:n]
