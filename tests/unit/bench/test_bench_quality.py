"""bench.quality: the metrics on known ranks, the harness on a tiny slice (no model), and the
shipped data set's own promises (sizes, kinds, a split by conversation, gold that exists)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import quality, quality_data


def test_score_one_on_hand_computed_ranks() -> None:
    m = quality.score_one(["x", "g1", "y", "z", "g2", "w"], ["g1", "g2"])
    assert m["hit@1"] == 0.0 and m["hit@5"] == 1.0 and m["hit@10"] == 1.0
    assert m["mrr@10"] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(6)
    assert m["ndcg@10"] == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    assert m["allgold@10"] == 1.0


def test_score_one_misses_beyond_ten_and_partial_gold() -> None:
    ranked = [f"n{i}" for i in range(10)] + ["g"]
    assert quality.score_one(ranked, ["g"]) == {"hit@1": 0.0, "hit@5": 0.0, "hit@10": 0.0, "mrr@10": 0.0,
                                                "ndcg@10": 0.0, "allgold@10": 0.0}
    m = quality.score_one(["n0", "n1", "n2", "n3", "n4", "n5", "g1"], ["g1", "g2"])
    assert m["hit@5"] == 0.0 and m["hit@10"] == 1.0 and m["mrr@10"] == pytest.approx(1 / 7)
    assert m["allgold@10"] == 0.0


def test_aggregate_means_per_kind_and_overall() -> None:
    rows = [("single", quality.score_one(["g"], ["g"])), ("single", quality.score_one(["x", "g"], ["g"])),
            ("reply", quality.score_one(["x"], ["g"]))]
    agg = quality.aggregate(rows)
    assert agg["single"]["n"] == 2 and agg["single"]["mrr@10"] == 0.75 and agg["single"]["hit@1"] == 0.5
    assert agg["reply"]["hit@10"] == 0.0
    assert agg["all"]["n"] == 3 and agg["all"]["mrr@10"] == pytest.approx(0.5)
    assert "temporal" not in agg


def test_blend_scales_each_list_and_weighs_them_equally() -> None:
    # a: 1 best (1.0), 2 worst (0.0); b: 2 best (1.0), 3 worst (0.0) -> 1: .5, 2: .5, 3: 0
    assert quality.blend([(1, 9.0), (2, 1.0)], [(2, 0.9), (3, 0.1)]) == [1, 2, 3]
    assert quality.blend([(5, 3.0), (4, 2.0)], []) == [5, 4]


def _tiny() -> dict[str, Any]:
    def turn(key: str, project: str, day: str, text: str, split: str = "dev") -> dict[str, Any]:
        return {"key": key, "source": "conversation", "group": project, "split": split, "project": project,
                "date": day, "text": text}

    memories = [
        turn("a1", "conv-a", "2023-01-02", "Mia: What are you reading lately?"),
        turn("a2", "conv-a", "2023-01-02", "Ed: Finally started Middlemarch, slowly."),
        turn("a3", "conv-a", "2023-02-10", "Mia: We paddled our kayaks round the lighthouse at dawn."),
        turn("a4", "conv-a", "2023-02-10", "Ed: The ferry was late again, so I read on the pier."),
        turn("b1", "conv-b", "2023-03-01", "Jo: The lighthouse keeper's cottage is for sale.", "test"),
        {"key": "n1", "source": "note", "group": "notes", "split": "dev", "project": None,
         "text": "The boiler engineer comes every October."},
        {"key": "p1", "source": "page", "group": "pages", "split": "dev", "project": "conv-a",
         "url": "https://www.example.org/birds", "title": "Birds", "text": "Herons nest in colonies near water."},
        {"key": "c1", "source": "chat", "group": "chat", "split": "dev", "project": None,
         "date": "2024-01-01", "text": "My partner Jonah works freelance."},
        {"key": "t1", "source": "chat_turn", "group": "chat", "split": "dev", "project": None,
         "date": "2024-01-01", "text": "Can you help with our budget? My partner Jonah works freelance."},
    ]
    chats = [{"group": "chat", "title": "Money", "date": "2024-01-01", "messages": [
        {"role": "user", "text": "Can you help with our budget? My partner Jonah works freelance."},
        {"role": "assistant", "text": "Sure. Freelance income varies, so plan for the lean months."}]}]
    q = [("exact", "single", "conv-a", "paddled our kayaks round the lighthouse", ["a3"]),
         ("stem", "single", "conv-a", "kayak lighthouse", ["a3"]),
         ("wall", "single", "conv-a", "cottage for sale", ["b1"]),
         ("note", "single", None, "boiler engineer October", ["n1"]),
         ("chat", "paraphrase", "conv-a", "Jonah freelance", ["c1"])]
    questions = [{"id": i, "kind": k, "project": p, "question": t, "gold": g, "group": p or "g", "split": "dev"}
                 for i, k, p, t, g in q]
    return {"memories": memories, "questions": questions, "chats": chats}


@pytest.fixture(scope="module")
def tiny_figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("quality")
    return quality.run(_tiny(), "dev", None, Path(folder), log=lambda s: None)


def test_every_memory_is_stored_through_its_write_path(tmp_path: Path) -> None:
    data = _tiny()
    built = quality.build_vault(tmp_path / "v.sqlite", data)
    try:
        by_key = {key: i for i, key in built.key_of.items()}
        assert set(by_key) == {m["key"] for m in data["memories"]}
        assert built.texts[by_key["c1"]] == "My partner Jonah works freelance."
        assert built.projects[by_key["a3"]] == "conv-a" and built.projects[by_key["n1"]] is None
        facts = {f.id: f for f in built.vault.read(lambda c: quality.q.facts_by_ids(
            c, list(built.key_of), quality.FactFilter(project=quality.ALL_PROJECTS)))}
        assert (facts[by_key["a3"]].valid_at or "").startswith("2023-02-10")
        assert facts[by_key["a3"]].valid_precision == "day"
        assert facts[by_key["p1"]].source_url == "https://www.example.org/birds"
        assert facts[by_key["p1"]].source_kind == "selection"
        assert facts[by_key["c1"]].source_kind == "import_chatgpt" and facts[by_key["c1"]].tier == "import"
    finally:
        built.vault.close()


def test_tiny_run_ranks_exact_phrases_first_and_keeps_the_project_wall(tiny_figures: dict[str, Any]) -> None:
    res = tiny_figures["results"]
    assert set(res) == {"ours keyword-only", "bm25 porter"}
    assert tiny_figures["questions"] == 5 and tiny_figures["memories"] == 9
    for name in res:
        assert res[name]["single"]["n"] == 4 and res[name]["paraphrase"]["n"] == 1
        for metric in quality.METRICS:
            assert 0.0 <= res[name]["all"][metric] <= 1.0
    per_question = tiny_figures["per_question"]
    for name in res:
        assert per_question[name]["exact"]["hit@1"] == 1.0
        assert per_question[name]["note"]["hit@1"] == 1.0
        assert per_question[name]["wall"]["hit@10"] == 0.0  # conv-b's memory is not visible from conv-a
    assert per_question["bm25 porter"]["stem"]["hit@1"] == 1.0  # porter: "kayak" matches "kayaks"
    lat = tiny_figures["latency_ms"]["ours keyword-only"]
    assert 0 < lat["p50"] <= lat["p95"]


def test_report_prints_every_system_and_kind(tiny_figures: dict[str, Any]) -> None:
    text = quality.report({**tiny_figures, "total_s": 1.0, "load_average": [0.1, 0.2]})
    assert "== single (n=4)" in text and "== paraphrase (n=1)" in text
    assert "ratio ours keyword-only / bm25 porter" in text
    assert "latency ours keyword-only" in text


# -- the shipped data set -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return quality.load()


def test_shipped_files_are_what_the_sources_generate(shipped: dict[str, Any]) -> None:
    assert quality_data.build() == shipped


def test_shipped_set_has_the_promised_size_kinds_and_split(shipped: dict[str, Any]) -> None:
    memories, questions = shipped["memories"], shipped["questions"]
    assert len(questions) >= 400 and len(memories) >= 5000
    kinds = Counter(x["kind"] for x in questions)
    assert set(kinds) == set(quality.KINDS) and min(kinds.values()) >= 50
    sources = Counter(m["source"] for m in memories)
    assert set(sources) == {"conversation", "chat", "chat_turn", "note", "page"}
    conversations = {m["group"] for m in memories if m["source"] == "conversation"}
    assert len(conversations) >= 10
    split_of: dict[str, set[str]] = {}
    for rec in memories + questions:
        split_of.setdefault(rec["group"], set()).add(rec["split"])
    assert all(len(s) == 1 for s in split_of.values()), "a group is in both dev and test"
    per_split = Counter(x["split"] for x in questions)
    assert 0.4 <= per_split["dev"] / len(questions) <= 0.6


def test_every_gold_memory_exists_and_is_visible_under_the_question_project(shipped: dict[str, Any]) -> None:
    by_key = {m["key"]: m for m in shipped["memories"]}
    assert len(by_key) == len(shipped["memories"])
    for x in shipped["questions"]:
        assert x["gold"], x["id"]
        for key in x["gold"]:
            gold = by_key[key]
            assert gold["project"] in (None, x["project"]), x["id"]
            assert gold["split"] == x["split"], x["id"]
        if x["kind"] == "multihop":
            assert len(x["gold"]) >= 2, x["id"]


def test_conversation_turns_are_speaker_prefixed_and_dated(shipped: dict[str, Any]) -> None:
    for m in shipped["memories"]:
        if m["source"] == "conversation":
            assert m["text"].startswith(m["speaker"] + ": ")
            assert len(m["date"]) == 10


# -- with the real model ------------------------------------------------------------------------

@pytest.mark.model
def test_tiny_run_with_the_model_reports_every_system(model: Any, tmp_path: Path) -> None:
    figures = quality.run(_tiny(), "dev", model, tmp_path, log=lambda s: None)
    assert set(figures["results"]) == set(quality.SYSTEMS)
    assert figures["per_question"]["ours hybrid"]["exact"]["hit@1"] == 1.0
    for name in quality.SYSTEMS:
        assert figures["per_question"][name]["wall"]["hit@10"] == 0.0, name
    assert {line.split()[0] for line in quality.report({**figures, "total_s": 1.0, "load_average": [0, 0]})
            .splitlines() if line.startswith(("PASS", "FAIL"))} <= {"PASS", "FAIL"}
    assert len(quality.targets(figures["results"])) == 6


@pytest.mark.model
def test_vector_cache_gives_the_model_s_vectors_and_reuses_them(model: Any, tmp_path: Path) -> None:
    texts = ["Maya: We heard three owls.", "Tomás: The mast is up."]
    first = quality.CachedVectors(model, tmp_path)
    got = first.encode(texts)
    assert first.hits == 0
    assert got == pytest.approx(model.encode(texts), abs=1e-5)
    first.save()
    again = quality.CachedVectors(model, tmp_path)
    assert (again.encode(texts[::-1]) == got[::-1]).all() and again.hits == 2
