"""bench.cv and bench.locomo without the model: LoCoMo read into bench.quality's shape (a tiny file
of its format, never the real data), conversations dealt into folds, and each fold's knobs chosen on
the other folds only."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench import cv, locomo
from vodou_desktop.search.fusion import FusionParams
from vodou_desktop.vault import FactFilter


def _locomo_file(tmp_path: Path) -> Path:
    conv = {"sample_id": "c1", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Bea",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat."},
                      {"speaker": "Bea", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a dog"}],
        "session_2_date_time": "10:00 am on 12 June, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "The cat is called Pip."}]},
        "qa": [{"question": "What pet did Ana adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
               {"question": "What is the cat called, and when?", "answer": "Pip", "evidence": ["D1:1; D2:1"],
                "category": 1},
               {"question": "Adversarial", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
               {"question": "No evidence", "answer": "y", "evidence": [], "category": 2},
               {"question": "Unknown turn", "answer": "y", "evidence": ["D9:9"], "category": 2}]}
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    return path


def test_locomo_is_read_turn_by_turn_with_its_dates_captions_and_evidence(tmp_path: Path) -> None:
    data = locomo.load(_locomo_file(tmp_path))
    assert [m["text"] for m in data["memories"]] == [
        "Ana: I adopted a cat.", "Bea: Look! [image: a photo of a dog]", "Ana: The cat is called Pip."]
    assert [m["date"] for m in data["memories"]] == ["2023-05-08", "2023-05-08", "2023-06-12"]
    assert {m["project"] for m in data["memories"]} == {"locomo-c1"}
    qs = data["questions"]
    assert [(x["kind"], x["gold"]) for x in qs] == [("single", ["locomo-c1.D1:1"]),
                                                   ("multihop", ["locomo-c1.D1:1", "locomo-c1.D2:1"])]


def test_a_missing_locomo_file_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(locomo.Missing, match="locomo10.json"):
        locomo.load(tmp_path / "locomo10.json")


def _run(name: str, groups: list[str]) -> Any:
    qs = [cv.Question(f"{name}{i}", "q", "single", g, FactFilter(), {1}, name) for i, g in enumerate(groups)]
    return SimpleNamespace(name=name, questions=qs)


def test_conversations_are_dealt_into_folds_whole() -> None:
    runs = [_run("a", ["g3", "g1", "g2", "g1", "g5", "g4", "g6"])]
    folds = cv.folds_of(runs, 5)["a"]
    by_group: dict[str, set[int]] = {}
    for x, f in zip(runs[0].questions, folds, strict=True):
        by_group.setdefault(x.group, set()).add(f)
    assert all(len(f) == 1 for f in by_group.values())  # a conversation is never split
    assert {min(f) for f in by_group.values()} == {0, 1, 2, 3, 4}


def test_each_fold_is_ranked_by_the_knobs_chosen_on_the_other_folds() -> None:
    # two sets, five conversations each (one per fold); config A is perfect on fold 0 only, B on the
    # other four: every fold's training data prefers B, so fold 0 is ranked by B and its held-out
    # figure is B's miss there, which an in-sample choice would not show.
    runs = [_run("a", [f"g{i}" for i in range(5)]), _run("b", [f"h{i}" for i in range(5)])]
    a, b = FusionParams(keyword_weight=0.1), FusionParams(keyword_weight=0.9)
    hybrid = {a: {r.name: [(1.0, 1.0) if i == 0 else (0.0, 0.0) for i in range(5)] for r in runs},
              b: {r.name: [(0.0, 0.0) if i == 0 else (1.0, 0.5) for i in range(5)] for r in runs}}
    keyword = SimpleNamespace(keyword=lambda p: {r.name: [(0.0, 0.0)] * 5 for r in runs})
    result = cv.cross_validate(runs, hybrid, keyword, n=5)  # type: ignore[arg-type]
    assert result["chosen"] == [b] * 5 and result["final"] == b
    assert result["held"]["ours hybrid"]["a"] == [(0.0, 0.0)] + [(1.0, 0.5)] * 4
    assert result["per_fold"]["a"] == [0.0, 1.0, 1.0, 1.0, 1.0]


def test_the_objective_weighs_each_set_alike_whatever_its_size() -> None:
    per_set = {"big": [(1.0, 1.0)] * 90, "small": [(0.0, 0.0)] * 10}
    keep = {"big": [True] * 90, "small": [True] * 10}
    assert cv.objective(per_set, keep) == pytest.approx(0.5)
