"""Entities (ING-4; seed 004): Titlecase names found with a token window, not a consuming regex.

A regex for "two Titlecase words" consumes its match: "Met Jane Doe" yields "Met Jane" and the
real name is swallowed. Here every adjacent pair (and triple) of Titlecase tokens is a candidate,
so "Jane Doe" is always seen; a candidate is dropped when its first token is a sentence opener that
is really a common word (a known opener such as "Met", or a word that appears lowercase anywhere
in the corpus).

Aliases: each token of a name may become an alias ("Doe" for "Jane Doe") — unless that token also
appears lowercase anywhere in the corpus, which makes it a common noun ("Rose Bush": "bush" seen
lowercase → no alias "Bush"). Facts are linked to an entity by its full name or a live alias.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import apsw

from vodou_desktop.ingest.dedupe import _live_facts
from vodou_desktop.vault import Change, Fact, Vault
from vodou_desktop.vault import entities_store as es

_TOKEN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")
_BREAK = re.compile(r"[.!?:;\n\"()\[\]]")
OPENERS = frozenset(
    "met called asked told saw with at the a an and but if when after before during today yesterday tomorrow "
    "thanks hi hello dear also then so because our my we i in on for from to by please remind email ping "
    "visited visit meeting call lunch dinner ask tell talked spoke".split())
NEVER_NAMES = frozenset(
    "i monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december".split())


def _titlecase(tok: str) -> bool:
    return len(tok) > 1 and tok[0].isupper() and tok[1:].replace("'", "").replace("-", "").islower()


def lowercase_vocabulary(texts: Iterable[str]) -> set[str]:
    """Every token that appears in all-lowercase somewhere in the corpus."""
    return {t for text in texts for t in _TOKEN.findall(text) if t.islower()}


def _tokens(text: str) -> list[tuple[str, bool, bool]]:
    """(token, is sentence start, is adjacent to the previous token) for every word."""
    out: list[tuple[str, bool, bool]] = []
    last_end, start = 0, True
    for m in _TOKEN.finditer(text):
        gap = text[last_end:m.start()]
        if _BREAK.search(gap):
            start = True
        adjacent = bool(out) and gap.strip() == ""
        out.append((m.group(), start, adjacent))
        start, last_end = False, m.end()
    return out


def find_names(text: str, lowercase: set[str]) -> list[str]:
    """Names in ``text``: every window of 2–3 adjacent Titlecase tokens that survives the opener test."""
    toks = _tokens(text)
    names: list[str] = []
    covered: set[int] = set()
    for size in (3, 2):
        for i in range(len(toks) - size + 1):
            window = toks[i : i + size]
            if any(j in covered for j in range(i, i + size)):
                continue
            if not all(_titlecase(t) and t.casefold() not in NEVER_NAMES for t, _, _ in window):
                continue
            if not all(adj for _, _, adj in window[1:]):
                continue
            first, at_start, _ = window[0]
            if at_start and (first.casefold() in OPENERS or first.casefold() in lowercase):
                continue
            names.append(" ".join(t for t, _, _ in window))
            covered.update(range(i, i + size))
    return names


def aliases_for(name: str, lowercase: set[str]) -> list[str]:
    return [t for t in name.split() if t.casefold() not in lowercase]


@dataclass
class EntityReport:
    entities: dict[str, list[str]] = field(default_factory=dict)  # name → aliases
    links: int = 0


def _mentions(text: str, name: str, aliases: Sequence[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in (name, *aliases))


def extract_entities(vault: Vault, new_ids: Sequence[int] | None = None) -> EntityReport:
    """Find names in the given facts (all live facts when None), store them, link every mention."""
    facts = _live_facts(vault, turns=True)
    lowercase = lowercase_vocabulary(f.text for f in facts)
    targets = facts if new_ids is None else [f for f in facts if f.id in set(new_ids)]
    found: dict[str, list[str]] = {}
    for fact in targets:
        for name in find_names(fact.text, lowercase):
            found[name] = aliases_for(name, lowercase)
    report = EntityReport(found)
    if found:
        report.links = vault.write(lambda conn, change: _store(conn, change, found, facts, lowercase))
    return report


def _store(conn: apsw.Connection, change: Change, found: dict[str, list[str]], facts: Sequence[Fact],
           lowercase: set[str]) -> int:
    es.drop_aliases(conn, change, [a for _, _, aliases in es.all_entities(conn) for a in aliases
                                   if a.casefold() in lowercase])
    links = 0
    for name, aliases in found.items():
        entity_id = es.upsert_entity(conn, change, name)
        es.add_aliases(conn, change, entity_id, aliases)
        mentions = [f.id for f in facts if _mentions(f.text, name, aliases)]
        es.link(conn, change, entity_id, mentions)
        links += len(mentions)
    return links
