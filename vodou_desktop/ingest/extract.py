"""Deterministic extraction: conversation text → short, self-contained bullets (ING-5).

No model and no network. The text is cleaned (``vodou:context`` fences, code blocks, quoted
replies and shell lines removed), split into sentences, and a sentence is kept only when it
carries durable information — a preference, a decision, a plan, or a fact about a person,
project or tool — and is not chit-chat, a question, a request to the assistant, or a sentence
that leans on an earlier one ("It is due Friday"). Precision over recall: a missed fact can be
added by hand, a junk fact pollutes every later search. ``bench/extraction.py`` measures both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vodou_desktop.ingest.fences import strip_context

MIN_WORDS, MAX_WORDS = 4, 45
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]{30,}`")
_CODE_LINE = re.compile(r"^(?: {4}|\t|\$ |>>> |> |#!|[{}\[\]]\s*$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LEAD_IN = re.compile(
    r"^(?:also|oh|and|so|btw|by the way|anyway|fyi|just so you know|for context|note|ps|"
    r"oh and|ok so|okay so|well)[,:]?\s+", re.IGNORECASE)

_CHITCHAT = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|great|cool|sure|lol|haha|sounds good|got it|nice|"
    r"awesome|perfect|yes|no|yeah|yep|nope|hmm|good morning|good night|cheers|certainly|of course|"
    r"here is|here's|here are|i see|i understand|that makes sense|makes sense|no worries|sorry)\b",
    re.IGNORECASE)
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|can we|could we|write|generate|create|explain|"
    r"help|show|tell me|give me|make|fix|let's|lets|let me|summari[sz]e|translate|draft|list|find|check|"
    r"try|run|add|remove|rewrite|refactor|compare|suggest|imagine|pretend|act as)\b",
    re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:who|what|when|where|why|how|which|is|are|do|does|did|can|could|should|would|will|shall|am|"
    r"have|has|was|were|any idea|i wonder|wondering)\b",
    re.IGNORECASE)
_DANGLING = re.compile(r"^(?:it|this|that|these|those|they|them|he|she|there|here|which)\b", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:maybe|not sure|i guess|perhaps|i wonder|might be|no idea)\b", re.IGNORECASE)

KIND_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("preference", re.compile(
        r"\b(?:i|we) (?:really |strongly |much |generally |usually )?(?:prefer|like|love|hate|dislike|enjoy|"
        r"can't stand|avoid|want all)\b|\bmy (?:favou?rite|preferred)\b|\bprefers?\b|\bi always\b|"
        r"\bi never\b|\bi usually\b", re.IGNORECASE)),
    ("decision", re.compile(
        r"\b(?:decided|we chose|i chose|chose to|going with|went with|settled on|agreed|"
        r"we picked|switched to|will use|we use|standardi[sz]ed on|ruled out|dropped)\b", re.IGNORECASE)),
    ("plan", re.compile(
        r"\b(?:plan to|planning to|going to|intend to|will (?:start|ship|move|launch|finish|visit|travel|"
        r"meet|present|release|migrate)|deadline|is due|due on|scheduled|next (?:week|month|quarter|year)|"
        r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", re.IGNORECASE)),
    ("fact", re.compile(
        r"\b(?i:i am|i'm|i work|i live|i use|i have|i own|i run|i lead|i manage|i teach|i study|i speak|"
        r"(?:my|our) (?:[\w-]+ ){1,3}(?:is|are|was|runs|uses|has|lives|works)|we have|is called|is named|"
        r"works (?:at|on|for)|lives in|is based in|is married|was born|birthday|allergic)\b|"
        r"\b(?:[A-Z][a-z]+ )(?:is|was|leads|owns|manages|runs|uses|works|joined|left|hates|likes|prefers)\b")),
)


@dataclass(frozen=True)
class Bullet:
    text: str
    kind: str  # preference | decision | plan | fact


def clean(text: str) -> str:
    """Remove what is never memory: fenced page context, code blocks, quotes, shell lines."""
    text = strip_context(text or "")
    text = _CODE_FENCE.sub("\n", text)
    text = _INLINE_CODE.sub(" ", text)
    lines = [ln for ln in text.splitlines() if not _CODE_LINE.match(ln)]
    return "\n".join(lines)


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in clean(text).splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.startswith("#"):
            continue
        out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def _tidy(sentence: str) -> str:
    previous = None
    while previous != sentence:
        previous, sentence = sentence, _LEAD_IN.sub("", sentence).strip()
    sentence = sentence.strip(" \"'")
    if sentence and sentence[0].islower() and not sentence.startswith(("iOS", "iPhone", "macOS")):
        sentence = sentence[0].upper() + sentence[1:]
    if sentence and sentence[-1] not in ".!":
        sentence += "."
    return sentence.replace("!", ".") if sentence.endswith("!") else sentence


def classify(sentence: str) -> str | None:
    """The kind of durable information a sentence carries, or ``None`` to drop it."""
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    if sentence.rstrip().endswith("?") or _QUESTION_START.match(sentence):
        return None
    if _CHITCHAT.match(sentence) or _REQUEST.match(sentence) or _DANGLING.match(sentence):
        return None
    if _HEDGE.search(sentence):
        return None
    for kind, cue in KIND_CUES:
        if cue.search(sentence):
            return kind
    return None


def extract_bullets(text: str) -> list[Bullet]:
    """Durable bullets from one message or window of text, in order, without repeats."""
    seen: set[str] = set()
    out: list[Bullet] = []
    for raw in sentences(text):
        sentence = _tidy(raw)
        kind = classify(sentence)
        key = " ".join(sentence.casefold().split())
        if kind and key not in seen:
            seen.add(key)
            out.append(Bullet(sentence, kind))
    return out
