"""``python -m bench.tune --split dev``: choose the fusion method and weights on bench.quality's set.

Builds the quality set's vault once (real write path, real model), gathers every question's
candidates once per context-column weight (``SearchService.gather``), then ranks them under every
configuration of the grid (``SearchService.rank``, no SQL), and prints hit@10 and MRR@10 per
configuration, best first. Tune on ``dev``; the chosen configuration goes in
``vodou_desktop/search/service.py`` (``FUSION``) and is reported on ``test`` by ``bench.quality``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from vodou_desktop.search.fusion import FusionParams
from vodou_desktop.search.service import MAX_K, Candidates, SearchService


def grid() -> list[FusionParams]:
    """Every configuration tried (the context weight is applied per gather, so it is outermost)."""
    out: list[FusionParams] = []
    for method, weights in (("zscore", (0.3, 0.4, 0.5, 0.6, 0.7)), ("minmax", (0.3, 0.4, 0.5, 0.6, 0.7)),
                            ("rrf", (0.3, 0.5, 0.7))):
        for w, adaptive, before, after in itertools.product(weights, (0.0, 10.0), (0.0, 0.25, 0.5),
                                                            (0.0, 0.15, 0.3)):
            if method == "rrf" and adaptive:
                continue
            out.append(FusionParams(method=method, keyword_weight=w, adaptive=adaptive, before_share=before,
                                    after_share=after))
    return out


CONTEXT_WEIGHTS = (0.0, 0.2, 0.5)


def score(ranked: Sequence[int], relevant: set[int], k: int = 10) -> tuple[float, float]:
    """(hit@k, reciprocal rank within k)."""
    for rank, i in enumerate(ranked[:k], start=1):
        if i in relevant:
            return 1.0, 1.0 / rank
    return 0.0, 0.0


def tune(service: SearchService, questions: Iterable[tuple[str, Any, set[int]]],
         configs: Sequence[FusionParams], context_weights: Sequence[float] = CONTEXT_WEIGHTS,
         ) -> list[tuple[FusionParams, float, float]]:
    """``questions``: (text, filter, relevant vault ids). Returns (config, hit@10, MRR@10), best first."""
    qs = list(questions)
    results: list[tuple[FusionParams, float, float]] = []
    for cw in context_weights:
        gathered: list[tuple[Candidates, set[int]]] = []
        for text, filt, relevant in qs:
            gathered.append((service.gather(text, filt, FusionParams(context_weight=cw)), relevant))
        for params in configs:
            p = replace(params, context_weight=cw)
            hits = rrs = 0.0
            for cands, relevant in gathered:
                h, rr = score([r.fact.id for r in service.rank(cands, p, explain=False)[:MAX_K]], relevant)
                hits += h
                rrs += rr
            results.append((p, hits / max(1, len(gathered)), rrs / max(1, len(gathered))))
    results.sort(key=lambda r: (-r[2], -r[1]))
    return results


def describe(p: FusionParams) -> str:
    return (f"{p.method} w={p.keyword_weight} adaptive={p.adaptive} before={p.before_share} "
            f"after={p.after_share} context={p.context_weight}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tune", description=__doc__)
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    parser.add_argument("--top", type=int, default=25, help="configurations to print")
    args = parser.parse_args(argv)
    from bench import quality  # the labelled set and its vault

    started = time.time()
    with quality.tuning_session(args.split) as (service, questions):
        rows = tune(service, questions, grid())
    print(f"# bench.tune --split {args.split}: {len(rows)} configurations, {time.time() - started:.0f} s,"
          f" load {os.getloadavg()[0]:.2f}")
    print("| configuration | hit@10 | MRR@10 |\n|---|---|---|")
    for p, hit, mrr in rows[: args.top]:
        print(f"| {describe(p)} | {hit:.3f} | {mrr:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
