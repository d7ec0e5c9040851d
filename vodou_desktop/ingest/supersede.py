"""Contradictions (ING-3): the newer claim on the same subject and attribute supersedes the older.

The rule is deliberately small and tested, not a model: a fact is read as a claim
(subject, attribute, value).

- Preference/usage verbs (prefer, like, love, want, use): the attribute is the verb plus the head
  noun of its object (the last word before a preposition), the value is the head's modifiers.
  "I prefer dark mode" vs "I prefer light mode": same (user, prefer, mode), values dark ≠ light.
  "I like pizza" vs "I like sushi" have different heads and are NOT a contradiction.
- Single-valued relations (lives in, works at/for, is based in, is married to, 's X is): the
  attribute is the relation, the value the rest. "Jane lives in Oslo" vs "Jane lives in Lima".

The winner is the claim with the later event time (``valid_at``, else ``created_at`` — imports carry
their message time in ``valid_at``), then the better tier. The loser is superseded under the winner
(hidden from search, never deleted) and ``vodou mem unsupersede ID`` brings it back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from vodou_desktop.ingest.dedupe import TIER_RANK, _live_facts
from vodou_desktop.vault import Fact, Vault
from vodou_desktop.vault import groups as g

_SELF = {"i", "me", "user", "the user"}
_PREP = re.compile(r"\s+(?:in|on|for|at|with|when|over|than|to|from|during|because|so|but|and|as)\s+")
_PREFERENCE = re.compile(
    r"^(?P<subject>.+?)\s+(?:really\s+|strongly\s+|always\s+)?(?P<verb>prefer|like|love|want|use)s?\s+(?P<object>.+)$",
    re.IGNORECASE)
_RELATION = re.compile(
    r"^(?P<subject>.+?)\s+(?P<verb>lives? in|works? (?:at|for)|is based in|is married to|moved to)\s+(?P<object>.+)$",
    re.IGNORECASE)
_POSSESSIVE = re.compile(r"^(?P<subject>.+?)'s\s+(?P<verb>[a-z ]{2,30}?)\s+is\s+(?P<object>.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    subject: str
    attribute: str
    value: str


def _subject(text: str) -> str:
    s = text.strip().casefold()
    return "user" if s in _SELF else s


def _clean(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'-]", " ", text.casefold()).split())


def claim(text: str) -> Claim | None:
    sentence = text.strip().rstrip(".!")
    if "\n" in sentence or sentence.endswith("?"):
        return None
    m = _RELATION.match(sentence) or _POSSESSIVE.match(sentence)
    if m:
        verb = re.sub(r"^(lives?|works?)", lambda x: x.group(1).rstrip("s"), m["verb"].casefold())
        return Claim(_subject(m["subject"]), verb.replace("moved to", "live in"), _clean(m["object"]))
    m = _PREFERENCE.match(sentence)
    if not m:
        return None
    head_phrase = _clean(_PREP.split(" " + m["object"] + " ", maxsplit=1)[0])
    words = head_phrase.split()
    if len(words) < 2:
        return None  # no modifier to disagree on: "I like pizza" is not a single-valued claim
    return Claim(_subject(m["subject"]), f"{m['verb'].casefold()} {words[-1]}", " ".join(words[:-1]))


def contradicts(a: str, b: str) -> bool:
    ca, cb = claim(a), claim(b)
    return bool(ca and cb and ca.subject == cb.subject and ca.attribute == cb.attribute and ca.value != cb.value)


def _rank(f: Fact) -> tuple[str, int, int]:
    return (f.event_time, -TIER_RANK.get(f.tier, 9), f.id)


def resolve_contradictions(vault: Vault, new_ids: Sequence[int]) -> list[tuple[int, int]]:
    """Supersede every live fact a new fact contradicts (or the new one, if it is older).

    Returns (loser, winner) pairs. Facts in different projects never supersede each other.
    """
    facts = _live_facts(vault)
    by_id = {f.id: f for f in facts}
    pairs: list[tuple[int, int]] = []
    hidden: set[int] = set()
    for new_id in new_ids:
        new = by_id.get(new_id)
        if new is None or new.id in hidden:
            continue
        for old in facts:
            if old.id == new.id or old.id in hidden or old.project != new.project:
                continue
            if contradicts(new.text, old.text):
                winner, loser = (new, old) if _rank(new) > _rank(old) else (old, new)
                vault.write(partial(g.supersede, loser=loser.id, winner=winner.id))
                pairs.append((loser.id, winner.id))
                hidden.add(loser.id)
                if loser.id == new.id:
                    break
    return pairs


def unsupersede(vault: Vault, fact_id: int) -> None:
    vault.write(partial(g.unsupersede, chunk_id=fact_id))
