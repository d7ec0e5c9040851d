"""Counts in the CLI's messages go through ``words.plural``: "1 memory", "2 memories", "0 memories".

Two checks: the source of every CLI module has no number followed by a plural noun written by hand
(so a new message cannot bring "1 memories" back), and each count message, built for n = 0, 1, 2,
says its nouns right."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest

import vodou_desktop
from vodou_desktop.cli.export import exported_words
from vodou_desktop.cli.mem_forget import _erased_sentence, _forgot_sentence
from vodou_desktop.data.backup import VaultCounts
from vodou_desktop.governance.journal import Action, undone_words
from vodou_desktop.words import plural

NOUNS = ("memory", "library document", "operator memory", "prompt", "conversation", "new message", "entity",
         "site rule", "earlier revision", "earlier backup", "inbox file", "flush", "action", "site", "Library page",
         "internal audit", "memory updated", "set of near-duplicates", "project")
PACKAGE = Path(vodou_desktop.__file__).parent
SOURCES = [*sorted((PACKAGE / "cli").glob("*.py")), *sorted((PACKAGE / "sync").glob("*.py")),
           PACKAGE / "governance" / "journal.py", PACKAGE / "governance" / "edits.py",
           *sorted((PACKAGE / "ui").glob("*.py")), PACKAGE / "data" / "backup.py"]


def _plural_form(noun: str) -> str:
    return plural(2, noun).split(" ", 1)[1]


def test_no_count_is_pluralised_by_hand() -> None:
    forms = "|".join(re.escape(_plural_form(n)) for n in NOUNS)
    by_hand = re.compile(r"\{[^{}]+\}\s+(?:" + forms + r")\b|\(s\)")
    found = [f"{path.name}:{i}: {line.strip()}" for path in SOURCES
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if by_hand.search(line)]
    assert found == []


def _wrong(text: str) -> list[str]:
    """"1 memories" or "2 memory" (and the same for every noun) in ``text``."""
    wrong = []
    for noun in NOUNS:
        wrong += re.findall(rf"(?<![\d/#.])\b1 {re.escape(_plural_form(noun))}\b", text)
        longer = "".join(f"|{re.escape(o[len(noun):])}" for o in NOUNS if o.startswith(noun + " "))  # site rule
        wrong += re.findall(rf"(?<![\d/#.])\b[02] {re.escape(noun)}\b(?! #{longer})", text)
    return wrong


def _messages(n: int) -> list[str]:
    ns = argparse.Namespace
    forget = {"id": None, "ids": [], "document": None, "tool": None, "dry_run": False, "documents": False,
              "host": "a.example"}
    counts: dict[str, Any] = {"facts": n, "facts_hidden": n, "documents": n, "documents_hidden": n,
                              "documents_kept": n, "op": "op-0123456789ab", "host": "a.example"}
    return [
        VaultCounts(n, n, n, n).sentence(),
        exported_words({"memory": n, "document": n, "operator_memory": n, "site_rule": n}),
        _forgot_sentence(ns(**forget), counts),
        _forgot_sentence(ns(**{**forget, "dry_run": True}), counts),
        _forgot_sentence(ns(**{**forget, "documents": True}), counts),
        _forgot_sentence(ns(**{**forget, "host": None, "tool": "cursor"}),
                         {**counts, "tool": "cursor", "by_source": {"mcp": n}}),
        _forgot_sentence(ns(**{**forget, "host": None, "tool": "cursor", "dry_run": True}),
                         {**counts, "tool": "cursor", "by_source": {"mcp": n}}),
        _erased_sentence({"host": "a.example", "facts_erased": n, "documents_erased": 0, "documents_kept": n}),
        _erased_sentence({"memories_erased": n, "facts_erased": n}),
        _forgot_sentence(ns(**{**forget, "host": None, "ids": [1, 2]}),
                         {**counts, "ids": [1] * n, "already_hidden": n}),
        _erased_sentence({"host": "a.example", "facts_erased": n, "documents_erased": n, "documents_kept": 0}),
        *(undone_words(Action("op-0123456789ab", kind, "Forget the memories from a.example",
                              "2026-01-01T00:00:00.000000+00:00", None, "undoable"),
                       {"facts_restored": n, "documents_restored": n, "facts_still_hidden": n, "facts_hidden": n,
                        "facts_changed_since": n})
          for kind in ("forget_host", "move_facts", "pin_facts", "import")),
    ]


@pytest.mark.parametrize("n", [0, 1, 2])
def test_count_messages_say_their_nouns_right(n: int) -> None:
    messages = _messages(n)
    assert [m for m in messages if _wrong(m)] == []
    said = " ".join(messages)
    assert plural(n, "memory") in said and plural(n, "library document") in said


def test_the_checker_catches_what_it_is_for() -> None:
    assert _wrong("erased 1 memories and 2 library document") == ["1 memories", "2 library document"]
    assert _wrong("forgot memory #1; 1/2 memories; 2 memories") == []
