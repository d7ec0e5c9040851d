"""Timestamps as stored in the vault: ISO 8601 in UTC with microseconds."""

from __future__ import annotations

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
