"""Timestamps as stored in the vault: ISO 8601 in UTC with microseconds."""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime


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
