"""The days a dated memory points at ("yesterday", "last Friday", "two days ago"): resolved from the
memory's own day into the keyword index's context words, so a question that names the day finds the
memory that named it relatively; written on insert and, for memories written before, by
a one-time check in the background (``ingest.redate``, which rewrites only the rows whose words
change)."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path

import pytest

from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest import redate
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.fusion import FusionParams
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import FactFilter, Vault, dates
from vodou_desktop.vault.facts import date_words
from vodou_desktop.vault.facts import redate as redate_rows

TUESDAY = date(2023, 12, 5)
ORIGIN = Origin(kind="turn", tool="harness")


@pytest.mark.parametrize(("text", "words"), [
    ("I went to a Weight Watchers meeting yesterday.", ["4 December 2023 Monday"]),
    ("Last night was fun", ["4 December 2023 Monday"]),
    ("the day before yesterday", ["3 December 2023 Sunday"]),  # not also "yesterday"
    ("Tomorrow I fly", ["6 December 2023 Wednesday"]),
    ("two days ago", ["3 December 2023 Sunday"]),
    ("a day ago", ["4 December 2023 Monday"]),
    ("12 days ago", ["23 November 2023 Thursday"]),
    ("45 days ago", []),  # a figure of speech more than a day
    ("last Friday", ["1 December 2023 Friday"]),
    ("LAST TUESDAY", ["28 November 2023 Tuesday"]),  # a week back, not today
    ("next Tuesday", ["12 December 2023 Tuesday"]),
    ("next Saturday", ["9 December 2023 Saturday"]),
    ("last weekend", ["2 December 2023 Saturday 3 December 2023 Sunday"]),
    ("last week", ["November 2023"]),
    ("three weeks ago", ["November 2023"]),
    ("last month", ["November 2023"]),
    ("next month", ["January 2024"]),
    ("last year", ["2022"]),
    ("next year", ["2024"]),
    ("yesterday, and yesterday again, then tomorrow", ["4 December 2023 Monday", "6 December 2023 Wednesday"]),
    ("a yesterdays-like word, lastly, nextdoor", []),
    ("I'll see you soon, next time", []),
    ("", []),
    # far apart in a long reply: each found where it is (the text is read around each word that may start one)
    ("Yesterday " + "we planned the next steps and the last details. " * 60 + "See you next Friday, not last week",
     ["4 December 2023 Monday", "8 December 2023 Friday", "November 2023"]),
])
def test_the_days_a_text_points_at(text: str, words: list[str]) -> None:
    assert dates.referred(text, TUESDAY) == words


def test_the_context_words_are_the_day_then_the_days_it_points_at() -> None:
    assert date_words("2023-12-05", "plain") == "5 December 2023 December 2023 Tuesday"
    assert date_words("2023-12-05") == "5 December 2023 December 2023 Tuesday"
    assert date_words("2023-12-05T18:30:00+00:00", "yesterday") == \
        "5 December 2023 December 2023 Tuesday 4 December 2023 Monday"
    # what the day already says is not said twice ("last week" of 20 December is December 2023)
    assert date_words("2023-12-20", "last week") == "20 December 2023 December 2023 Wednesday"
    assert date_words(None, "yesterday") is None
    assert date_words("not a date", "yesterday") is None


def _keyword(vault: Vault) -> SearchService:
    return SearchService(vault, Embedder("none"), VectorIndex(vault), FusionParams())  # type: ignore[arg-type]


def test_a_question_naming_the_day_finds_the_memory_that_said_yesterday(vault: Vault) -> None:
    said = remember(vault, "Sam: I went to a Weight Watchers meeting yesterday", ORIGIN, project="talk",
                    valid_at="2023-12-05")
    remember(vault, "Sam: I went to a Weight Watchers meeting", ORIGIN, project="talk", valid_at="2023-12-05")
    remember(vault, "Sam: I went to a Weight Watchers meeting", ORIGIN, project="talk", valid_at="2023-11-28")
    # the same words said on 5 December and on 28 November: only the first said it was on Monday 4 December
    results = _keyword(vault).search("Weight Watchers meeting Monday 4 December", FactFilter(project="talk"))
    assert results[0].fact.id == said


OLD = "5 December 2023 December 2023 Tuesday"  # what the rules before wrote: the memory's day alone


def _written_the_old_way(vault: Vault) -> tuple[int, int, int]:
    """Three memories of 5 December as an older Vodou left them: one that said "yesterday", one that
    said nothing of another day, and one that said "yesterday" and was then forgotten."""
    said = remember(vault, "Sam: I went to a Weight Watchers meeting yesterday", ORIGIN, project="talk",
                    valid_at="2023-12-05")
    plain = remember(vault, "Sam: fine, thanks", ORIGIN, project="talk", valid_at="2023-12-05")
    gone = remember(vault, "Sam: I met Ana for lunch yesterday", ORIGIN, project="talk", valid_at="2023-12-05")
    Forgetting(vault).forget_fact(gone)

    def job(conn, change):  # type: ignore[no-untyped-def]
        conn.execute("UPDATE chunks SET context = ? WHERE id IN (?, ?, ?)", (OLD, said, plain, gone))
        conn.execute("DELETE FROM settings WHERE key = ?", (redate.DATE_RULES_KEY,))

    vault.write(job)
    return said, plain, gone


def _contexts(vault: Vault, ids: list[int]) -> dict[int, str]:
    return dict(vault.read(lambda c: c.execute(
        f"SELECT id, context FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()))


def _monday(vault: Vault) -> list[int]:
    return vault.read(lambda c: [r[0] for r in c.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'context:monday' ORDER BY rowid")])


def test_older_memories_get_the_days_they_point_at_once(vault: Vault) -> None:
    said, plain, gone = _written_the_old_way(vault)
    assert _monday(vault) == []
    reports: list[tuple[int, int]] = []
    assert redate.redate_once(vault, progress=lambda *a: reports.append(a)) == 2  # the two that said yesterday
    assert _contexts(vault, [said, plain, gone]) == {said: OLD + " 4 December 2023 Monday", plain: OLD,
                                                     gone: OLD + " 4 December 2023 Monday"}
    assert _monday(vault) == [said, gone]  # the keyword index follows (a forgotten one too: an undo brings it back)
    assert reports == [(3, 2)]
    assert redate.redate_once(vault) is None  # recorded: never again for this vault
    # a search of the day finds it
    results = _keyword(vault).search("Weight Watchers meeting Monday 4 December", FactFilter(project="talk"))
    assert results[0].fact.id == said


def test_a_stopped_check_records_nothing_and_the_next_one_finishes(vault: Vault) -> None:
    said, plain, gone = _written_the_old_way(vault)
    stop = threading.Event()
    stop.set()
    assert redate.redate_once(vault, stop) == 0
    assert _contexts(vault, [said])[said] == OLD
    assert redate.redate_once(vault) == 2
    assert redate.redate_once(vault) is None


def test_words_changed_since_they_were_read_are_not_overwritten(vault: Vault) -> None:
    said, _, _ = _written_the_old_way(vault)
    assert vault.write(lambda c, change: redate_rows(c, change, [(said, "not what it holds", "x")])) == 0
    assert _contexts(vault, [said])[said] == OLD


def test_a_starting_app_checks_the_dated_memories_once(vault_path: Path) -> None:
    vault = Vault.open(vault_path)
    said, plain, _ = _written_the_old_way(vault)
    vault.close()
    with Runtime.open(vault_path, embedder="none", background_backfill=True) as rt:
        assert rt.recheck is not None
        rt.recheck.join(60)
        assert _contexts(rt.vault, [said, plain]) == {said: OLD + " 4 December 2023 Monday", plain: OLD}
        assert redate.redate_once(rt.vault) is None


@pytest.mark.parametrize(("question", "meaning"), [
    ("What painting did Melanie show to Caroline on October 13, 2023?", "What painting did Melanie show to Caroline?"),
    ("What did Tim say about his injury on 16 November, 2023?", "What did Tim say about his injury?"),
    ("How many times has Melanie gone to the beach in 2023?", "How many times has Melanie gone to the beach?"),
    ("What setback did Melanie face in October 2023?", "What setback did Melanie face?"),
    ("what did we plan for the 5th of May", "what did we plan for"),
    ("flight on March 12", "flight"),
    # left as they are: a month or a number that may be a word or a figure, or nothing else to embed
    ("May I ask what happened in May?", "May I ask what happened in May?"),
    ("room 2024 costs $2050", "room 2024 costs $2050"),
    ("a budget of 2000 dollars", "a budget of 2000 dollars"),
    ("in 2023", "in 2023"),
    ("Which  classical musicians", "Which  classical musicians"),
])
def test_the_question_the_meaning_half_embeds_names_no_date(question: str, meaning: str) -> None:
    assert dates.without_dates(question) == meaning


class _Asked:
    """The real model, noting each text a search hands it."""

    def __init__(self, model: Embedder) -> None:
        self._model, self.texts = model, []

    def submit_one(self, text: str) -> object:
        self.texts.append(text)
        return self._model.submit_one(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._model, name)


@pytest.mark.model
def test_search_embeds_the_question_without_its_dates_and_matches_them_by_keyword(vault: Vault, model: Embedder,
                                                                                  ) -> None:
    said = remember(vault, "Sam: I went to a Weight Watchers meeting yesterday", ORIGIN, project="talk",
                    valid_at="2023-12-05")
    remember(vault, "Sam: I went to a Weight Watchers meeting", ORIGIN, project="talk", valid_at="2023-11-28")
    asked = _Asked(model)
    service = SearchService(vault, asked, VectorIndex(vault, model=model.model_id))  # type: ignore[arg-type]
    results = service.search("What was Sam doing on December 4, 2023?", FactFilter(project="talk"))
    assert asked.texts == ["What was Sam doing?"]
    assert results[0].fact.id == said  # the day, by the keyword half
