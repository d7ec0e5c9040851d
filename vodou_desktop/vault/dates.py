"""The days a dated memory's words point at: "yesterday", "last Friday", "two days ago", "last month"
in a message of 5 December 2023 mean 4 December, 1 December, 3 December and November 2023. A
question names the day ("what did Sam do on December 4?"), the message names it relative to its own
day, so the keyword index holds both: the memory's day and, in the same words, each day it points at
(``facts.date_words``). Only what is unambiguous from the message's day alone is resolved; "next
week", "soon" or "in the summer" are left as they are."""

from __future__ import annotations

import re
from datetime import date, timedelta

# English names whatever the process locale (a Qt app sets it), so the index is the same everywhere.
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# Each phrase holds one of these words: the text is searched only around them (a long assistant reply
# holds "next" and "last" often, and one pattern over all of its length cost ~0.5 ms).
_ANCHORS = ("yesterday", "tomorrow", "ago", "last", "next")
_BEFORE, _AFTER = 24, 16  # the longest phrase's characters before its anchor word ("the day before "), after
MAX_DAYS_AGO = 31  # "45 days ago": more likely a figure of speech than a day to file the memory under

# One pass over the text: the alternatives in this order, so "the day before yesterday" is not also
# "yesterday" (a match is never looked into again).
_KINDS = (
    (r"the day before yesterday", "day-2"),
    (r"(?:the )?day after tomorrow", "day+2"),
    (r"yesterday|last night", "day-1"),
    (r"tomorrow", "day+1"),
    (rf"{_COUNT} days? ago", "days-ago"),
    (rf"{_COUNT} weeks? ago", "weeks-ago"),
    (rf"last {_WEEKDAY}", "last-weekday"),
    (rf"next {_WEEKDAY}", "next-weekday"),
    (r"last weekend", "last-weekend"),
    (r"last week", "last-week"),
    (r"last month", "last-month"),
    (r"next month", "next-month"),
    (r"last year", "last-year"),
    (r"next year", "next-year"),
)
_PATTERN = re.compile(r"\b(?:" + "|".join(f"(?P<k{n}>{p})" for n, (p, _) in enumerate(_KINDS)) + r")\b")


def day_words(day: date) -> str:
    """A day in the words a question may use: "7 May 2023 May 2023 Sunday"."""
    month = MONTHS[day.month - 1]
    return f"{day.day} {month} {day.year} {month} {day.year} {WEEKDAYS[day.weekday()]}"


def one_day(day: date) -> str:
    """Another day a memory points at: "4 December 2023 Monday" (its month and year are said once)."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year} {WEEKDAYS[day.weekday()]}"


def month_words(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def _shift_month(day: date, months: int) -> tuple[int, int]:
    n = day.year * 12 + day.month - 1 + months
    return n // 12, n % 12 + 1


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.casefold()]


def referred(text: str, day: date) -> list[str]:
    """The days (and months, years) ``text``, said on ``day``, points at, in words, each once, in the
    order the text names them; the message's own day is not among them."""
    low = text.lower()
    found: dict[int, re.Match[str]] = {}
    for anchor in _ANCHORS:
        at = low.find(anchor)
        while at >= 0:
            for m in _PATTERN.finditer(low, max(0, at - _BEFORE), at + len(anchor) + _AFTER):
                found.setdefault(m.start(), m)
            at = low.find(anchor, at + 1)
    out: dict[str, None] = {}
    end = -1
    for start in sorted(found):
        m = found[start]
        if start < end:
            continue  # inside a longer phrase found first ("yesterday" of "the day before yesterday")
        end = m.end()
        words = _resolve(_KINDS[int(m.lastgroup[1:])][1], m.group(), day)  # type: ignore[index]
        if words:
            out.setdefault(words, None)
    return list(out)


def _resolve(kind: str, said: str, day: date) -> str | None:
    if kind == "days-ago":
        n = _count(said.split()[0])
        return one_day(day - timedelta(days=n)) if 0 < n <= MAX_DAYS_AGO else None
    if kind.startswith("day"):
        return one_day(day + timedelta(days=int(kind[3:])))
    if kind == "weeks-ago":
        n = _count(said.split()[0])
        return month_words(*_shift_month(day - timedelta(weeks=n), 0)) if 0 < n <= 8 else None
    if kind in ("last-weekday", "next-weekday"):
        want = WEEKDAYS.index(said.split()[-1].capitalize())
        if kind == "last-weekday":
            back = (day.weekday() - want) % 7 or 7
            return one_day(day - timedelta(days=back))
        ahead = (want - day.weekday()) % 7 or 7
        return one_day(day + timedelta(days=ahead))
    if kind == "last-weekend":
        saturday = day - timedelta(days=(day.weekday() - 5) % 7 or 7)
        return f"{one_day(saturday)} {one_day(saturday + timedelta(days=1))}"
    if kind == "last-week":
        return month_words(*_shift_month(day - timedelta(weeks=1), 0))
    if kind in ("last-month", "next-month"):
        return month_words(*_shift_month(day, -1 if kind == "last-month" else 1))
    if kind in ("last-year", "next-year"):
        return str(day.year + (-1 if kind == "last-year" else 1))
    return None


# A day, month or year a question names: "on October 13, 2023", "in July 2023", "on 16 November, 2023",
# "the 5th of May", "in 2022" (a year alone only after "in", "since" and the like). A month name alone
# ("in May", "May I ask") is left: it is a word as well.
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_MONTH = "|".join(MONTHS)
_BEFORE_DATE = r"\b(?:on|in|during|since|before|after|around|by|of|from|until)\s+"
_NAMED = re.compile(
    rf"(?:{_BEFORE_DATE})?"
    rf"(?:\b(?:the\s+)?{_DAY}\s+(?:of\s+)?(?:{_MONTH})\b,?(?:\s+(?:19|20)\d\d\b)?"
    rf"|\b(?:{_MONTH})\s+{_DAY}\b,?(?:\s+(?:19|20)\d\d\b)?"
    rf"|\b(?:{_MONTH}),?\s+(?:19|20)\d\d\b)"
    rf"|\b(?:in|during|since|before|after|until)\s+(?:19|20)\d\d\b(?![.,]?\d)",  # a year alone: "in 2022"
    re.IGNORECASE)


_WORD = re.compile(r"\w")


def without_dates(text: str) -> str:
    """``text`` without the days, months and years it names: what the meaning half of search embeds
    for a question. A model's vector holds no date a question could match (the keyword half matches
    them, against each memory's context words), and "on October 13, 2023" only moved the question's
    vector away from the memories it asks about. The text itself when it names none, or is nothing else."""
    if not _NAMED.search(text):
        return text
    left = re.sub(r"\s{2,}", " ", _NAMED.sub(" ", text)).strip(" ,")
    left = re.sub(r"\s+([?.!,])", r"\1", left)
    return left if _WORD.search(left) else text

