"""An in-memory float32 matrix of chunk embeddings, kept in step with the vault.

Loaded once from the vault, then updated from the vault's change events: ids touched by a write
are queued and fetched at the next query, so the writer thread never waits on us. A query is one
matrix-vector product (memory-bandwidth bound: ~60 ms at 1M x 384 on 2 cores) — no per-query SQL
read of all vectors. Policy is NOT applied here: the index only proposes ids, and every candidate
goes through the vault's query builder. The index lives in memory only (never in a file beside a
vault that may be encrypted).

One model per index: it loads only vectors recorded with its model (``chunks.embed_model``), and
its width is that of the first vector it sees (the model's). A vector of another model — left
from before a model change, until search/backfill.py replaces it — is never loaded, so old and
new vectors are never mixed; such chunks are found by the keyword path meanwhile.

Large vaults: a full product over 1M x 384 float32 reads 1.5 GB per query (~110 ms here). From
``COARSE_MIN_ROWS`` on, the rows are grouped in cells (an inverted file): spherical k-means over a
sample gives ~sqrt(n) centroids, every row is assigned to its nearest one, and the matrix is laid
out cell by cell, so that a query scores the centroids, then only the rows of its ``NPROBE`` best
cells — contiguous slices, scored exactly with the full vectors (the scores returned are exact
cosines). A larger ``n`` probes more cells; a request for a large share of the index scans it all.
New rows are assigned to their cell as they come and kept in a tail until the layout is redone
(when the tail reaches an eighth of the laid-out rows); the centroids are refitted each time the
index doubles. The fit runs outside the lock (queries are answered by exact scans meanwhile).
Measured against exact search and HNSW libraries on real vectors: ``python -m bench.index_compare``.
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from vodou_desktop.search.embedder import DEFAULT_MODEL
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import query as q

COARSE_MIN_ROWS = 150_000  # below this an exact scan takes under ~20 ms
CELLS_PER_SQRT_N = 1.0  # cells: about sqrt(n) (1,000 of ~1,000 rows at 1M)
NPROBE = 48  # cells scored for a top 10
PROBE_ROWS_PER_RESULT = 8  # a larger n probes more cells: about this many rows per wanted result
EXACT_SHARE = 0.25  # asking for this share of the probed rows or more: scan everything
KMEANS_ITERATIONS = 10
KMEANS_SAMPLE_PER_CELL = 40
ASSIGN_ROWS = 16_384  # rows per block when assigning rows to cells (a 16k x 1k score block is 64 MB)
MOVE_ROWS = 16_384  # rows moved at a time when laying the matrix out (24 MB of 384-wide rows)
MANY_AT_ONCE = 32  # queries per matrix pass in top_many (a 1M x 32 float32 score block is 128 MB)
NEAR_NPROBE = 8  # cells scored per query for near-duplicates (``near_many``; bench.near_dupes)
SKETCH_DIM = 48  # width of the sketch that bounds distances for near-duplicates without cells
SKETCH_FIT_SAMPLE = 4_096  # rows whose covariance gives the sketch's axes (its 48 main ones need no more)
SKETCH_SLACK = 1e-3  # float32 rounding and vectors a hair off unit length: never let it drop a row
# Rows per block of a near-duplicate pass: the block of products (a batch of 128 new facts x 8k rows,
# 4 MB) stays in cache between the product and the test. At 100k rows, 128 facts: 14 ms a pass
# against 33 ms in blocks of 64k rows.
SKETCH_BLOCK = 8_192


@dataclass
class _Cells:
    """The inverted-file layout: rows ``[0, laid)`` are sorted by cell, ``starts[c]:starts[c + 1]``."""

    centroids: np.ndarray  # cells x dim, unit length
    starts: np.ndarray  # cells + 1 offsets into the laid-out rows
    laid: int  # rows [laid, n) are the tail, in arrival order
    fit_n: int  # live rows when the centroids were fitted


def cell_count(n: int) -> int:
    return int(min(4096, max(16, round(CELLS_PER_SQRT_N * math.sqrt(n)))))


def kmeans(sample: np.ndarray, cells: int, iterations: int = KMEANS_ITERATIONS, seed: int = 0) -> np.ndarray:
    """Spherical k-means: ``cells`` unit centroids of the unit rows of ``sample``."""
    rng = np.random.default_rng(seed)
    cent = sample[rng.choice(len(sample), cells, replace=False)].copy()
    for _ in range(iterations):
        assign = np.argmax(sample @ cent.T, axis=1)
        sums = np.zeros_like(cent)
        np.add.at(sums, assign, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        if empty.any():  # restart an empty cell on a random sample row
            sums[empty] = sample[rng.choice(len(sample), int(empty.sum()), replace=False)]
            norms[empty] = np.linalg.norm(sums[empty], axis=1)
        cent = (sums / norms[:, None]).astype(np.float32)
    return np.ascontiguousarray(cent)


def assign(mat: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The nearest centroid of each row, block by block."""
    out = np.empty(len(mat), dtype=np.int32)
    for start in range(0, len(mat), ASSIGN_ROWS):
        block = mat[start : start + ASSIGN_ROWS]
        out[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


class VectorIndex:
    def __init__(self, vault: Vault, model: str = DEFAULT_MODEL, dim: int | None = None) -> None:
        self._vault = vault
        self.model = model
        self._dim = dim or 0  # 0 until the first vector (or the loaded model) gives the width
        self._lock = threading.Lock()
        self._ids = np.zeros(0, dtype=np.int64)  # -1: a free row (erased, or replaced by a newer vector)
        self._mat = np.zeros((0, self._dim), dtype=np.float32)
        self._cell = np.zeros(0, dtype=np.int32)
        self._n = 0
        self._row: dict[int, int] = {}
        self._cells: _Cells | None = None
        self._fitting = False
        self._loading = False
        self._room = 0  # rows to make room for at once while loading (see ``load``)
        self._fit_thread: threading.Thread | None = None
        self._generation = 0  # bumped by load(): a fit of an older generation is dropped
        self._pending: set[int] = set()
        self._reload = False
        self._held = threading.local()  # depth of ``held`` blocks on this thread
        self._near_sketch: _Sketch | None = None  # near_many's, without cells (made at its first call)
        self._unsubscribe = vault.subscribe(self._on_change)

    def __len__(self) -> int:
        self.sync()
        return len(self._row)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def coarse(self) -> bool:
        """Whether queries go through the cells (a large index) rather than an exact scan."""
        return self._cells is not None

    def close(self) -> None:
        self._unsubscribe()

    def load(self, page: int = 50_000) -> int:
        """Read every stored embedding once (start-up)."""
        after = 0
        # Room for every chunk at once (an upper bound on the vectors, read from the id index), not
        # grown by doubling as rows come, each doubling a copy held beside the old matrix (peak of a
        # load at 100k vectors: 428 -> 381 MB; at 1M, where the fit sets the peak, 2,071 -> 2,000 MB).
        # Rows never written are zero pages, never touched.
        expect = self._vault.read(q.chunk_count_estimate)
        with self._lock:
            self._n, self._row, self._cells = 0, {}, None
            self._generation += 1
            self._loading = True
            self._room = expect + expect // 4  # and a quarter more for the vectors that come next
        try:
            while True:
                rows = self._vault.read(partial(q.embeddings_after, after_id=after, limit=page, model=self.model))
                if not rows:
                    break
                with self._lock:
                    self._append(rows)
                after = rows[-1][0]
        finally:
            with self._lock:
                self._loading, self._room = False, 0
        self.fit_if_due()
        return len(self._row)

    def _on_change(self, change: Change) -> None:
        with self._lock:
            if change.external:
                self._reload = True
            else:  # any touched chunk may have gained, changed or lost its vector (erase)
                self._pending.update(change.chunk_ids)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Apply queued changes now; queries in the block use the index as it then is.

        For a caller that queries the index inside one of the vault's read transactions: a sync in
        there would read the changed rows in the transaction's snapshot, older than the change, and
        drop what it cannot see yet (a vector written meanwhile would never be added). Changes queued
        during the block are applied by the next sync outside one."""
        self.sync()
        self._held.depth = getattr(self._held, "depth", 0) + 1
        try:
            yield
        finally:
            self._held.depth -= 1

    def sync(self) -> None:
        """Apply queued changes (called before each query; not inside ``held``)."""
        if getattr(self._held, "depth", 0):
            return
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
            laid = self._cells.laid if self._cells is not None else self._n
            if not self._fitting and (self._n - laid > max(256, laid // 8)  # a long tail
                                      or self._n - len(self._row) > max(1_024, self._n // 4)):  # many free rows
                self._relayout()
            due = self._fit_due() and not self._loading
        if due:  # never on the query's thread: queries go on meanwhile (exact, or with the old cells)
            self._fit_thread = threading.Thread(target=self.fit_if_due, name="vodou-index-fit", daemon=True)
            self._fit_thread.start()

    def join_fit(self, timeout: float | None = None) -> None:
        """Wait for a fit started in the background by ``sync`` (tests, benchmarks)."""
        if self._fit_thread is not None:
            self._fit_thread.join(timeout)

    def _append(self, rows: list[tuple[int, bytes]]) -> None:
        if not self._dim and rows:
            self._dim = len(rows[0][1]) // 4
            self._mat = np.zeros((0, self._dim), dtype=np.float32)
        fresh = [(i, b) for i, b in rows if len(b) == self._dim * 4]
        for chunk_id, blob in fresh:
            vec = np.frombuffer(blob, dtype="<f4")
            row = self._row.get(chunk_id)
            if row is not None:
                if np.array_equal(self._mat[row], vec):  # touched, vector unchanged
                    continue
                self._remove(chunk_id)  # a row never changes once written (a fit may be reading it)
            if self._n == self._mat.shape[0]:
                self._grow(max(1024, self._n * 2, self._room))
            row = self._n
            self._ids[row] = chunk_id
            self._row[chunk_id] = row
            self._mat[row] = vec
            self._cell[row] = -1 if self._cells is None else int(np.argmax(self._cells.centroids @ vec))
            self._n += 1

    def fit_if_due(self) -> None:
        """Group the rows in cells when the index first gets large, and again each time it doubles.

        The k-means and the assignment of every row run outside the lock on the rows present at
        the start (rows are never changed in place: an erased row is only zeroed and freed). A
        reload meanwhile (the vault reopened after a restore or a conversion) drops the result, and
        the reloaded rows are fitted in turn: the reload's own fit did not start while this one ran."""
        while self._fit_once():
            pass

    def _fit_once(self) -> bool:
        """One fit if due; whether its result was dropped for a reload (and another may be due)."""
        with self._lock:
            if not self._fit_due():
                return False
            self._fitting = True
            mat, n, generation = self._mat, self._n, self._generation
            live_rows = np.flatnonzero(self._ids[:n] >= 0)
        dropped = False
        try:
            cells = cell_count(len(live_rows))
            rng = np.random.default_rng(0)
            take = min(len(live_rows), cells * KMEANS_SAMPLE_PER_CELL)
            sample = mat[np.sort(rng.choice(live_rows, take, replace=False))]
            centroids = kmeans(sample, cells)
            cell = assign(mat[:n], centroids)
            with self._lock:
                dropped = generation != self._generation  # reloaded meanwhile
                if not dropped:
                    self._cell[:n] = cell
                    self._cell[n : self._n] = assign(self._mat[n : self._n], centroids)  # came during the fit
                    self._cells = _Cells(centroids, np.zeros(cells + 1, dtype=np.int64), 0, len(live_rows))
                    self._relayout()
        finally:
            with self._lock:
                self._fitting = False
                # decided under the lock: a load still running fits at its own end, once this is over
                again = dropped and not self._loading
        return again

    def _fit_due(self) -> bool:
        live = len(self._row)
        return (not self._fitting and live >= COARSE_MIN_ROWS
                and (self._cells is None or live >= 2 * self._cells.fit_n))

    def _relayout(self) -> None:
        """Drop the free rows and, with cells, sort the live rows by cell: the tail joins the layout.

        In place, ``MOVE_ROWS`` rows at a time (``permute_rows``): the matrix (1.5 GB at 1M rows) is
        never copied whole, so laying it out adds a few blocks to the peak memory, not a second
        matrix. Queries wait on the lock meanwhile; a fit reads the matrix outside the lock, so this
        never runs while one does (``_fitting``), only at its end."""
        total = self._n
        live = np.flatnonzero(self._ids[:total] >= 0)
        order = live[np.argsort(self._cell[live], kind="stable")] if self._cells is not None else live
        n = len(order)
        if n < total:  # the free rows go after the live ones, where they are dropped
            order = np.concatenate([order, np.flatnonzero(self._ids[:total] < 0)])
        permute_rows(self._mat, order)
        # near_many's sketch follows rows by position in this matrix: they moved, so it is redone
        # (as when a relayout made a new matrix)
        self._near_sketch = None
        self._ids[:total] = self._ids[order]
        self._cell[:total] = self._cell[order]
        self._ids[n:total], self._cell[n:total] = -1, -1
        self._n = n
        capacity = max(1024, n * 5 // 4)
        if self._mat.shape[0] > 2 * capacity:  # most rows were freed: give their memory back
            self._mat = self._mat[:capacity].copy()
            self._ids, self._cell = self._ids[:capacity].copy(), self._cell[:capacity].copy()
        self._row = dict(zip(self._ids[:n].tolist(), range(n), strict=True))
        if self._cells is None:
            return
        counts = np.bincount(self._cell[:n], minlength=len(self._cells.centroids))
        self._cells.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._cells.laid = n

    def _grow(self, capacity: int) -> None:
        mat = np.zeros((capacity, self._dim), dtype=np.float32)
        ids = np.full(capacity, -1, dtype=np.int64)
        cell = np.full(capacity, -1, dtype=np.int32)
        mat[: self._n] = self._mat[: self._n]
        ids[: self._n] = self._ids[: self._n]
        cell[: self._n] = self._cell[: self._n]
        self._mat, self._ids, self._cell = mat, ids, cell

    def _remove(self, chunk_id: int) -> None:
        self._ids[self._row.pop(chunk_id)] = -1  # a free row: never returned; dropped at the next layout

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
            if self._n == 0 or not self._row or qs.ndim != 2 or qs.shape[1] != self._dim:
                return [[] for _ in range(len(qs))]  # empty, or another model's width
            n = min(n, len(self._row))
            cells = self._cells
            if cells is not None and n * PROBE_ROWS_PER_RESULT < EXACT_SHARE * len(self._row):
                return [self._top_cells(cells, qv, n) for qv in qs]
            for start in range(0, len(qs), MANY_AT_ONCE):
                part = qs[start : start + MANY_AT_ONCE]
                pass_scores = self._mat[: self._n] @ part.T
                for j in range(len(part)):
                    out.append(self._pick(None, pass_scores[:, j], n))
        return out

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Cosine of ``query`` with each of ``ids`` whose vector the index holds (the others are left
        out): one product over their rows, scored as ``top`` scores them."""
        self.sync()
        with self._lock:
            qv = np.asarray(query, dtype=np.float32)
            row = self._row
            held = [i for i in ids if i in row]
            if not held or qv.shape != (self._dim,):
                return {}
            rows = np.fromiter((row[i] for i in held), dtype=np.int64, count=len(held))
            return dict(zip(held, (self._mat[rows] @ qv).tolist(), strict=True))

    def _top_cells(self, cells: _Cells, qv: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Exact scores of the rows of the best cells for ``qv`` (the lock is held).

        The probed cells' rows are listed at once (no array per cell) and each cell's slice is scored
        straight into one score array: per probed cell only its product runs in Python."""
        count = len(cells.centroids)
        per_cell = max(1.0, cells.laid / count)
        probe = min(count, NPROBE + math.ceil(n * PROBE_ROWS_PER_RESULT / per_cell))
        near = np.argpartition(-(cells.centroids @ qv), probe - 1)[:probe] if probe < count else np.arange(count)
        starts, ends = cells.starts[near], cells.starts[near + 1]
        sizes = ends - starts
        tail = np.zeros(0, dtype=np.int64)
        if self._n > cells.laid:  # the tail: rows added since the layout, in their cells
            wanted = np.zeros(count, dtype=bool)
            wanted[near] = True
            tail = cells.laid + np.flatnonzero(wanted[self._cell[cells.laid : self._n]])
        laid = int(sizes.sum())
        if laid + len(tail) == 0:
            return []
        # row numbers of every probed cell in probe order: each cell's start, then +1 along the cell
        rows = np.arange(laid + len(tail), dtype=np.int64)
        if laid:
            offsets = np.cumsum(sizes) - sizes
            rows[:laid] += np.repeat(starts - offsets, sizes)
        rows[laid:] = tail
        scores = np.empty(len(rows), dtype=np.float32)
        at = 0
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            if end > start:
                np.matmul(self._mat[start:end], qv, out=scores[at : at + end - start])
                at += end - start
        if len(tail):
            scores[laid:] = self._mat[tail] @ qv
        return self._pick(rows, scores, n)

    def _pick(self, rows: np.ndarray | None, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The ``n`` best live rows among ``rows`` (scored ``scores``; None: every row, in order),
        best first, as (id, score)."""
        ids = self._ids[: len(scores)] if rows is None else self._ids[rows]
        live = ids >= 0
        if not live.all():
            scores, ids = scores[live], ids[live]
        best = _best(scores, n)
        best = best[np.argsort(-scores[best], kind="stable")]
        return list(zip(ids[best].tolist(), scores[best].tolist(), strict=True))

    def near_many(self, queries: np.ndarray, min_score: float, limit: int,
                  nprobe: int = NEAR_NPROBE) -> list[list[tuple[int, float]]]:
        """For each query vector, the live chunks whose cosine to it is at least ``min_score`` (best
        first, at most ``limit``): near-duplicates, which is all on-write grouping can use, rather than
        a general top n. Much cheaper than ``top_many`` because so few rows can be that close:

        - with cells, only the ``nprobe`` cells nearest each query are scored (a near-duplicate sits
          in the same cell or the next nearest; measured by ``python -m bench.near_dupes``);
        - without cells, a sketch of every row (its projection on the ``SKETCH_DIM`` main axes of the
          vectors, kept beside the matrix) bounds each row's distance from below, and only rows that
          bound lets through are scored in full. The bound never drops a row that passes: nothing is
          missed, whatever the axes.
        The scores returned are exact cosines; erased rows are never returned."""
        self.sync()
        with self._lock:
            qs = np.asarray(queries, dtype=np.float32)
            if self._n == 0 or not self._row or qs.ndim != 2 or qs.shape[1] != self._dim:
                return [[] for _ in range(len(qs))]  # empty, or another model's width
            cells = self._cells
            if cells is not None:
                self._near_sketch = None
                return [self._pick(*_scored_above(self._mat, slices, tail, qv, min_score), limit)
                        for qv, (slices, tail) in zip(qs, _near_cells(cells, self._cell[: self._n], qs, nprobe),
                                                      strict=True)]
            if len(self._row) < COARSE_MIN_ROWS:
                self._near_sketch = _Sketch.kept(self._near_sketch, self._mat, self._n, self._ids,
                                                 self._generation)
                rows = self._near_sketch.candidates(qs, min_score)
            else:  # a large index whose cells are being fitted: an exact scan meanwhile
                rows = _above(self._mat[: self._n], qs, min_score)
            out = []
            for qv, cand in zip(qs, rows, strict=True):
                cand = cand[self._ids[cand] >= 0]
                scores = self._mat[cand] @ qv
                keep = scores >= min_score
                out.append(self._pick(cand[keep], scores[keep], limit) if keep.any() else [])
            return out


def permute_rows(mat: np.ndarray, order: np.ndarray, block: int | None = None) -> None:
    """Put row ``order[j]`` of ``mat`` at row ``j``, for every ``j < len(order)`` (``order`` is a
    permutation of ``range(len(order))``), in place, moving at most ``block`` rows at a time.

    Block by block from the top: the rows wanted in the next block are gathered wherever they are
    now (all below the placed rows), the block's rows that are not among them move into the places
    those leave, then the gathered rows fill the block. Extra memory: two blocks of rows and four
    integers a row."""
    block = block or MOVE_ROWS
    total = len(order)
    pos_of = np.arange(total)  # current position of each original row
    row_at = np.arange(total)  # original row now at each position
    for start in range(0, total, block):
        end = min(start + block, total)
        want = order[start:end]
        src = pos_of[want]
        if np.array_equal(src, np.arange(start, end)):
            continue  # already in place
        inside = np.zeros(end - start, dtype=bool)
        inside[src[src < end] - start] = True
        displaced = start + np.flatnonzero(~inside)  # block rows not wanted here
        vacated = src[src >= end]  # where the wanted rows from below were: the displaced go there
        gathered = mat[src]
        mat[vacated] = mat[displaced]
        mat[start:end] = gathered
        moved = row_at[displaced]
        row_at[vacated], pos_of[moved] = moved, vacated
        row_at[start:end], pos_of[want] = want, np.arange(start, end)


def _best(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` highest scores, unordered."""
    if n >= scores.shape[0]:
        return np.arange(scores.shape[0])
    return np.argpartition(-scores, n - 1)[:n]


def _near_cells(cells: _Cells, row_cells: np.ndarray, qs: np.ndarray, nprobe: int
                ) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
    """For each query, the rows of its ``nprobe`` nearest cells: their laid-out slices (start, end),
    and the tail rows assigned to them."""
    count = len(cells.centroids)
    probe = min(count, max(1, nprobe))
    scores = qs @ cells.centroids.T
    near = np.argpartition(-scores, probe - 1, axis=1)[:, :probe] if probe < count else \
        np.broadcast_to(np.arange(count), (len(qs), count))
    tail_cells = row_cells[cells.laid :]
    out = []
    for best in near:
        slices = [(int(cells.starts[c]), int(cells.starts[c + 1])) for c in best.tolist()]
        tail = np.zeros(0, dtype=np.int64)
        if len(tail_cells):
            wanted = np.zeros(count, dtype=bool)
            wanted[best] = True
            tail = cells.laid + np.flatnonzero(wanted[tail_cells])
        out.append((slices, tail))
    return out


def _scored_above(mat: np.ndarray, slices: list[tuple[int, int]], tail: np.ndarray, qv: np.ndarray,
                  min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``slices`` (scored in place, no copy) and of ``tail`` that score at least
    ``min_score`` against ``qv``, with their scores."""
    rows, scores = [], []
    for start, end in slices:
        part = mat[start:end] @ qv
        hit = np.flatnonzero(part >= min_score)
        rows.append(start + hit)
        scores.append(part[hit])
    if len(tail):
        part = mat[tail] @ qv
        hit = np.flatnonzero(part >= min_score)
        rows.append(tail[hit])
        scores.append(part[hit])
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return np.concatenate(rows).astype(np.int64), np.concatenate(scores)


@dataclass
class _Sketch:
    """Every row projected on ``SKETCH_DIM`` orthonormal axes (the main axes of the vectors' spread).

    A projection never lengthens a difference, so ``|P(a - b)|`` bounds ``|a - b|`` from below: a
    row whose bound is already too far cannot reach the cosine asked for, and is skipped without
    reading its full vector. The axes decide only how many rows are skipped, never which near rows
    are found. A replaced or erased vector gets a new row, or none, so the sketch follows the index by
    projecting new rows only; it is dropped, and everything projected again, when the index moves to
    a new matrix (grown), lays its rows out by cell in place (rows change position), or reloads."""

    axes: np.ndarray  # dim x SKETCH_DIM, orthonormal columns
    fit_rows: int  # rows when the axes were chosen
    mat: weakref.ref[np.ndarray]  # the index matrix projected here (not kept alive once replaced)
    proj: np.ndarray  # one row per matrix row: its projection, then the projection's squared length
    rows: int  # rows [0, rows) are projected
    generation: int  # the index's load: a reload refills the same matrix from its first row

    @staticmethod
    def kept(old: _Sketch | None, mat: np.ndarray, n: int, ids: np.ndarray, generation: int) -> _Sketch:
        """``old`` brought up to date with the index's ``mat`` (``n`` rows), or a new sketch when
        there is none or the index has doubled since its axes were chosen."""
        if old is None or n >= 2 * max(old.fit_rows, 512):
            live = np.flatnonzero(ids[:n] >= 0)
            take = live if len(live) <= SKETCH_FIT_SAMPLE else \
                np.sort(np.random.default_rng(0).choice(live, SKETCH_FIT_SAMPLE, replace=False))
            old = _Sketch(_main_axes(mat[take], SKETCH_DIM), n, weakref.ref(mat), np.zeros((0, 0), np.float32), 0,
                          generation)
        if old.mat() is not mat or old.proj.shape[0] != mat.shape[0] or old.generation != generation or n < old.rows:
            old.mat, old.rows, old.generation = weakref.ref(mat), 0, generation
            old.proj = np.zeros((mat.shape[0], old.axes.shape[1] + 1), dtype=np.float32)
        if n > old.rows:
            part = mat[old.rows : n] @ old.axes
            old.proj[old.rows : n, :-1] = part
            old.proj[old.rows : n, -1] = np.einsum("ij,ij->i", part, part)
            old.rows = n
        return old

    def candidates(self, qs: np.ndarray, min_score: float) -> list[np.ndarray]:
        """For each (unit) query, the rows whose bound lets a cosine of ``min_score`` through."""
        pq = qs @ self.axes
        # |a - b|^2 = 2 - 2 cos for unit vectors; the bound |Pa|^2 + |Pb|^2 - 2 Pa.Pb must not exceed it.
        # One product gives |Pb|^2 - 2 Pa.Pb for every row: [Pb, |Pb|^2] . [-2 Pa, 1]
        room = (2.0 - 2.0 * min_score + SKETCH_SLACK) - np.einsum("ij,ij->i", pq, pq)
        weights = np.hstack([-2.0 * pq, np.ones((len(qs), 1), dtype=np.float32)])
        return _passing(self.proj[: self.rows], weights, lambda block: block <= room[:, None])


def _main_axes(sample: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` directions of largest spread of ``sample``'s rows, as orthonormal columns."""
    centred = sample - sample.mean(axis=0)
    cov = (centred.T @ centred).astype(np.float64)
    _, vecs = np.linalg.eigh(cov)  # ascending
    return np.ascontiguousarray(vecs[:, ::-1][:, : min(k, sample.shape[1])].astype(np.float32))


def _passing(mat: np.ndarray, qs: np.ndarray, test: Callable[[np.ndarray], np.ndarray]) -> list[np.ndarray]:
    """For each query, the rows of ``mat`` whose products with it pass ``test`` (given a block of
    products, queries x rows), block by block."""
    found: list[list[np.ndarray]] = [[] for _ in range(len(qs))]
    for start in range(0, len(mat), SKETCH_BLOCK):
        passed = test(qs @ mat[start : start + SKETCH_BLOCK].T)
        # one flat index per passing product, by query then row: far cheaper than a 2-d nonzero
        cols, rows = np.divmod(np.flatnonzero(passed), passed.shape[1])
        cuts = np.searchsorted(cols, np.arange(len(qs) + 1))
        for j in range(len(qs)):
            if cuts[j + 1] > cuts[j]:
                found[j].append(start + rows[cuts[j] : cuts[j + 1]])
    return [np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64) for parts in found]


def _above(mat: np.ndarray, qs: np.ndarray, min_score: float) -> list[np.ndarray]:
    """For each query, the rows of ``mat`` scoring at least ``min_score`` (an exact scan)."""
    return _passing(mat, qs, lambda block: block >= min_score)
