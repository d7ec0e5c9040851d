"""Hybrid search: keyword (FTS5 bm25) and meaning (cosine), fused, then weighted (SEARCH-2).

Fusion is a min-max linear blend: each path's scores are scaled to [0, 1] over its own candidates
and combined as ``alpha * keyword + (1 - alpha) * vector``. On a conversational memory set it ranked
better than reciprocal rank fusion (``bench/fusion.py`` measures both). Then each result is
weighted by provenance tier, duplicate status and scope. Every factor is kept for ``explain``.

Hard predicates (project wall, soft delete, supersession, no document chunks) are applied by the
vault's query builder on both paths; the vector path only proposes candidate ids.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from vodou_desktop.search import keyword
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Fact, FactFilter, Vault
from vodou_desktop.vault import query as q

log = logging.getLogger(__name__)

TIER_WEIGHTS = {"pinned": 1.1, "first_party": 1.0, "capture": 0.925, "import": 0.85}
DUPLICATE_WEIGHT = 0.4
SCOPE_WEIGHT = 2.0
# Keyword share of the blend. bench/fusion.py (81 questions over 147 conversational facts): MRR@10
# 0.913 at 0.2-0.3, 0.905 at 0.4, 0.821 at 0.5, 0.808 for RRF; exact-term questions stay at 1.0
# down to 0.2. Higher alphas let incidental word matches bury a paraphrase's meaning match.
ALPHA = 0.3
FUSIONS = ("minmax", "rrf")
RRF_K = 60
# Below this cosine a sentence is unrelated for all-MiniLM-L6-v2; such vector hits are dropped and
# the floor is the "min" of the vector path's min-max scaling, so a weak best hit never scores 1.0.
MIN_COSINE = 0.25
MAX_K = 200
COMMON_TERM_MIN = 2_000
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True)
class SearchResult:
    fact: Fact
    score: float
    factors: dict[str, Any] = field(default_factory=dict)

    def as_json(self, explain: bool = False) -> dict[str, Any]:
        data = self.fact.as_json()
        data["score"] = round(self.score, 6)
        if explain:
            data["explain"] = self.factors
        return data


class SearchService:
    def __init__(self, vault: Vault, embedder: Embedder | None = None, index: VectorIndex | None = None,
                 alpha: float = ALPHA, fusion: str = "minmax") -> None:
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}, not {fusion!r}")
        self.vault = vault
        self.embedder = embedder
        self.index = index if index is not None else VectorIndex(vault)
        self.alpha = alpha
        self.fusion = fusion  # "rrf" is kept for bench/fusion.py's comparison

    @property
    def semantic(self) -> bool:
        return self.embedder is not None and self.embedder.ready

    def search(self, text: str, filt: FactFilter | None = None, *, scope: str | None = None,
               k: int = 10) -> list[SearchResult]:
        """Top ``k`` facts for ``text`` under ``filt``. Any string is safe; none raises."""
        filt = filt or FactFilter()
        k = max(1, min(int(k), MAX_K))
        text = (text or "")[:MAX_QUERY_CHARS]
        pool = max(50, k * 5)
        kw = self._keyword(text, filt, pool, k)
        vec = self._vector(text, filt, pool) if self.semantic else {}
        facts = self._hydrate(set(kw) | set(vec), filt)
        if self.fusion == "rrf":
            kw_norm, vec_norm = _rrf({i: -s for i, s in kw.items()}), _rrf(vec)
        else:
            # Keyword path alone: scale from 0, so the last of two real matches does not score 0
            # (same order either way); in a blend, the plain min-max measured better (bench.fusion).
            kw_norm = _minmax({i: -s for i, s in kw.items()}, floor=None if vec else 0.0)
            vec_norm = _minmax(vec, floor=MIN_COSINE)
        results = [self._score(f, kw, vec, kw_norm, vec_norm, scope) for f in facts.values()]
        results.sort(key=lambda r: (-r.score, -r.fact.id))
        return results[:k]

    def _keyword(self, text: str, filt: FactFilter, pool: int, k: int) -> dict[int, float]:
        """bm25 per id (lower is better in SQLite). All terms first; when that finds fewer than
        ``k``, any of the terms — leaving out very common ones, whose OR would make FTS5 score a large
        share of the vault (170 ms at 1M chunks) while adding little: meaning search covers them."""
        terms = keyword.terms(text)
        expr = keyword.match_expression(text, "and")
        if expr is None:
            return {}
        hits = dict(self.vault.read(partial(q.keyword_search, match=expr, f=filt, limit=pool)))
        if len(hits) >= k or len(terms) < 2:
            return hits
        rare = self.vault.read(lambda c: _rare_terms(c, terms))
        expr = keyword.match_expression(" ".join(rare), "or") if rare else None
        if expr is not None:
            for chunk_id, bm25 in self.vault.read(partial(q.keyword_search, match=expr, f=filt, limit=pool)):
                hits.setdefault(chunk_id, bm25)
        return hits

    def _vector(self, text: str, filt: FactFilter, pool: int) -> dict[int, float]:
        """Cosine per id, for candidates that pass the filter; widens until ``pool`` pass."""
        if not text.strip():
            return {}
        assert self.embedder is not None
        qvec = self.embedder.encode_one(text)
        n, total = pool * 4, len(self.index)
        while True:
            cands = self.index.top(qvec, n)
            ok = self.vault.read(partial(q.allowed_ids, ids=[i for i, _ in cands], f=filt))
            found = {i: s for i, s in cands if i in ok and s >= MIN_COSINE}
            if len(found) >= pool or n >= total or (cands and cands[-1][1] < MIN_COSINE):
                return dict(sorted(found.items(), key=lambda kv: -kv[1])[:pool])
            n *= 8

    def _hydrate(self, ids: set[int], filt: FactFilter) -> dict[int, Fact]:
        if not ids:
            return {}
        return {f.id: f for f in self.vault.read(lambda c: q.facts_by_ids(c, sorted(ids), filt))}

    def _score(self, fact: Fact, kw: dict[int, float], vec: dict[int, float], kw_norms: dict[int, float],
               vec_norms: dict[int, float], scope: str | None) -> SearchResult:
        kw_norm = kw_norms.get(fact.id, 0.0)
        vec_norm = vec_norms.get(fact.id, 0.0)
        alpha = self.alpha if vec else 1.0
        fused = alpha * kw_norm + (1 - alpha) * vec_norm
        tier_w = TIER_WEIGHTS.get(fact.tier, 1.0)
        dup_w = 1.0 if fact.is_canonical else DUPLICATE_WEIGHT
        scope_w = SCOPE_WEIGHT if scope and fact.scope == scope else 1.0
        score = fused * tier_w * dup_w * scope_w
        factors = {
            "path": "hybrid" if vec else "keyword",
            "keyword_bm25": kw.get(fact.id), "keyword_norm": round(kw_norm, 6),
            "vector_cosine": vec.get(fact.id), "vector_norm": round(vec_norm, 6),
            "fusion": self.fusion, "alpha": alpha, "fused": round(fused, 6),
            "tier": fact.tier, "tier_weight": tier_w,
            "canonical": fact.is_canonical, "duplicate_weight": dup_w,
            "scope": fact.scope, "query_scope": scope, "scope_weight": scope_w,
            "final": round(score, 6),
        }
        return SearchResult(fact, score, factors)


def _rare_terms(conn: Any, terms: list[str]) -> list[str]:
    """The terms found in at most 1% of chunks (at least ``COMMON_TERM_MIN``)."""
    cap = max(COMMON_TERM_MIN, q.chunk_count_estimate(conn) // 100)
    return [t for t in terms if not q.term_is_common(conn, keyword.match_expression(t) or '""', cap)]


def _minmax(scores: dict[int, float], floor: float | None = None) -> dict[int, float]:
    if not scores:
        return {}
    lo = min(scores.values()) if floor is None else floor
    hi = max(scores.values())
    if hi - lo < 1e-12:
        return {i: 1.0 for i in scores}
    return {i: (s - lo) / (hi - lo) for i, s in scores.items()}


def _rrf(scores: dict[int, float]) -> dict[int, float]:
    """Reciprocal rank fusion's term ``1 / (k + rank)``, rank 1 for the highest score."""
    ranked = sorted(scores, key=lambda i: -scores[i])
    return {i: 1.0 / (RRF_K + rank) for rank, i in enumerate(ranked, start=1)}
