"""One vocabulary for every screen (tray, panel, memory browser, CLI): the person's words, not ours.

Qt-free so the CLI and the desktop say the same thing: "1 memory", "Off / Suggest / Collect",
a project or "global", where a memory came from in words, and why a search result matched.
"""

from __future__ import annotations

import re
from typing import Any

from vodou_desktop.search.keyword import PERSON_SPEAKERS

MODE_ORDER = ("off", "suggest", "collect")
# The one list of memory kinds, for the CLI, the app and MCP alike. ``plan`` is also what extraction
# finds in conversations; ``selection`` and ``link`` only come from pages.
FACT_KINDS = ("fact", "preference", "decision", "plan", "instruction", "note")  # what a person (or an AI tool) may add
# and what pages add, and a person's message of an imported or captured conversation kept whole
LIST_KINDS = (*FACT_KINDS, "selection", "link", "conversation")
MODE_WORDS = {"off": "Off", "suggest": "Suggest", "collect": "Collect"}
GLOBAL = "global"

_IRREGULAR = {"memory": "memories", "operator memory": "operator memories", "is": "are", "was": "were",
              "entry": "entries", "copy": "copies",
              "entity": "entities", "flush": "flushes", "set of near-duplicates": "sets of near-duplicates",
              "memory updated": "memories updated", "action": "actions"}

# Where a memory came from, by its source kind, when it has no web site.
SOURCE_WORDS = {
    "cli": "you wrote it (command line)",
    "panel": "you wrote it (app)",
    "note": "your note on a page",
    "link": "a page you saved",
    "selection": "text you selected on a page",
    "library": "a Library page",
    "page_turn": "a message on a page",
    "turn": "a conversation",
    "import_chatgpt": "imported from ChatGPT",
    "import_claude": "imported from Claude",
    "capture": "captured from a terminal session",
    "inbox": "the inbox folder",
    "mcp": "an AI tool",
    "opm": "operator memory",
    "bench": "a benchmark",
}
# The same in the memory list's narrow Source column (its tooltip and the details say it in full).
SOURCE_SHORT = {
    "cli": "command line", "panel": "Vodou app", "note": "page note", "link": "saved page",
    "selection": "page selection", "library": "Library page", "page_turn": "page message", "turn": "conversation",
    "import_chatgpt": "ChatGPT import", "import_claude": "Claude import", "capture": "terminal session",
    "inbox": "inbox folder", "mcp": "AI tool", "opm": "operator memory", "bench": "benchmark",
}
TIER_WORDS = {"pinned": "pinned", "first_party": "you wrote it", "capture": "captured", "import": "imported"}
KIND_WORDS = {"page_turn": "page message", "import_chatgpt": "import", "import_claude": "import",
              "conversation": "message"}


def plural(count: int, word: str) -> str:
    """``plural(1, "memory")`` → "1 memory"; ``plural(3, "memory")`` → "3 memories"."""
    if count == 1:
        return f"1 {word}"
    return f"{count} {_IRREGULAR.get(word, word + 's')}"


def mode_words(mode: str | None) -> str:
    return MODE_WORDS.get(mode or "", mode or "")


def project_words(project: str | None) -> str:
    return project or GLOBAL


def kind_words(kind: str | None) -> str:
    return KIND_WORDS.get(kind or "", kind or "")


def source_words(source_kind: str, tool: str | None = None, site: str | None = None) -> str:
    """Site or tool in words: the web site when there is one, else the tool that saved it."""
    if site:
        return site
    if source_kind == "mcp" and tool:
        return f"AI tool {tool}"
    if source_kind == "capture" and tool:
        return f"captured from {tool}"
    return SOURCE_WORDS.get(source_kind, source_kind.replace("_", " "))


def fact_source(fact: Any) -> str:
    return source_words(fact.source_kind, fact.tool, fact.site)


def fact_source_short(fact: Any) -> str:
    """``fact_source`` in a few words: the site, the AI tool's name, or where it was written."""
    if fact.site:
        return str(fact.site)
    if fact.source_kind in ("mcp", "capture") and fact.tool:
        return str(fact.tool) if fact.source_kind == "mcp" else f"{fact.tool} session"
    return SOURCE_SHORT.get(fact.source_kind, fact.source_kind.replace("_", " "))


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


def matched_terms(query: str, text: str, limit: int = 3) -> list[str]:
    """The query's words that the memory contains, in query order (for "matched 'heron'")."""
    have = _words(text)
    seen: list[str] = []
    for word in re.findall(r"\w+", query):
        folded = word.casefold()
        if len(folded) > 1 and folded in have and folded not in seen:
            seen.append(folded)
    return seen[:limit]


def why_matched(fact: Any, factors: dict[str, Any], query: str = "", site: str | None = None) -> str:
    """One readable line: "matched 'heron' · similar in meaning · from this site · you wrote it"."""
    if factors.get("path") == "recent" or not factors:
        return ""
    parts: list[str] = []
    terms = matched_terms(query, fact.text) if factors.get("keyword_bm25") is not None else []
    if terms:
        parts.append("matched " + ", ".join(f"'{t}'" for t in terms))
    elif factors.get("keyword_bm25") is not None:
        parts.append("matched your words")
    if factors.get("vector_cosine") is not None:
        parts.append("similar in meaning")
    if site and fact.site and (fact.site == site or fact.site.endswith("." + site)):
        parts.append("from this site")
    tier = TIER_WORDS.get(fact.tier)
    if tier:
        parts.append(tier)
    if factors.get("canonical") is False:
        parts.append("a near-duplicate (ranked lower)")
    if factors.get("scope_weight", 1.0) not in (None, 1.0):
        parts.append(f"scope {fact.scope}")
    return " · ".join(parts)


def _num(value: Any) -> str:
    return "—" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def score_details(factors: dict[str, Any]) -> list[tuple[str, str]]:
    """The score's factors with plain names, for a tooltip or the details pane."""
    if not factors or factors.get("path") == "recent":
        return []
    words = factors.get("keyword_bm25") is not None
    meaning = factors.get("vector_cosine") is not None
    hop = factors.get("second_hop_bm25") is not None
    coverage = factors.get("coverage")
    rows = [
        ("Word match (0-1)", _num(factors.get("keyword_norm")) if words else "—"),
        ("Your words in the turn before", f"+{_num(factors.get('previous_turn_words'))} × "
         f"{_num(factors.get('previous_turn_weight'))}" if factors.get("previous_turn_words") is not None
         and factors.get("previous_turn_weight") else "—"),
        ("Meaning match (0-1)", _num(factors.get("vector_norm")) if meaning else "—"),
        ("Share given to words", _num(factors.get("keyword_weight")) if meaning else "—"),
        ("Second pass, with " + ", ".join(f"'{w}'" for w in factors.get("second_hop_words") or []),
         f"{_num(factors.get('second_hop_norm'))} × {_num(factors.get('second_hop_weight'))}" if hop else "—"),
        ("Blended", _num(factors.get("fused"))),
        ("From the turn before", (_num(factors.get("from_before")) + (
            f" (it asks: {factors.get('before_asks') or 0.0:.0%})" if factors.get("answers_weight") else ""))
         if factors.get("from_before") else "—"),
        ("From the turn after", _num(factors.get("from_after")) if factors.get("from_after") else "—"),
        ("From a turn nearby", _num(factors.get("from_nearby")) if factors.get("from_nearby") else "—"),
        ("Share of your words it holds", f"{coverage:.0%} (×{_num(factors.get('coverage_weight'))})"
         if coverage is not None and factors.get("coverage_weight", 1.0) != 1.0 else "—"),
        ("Said by you (your question says I or my)" if factors.get("speaker") in PERSON_SPEAKERS
         else "Said by someone you named", f"{factors['speaker']} (×{_num(factors.get('speaker_weight'))})"
         if factors.get("speaker") and factors.get("speaker_weight", 1.0) != 1.0 else "—"),
        ("Sentences that ask a question", f"{factors['asks']:.0%} (×{_num(factors.get('asks_weight'))})"
         if factors.get("asks") and factors.get("asks_weight", 1.0) != 1.0 else "—"),
        ("Source weight", f"×{_num(factors.get('tier_weight'))} ({TIER_WORDS.get(factors.get('tier') or '', '')})"),
        ("Kind weight", f"×{_num(factors['kind_weight'])} ({kind_words(factors.get('kind'))})"
         if factors.get("kind_weight", 1.0) != 1.0 else "—"),
        ("Duplicate weight", f"×{_num(factors.get('duplicate_weight'))}"),
        ("Another memory of the same message ranks higher", f"×{_num(factors['same_message_weight'])}"
         if factors.get("same_message_weight", 1.0) != 1.0 else "—"),
        ("Scope weight", f"×{_num(factors.get('scope_weight'))}"),
        ("Score", _num(factors.get("final"))),
    ]
    return [(name, value) for name, value in rows if value not in ("—", "×—", "×— ()")]
