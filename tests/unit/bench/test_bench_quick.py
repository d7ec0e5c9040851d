"""The benchmark's build and query functions at a tiny size (no model): every figure is reported.

Timings are never asserted; only that each field and each our/baseline ratio is there and sane.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import fusion
from bench.corpus import MAX_WORDS, chunks, queries
from bench.search import format_report, run_size
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.keyword import terms
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault

LATENCY_PATHS = {"keyword", "vector", "hybrid", "hybrid_block"}
BASELINES = {"fts_or", "numpy_scan", "fts_or_block", "numpy_scan_block"}
RATIOS = {"keyword/fts_or", "vector/numpy_scan", "hybrid/(fts_or+numpy_scan)", "same, each in its own block"}


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("bench")
    return run_size(300, Path(folder), None, n_queries=24, real=100)


def test_report_has_every_figure(tiny_report: dict) -> None:
    r = tiny_report
    assert r["size"] == 300 and r["vectors"] == 300
    assert r["real_embedded"] == 100 and r["synthetic_vectors"] == 200
    assert r["ingest_without_embedding_per_s"] > 0 and r["ingest_with_embedding_per_s"] > 0
    assert r["peak_rss_mb"] > 0 and r["peak_rss_with_baselines_mb"] >= r["peak_rss_mb"]
    assert set(r["ours"]) == LATENCY_PATHS and set(r["baselines"]) == BASELINES
    assert set(r["hybrid_by_shape"]) == {"rare", "common", "mixed", "paraphrase"}
    assert len(r["hybrid_stages"]) == 5 and len(r["load_average_1min"]) == 2
    for lat in [*r["ours"].values(), *r["baselines"].values(), *r["hybrid_stages"].values()]:
        assert 0 < lat["p50_ms"] <= lat["p95_ms"]


def test_every_ratio_is_ours_over_the_baseline(tiny_report: dict) -> None:
    r = tiny_report
    assert set(r["ratios"]) == RATIOS
    kw, o, b = r["ratios"]["keyword/fts_or"], r["ours"], r["baselines"]
    assert kw["p50"] == pytest.approx(o["keyword"]["p50_ms"] / b["fts_or_block"]["p50_ms"], rel=0.02)
    for name, tail in (("hybrid/(fts_or+numpy_scan)", ""), ("same, each in its own block", "_block")):
        both = b["fts_or" + tail]["p50_ms"] + b["numpy_scan" + tail]["p50_ms"]
        assert r["ratios"][name]["p50"] == pytest.approx(o["hybrid" + tail]["p50_ms"] / both, rel=0.02)
    text = format_report(r)
    for name in RATIOS:
        assert f"ratio {name}" in text
    assert "synthetic" in text and "peak RSS" in text


def test_corpus_is_seeded_short_and_varied() -> None:
    first, again = list(chunks(500)), list(chunks(500))
    assert first == again
    lengths = [len(c.text.split()) for c in first]
    assert min(lengths) >= 8 and max(lengths) <= MAX_WORDS
    assert len({c.text for c in first}) > 450 and any(c.project is None for c in first)
    assert len(set(queries(40))) > 20


def test_fusion_set_is_consistent() -> None:
    data = fusion.load_set()
    facts = {f["id"]: f["text"] for f in data["facts"]}
    assert len(facts) >= 140 and len(data["queries"]) >= 60
    for q in data["queries"]:
        assert q["relevant"] and all(i in facts for i in q["relevant"])
        if q["kind"] == "paraphrase":
            for i in q["relevant"]:
                assert not set(terms(q["query"])) & set(terms(facts[i])), q["query"]


def test_fusion_metrics() -> None:
    assert fusion.metrics([3, 1, 2], [1]) == (0.5, 1.0)
    assert fusion.metrics([7, 8, 9, 10, 11, 1], [1, 2]) == (1 / 6, 0.0)


def test_end_to_end_embeds_inside_each_call_beside_a_baseline_doing_the_same_work(
        tiny_report: dict, tmp_path: Path, model: Embedder) -> None:
    """The end-to-end figures include the query embedding on both sides, and the report says so."""
    from bench import measure
    from bench.build import build

    vault = Vault.open(tmp_path / "e2e.sqlite")
    try:
        build(vault, 120, model, real=120)
        index = VectorIndex(vault, model=model.model_id)
        index.load()
        cases = measure.cases_for(queries(8), ["p1", "p2"])
        e2e = measure.end_to_end(vault, model, index, cases, measure.load_matrix(vault))
        index.close()
    finally:
        vault.close()
    assert set(e2e) == {"cold", "cached", "baseline_cold"}
    assert model.cached_queries >= len({t for t, _ in cases})  # the baseline embedded every query too
    report = dict(tiny_report, size=10_000, end_to_end={k: {"p50_ms": v.p50, "p95_ms": v.p95} for k, v in e2e.items()})
    report["end_to_end"]["ratio_cold_vs_baseline_cold"] = {"p50": 1.5, "p95": 1.4}
    text = format_report(report)
    assert "embedding EXCLUDED on both sides" in text and "query embedded by the real model INSIDE" in text
    assert "baseline, new query" in text and "end to end, new query, p50" in text
    assert "end to end ours/baseline p50 1.50x <= 3x" in text


def test_ingest_rates_reports_both_paths_in_wall_and_cpu_time(vault, model) -> None:  # type: ignore[no-untyped-def]
    from bench.measure import RAW_BATCH_SIZES, ingest_rates
    from bench.search import ingest_texts
    from vodou_desktop.vault import query as q

    texts = ingest_texts(300, 12)
    messages = ["I work at the harbour office in Leith.", "We decided to move the backups to Tuesday nights.",
                "Can you write me a poem?", "My sister lives in Porto."] * 3
    r = ingest_rates(vault, model, texts, import_texts=messages)
    assert r["facts"] == 12 and r["raw_batch_size"] in RAW_BATCH_SIZES
    assert set(r["raw_cpu_ms_by_batch_size"]) == set(RAW_BATCH_SIZES)
    for key in ("raw_embedder_per_s", "ingest_with_embedding_per_s", "ratio", "cpu_ratio", "raw_cpu_ms_per_fact",
                "ingest_cpu_ms_per_fact"):
        assert r[key] > 0 and r["import"][key] > 0
    assert r["import"]["write_only_per_s"] > 0
    # each message kept whole (12), and the durable sentences distilled beside it (not the request)
    assert len(messages) < r["import"]["facts"] < 2 * len(messages)
    assert vault.read(q.count_unembedded) == 0
    lines = format_report({**_minimal_report(), "ingest_pipeline": r})
    assert "import of a Claude export" in lines and "CPU ms/fact by thread" in lines


def _minimal_report() -> dict:  # type: ignore[type-arg]
    lat = {"p50_ms": 1.0, "p95_ms": 1.0}
    return {"size": 1, "queries": 1, "real_embedded": 0, "embed_model": "m", "synthetic_vectors": 0, "vectors": 0,
            "ingest_without_embedding_per_s": 1.0, "ingest_with_embedding_per_s": 1.0, "vector_fill_s": 0.0,
            "index_load_s": 0.0, "query_embedding": None, "ours": {k: lat for k in LATENCY_PATHS},
            "baselines": {k: lat for k in BASELINES}, "ratios": {k: {"p50": 1.0, "p95": 1.0} for k in RATIOS},
            "peak_rss_mb": 1.0, "peak_rss_with_baselines_mb": 1.0}
