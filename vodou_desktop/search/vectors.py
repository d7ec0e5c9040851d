"""An in-memory float32 matrix of chunk embeddings, kept in step with the vault.

Loaded once from the vault, then updated from the vault's change events: ids touched by a write
are queued and fetched at the next query, so the writer thread never waits on us. A query is one
matrix-vector product (memory-bandwidth bound: ~60 ms at 1M x 384 on 2 cores) — no per-query SQL
read of all vectors. Policy is NOT applied here: candidates go through the vault's query builder.
"""

from __future__ import annotations

import threading
from functools import partial

import numpy as np

from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import EMBEDDING_DIM


class VectorIndex:
    def __init__(self, vault: Vault, dim: int = EMBEDDING_DIM) -> None:
        self._vault = vault
        self._dim = dim
        self._lock = threading.Lock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._mat = np.zeros((0, dim), dtype=np.float32)
        self._n = 0
        self._row: dict[int, int] = {}
        self._pending: set[int] = set()
        self._reload = False
        self._unsubscribe = vault.subscribe(self._on_change)

    def __len__(self) -> int:
        self.sync()
        return len(self._row)

    def close(self) -> None:
        self._unsubscribe()

    def load(self, page: int = 50_000) -> int:
        """Read every stored embedding once (start-up)."""
        after = 0
        with self._lock:
            self._n, self._row = 0, {}
        while True:
            rows = self._vault.read(partial(q.embeddings_after, after_id=after, limit=page))
            if not rows:
                return len(self._row)
            with self._lock:
                self._append(rows)
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
        rows = self._vault.read(lambda conn: q.embeddings_for(conn, ids))
        present = {i for i, _ in rows}
        with self._lock:
            for chunk_id in ids:
                if chunk_id not in present and chunk_id in self._row:
                    self._remove(chunk_id)
            self._append(rows)

    def _append(self, rows: list[tuple[int, bytes]]) -> None:
        fresh = [(i, b) for i, b in rows if len(b) == self._dim * 4]
        for chunk_id, blob in fresh:
            vec = np.frombuffer(blob, dtype="<f4")
            if chunk_id in self._row:
                self._mat[self._row[chunk_id]] = vec
                continue
            if self._n == self._mat.shape[0]:
                self._grow(max(1024, self._n * 2))
            self._mat[self._n] = vec
            self._ids[self._n] = chunk_id
            self._row[chunk_id] = self._n
            self._n += 1

    def _grow(self, capacity: int) -> None:
        mat = np.zeros((capacity, self._dim), dtype=np.float32)
        ids = np.full(capacity, -1, dtype=np.int64)
        mat[: self._n] = self._mat[: self._n]
        ids[: self._n] = self._ids[: self._n]
        self._mat, self._ids = mat, ids

    def _remove(self, chunk_id: int) -> None:
        row = self._row.pop(chunk_id)
        self._mat[row] = 0.0
        self._ids[row] = -1

    def top(self, query: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The ``n`` nearest chunk ids by cosine (vectors are unit length)."""
        self.sync()
        with self._lock:
            if self._n == 0:
                return []
            scores = self._mat[: self._n] @ np.asarray(query, dtype=np.float32)
            ids = self._ids[: self._n]
            n = min(n, self._n)
            idx = np.argpartition(-scores, n - 1)[:n] if n < self._n else np.arange(self._n)
            idx = idx[np.argsort(-scores[idx])]
            return [(int(ids[i]), float(scores[i])) for i in idx if ids[i] >= 0]
