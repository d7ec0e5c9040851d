"""ING-5: the deterministic extractor keeps durable statements and drops everything else."""

from __future__ import annotations

import pytest

from bench.extraction import evaluate
from vodou_desktop.ingest.extract import KINDS, classify, extract_bullets, sentences


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
                 "Please explain monads. It is due on Friday.") == []


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
    assert classify("I use Go.") == "fact"  # short, and still a fact
    assert classify("Go.") is None and classify("I'm back.") is None
    long = extract_bullets("I use " + "very " * 60 + "long words.")
    assert len(long) == 1 and long[0].text.endswith("…") and len(long[0].text.split()) == 60


def test_labelled_set_is_measured():
    result = evaluate()
    assert result["expected"] >= 30 and result["predicted"] > 0
    assert 0.0 <= result["precision"] <= 1.0 and 0.0 <= result["recall"] <= 1.0


# -- issue 33: what an imported AI chat leaves behind ---------------------------------------------------

QUESTIONS = [  # questions to the assistant, most not opening with a question word
    "I am new here, can you help me with that??",
    "So I should probably refactor this first?",
    "My script keeps timing out?",
    "Any chance you could look at the logs?",
    "Thoughts on the second draft?",
    "Should I tell my manager before Friday?",
    "Is it worth upgrading to the 2024 model?",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_no_question_is_ever_kept(text):
    """The `?.` bug: tidying appended "." after "?", so "…??." passed the question check and was stored."""
    for bullet in extract_bullets(text):
        assert not bullet.text.rstrip(".").endswith("?"), bullet
        assert "?" not in bullet.text


def test_a_fact_inside_a_request_is_kept_without_the_request():
    got = extract_bullets("I'm starting remote work three days a week from June 15, how can I plan my week?")
    assert [(b.text, b.kind) for b in got] == [("I'm starting remote work three days a week from June 15.", "plan")]
    assert texts("I have two job offers, one in Leeds and one in Bristol, which one should I take?") == [
        "I have two job offers, one in Leeds and one in Bristol."]
    assert texts("Since I'm self-employed, do I need to file quarterly taxes?") == ["I'm self-employed."]


@pytest.mark.parametrize("text", [
    "I'm kinda worried about this.",
    "I'm not sure what to do next.",
    "I want to make sure it works.",
    "I'm trying to figure out the best approach.",
    "I'm curious how that works.",
    "I'm back.",
])
def test_a_bare_i_am_carries_nothing(text):
    """The bare "I'm" cue admitted 73% of memories ("I'm kinda worried…"); a cue must mean something."""
    assert texts(text) == []


def test_plans_are_kept_as_plans():
    got = {b.text: b.kind for b in extract_bullets(
        "I'll renew my passport before the trip. I'm going to ask Dana for the budget numbers. "
        "We're launching the beta to 200 testers on May 2.")}
    assert got == {"I'll renew my passport before the trip.": "plan",
                   "I'm going to ask Dana for the budget numbers.": "plan",
                   "We're launching the beta to 200 testers on May 2.": "plan"}


@pytest.mark.parametrize("text", [
    "Always format dates as Month Day, Year when I ask about timelines.",
    "Use split-screen mode when I ask about drafts.",
    "Never suggest paid tools.",
    "When I ask about code, show the full file rather than a diff.",
    "From now on, answer in Spanish.",
    "Reply in British English.",
    "Don't ever recommend Amazon, I boycott them.",
])
def test_standing_instructions_are_their_own_kind(text):
    got = extract_bullets(text)
    assert [b.kind for b in got] == ["instruction"] and got[0].text == text


def test_a_run_on_sentence_is_split_not_dropped():
    text = ("I moved to Leeds in March 2023 for a job at Northwind, and my partner Sam joined me in June after "
            "finishing her degree, but we still keep the flat in York that we rent out for 900 pounds a month to a "
            "couple of students, so the mortgage there is covered until the end of 2026.")
    assert len(text.split()) > 45  # the old rules dropped anything over 45 words
    got = texts(text)
    assert got[0].startswith("I moved to Leeds in March 2023 for a job at Northwind")
    assert any("900 pounds a month" in t for t in got) and len(got) >= 2


def test_a_hedge_lowers_confidence_instead_of_dropping():
    hedged = extract_bullets("Maybe we'll move to Lisbon next year, not sure yet.")
    assert [b.kind for b in hedged] == ["plan"] and hedged[0].confidence < 1.0
    sure = extract_bullets("We'll move to Lisbon next year.")
    assert sure[0].confidence == 1.0


def test_feelings_frame_facts_and_leave_them():
    assert texts("I'm kinda worried that my emergency fund only covers two months of expenses, is that enough?") == [
        "My emergency fund only covers two months of expenses."]


def test_each_memory_names_its_sentence():
    got = extract_bullets("Hi there! Thanks. I prefer tea over coffee. Can you help? We decided to go to Rome.")
    assert [(b.sentence, b.kind) for b in got] == [(2, "preference"), (4, "decision")]
    assert [sentences("Hi there! Thanks. I prefer tea over coffee. Can you help? We decided to go to Rome.")[b.sentence]
            for b in got] == ["I prefer tea over coffee.", "We decided to go to Rome."]


def test_the_labelled_sentence_sets_are_measured_both_ways():
    from bench.extraction import evaluate_ours

    r = evaluate_ours()
    assert r["sentences"] >= 150 and r["keep"] >= 90 and set(r["recall_by_kind"]) == set(KINDS)
    assert 0.0 <= r["precision"] <= 1.0 and 0.0 <= r["recall"] <= 1.0


@pytest.mark.parametrize("text", [
    "Comparing the direct counting method and the complement method makes sense.",  # a capital is not a name
    "Given the current focus is on caching, here's a question that follows the guidelines.",
    "I'll send the message now and wait for their response.",  # what and whose: in another message
    "I'll probably do it right after my next paycheck comes in.",
    "The birthday paradox problem was fun to work through.",  # "birthday" alone is no fact about a person
])
def test_no_memory_without_something_to_hold_on_to(text):
    assert texts(text) == []


def test_a_name_and_a_specific_hold_a_pronoun():
    assert texts("I'll ask Dana for her budget numbers.") == ["I'll ask Dana for her budget numbers."]
    assert texts("I'm going to repaint the kitchen this weekend, any tips on prep?") == [
        "I'm going to repaint the kitchen this weekend."]
    assert texts("Lena from accounting recommended YNAB for budgeting.") == [
        "Lena from accounting recommended YNAB for budgeting."]


def test_short_inline_code_spans_are_kept_with_the_words_between_them():
    # Backticks pair left to right: the text between two short spans is words, not a span of code.
    assert texts("I'm using the `fetch` API to call the OpenWeather API, and I've built a debounce with "
                 "`setTimeout`.") == ["I'm using the `fetch` API to call the OpenWeather API, and I've built a "
                                      "debounce with `setTimeout`."]
    assert texts("I use `" + "x" * 40 + "` in Vim daily.") == ["I use in Vim daily."]


@pytest.mark.parametrize("text", [
    "I'm trying to classify a triangle with sides 5 cm, 5 cm, and 8 cm, and I want to know if it's isosceles?",
    "I'm trying to calculate the probability of getting exactly 2 heads in 3 coin tosses.",
    "I'm having trouble calculating the probability of rolling an even number on a 6-sided die.",
    "I'm kinda struggling to understand how Hemingway Editor can help me audit syntax and clarity.",
    "I made a mistake by using the semi-perimeter s = 12 instead of the correct s = 18.",
    "I'm trying to fix this ReferenceError in my JavaScript code.",
    "I've tried setting the PORT environment variable to 10000, but it didn't work.",  # debugging, not a life
    "I've tried a few different approaches, but nothing seems to be working.",
])
def test_the_task_at_hand_is_not_a_memory(text):
    assert texts(text) == []


def test_a_task_keeps_the_reason_it_gives_and_a_goal_is_no_task():
    assert texts("I'm trying to understand how probability works, especially since I've started a statistics "
                 "course in March.") == ["I've started a statistics course in March."]
    own = "I'm trying to understand how my quiz score rose from 75% to 92% after practising 15 problems."
    assert texts(own) == [own]  # the person's own numbers outlast the task
    assert texts("I'm trying to save $500 a month for a trip to Japan.") == [
        "I'm trying to save $500 a month for a trip to Japan."]
    assert texts("I'm trying to rebuild my motivation after cutting my hours to 45 a week.") == [
        "I'm trying to rebuild my motivation after cutting my hours to 45 a week."]


@pytest.mark.parametrize("text, whole", [
    ("My romantic partner Stephen and I just celebrated 5 years together on May 20 at The Sunset Grill, but I'm "
     "wondering how that changes things?",
     "My romantic partner Stephen and I just celebrated 5 years together on May 20 at The Sunset Grill."),
    ("I'm stressed about the book club at the library on July 18, Jeffrey invited me and I accepted, can you help?",
     "I'm stressed about the book club at the library on July 18, Jeffrey invited me and I accepted."),
])
def test_a_short_statement_stays_whole(text, whole):
    assert texts(text) == [whole]


def test_a_reason_that_points_elsewhere_is_not_kept():
    assert texts("Can you show how to upgrade Bootstrap, considering I have custom CSS and JS code for them?") == []
    assert texts("Can you show how to upgrade Bootstrap, considering I have custom CSS for my modals?") == [
        "I have custom CSS for my modals."]


@pytest.mark.parametrize("text", [
    "My question is, how can I cut the number of API calls in the autocomplete?",  # what is left of a request
    "I just want to make sure everything is done right and that Stephanie is fully prepared.",
    "I might need a bit more guidance on the visualization part though.",
    "I've also been using the following code to measure TTI:",  # leans on the code after it
    "I'll stick with the real stuff!",  # a plan of what?
    "I think I'll grab the deal now.",
    "I wanna know if that's something I should highlight in my personal statement.",  # a question, said flat
    "I'm thinking about how to prioritize my tasks for the rest of the week.",
])
def test_what_leans_on_another_message_or_asks_is_not_kept(text):
    assert texts(text) == []


def test_a_pointer_to_code_leaves_the_facts_before_it():
    assert texts("I've got Flask 2.3.1, Python 3.11, and SQLite 3.39 set up, and I'm using the MVC pattern, so "
                 "here's my current implementation:") == [
        "I've got Flask 2.3.1, Python 3.11, and SQLite 3.39 set up, and I'm using the MVC pattern."]
    assert texts("My concern is that my budget is only $8,000.") == ["My concern is that my budget is only $8,000."]
    assert texts("I'll book my flight now with the refundable option.") == [
        "I'll book my flight now with the refundable option."]


def test_what_was_tried_for_a_while_is_a_fact_and_a_noticed_fact_is_unframed():
    assert texts("I've tried the Mediterranean diet for 3 months and lost 5 kg.") == [
        "I've tried the Mediterranean diet for 3 months and lost 5 kg."]
    assert texts("I came across the fact that I refactored my CSS from 450 lines to 320 lines.") == [
        "I refactored my CSS from 450 lines to 320 lines."]


def test_a_request_said_flat_leaves_the_statement_before_it():
    assert texts("I just co-hosted a 90-minute session with Stephanie on September 3, and I'm thinking about how "
                 "to prioritize my tasks for the rest of the week") == [
        "I just co-hosted a 90-minute session with Stephanie on September 3."]
