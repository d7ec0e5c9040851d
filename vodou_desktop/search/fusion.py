"""Fusing the keyword and meaning scores of one query's candidates into one score per candidate.

Each path's scores are normalised over the query's candidates, then blended with a keyword weight:
- ``zscore``: standard scores (a candidate a path did not find gets that path's lowest), shifted so the
  lowest candidate is 0;
- ``minmax``: scaled to [0, 1] (a candidate a path did not find gets 0);
- ``rrf``: reciprocal rank ``1 / (60 + rank)``.
``adaptive`` > 0 scales the keyword weight by how strongly the keywords matched: the best bm25 over
``adaptive`` (capped at 1), so a query whose words barely match leans on meaning.
Which method and weights: ``python -m bench.quality --set locomo --cv`` (bench/history/rounds-1-4.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

METHODS = ("zscore", "minmax", "rrf")
RRF_K = 60


@dataclass(frozen=True)
class FusionParams:
    """Defaults: the choice on bench.quality's dev split (bench/history/rounds-1-4.md, "Search quality")."""

    method: str = "zscore"
    keyword_weight: float = 0.25
    adaptive: float = 0.0
    before_share: float = 0.5  # share of the previous turn's score a turn takes (the turn it answers)
    after_share: float = 0.0  # share of the next turn's score (the reply to it)
    context_weight: float = 0.2  # bm25 weight of the context words (a dated memory's date)
    coverage: float = 0.0  # boost per share of the query's distinct terms a candidate holds (1 + c * share)
    second_hop: float = 0.0  # weight of a second keyword pass: the question plus the first hop's distinctive words
    previous_turn: float = 0.0  # share of the bm25 the question's words in the turn before add to a turn's
    speaker: float = 0.0  # boost (1 + speaker) when a memory is the words of someone the question names ("Name: ...")
    asks: float = 0.0  # a memory weighs 1 - asks x the share of its sentences that are questions
    nearby: float = 0.0  # share of the best candidate a few turns away in its conversation (not the next to it)
    # how far what a turn takes from the turn before (its share, its words) depends on that turn asking:
    # 0, all of it always; 1, only as much as the turn before asks (an answer is found through its
    # question; a reply to a statement is not the statement)
    answers: float = 0.0
    duplicate_weight: float = 0.4  # a non-canonical near-duplicate's weight (SEARCH-2); a knob only to measure it

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"fusion method must be one of {METHODS}, not {self.method!r}")


def normalise(scores: dict[int, float], ids: list[int], method: str, floor: float | None = None) -> dict[int, float]:
    """Per-candidate normalised score (every id in ``ids``), higher is better."""
    if not scores:
        return {i: 0.0 for i in ids}
    if method == "rrf":
        ranked = sorted(scores, key=lambda i: (-scores[i], i))
        rrf = {i: 1.0 / (RRF_K + rank) for rank, i in enumerate(ranked, start=1)}
        return {i: rrf.get(i, 0.0) for i in ids}
    values = list(scores.values())
    if method == "minmax":
        lo = min(values) if floor is None else floor
        hi = max(values)
        if hi - lo < 1e-12:
            return {i: (1.0 if i in scores else 0.0) for i in ids}
        return {i: max(0.0, (scores[i] - lo) / (hi - lo)) if i in scores else 0.0 for i in ids}
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if std < 1e-12:
        return {i: (1.0 if i in scores else 0.0) for i in ids}
    z = {i: (s - mean) / std for i, s in scores.items()}
    low = min(z.values())
    return {i: z[i] - low if i in z else 0.0 for i in ids}


def keyword_weight(params: FusionParams, kw: dict[int, float]) -> float:
    """The keyword share of the blend for this query (``kw`` holds positive match strengths)."""
    if not params.adaptive or not kw:
        return params.keyword_weight
    strength = min(1.0, max(kw.values()) / params.adaptive)
    return params.keyword_weight * strength
