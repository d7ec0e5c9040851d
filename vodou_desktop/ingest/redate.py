"""The context words of memories written before a dated memory also named the days it points at
("yesterday", "last Friday": ``vault.dates``), brought up to today's rules once per vault, in the
background: a page of memories read at a time and only the rows whose words change written, a few per
write, so a capture never waits long for the writer (each row written re-indexes its text).

The vault records the rules once every memory was checked; stopped before that (the app quit), the next
start checks again from the first memory (rows already right are read, not written)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, settings_store
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import date_words, redate

DATE_RULES_KEY = "date_words_rules"
DATE_RULES = "2"  # 1: the memory's own day; 2: and the days its text points at
PAGE = 1_000  # memories read at a time
WRITE = 50  # rows written per write (about 2.6 ms each for a long message: the writer is held ~0.1 s)
# every memory, a forgotten one too: an undo brings it back with the words of today's rules
EVERY = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def redate_once(vault: Vault, stop: threading.Event | None = None,
                progress: Callable[[int, int], None] | None = None) -> int | None:
    """Bring every dated memory's context words to today's rules unless the vault says they are; how
    many memories changed (None: they were current). ``stop`` set: ends after the write under way,
    records nothing. ``progress(checked, changed)`` after each page."""
    if vault.read(lambda c: settings_store.get_setting(c, DATE_RULES_KEY)) == DATE_RULES:
        return None
    after, checked, changed = 0, 0, 0
    while True:
        if stop is not None and stop.is_set():
            return changed
        page = vault.read(partial(q.dated_texts_after, after_id=after, f=EVERY, limit=PAGE))
        if not page:
            break
        after = page[-1][0]
        checked += len(page)
        stale = [(i, context, now) for i, valid_at, text, context in page
                 if (now := date_words(valid_at, text)) is not None and now != context]
        for start in range(0, len(stale), WRITE):
            part = stale[start : start + WRITE]
            changed += vault.write(partial(redate, rows=part))
            if stop is not None and stop.is_set():
                return changed
        if progress is not None:
            progress(checked, changed)
    vault.write(lambda c, change: settings_store.set_setting(c, change, DATE_RULES_KEY, DATE_RULES))
    return changed
