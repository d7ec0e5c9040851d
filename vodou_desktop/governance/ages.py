"""One formatter for ages (GOV-10).

Seed 000, defect 1: a fact from a daily log has ``valid_at`` = that day at local midnight; shown as
an instant it read "18h" old thirty minutes after it was stored. A day-granular time is a calendar
day, so it renders as today / yesterday / N days ago, compared in the viewer's time zone; only an
instant renders in minutes and hours.

Beyond a month the count is of months, beyond a year of years ("8 months ago", "2 years ago"): "232
days ago" asks the reader to do the sum, and is cut in a narrow column. ``LONGEST_AGES`` are the widest
texts the formatter gives, for a column that must fit every age.
"""

from __future__ import annotations

from datetime import date, datetime, tzinfo

from vodou_desktop.vault.clock import parse_iso


def _local(moment: datetime, tz: tzinfo | None) -> datetime:
    return moment.astimezone(tz) if tz is not None else moment.astimezone()


def _day_of(value: str, tz: tzinfo | None) -> date:
    if len(value) == 10:  # a bare calendar date
        return date.fromisoformat(value)
    return _local(parse_iso(value), tz).date()


LONGEST_AGES = ("59 minutes ago", "23 hours ago", "30 days ago", "11 months ago", "99 years ago", "unknown time",
                "yesterday", "just now")


def _days(days: int) -> str:
    """A whole number of days (2 or more) in the largest unit that keeps it readable."""
    if days <= 30:
        return f"{days} days ago"
    if days < 365:
        months = max(1, int(days / 30.44))
        return f"{months} month{'s' if months != 1 else ''} ago"
    years = int(days / 365.25) or 1
    return f"{years} year{'s' if years != 1 else ''} ago"


def format_age(value: str | None, precision: str | None = "instant", *, now: datetime | None = None,
               tz: tzinfo | None = None) -> str:
    """``today`` / ``yesterday`` / ``N days ago`` for days; ``N minutes/hours/days ago`` for instants;
    months, then years, past a month."""
    if not value:
        return "unknown time"
    now = now or datetime.now().astimezone()
    if precision == "day" or len(value) == 10:
        days = (_local(now, tz).date() - _day_of(value, tz)).days
        if days <= 0:
            return "today"
        return "yesterday" if days == 1 else _days(days)
    seconds = (now - parse_iso(value)).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        n = int(seconds // 60)
        return f"{n} minute{'s' if n != 1 else ''} ago"
    if seconds < 86400:
        n = int(seconds // 3600)
        return f"{n} hour{'s' if n != 1 else ''} ago"
    n = int(seconds // 86400)
    return "1 day ago" if n == 1 else _days(n)


def format_date(value: str | None, *, tz: tzinfo | None = None) -> str:
    """A day in words, in local time: ``31 March 2026`` (for dates ahead, such as an expiry)."""
    if not value:
        return "no date"
    day = _day_of(value, tz)
    return f"{day.day} {day.strftime('%B')} {day.year}"
