"""ING-5: the deterministic extractor keeps durable statements and drops everything else."""

from __future__ import annotations

from bench.extraction import evaluate
from vodou_desktop.ingest.extract import classify, extract_bullets


def texts(text: str) -> list[str]:
    return [b.text for b in extract_bullets(text)]


def test_keeps_durable_statements_with_their_kind():
    got = {b.text: b.kind for b in extract_bullets(
        "I prefer dark mode in every editor. We decided to use Postgres for billing. "
        "We plan to ship the beta next month. My sister lives in Lisbon.")}
    assert got == {
        "I prefer dark mode in every editor.": "preference",
        "We decided to use Postgres for billing.": "decision",
        "We plan to ship the beta next month.": "plan",
        "My sister lives in Lisbon.": "fact",
    }


def test_drops_chitchat_questions_requests_and_dangling_sentences():
    assert texts("Hi! Thanks so much. What do you think about Rust? Can you write a parser for me? "
                 "Please explain monads. It is due on Friday. Maybe we use Redis, not sure.") == []


def test_drops_code_blocks_and_fenced_page_context():
    text = ("```\nI prefer tabs in every file I write.\n```\n"
            "<vodou:context>I live in Paris and love opera.</vodou:context>\n"
            "    I use vim for all my editing.\n"
            "I use Helix as my main editor.")
    assert texts(text) == ["I use Helix as my main editor."]


def test_an_unclosed_fence_hides_the_rest():
    assert texts("I use Zed daily at work. <vodou:context>I use Emacs daily at home.") == ["I use Zed daily at work."]


def test_bullets_are_tidied_and_not_repeated():
    assert texts("- also, i always sign my emails with my initials\n* I always sign my emails with my initials") == [
        "I always sign my emails with my initials."]


def test_length_bounds():
    assert classify("I use Go.") is None
    assert classify("I use " + "very " * 60 + "long words.") is None


def test_labelled_set_is_measured():
    result = evaluate()
    assert result["expected"] >= 30 and result["predicted"] > 0
    assert 0.0 <= result["precision"] <= 1.0 and 0.0 <= result["recall"] <= 1.0
