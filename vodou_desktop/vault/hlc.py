"""Hybrid logical clocks: the order in which last-writer-wins fields are decided (SYNC-3).

A stamp is ``<ms>.<counter>.<device id>``, written with at least 13 digits of milliseconds and 5 of
counter. Stamps are compared as the numbers they hold (``key``), never as text: the device id breaks
exact ties, so every device picks the same winner without asking the others. The counter never passes
``COUNTER_MAX``: one more tick carries into the milliseconds, so a clock cannot overflow (an older
release let it reach 100000, a stamp that sorted below ``…99999…`` as text; such stamps still parse and
compare by their numbers). A device's clock never runs behind anything it has seen: a change written
after another device's change was applied always wins over it, even when this computer's wall clock is
late.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

STAMP = re.compile(r"([0-9]{13,16})\.([0-9]{5,9})\.([0-9a-f]{16})", re.ASCII)
ZERO = "0000000000000.00000.0000000000000000"  # older than any real change (rows from before sync)
COUNTER_MAX = 99_999  # the widest counter written: one more carries into the milliseconds
StampKey = tuple[int, int, str]


def ms_of(iso: str) -> int:
    """Unix milliseconds of an ISO 8601 time written by SQLite's ``strftime`` (UTC)."""
    text = iso[:-1] + "+00:00" if iso.endswith("Z") else iso
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def parse(stamp: object) -> StampKey | None:
    """``(ms, counter, device)`` of a stamp; None when it is not one."""
    match = STAMP.fullmatch(stamp) if isinstance(stamp, str) else None
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), match.group(3)


def key(stamp: str) -> StampKey:
    """What stamps are compared by; ``ValueError`` for text that is not a stamp (records are checked
    before they are applied, so this is a bug when it happens)."""
    parsed = parse(stamp)
    if parsed is None:
        raise ValueError(f"not a clock stamp: {stamp!r}")
    return parsed


def later(a: str, b: str | None) -> bool:
    """``a`` sorts after ``b`` (anything sorts after no stamp)."""
    return b is None or key(a) > key(b)


def stamp_ms(stamp: str) -> int:
    return key(stamp)[0]


def format_stamp(ms: int, counter: int, device: str) -> str:
    return f"{ms:013d}.{counter:05d}.{device}"


@dataclass
class Clock:
    device: str
    ms: int = 0
    counter: int = 0

    @classmethod
    def load(cls, device: str, state: str | None) -> Clock:
        if not state:
            return cls(device)
        ms, counter = state.split(".")
        return cls(device, int(ms), int(counter))

    def state(self) -> str:
        return f"{self.ms}.{self.counter}"

    def tick(self, at_ms: int) -> str:
        """The stamp of a local change made at ``at_ms``: after every stamp this clock has given or seen."""
        if at_ms > self.ms:
            self.ms, self.counter = at_ms, 0
        else:
            self.counter += 1
            if self.counter > COUNTER_MAX:  # carry: the next millisecond, which sorts after every counter
                self.ms, self.counter = self.ms + 1, 0
        return format_stamp(self.ms, self.counter, self.device)

    def observe(self, stamp: str) -> None:
        """A stamp from another device: later local changes must sort after it."""
        parsed = parse(stamp)
        if parsed is None:
            return
        ms, counter, _ = parsed
        if (ms, counter) > (self.ms, self.counter):
            self.ms, self.counter = ms, counter


def valid(stamp: object) -> bool:
    return stamp == ZERO or parse(stamp) is not None
