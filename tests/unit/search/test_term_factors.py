"""Issue 22's ranking factors, each shown to change a ranking it should change: term coverage (how
many of the question's words a memory holds), the second hop (a question whose answer shares words
with the first hop's best turn, not with the question), the question's words in the turn before (a
reply found through its question), the speaker the question names (a person's own words before
another's words about them), the sentences that ask (an answer before the question it answers), a
turn a few places after a strong match in its conversation, dates in words, and --explain naming
every factor. The wall, soft
delete and document exclusion on the new reader are enumerated by
tests/unit/governance/test_policy_invariant.py (``match_texts`` is a registered reader)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.search import keyword
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.fusion import FusionParams
from vodou_desktop.search.service import FUSION, SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.words import score_details

ORIGIN = Origin(kind="turn", tool="harness")


def _keyword(vault: Vault, **params: float) -> SearchService:
    return SearchService(vault, Embedder("none"), VectorIndex(vault), FusionParams(**params))  # type: ignore[arg-type]


def _ids(service: SearchService, text: str, project: str | None = "talk") -> list[int]:
    return [r.fact.id for r in service.search(text, FactFilter(project=project))]


def test_coverage_puts_the_memory_holding_every_word_of_the_question_first(vault: Vault) -> None:
    # "lighthouse" is rare and said twice in a short turn; the answer holds it once, with the common
    # "keeper" and "retired": by bm25 alone the repetition wins.
    echo = remember(vault, "A: the lighthouse, the lighthouse!", ORIGIN, project="talk", valid_at="2023-01-02")
    answer = remember(vault, "B: the keeper of the lighthouse retired", ORIGIN, project="talk", valid_at="2023-03-04")
    for i in range(6):
        remember(vault, f"C: the keeper number {i} retired", ORIGIN, project="other", valid_at="2023-05-06")
    question = "where did the lighthouse keeper go after he retired"
    plain = _ids(_keyword(vault, before_share=0.0), question)
    assert plain[0] == echo, "the set-up no longer shows the failure coverage mends"
    covered = _keyword(vault, before_share=0.0, coverage=1.0).search(question, FactFilter(project="talk"))
    assert covered[0].fact.id == answer
    assert covered[0].factors["coverage"] == pytest.approx(1.0)
    assert covered[1].factors["coverage"] == pytest.approx(1 / 3)
    assert covered[0].factors["coverage_weight"] == pytest.approx(2.0)
    assert ("Share of your words it holds", "100% (×2.00)") in score_details(covered[0].factors)


def _two_hop_conversation(vault: Vault) -> tuple[int, int]:
    """The first hop names Rodrigo; the answer, on another day, names him and none of the question's
    words."""
    first = remember(vault, "Bea: my neighbour Rodrigo moved to Lisbon in March", ORIGIN, project="talk",
                     valid_at="2023-03-01")
    remember(vault, "Ana: how exciting, Lisbon is lovely in spring", ORIGIN, project="talk", valid_at="2023-03-01")
    for i, text in enumerate(["Bea: the garden needs weeding again", "Ana: I baked a lemon cake",
                              "Bea: the bus was late twice this week", "Ana: my sister got a new puppy"]):
        remember(vault, text, ORIGIN, project="talk", valid_at=f"2023-04-0{i + 1}")
    second = remember(vault, "Bea: Rodrigo has a cello lesson every Thursday evening", ORIGIN, project="talk",
                      valid_at="2023-06-09")
    return first, second


QUESTION = "which instrument does the friend who moved to Lisbon study"


def test_the_second_hop_finds_an_answer_that_shares_no_word_with_the_question(vault: Vault) -> None:
    first, second = _two_hop_conversation(vault)
    one_hop = _ids(_keyword(vault), QUESTION)
    assert first in one_hop and second not in one_hop
    results = _keyword(vault, second_hop=0.3).search(QUESTION, FactFilter(project="talk"))
    ids = [r.fact.id for r in results]
    assert second in ids and ids.index(first) < ids.index(second)
    hop = next(r for r in results if r.fact.id == second).factors
    assert "rodrigo" in hop["second_hop_words"] and hop["second_hop_norm"] > 0 and hop["keyword_bm25"] is None
    shown = dict(score_details(hop))
    assert any(name.startswith("Second pass, with") and "'rodrigo'" in name for name in shown)


def test_the_second_hop_keeps_the_wall_soft_delete_and_documents(vault: Vault) -> None:
    first, second = _two_hop_conversation(vault)
    # the same expansion word in another project, in a forgotten memory and in a document
    walled = remember(vault, "Bea: Rodrigo's cello is in the attic", ORIGIN, project="secret", valid_at="2023-06-10")
    gone = remember(vault, "Bea: Rodrigo's cello bow snapped", ORIGIN, project="talk", valid_at="2023-06-11")
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET invalid_at = '2023-06-12T00:00:00+00:00' WHERE id = ?",
                                        (gone,)))
    save_document(vault, "Rodrigo Rodrigo cello notes", Origin(kind="library", url="https://d.example/r", title="R"),
                  project="talk")
    service = _keyword(vault, second_hop=0.3, coverage=1.0)
    results = service.search(QUESTION, FactFilter(project="talk"))
    ids = {r.fact.id for r in results}
    assert second in ids and walled not in ids and gone not in ids
    assert all(r.fact.project in ("talk", None) and r.fact.document_id is None for r in results)
    everyone = {r.fact.id for r in service.search(QUESTION, FactFilter(project=ALL_PROJECTS))}
    assert gone not in everyone


def test_coverage_counts_the_date_words_of_a_dated_memory(vault: Vault) -> None:
    may = remember(vault, "A: we painted the fence", ORIGIN, project="talk", valid_at="2023-05-07")
    remember(vault, "A: we painted the fence blue and the gate green", ORIGIN, project="talk", valid_at="2023-08-01")
    results = _keyword(vault, coverage=1.0).search("what did we paint in May 2023", FactFilter(project="talk"))
    assert results[0].fact.id == may
    assert results[0].factors["coverage"] == pytest.approx(1.0)


def _asked_and_answered(vault: Vault) -> tuple[int, int]:
    """A question and its reply (one thread: same project and day); the reply holds one of the later
    question's words, two other turns hold two each."""
    asked = remember(vault, "Ana: which band was your favourite at the Glastonbury festival?", ORIGIN,
                     project="talk", valid_at="2023-07-01")
    reply = remember(vault, "Bea: Aerosmith, no doubt, they were incredible", ORIGIN, project="talk",
                     valid_at="2023-07-01")
    remember(vault, "Bea: the festival tickets were expensive", ORIGIN, project="talk", valid_at="2023-08-02")
    remember(vault, "Bea: my favourite food is pasta", ORIGIN, project="talk", valid_at="2023-09-03")
    return asked, reply


REPLY_QUESTION = "which band was Bea's favourite at Glastonbury festival"


def test_the_previous_turns_words_find_a_reply_through_its_question(vault: Vault) -> None:
    asked, reply = _asked_and_answered(vault)
    plain = _ids(_keyword(vault, before_share=0.0), REPLY_QUESTION)
    assert plain[0] == asked and plain.index(reply) == 3, "the set-up no longer shows the failure the factor mends"
    results = _keyword(vault, before_share=0.0, previous_turn=1.0).search(REPLY_QUESTION, FactFilter(project="talk"))
    assert {r.fact.id for r in results[:2]} == {asked, reply}  # above both turns that hold two words each
    factors = next(r for r in results if r.fact.id == reply).factors
    assert factors["previous_turn_words"] > 0 and factors["previous_turn_weight"] == 1.0
    assert factors["keyword_bm25"] is not None  # its own word still counts
    assert any(name == "Your words in the turn before" for name, _ in score_details(factors))
    assert next(r for r in results if r.fact.id == asked).factors["previous_turn_words"] is None  # none before it


def test_a_forgotten_or_erased_turn_before_adds_nothing(vault: Vault) -> None:
    from vodou_desktop.governance.forget import Forgetting

    asked, reply = _asked_and_answered(vault)
    service = _keyword(vault, before_share=0.0, previous_turn=1.0)
    forgetting = Forgetting(vault)
    op = forgetting.forget_fact(asked)
    results = service.search(REPLY_QUESTION, FactFilter(project="talk"))
    assert asked not in {r.fact.id for r in results}
    assert all(r.factors["previous_turn_words"] is None for r in results)
    assert [r.fact.id for r in results].index(reply) == 2  # back to its own words' place
    forgetting.undo(op["op"])
    assert {r.fact.id for r in service.search(REPLY_QUESTION, FactFilter(project="talk"))[:2]} == {asked, reply}
    forgetting.erase_fact(asked)
    results = service.search(REPLY_QUESTION, FactFilter(project="talk"))
    assert all(r.factors["previous_turn_words"] is None for r in results)


@pytest.mark.parametrize(("text", "name"), [
    ("Maya: I bought the boat", "Maya"), ("  Tomás: Ha!", "Tomás"), ("Ana Lucía: hola", "Ana Lucía"),
    ("Jean-Luc Picard: make it so", "Jean-Luc Picard"), ("maya: lower case is not a name", None),
    ("https://example.org/page", None), ("10:30 the meeting", None), ("I said: yes", None),
    ("A B C D: four words", None), ("Maya:no space after the colon", None), ("no colon at all", None)])
def test_a_turn_names_its_speaker_only_as_a_transcript_does(text: str, name: str | None) -> None:
    assert keyword.speaker(text) == name


def _said_and_said_about(vault: Vault) -> tuple[int, int]:
    """Ana speaks of Bea's kayak in a short turn; Bea's own words about it are longer: by bm25
    alone Ana's turn is first."""
    about = remember(vault, "Ana: Bea's kayak! that kayak!", ORIGIN, project="talk", valid_at="2023-07-01")
    said = remember(vault, "Bea: after a long search I finally bought myself a kayak, a blue one with a yellow "
                    "paddle and a dry bag", ORIGIN, project="talk", valid_at="2023-07-02")
    remember(vault, "Cai: my kayak is in the shed", ORIGIN, project="talk", valid_at="2023-07-03")
    return about, said


def _reorders(vault: Vault, question: str, first: int, second: int, **factor: float) -> dict[int, dict[str, Any]]:
    """Without ``factor`` (and without the turn-before share) ``second`` ranks first; with it, ``first``
    does. Each result's factors by id."""
    plain = _ids(_keyword(vault, before_share=0.0), question)
    assert plain[:2] == [second, first], "the set-up no longer shows the failure the factor mends"
    results = _keyword(vault, before_share=0.0, **factor).search(question, FactFilter(project="talk"))
    assert [r.fact.id for r in results[:2]] == [first, second]
    return {r.fact.id: r.factors for r in results}


def test_a_persons_own_words_come_before_anothers_words_about_them(vault: Vault) -> None:
    about, said = _said_and_said_about(vault)
    factors = _reorders(vault, "what colour is Bea's kayak", said, about, speaker=1.0)
    assert factors[said]["speaker"] == "Bea" and factors[said]["speaker_weight"] == pytest.approx(2.0)
    assert factors[about]["speaker"] is None and factors[about]["speaker_weight"] == 1.0  # Ana is not asked about
    assert ("Said by someone you named", "Bea (×2.00)") in score_details(factors[said])
    # a name must be asked for whole: "Cai" is not in "Caitlin's"; every word of a longer name must be
    longer = _keyword(vault, before_share=0.0, speaker=1.0).search("Caitlin's kayak", FactFilter(project="talk"))
    assert all(r.factors["speaker"] is None for r in longer)


def test_a_name_of_two_words_is_asked_for_whole(vault: Vault) -> None:
    said = remember(vault, "Ana Lucía: my kayak is red", ORIGIN, project="talk", valid_at="2023-07-01")
    remember(vault, "Cai: the shed is full", ORIGIN, project="talk", valid_at="2023-07-02")
    service = _keyword(vault, speaker=1.0)

    def factors(question: str) -> dict[str, Any]:
        return next(r.factors for r in service.search(question, FactFilter(project="talk")) if r.fact.id == said)

    half = factors("what colour is Ana's kayak")  # "Ana" is not "Ana Lucía"
    assert half["speaker"] is None and half["speaker_weight"] == 1.0
    whole = factors("Ana Lucía kayak")
    assert whole["speaker"] == "Ana Lucía" and whole["speaker_weight"] == pytest.approx(2.0)
    assert factors("ANA LUCIA kayak")["speaker"] == "Ana Lucía"  # as the index sees words: case and accents folded


@pytest.mark.parametrize(("text", "share"), [
    ("Sam: Any suggestions?", 1.0), ("Sam: How are you? I am fine.", 0.5), ("No question here", 0.0),
    ("see https://example.org/?q=1 for it", 0.0), ("お元気ですか？元気です。", 0.5), ("", 0.0),
    ("Layla: كيف حالك؟ أنا بخير.", 0.5), ("Τι κάνεις\u037e Καλά.", 0.5),
    # a question that carries what the person said is no weak memory
    ("User: I've set a goal to finish 3 series by February 28, can you help me plan the weeks ahead?", 0.0),
    ("User: I've set a goal to finish 3 series by February 28. Can you help me plan?", 0.5)])
def test_the_share_of_a_turns_sentences_that_ask(text: str, share: float) -> None:
    assert keyword.asking_share(text) == pytest.approx(share)


def test_an_answer_comes_before_the_question_it_answers(vault: Vault) -> None:
    asked = remember(vault, "Ana: Bea, which band did you like best at the festival?", ORIGIN, project="talk",
                     valid_at="2023-07-01")
    answer = remember(vault, "Bea: the band I liked best was Aerosmith. They were loud.", ORIGIN, project="talk",
                      valid_at="2023-07-01")
    question = "which band did Bea like best at the festival"
    factors = _reorders(vault, question, answer, asked, asks=0.7)
    assert factors[asked]["asks"] == pytest.approx(1.0) and factors[asked]["asks_weight"] == pytest.approx(0.3)
    assert factors[answer]["asks"] is None and factors[answer]["asks_weight"] == 1.0
    assert ("Sentences that ask a question", "100% (×0.30)") in score_details(factors[asked])
    # the reply still takes its share of the question it answers: the weight comes after it
    shared = _keyword(vault, before_share=0.5, asks=0.7).search(question, FactFilter(project="talk"))
    reply = next(r for r in shared if r.fact.id == answer).factors
    assert reply["before_id"] == asked and reply["from_before"] > 0


def _statement_and_reply(vault: Vault) -> tuple[int, int]:
    """A person tells an assistant a fact inside a request; the long reply repeats the words."""
    said = remember(vault, "User: my first sprint ends on March 29, focusing on login, can you help me plan it?",
                    ORIGIN, project="talk", valid_at="2024-03-15")
    reply = remember(vault, "Assistant: Certainly! A sprint plan for the sprint ending March 29: sprint goals, "
                     "sprint backlog, sprint review, and a sprint retrospective at the end of the first sprint.",
                     ORIGIN, project="talk", valid_at="2024-03-15")
    return said, reply


def test_a_first_person_question_names_the_persons_own_turns(vault: Vault) -> None:
    said, reply = _statement_and_reply(vault)
    factors = _reorders(vault, "when does my first sprint end", said, reply, speaker=1.0)
    assert factors[said]["speaker"] == "User" and factors[said]["speaker_weight"] == pytest.approx(2.0)
    assert factors[reply]["speaker"] is None
    assert ("Said by you (your question says I or my)", "User (×2.00)") in score_details(factors[said])
    # a question about someone else names no one's turns
    other = _keyword(vault, speaker=1.0).search("when does Bea's first sprint end", FactFilter(project="talk"))
    assert all(r.factors["speaker"] is None for r in other)


def test_a_reply_takes_from_the_turn_before_as_far_as_it_asks(vault: Vault) -> None:
    said, reply = _statement_and_reply(vault)
    question = "when does my first sprint end"
    shared = {r.fact.id: r.factors for r in _keyword(vault, before_share=0.5).search(question,
                                                                                      FactFilter(project="talk"))}
    assert shared[reply]["before_id"] == said and shared[reply]["from_before"] > 0
    gated = {r.fact.id: r.factors for r in _keyword(vault, before_share=0.5, answers=1.0).search(
        question, FactFilter(project="talk"))}
    assert gated[reply]["before_asks"] == 0.0 and gated[reply]["from_before"] == 0.0  # a statement: nothing
    assert gated[reply]["final"] < shared[reply]["final"]
    words = _keyword(vault, before_share=0.0, previous_turn=1.0, answers=1.0).search(question,
                                                                                      FactFilter(project="talk"))
    assert next(r for r in words if r.fact.id == reply).factors["previous_turn_words"] == 0.0  # nor its words
    # an answer to a short question still takes its share
    asked, answer = _asked_and_answered(vault)
    found = {r.fact.id: r.factors for r in _keyword(vault, before_share=0.5, answers=1.0).search(
        REPLY_QUESTION, FactFilter(project="talk"))}
    assert found[answer]["before_id"] == asked and found[answer]["before_asks"] == pytest.approx(1.0)
    assert found[answer]["from_before"] > 0


def _planned_trip(vault: Vault, project: str, between: int) -> tuple[int, int, int]:
    """One conversation (one project, one day): the plan, ``between`` turns that hold none of the
    question's words, then what was packed for it; on another day, a short turn that only says
    "packed". By bm25 alone the short turn comes before what was packed for the trip."""
    plan = remember(vault, "Ana: Rodrigo booked the lighthouse tour for Saturday", ORIGIN, project=project,
                    valid_at="2023-07-01")
    for i in range(between):
        remember(vault, f"{'Bea' if i % 2 == 0 else 'Ana'}: sunny all day, number {i}", ORIGIN, project=project,
                 valid_at="2023-07-01")
    packed = remember(vault, "Ana: he packed a kayak, a flask of tea, two sandwiches and a map", ORIGIN,
                      project=project, valid_at="2023-07-01")
    other = remember(vault, "Cai: I packed.", ORIGIN, project=project, valid_at="2023-09-01")
    return plan, packed, other


TRIP_QUESTION = "what did Rodrigo pack for the lighthouse tour"


def test_a_turn_takes_a_share_of_a_strong_match_a_few_turns_before_it(vault: Vault) -> None:
    from vodou_desktop.search.service import NEARBY_SPAN

    plan, packed, other = _planned_trip(vault, "talk", 2)
    plain = _ids(_keyword(vault, before_share=0.0), TRIP_QUESTION)
    assert plain[:3] == [plan, other, packed], "the set-up no longer shows the failure the factor mends"
    results = _keyword(vault, before_share=0.0, nearby=0.2).search(TRIP_QUESTION, FactFilter(project="talk"))
    ids = [r.fact.id for r in results]
    assert ids[:2] == [plan, packed] and ids.index(other) > 1
    factors = {r.fact.id: r.factors for r in results}
    assert factors[packed]["nearby_id"] == plan and factors[packed]["from_nearby"] == pytest.approx(0.2)
    assert ("From a turn nearby", "0.20") in score_details(factors[packed])
    assert factors[other]["from_nearby"] == 0 and factors[other]["nearby_id"] is None  # another conversation
    # beyond the span, nothing: the same conversation with more small talk in between
    plan, packed, other = _planned_trip(vault, "far", NEARBY_SPAN)
    far = _keyword(vault, before_share=0.0, nearby=0.2).search(TRIP_QUESTION, FactFilter(project="far"))
    ids = [r.fact.id for r in far]
    assert ids[:2] == [plan, other] and ids.index(packed) > 1
    assert next(r for r in far if r.fact.id == packed).factors["from_nearby"] == 0


FACTORS = ("path", "keyword_bm25", "keyword_norm", "vector_cosine", "vector_norm", "fusion", "keyword_weight",
           "fused", "before_id", "from_before", "before_asks", "answers_weight", "after_id", "from_after", "nearby_id",
           "from_nearby",
           "nearby_weight", "shared", "second_hop_words", "second_hop_bm25", "second_hop_norm", "second_hop_weight",
           "tier", "tier_weight", "kind", "kind_weight", "canonical", "duplicate_weight", "same_message_weight",
           "scope", "query_scope", "scope_weight", "coverage", "coverage_weight", "previous_turn_words",
           "previous_turn_weight", "speaker", "speaker_weight", "asks", "asks_weight", "final")


@pytest.mark.model
def test_explain_names_every_factor_and_they_make_the_score(vault: Vault, cli_model: object) -> None:
    _two_hop_conversation(vault)
    out = run_cli("--vault", str(vault.path), "mem", "search", QUESTION, "--project", "talk", "--explain", "--json")
    assert out.code == 0, out.err
    rows = json.loads(out.out)["results"]
    assert rows
    for row in rows:
        e = row["explain"]
        assert set(e) == set(FACTORS)
        assert e["second_hop_weight"] == FUSION.second_hop
        assert e["shared"] == pytest.approx(e["fused"] + e["from_before"] + e["from_after"] + e["from_nearby"],
                                            abs=1e-5)
        assert e["nearby_weight"] == FUSION.nearby and (e["nearby_id"] is None) == (e["from_nearby"] == 0)
        assert e["final"] == pytest.approx(e["shared"] * e["tier_weight"] * e["kind_weight"] * e["duplicate_weight"]
                                           * e["same_message_weight"] * e["scope_weight"] * e["coverage_weight"]
                                           * e["speaker_weight"] * e["asks_weight"], abs=1e-5)
        assert e["coverage_weight"] == pytest.approx(1 + FUSION.coverage * (e["coverage"] or 0.0), abs=1e-5)
        assert e["speaker_weight"] == pytest.approx(1 + FUSION.speaker if e["speaker"] else 1.0, abs=1e-5)
        assert e["asks_weight"] == pytest.approx(1 - FUSION.asks * (e["asks"] or 0.0), abs=1e-5)
