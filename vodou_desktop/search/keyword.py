"""Turning any user string into a safe FTS5 MATCH expression.

User text is never passed to MATCH as-is: it is split into word tokens, each token is quoted
(so ``AND``, ``NEAR``, ``*``, ``:``, quotes and parentheses are just characters), and the tokens are
joined. Empty, emoji-only or punctuation-only input gives no expression and no keyword results.
"""

from __future__ import annotations

import re

MAX_TERMS = 24
_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be but by do does for from had has have how i if in into is it its me my "
    "no not of on or our so that the their them then there these they this to was we were what "
    "when where which who why will with you your".split()
)


def terms(text: str) -> list[str]:
    """Distinct word tokens, lower-cased, stop words dropped unless nothing else is left."""
    words = [w.casefold() for w in _WORD.findall(text or "")]
    seen: dict[str, None] = {}
    for w in words:
        seen.setdefault(w, None)
    unique = list(seen)
    content = [w for w in unique if w not in STOPWORDS]
    return (content or unique)[:MAX_TERMS]


def match_expression(text: str, mode: str = "and") -> str | None:
    """``"a" "b"`` (all terms) or ``"a" OR "b"`` (any term); ``None`` when there is nothing to match."""
    found = terms(text)
    if not found:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in found]
    return " OR ".join(quoted) if mode == "or" else " ".join(quoted)
