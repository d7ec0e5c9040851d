"""Timestamps as stored in the vault: ISO 8601 in UTC with microseconds."""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime, timedelta

from vodou_desktop.errors import InvalidInput


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def to_iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("naive datetime: give a time zone")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def new_sync_id() -> str:
    """A row's global id for sync, UUIDv7-shaped: 48 bits of Unix milliseconds then 80 random bits,
    as 32 hex digits (time-ordered, and unique across devices without asking any of them)."""
    return f"{int(time.time() * 1000):012x}{secrets.token_hex(10)}"


def since_time(when: str, name: str = "--since") -> str:
    """A "saved since" bound: an ISO date or time, or a span back from now (``7d``, ``12h``, ``30m``)."""
    span = re.fullmatch(r"\s*(\d{1,6})\s*([dhm])\s*", when)
    if span:
        unit = {"d": "days", "h": "hours", "m": "minutes"}[span.group(2)]
        return to_iso(datetime.now(UTC) - timedelta(**{unit: int(span.group(1))}))
    try:
        moment = datetime.fromisoformat(when.strip())
    except ValueError as exc:
        raise InvalidInput(f"{name} {when[:40]!r}: give a date like 2026-03-01, or 7d / 12h / 30m") from exc
    return to_iso(moment if moment.tzinfo else moment.astimezone())
