"""What every CLI command shares: stable JSON for scripts, short lines for people, the model wait."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from vodou_desktop.cli.ids import short_op
from vodou_desktop.governance.ages import format_age
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.embedder import EmbedderState, search_wait
from vodou_desktop.vault import Fact
from vodou_desktop.vault.records import SourceMessage
from vodou_desktop.words import TIER_WORDS, fact_source, kind_words, project_words


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def width() -> int:
    """The terminal's width (80 when there is none; COLUMNS wins, as for every terminal tool)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def wrap(text: str, indent: str = "", first: str | None = None) -> str:
    """``text`` wrapped to the terminal, paragraphs kept, following lines indented by ``indent``; the
    first line by ``first`` (a hanging indent with ``first=""``; by default the same as the rest)."""
    head = indent if first is None else first
    lines: list[str] = []
    for i, para in enumerate(text.splitlines() or [""]):
        lines.append(textwrap.fill(para, width(), initial_indent=head if i == 0 else indent,
                                   subsequent_indent=indent, break_long_words=True, break_on_hyphens=False)
                     or (head if i == 0 else indent).rstrip())
    return "\n".join(lines)


def fact_line(fact: Fact, score: float | None = None) -> str:
    """One memory for a list: id, project, text, then where from and how old, wrapped to the terminal."""
    where = f" [{fact.project}]" if fact.project else ""
    age = format_age(fact.event_time, fact.valid_precision)
    status = " (forgotten)" if fact.forgotten else ""
    pin = " ★" if fact.tier == "pinned" else ""
    head = f"{score:7.3f} " if score is not None else ""
    text = " ".join(fact.text.split())
    line = f"{head}#{fact.id}{pin}{where} {text}  — {kind_words(fact.kind)}, {fact_source(fact)}, {age}{status}"
    return wrap(line, indent=" " * (len(head) + 4), first="")  # hanging: the id at the margin, text under it


def describe_fact(fact: Fact, history: Sequence[Fact] = (), current: int | None = None,
                  message: SourceMessage | None = None) -> list[str]:
    """``mem show``: one memory in plain words (the raw fields are in ``--json``), then its earlier
    revisions (``history``, oldest first, the memory itself last), which are never recalled, and the
    message it came from when it names one (an imported or captured conversation's). ``current``: for an
    earlier revision, the memory it belongs to now."""
    lines = [f"Memory #{fact.id}" + (" (pinned)" if fact.tier == "pinned" else ""), wrap(fact.text, "  "), ""]
    rows = [
        ("Project", project_words(fact.project) + ("" if fact.project else " (seen in every project)")),
        ("Kind", kind_words(fact.kind)),
        ("Came from", fact_source(fact) + (f" ({fact.tool})" if fact.tool and fact.tool not in ("cli",) else "")),
        ("Page", fact.link), ("Page title", fact.title),
        ("Saved", format_age(fact.created_at, "instant")),
        ("True as of", format_age(fact.valid_at, fact.valid_precision) if fact.valid_at else None),
        ("Scope", fact.scope), ("Trust", TIER_WORDS.get(fact.tier, fact.tier)),
        ("Revision", f"{fact.revision}"),
    ]
    if fact.forgotten:
        op = fact.invalidated_by or ""
        undo = f"; undo with: vodou undo {short_op(op)}" if op.startswith("op-") else ""
        rows.append(("Forgotten", f"{format_age(fact.invalid_at, 'instant')}{undo}"))
    if fact.superseded_by:
        rows.append(("Replaced", f"this is an earlier revision of memory #{current}, never recalled"
                     if current is not None and current != fact.id else
                     f"by #{fact.superseded_by} (this memory is never recalled)"))
    if fact.confidence is not None:
        rows.append(("Confidence", f"{fact.confidence:.0%} (the statement was hedged or tentative)"
                     if fact.confidence < 0.8 else f"{fact.confidence:.0%}"))
    lines += [wrap(f"{name}: {value}", indent="    ", first="  ") for name, value in rows if value]
    earlier = list(history)[:-1]
    if earlier:
        lines += ["", "  History (never recalled):"]
        for i, rev in enumerate(earlier):
            after = history[i + 1]
            moved = (f" (moved from {project_words(rev.project)} to {project_words(after.project)})"
                     if rev.project != after.project else "")
            lines.append(wrap(f"r{rev.revision}: {' '.join(rev.text.split())}{moved}", indent="        ",
                              first="    "))
    if message is not None:
        lines += ["", *message_lines(fact, message)]
    return lines


MESSAGE_SHOWN = 2_000  # characters of the source message ``mem show`` prints (all of it with --json)


def message_lines(fact: Fact, message: SourceMessage) -> list[str]:
    """The message a memory came from, in words: whose it was, when, and its text as the vault keeps it."""
    when = f", {format_age(message.at, 'instant')}" if message.at else ""
    if message.role == "assistant":
        head = f"From the assistant's reply (message {message.entry_id}{when}), which you accepted"
        text = message.accepted_in
        if text:
            head += " in your next message:"
    else:
        head = f"From your message {message.entry_id}{when}" + (":" if message.text else "")
        text = message.text if not (fact.kind == "conversation" and message.turn_ids == (fact.id,)) else None
        if fact.kind == "conversation" and not text:
            head = f"Your message {message.entry_id}{when}, kept whole as this memory"
    lines = [f"  {head}"]
    if text:
        shown = text if len(text) <= MESSAGE_SHOWN else text[:MESSAGE_SHOWN].rstrip() + "… (all of it with --json)"
        lines += [wrap(part, "    ") for part in shown.split("\n") if part.strip()]
    elif message.role != "assistant" and message.text is None:
        lines.append("    (the message itself is forgotten or hidden here)")
    return lines


def progress_to_stderr(label: str):  # type: ignore[no-untyped-def]
    def report(done: int, total: int) -> None:
        if total >= 50 and sys.stderr.isatty():
            sys.stderr.write(f"\r{label}: {done}/{total}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return report


MODEL_WAIT_S = 120  # a command that cannot work without the model (dedupe) waits this long for it
def ensure_embedded(rt: Runtime, quiet: bool = False) -> bool:
    """Wait up to ``search_wait()`` (1 s) for the model and embed what is missing; whether the search
    may use meaning. When not, a line on stderr says why (unless ``quiet``: JSON output says it)."""
    state = rt.embedder.wait(search_wait())
    if state is not EmbedderState.READY:
        note = rt.embedder.why_not_ready()
        if not quiet and state is not EmbedderState.OFF:
            print(f"vodou: note: {note}", file=sys.stderr, flush=True)
        return False
    backfill(rt.vault, rt.embedder, progress=progress_to_stderr("embedding"))
    return True
