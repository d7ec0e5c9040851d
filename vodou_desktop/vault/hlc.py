"""Hybrid logical clocks: the order in which last-writer-wins fields are decided (SYNC-3).

A stamp is ``<13-digit ms>.<5-digit counter>.<device id>``: text that sorts in clock order, with the
device id breaking exact ties, so every device picks the same winner without asking the others. A
device's clock never runs behind anything it has seen: a change written after another device's
change was applied always wins over it, even when this computer's wall clock is late.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

STAMP = re.compile(r"(\d{13})\.(\d{5})\.([0-9a-f]{16})")
ZERO = "0000000000000.00000.0000000000000000"  # older than any real change (rows from before sync)


def ms_of(iso: str) -> int:
    """Unix milliseconds of an ISO 8601 time written by SQLite's ``strftime`` (UTC)."""
    text = iso[:-1] + "+00:00" if iso.endswith("Z") else iso
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def stamp_ms(stamp: str) -> int:
    return int(stamp[:13])


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
        return f"{self.ms:013d}.{self.counter:05d}.{self.device}"

    def observe(self, stamp: str) -> None:
        """A stamp from another device: later local changes must sort after it."""
        match = STAMP.fullmatch(stamp)
        if match is None:
            return
        ms, counter = int(match.group(1)), int(match.group(2))
        if (ms, counter) > (self.ms, self.counter):
            self.ms, self.counter = ms, counter


def valid(stamp: object) -> bool:
    return isinstance(stamp, str) and (stamp == ZERO or STAMP.fullmatch(stamp) is not None)
