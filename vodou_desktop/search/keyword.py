"""Turning any user string into safe FTS5 MATCH expressions.

User text is never passed to MATCH as-is: it is split into word tokens, each token is quoted
(so ``AND``, ``NEAR``, ``*``, ``:``, quotes and parentheses are just characters), and the tokens are
joined. Empty, emoji-only or punctuation-only input gives no expression and no keyword results.

Function words (articles, pronouns, auxiliaries, question words) are dropped unless nothing else is
left, so a question's "did", "she" or "how many" is never required and never ranks anything. The
index stems with Porter, so "herons" matches "heron" and "researching" matches "research".
"""

from __future__ import annotations

import re

MAX_TERMS = 24
_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    # articles, conjunctions, prepositions
    "a an the and or but nor so yet if then than as at by for from in into of off on onto out over to up "
    "upon with within without about above after again against along among around before behind below "
    "beneath beside between beyond during except inside since through throughout till toward "
    "towards under until via "
    # pronouns and determiners
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself "
    "she her hers herself it its itself they them their theirs themselves this that these those "
    "someone something anyone anything everyone everything all any both each either neither every "
    "few more most other another some such own same one ones "
    # auxiliaries and modals (not "may": it is also a month)
    "am is are was were be been being have has had having do does did doing done will would shall "
    "should can could might must ought "
    # question words and other function words
    "what when where which who whom whose why how whether "
    "not no yes very too also just only ever even still already quite rather really much many "
    "there here now ok okay oh well get got go going gone let lets "
    "s t d ll m re ve don didn doesn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn"
    .split()
)


# A transcript's turn opens with its speaker: one to three capitalised words, then a colon ("Maya:",
# "Ana Lucía:"). A link or a time ("https:", "10:30") does not start with a capitalised word.
_SPEAKER = re.compile(r"\s*((?:[^\W\d_][\w'.-]*)(?: [^\W\d_][\w'.-]*){0,2}):\s")


# The person's own turns in a chat with an AI assistant, as a transcript labels them ("User: …"). A
# question in the first person ("when does my sprint end") asks about what the person said: it names
# this speaker as a question naming "Maya" names Maya's turns.
PERSON_SPEAKERS = frozenset({"User"})
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})


def speaker(text: str) -> str | None:
    """The name a turn of a transcript opens with (``Name: what they said``), or None."""
    m = _SPEAKER.match(text[:64])
    if m is None or not all(word[0].isupper() for word in m.group(1).split(" ")):
        return None
    return m.group(1)


# A sentence ends at . ! ? (or the Arabic ؟, the Greek ;) followed by a space or the end, or at a
# full-width 。！？
_SENTENCE_END = re.compile(r"(?<=[.!?\u061f\u037e])\s+|(?<=[。！？])\s*")
_QUESTION_MARKS = ("?", "？", "\u061f", "\u037e")
# A sentence that asks holds none of its answer when it is short ("How was the trip?"); a longer one
# carries what the person said ("I've set a goal to finish 3 series by February 28, can you help me
# plan the weeks?"), and is no weak memory. Words, as ``_WORD`` counts them.
ASK_WORDS = 12


def asking_share(text: str) -> float:
    """The share of ``text``'s sentences that only ask: end with ``?`` and hold at most ``ASK_WORDS``
    words (a transcript turn's speaker left out). A turn that only asks holds none of its answer."""
    if not any(mark in text for mark in _QUESTION_MARKS):
        return 0.0  # most memories: no sentence to split (search reads this for ~150 texts a query)
    name = speaker(text)
    if name is not None:
        text = text.split(":", 1)[1]
    sentences = [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]
    if not sentences:
        return 0.0
    return sum(1 for s in sentences if s.endswith(_QUESTION_MARKS) and _short(s)) / len(sentences)


def _short(sentence: str) -> bool:
    """At most ``ASK_WORDS`` words (a sentence in a script without spaces counts by its characters, about
    two to a word)."""
    words = _WORD.findall(sentence)
    if len(words) == 1 and len(words[0]) > 2 * ASK_WORDS:
        return False
    return len(words) <= ASK_WORDS


def terms(text: str) -> list[str]:
    """Distinct word tokens, lower-cased, stop words dropped unless nothing else is left."""
    words = [w.casefold() for w in _WORD.findall(text or "")]
    seen: dict[str, None] = {}
    for w in words:
        seen.setdefault(w, None)
    unique = list(seen)
    content = [w for w in unique if w not in STOPWORDS]
    return (content or unique)[:MAX_TERMS]


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, mode: str = "and") -> str | None:
    """``"a" "b"`` (all terms) or ``"a" OR "b"`` (any term); ``None`` when there is nothing to match."""
    found = terms(text)
    if not found:
        return None
    quoted = [quote(w) for w in found]
    return " OR ".join(quoted) if mode == "or" else " ".join(quoted)


def any_of_rare(rare: list[str], common: list[str]) -> str | None:
    """Rows holding any rare term, ranked by every term.

    ``(r1 OR r2) AND (r1 OR r2 OR c1 OR c2)``: the rows are those of the rare terms' short lists
    (FTS5 seeks into the common terms' lists instead of reading them), and bm25 still scores the
    common terms in those rows. With no common term it is the plain OR of the rare terms.
    """
    if not rare:
        return None
    rare_or = " OR ".join(quote(t) for t in rare)
    if not common:
        return rare_or
    every = " OR ".join(quote(t) for t in [*rare, *common])
    return f"({rare_or}) AND ({every})"
