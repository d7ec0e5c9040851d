"""The keyword path's query terms: question and function words are dropped, content words kept."""

from __future__ import annotations

from vodou_desktop.search.keyword import terms


def test_question_words_are_dropped_from_a_question() -> None:
    assert terms("what is the wifi password") == ["wifi", "password"]
    assert terms("Where did I put the spare key?") == ["put", "spare", "key"]
