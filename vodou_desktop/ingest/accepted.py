"""What an assistant's reply carries that the person accepted (ING-6).

An assistant's reply is the model talking, not memory about the person, and is never kept as a
memory of its own. One exception is kept: a reply the person accepts in their very next message
("That sounds like a solid plan. I'll…", "I think I'll go with that", "Let's do it") — the plan or
suggestion they took on is then a decision of theirs, in the assistant's words. It is kept as one
short ``decision`` memory naming the reply as its source: the reply's first substantive sentence and
the titles of its points (headings, bold list leads), never the reply whole.

Rules only, as the rest of extraction: ``accepts`` reads the opening of the person's next message.
"""

from __future__ import annotations

import re

from vodou_desktop.ingest.extract import Bullet, clean, has_figure, has_specific, is_question, sentences

ACCEPTED_CONFIDENCE = 0.8  # the person agreed to it; the words are still the assistant's
MAX_LEAD_WORDS = 40
MAX_POINTS = 6
LEAD_CANDIDATES = 4  # sentences looked at for one that names something specific
PREFIX = "Accepted the assistant's suggestion:"

_OK = r"(?:yeah|yes|yep|yup|ok|okay|great|perfect|awesome|cool|alright|all right|sure|thanks|thank you|nice)"
_ACCEPTS = re.compile(
    rf"^(?:{_OK}[\s,.!]*(?:so much|a lot|a ton)?[\s,.!]*)*"
    r"(?:(?:that|this|these|those|it|your plan|the plan)\s+)?(?:all\s+)?(?:sounds?|looks?|seems?)\s+(?:like\s+)?"
    r"(?:a\s+|an\s+)?(?:really\s+|very\s+|pretty\s+)?(?:good|great|solid|perfect|reasonable|helpful|useful|"
    r"like a plan|right|fine|doable|manageable|comprehensive|excellent)\b"
    rf"|^(?:{_OK}[\s,.!]+)+(?:i think\s+)?(?:i'll|i will|let's|we'll|that works|i like|i agree|i can do|"
    r"i'm going to|i am going to|will do)\b"
    r"|^(?:i think\s+)?(?:i'll|i will|let's|we'll)\s+(?:go with|go ahead|do (?:it|that|this)|take|follow|"
    r"try (?:that|this|it|these|those|your)|use (?:that|this|these|those|your)|stick with)\b"
    r"|^(?:i|i'd|i really)\s+(?:like|love)\s+(?:that|this|the|your)\s+(?:idea|plan|approach|suggestion|"
    r"schedule|list|outline|breakdown|structure)"
    r"|^(?:thanks?|thank you)(?:\s+so much)?(?:\s+for\s+[^.!?]{0,80})?[.!,]+\s*(?:i think\s+)?i(?:'ll| will)\b"
    r"|^(?:agreed|deal|done|let's do (?:it|that|this)|i agree)\b",
    re.IGNORECASE)
_OPENER = re.compile(
    r"^(?:certainly|absolutely|of course|sure|great|excellent|good|yes|no problem|definitely|that's|that is|"
    r"it's (?:great|good|wonderful|understandable|completely understandable|natural)|what a|congratulations|"
    r"hi|hello|hey|thanks|thank you|i'm glad|i am glad|glad|wow|happy to|here(?:'s| is| are)|let's|"
    r"to (?:help|ensure|address|make)|you're welcome|(?:that|this|it) (?:sounds|seems|looks)|sounds|"
    r"(?:great|good|excellent|smart|wise) (?:choice|idea|question|plan|decision|call|move)|nice)\b",
    re.IGNORECASE)
# The assistant speaking of itself ("I'll make sure to…", "Let me…"): never the gist of what was accepted.
_SELF = re.compile(r"\b(?:I|I'll|I'm|I've|I'd|me|my|let me|let's|we'll|we can)\b")
_HEADING = re.compile(r"^\s*#{1,6}\s+(?:\d+[.)]\s*)?(.+?)\s*#*\s*$")
_BOLD_LEAD = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*\*\*([^*]{3,80}?)[:.]?\*\*")


def accepts(answer: str) -> bool:
    """The person's message opens by taking on what the assistant just proposed."""
    return bool(_ACCEPTS.search(" ".join(clean(answer).split())[:240]))


def accepted_bullet(reply: str) -> Bullet | None:
    """The one memory an accepted reply leaves: its gist and its points, or None when its gist holds no figure
    (a number, a date, a title): with a name alone ("Talk openly with Francis about it") it is advice, not a
    decision with something in it (``bench.ingest`` measures what this costs in coverage)."""
    lead = _lead(reply)
    if not has_figure(lead):
        return None  # "Making a decision involves weighing several factors": no amount, date or title to hold
    points = _points(reply)
    text = f"{PREFIX} {lead}" + (f" Points: {'; '.join(points)}." if points else "")
    return Bullet(" ".join(text.split()), "decision", None, ACCEPTED_CONFIDENCE)


def _lead(reply: str) -> str:
    """The reply's gist: of its first few substantive sentences (not a greeting, praise, a question, the
    assistant speaking of itself), the first that names something specific, else the first."""
    found = []
    for sentence in sentences(reply):
        s = re.sub(r"\*\*|__|`", "", sentence).strip()
        s = re.sub(r"^(?:certainly|absolutely|of course|sure|great|yes|no problem)[^.!]*?[!,.]\s+", "", s,
                   flags=re.IGNORECASE)
        words = s.split()
        if len(words) < 6 or is_question(s) or s.endswith(":") or _SELF.search(s):
            continue
        if _OPENER.match(s) and len(words) < 12:
            continue
        if len(words) > MAX_LEAD_WORDS:
            s = " ".join(words[:MAX_LEAD_WORDS]).rstrip(",;:") + "…"
        found.append(s if s[-1] in ".!…" else s + ".")
        if has_specific(s) or len(found) >= LEAD_CANDIDATES:
            break
    return next((s for s in found if has_specific(s)), found[0] if found else "")


def _points(reply: str) -> list[str]:
    points: list[str] = []
    for line in reply.splitlines():
        m = _HEADING.match(line) or _BOLD_LEAD.match(line)
        if not m:
            continue
        title = re.sub(r"\*\*|__|`", "", m.group(1)).strip(" :.")
        if 2 <= len(title) <= 80 and title.casefold() not in (p.casefold() for p in points) \
                and title.casefold() not in ("conclusion", "summary", "example", "next steps", "final thoughts"):
            points.append(title)
        if len(points) >= MAX_POINTS:
            break
    return points
