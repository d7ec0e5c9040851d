"""The search service's thread neighbours go through the same filter as the results: a neighbour in
another project is never named, not even by id in a result's explanation."""

from __future__ import annotations

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter


def test_explain_names_no_neighbour_from_another_project(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    question, reply = (remember(vault, text, Origin(kind="turn", tool="harness"), project="talk",
                                valid_at="2023-05-07T10:00:00+00:00")
                       for text in ("A: Which adoption agencies did you look into?",
                                    "B: The two on Elm Street, both welcoming."))
    found = keyword_search.search("adoption agencies", FactFilter(project=ALL_PROJECTS))
    assert {r.fact.id for r in found[:2]} == {question, reply}  # the reply is found through its question
    everywhere = next(r for r in found if r.fact.id == question)
    assert everywhere.factors["after_id"] == reply  # one thread
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET project_id = 'secret' WHERE id = ?", (reply,)))
    top = keyword_search.search("adoption agencies", FactFilter(project="talk"))[0]
    assert top.fact.id == question
    assert top.after is None and top.factors["after_id"] is None and top.factors["before_id"] is None
