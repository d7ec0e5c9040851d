"""bench.cv, bench.locomo and bench.beam without the model: LoCoMo and BEAM read into bench.quality's
shape (tiny files of their formats, never the real data), conversations dealt into folds, each fold's
knobs chosen on the other folds only, by the set they serve worst."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench import beam, cv, locomo
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


def _beam_folder(tmp_path: Path) -> Path:
    chat = [{"batch_number": 1, "time_anchor": None, "turns": [[
        {"role": "user", "id": 0, "time_anchor": "March-15-2024", "content": "My sprint ends on March 29 ->-> 1,1"},
        {"role": "assistant", "id": 1, "content": "Noted! A plan follows.\n->-> 1,1"}]]},
        {"batch_number": 2, "time_anchor": None, "turns": [[
            {"role": "user", "id": 2, "time_anchor": "April-02-2024", "content": "It moved to April 5." + "x" * 9000},
            {"role": "assistant", "id": 3, "content": "Updated."}]]}]
    probing = {"abstention": [{"question": "Unanswerable?"}],
               "information_extraction": [{"question": "When does my sprint end?", "source_chat_ids": [0, [0]]}],
               "knowledge_update": [{"question": "When is the sprint's end now?",
                                     "source_chat_ids": {"original_info": [0], "updated_info": [2]}},
                                    {"question": "Empty update", "source_chat_ids": {"original_info": [0],
                                                                                     "updated_info": []}}],
               "temporal_reasoning": [{"question": "How long between?",
                                       "source_chat_ids": {"first_event": [0], "second_event": [2]}}],
               "summarization": [{"question": "Summarise", "source_chat_ids": []}]}
    folder = tmp_path / "100K" / "1"
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat_trunecated.json").write_text(json.dumps(chat), encoding="utf-8")
    (folder / "chat.json").write_text("[]", encoding="utf-8")  # the cut chat is read when there is one
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(probing), encoding="utf-8")
    return tmp_path / "100K"


def test_beam_is_read_message_by_message_as_its_readme_says(tmp_path: Path) -> None:
    data = beam.load(_beam_folder(tmp_path))
    texts = [m["text"] for m in data["memories"]]
    assert texts[:2] == ["User: My sprint ends on March 29", "Assistant: Noted! A plan follows."]  # marker cut
    assert len(texts[2]) == 8_000 and texts[2].startswith("User: It moved to April 5.")  # one memory's limit
    assert [m["date"] for m in data["memories"]] == ["2024-03-15", "2024-03-15", "2024-04-02", "2024-04-02"]
    assert {m["project"] for m in data["memories"]} == {"beam-01"}
    assert [(x["kind"], x["gold"]) for x in data["questions"]] == [
        ("information_extraction", ["beam-01.0"]),  # nested lists flattened, duplicates dropped
        ("knowledge_update", ["beam-01.2"]),  # the updated value only; an empty update is dropped
        ("temporal_reasoning", ["beam-01.0", "beam-01.2"])]  # a dict's parts joined; no gold, no question


def test_a_missing_beam_folder_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(beam.Missing, match="VODOU_BEAM"):
        beam.load(tmp_path / "nowhere")


def _run(name: str, groups: list[str]) -> Any:
    qs = [cv.Question(f"{name}{i}", "q", "single", g, FactFilter(), {1}, name) for i, g in enumerate(groups)]
    # bm25 finds the gold second for every question: (hit 1, MRR .5)
    return SimpleNamespace(name=name, questions=qs, baselines={"bm25 porter": [[2, 1]] * len(qs)})


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


def test_the_objective_is_the_worst_sets_ratio_to_its_own_bm25_whatever_its_size() -> None:
    keep = {"big": [True] * 90, "small": [True] * 10}
    bm25 = {"big": [(1.0, 0.5)] * 90, "small": [(0.0, 0.0)] * 5 + [(1.0, 1.0)] * 5}  # .75 and .5
    one_sided = {"big": [(1.0, 1.0)] * 90, "small": [(0.0, 0.0)] * 8 + [(1.0, 1.0)] * 2}  # 1.33x and .4x
    even = {"big": [(1.0, 0.5)] * 90, "small": [(0.0, 0.0)] * 4 + [(1.0, 1.0)] * 6}  # 1.0x and 1.2x
    assert cv.objective(one_sided, keep, bm25) == pytest.approx((0.4, (4 / 3 + 0.4) / 2))
    assert cv.objective(even, keep, bm25) == pytest.approx((1.0, 1.1))
    # the average over every question prefers the one-sided choice; the worst set's ratio does not
    def pooled(rows: dict[str, list[tuple[float, float]]]) -> float:
        every = [r for name in rows for r in rows[name]]
        return cv.figure(every, [True] * len(every))

    assert pooled(one_sided) > pooled(even)
    assert cv.objective(even, keep, bm25) > cv.objective(one_sided, keep, bm25)
