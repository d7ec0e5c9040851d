"""GOV-10: one age formatter; day-granular times are calendar days, never "18h" (seed 000, defect 1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from vodou_desktop.governance.ages import format_age

PARIS = ZoneInfo("Europe/Paris")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")


def test_seed_000_daily_log_fact_thirty_minutes_old_reads_today_not_18h() -> None:
    # The daily log's day at local midnight; stored 18 h later; looked at 30 minutes after that.
    valid_at = datetime(2025, 8, 14, 0, 0, tzinfo=PARIS).isoformat()
    now = datetime(2025, 8, 14, 18, 30, tzinfo=PARIS)
    age = format_age(valid_at, "day", now=now, tz=PARIS)
    assert age == "today"
    assert "h" not in age.replace("hour", "")


def test_day_precision_never_renders_hours_or_minutes_across_a_whole_day() -> None:
    valid_at = datetime(2025, 8, 14, 0, 0, tzinfo=PARIS).isoformat()
    for minutes in range(0, 24 * 60, 17):
        now = datetime(2025, 8, 14, 0, 0, tzinfo=PARIS) + timedelta(minutes=minutes)
        assert format_age(valid_at, "day", now=now, tz=PARIS) == "today"


@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2025, 8, 14, 23, 59, 59, tzinfo=PARIS), "today"),
    (datetime(2025, 8, 15, 0, 0, 0, tzinfo=PARIS), "yesterday"),
    (datetime(2025, 8, 15, 23, 59, tzinfo=PARIS), "yesterday"),
    (datetime(2025, 8, 16, 0, 0, 1, tzinfo=PARIS), "2 days ago"),
    (datetime(2025, 8, 24, 12, 0, tzinfo=PARIS), "10 days ago"),
])
def test_day_ages_flip_at_local_midnight(now: datetime, expected: str) -> None:
    valid_at = datetime(2025, 8, 14, 0, 0, tzinfo=PARIS).isoformat()
    assert format_age(valid_at, "day", now=now, tz=PARIS) == expected


def test_bare_calendar_date_is_a_day_whatever_the_precision_says() -> None:
    now = datetime(2025, 8, 15, 0, 10, tzinfo=PARIS)
    assert format_age("2025-08-14", None, now=now, tz=PARIS) == "yesterday"
    assert format_age("2025-08-14", "instant", now=now, tz=PARIS) == "yesterday"


def test_the_same_moments_are_different_days_in_two_time_zones() -> None:
    # 2025-08-14 07:30 UTC is the 14th in Paris (09:30) but the 14th 00:30 in Los Angeles;
    # 2025-08-15 06:30 UTC is the 15th in Paris and still the 14th (23:30) in Los Angeles.
    valid_at = datetime(2025, 8, 14, 7, 30, tzinfo=UTC).isoformat()
    now = datetime(2025, 8, 15, 6, 30, tzinfo=UTC)
    assert format_age(valid_at, "day", now=now, tz=PARIS) == "yesterday"
    assert format_age(valid_at, "day", now=now, tz=LOS_ANGELES) == "today"


def test_a_fixed_offset_zone_just_before_and_after_its_midnight() -> None:
    tokyo = timezone(timedelta(hours=9))
    valid_at = datetime(2025, 1, 1, 0, 0, tzinfo=tokyo).isoformat()  # Dec 31 15:00 UTC
    before = datetime(2025, 1, 1, 14, 59, tzinfo=UTC)  # 23:59 in Tokyo
    after = datetime(2025, 1, 1, 15, 0, tzinfo=UTC)  # 00:00 next day in Tokyo
    assert format_age(valid_at, "day", now=before, tz=tokyo) == "today"
    assert format_age(valid_at, "day", now=after, tz=tokyo) == "yesterday"
    # Seen from UTC, the same stored value is a day earlier (Dec 31).
    assert format_age(valid_at, "day", now=before, tz=UTC) == "yesterday"


@pytest.mark.parametrize(("delta", "expected"), [
    (timedelta(seconds=20), "just now"),
    (timedelta(minutes=1), "1 minute ago"),
    (timedelta(minutes=30), "30 minutes ago"),
    (timedelta(hours=1), "1 hour ago"),
    (timedelta(hours=18), "18 hours ago"),
    (timedelta(hours=49), "2 days ago"),
])
def test_instants_render_minutes_hours_days(delta: timedelta, expected: str) -> None:
    now = datetime(2025, 8, 14, 18, 30, tzinfo=UTC)
    assert format_age((now - delta).isoformat(), "instant", now=now, tz=PARIS) == expected


def test_missing_time_says_so() -> None:
    assert format_age(None) == "unknown time"


@pytest.mark.parametrize(("days", "expected"), [
    (30, "30 days ago"),
    (31, "1 month ago"),
    (232, "7 months ago"),
    (364, "11 months ago"),
    (365, "1 year ago"),
    (1053, "2 years ago"),
])
def test_past_a_month_ages_count_months_then_years(days: int, expected: str) -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert format_age((now - timedelta(days=days)).isoformat(), "instant", now=now, tz=UTC) == expected
    assert format_age((now - timedelta(days=days)).date().isoformat(), "day", now=now, tz=UTC) == expected


def test_no_age_is_wider_than_the_longest_ones_listed() -> None:
    from vodou_desktop.governance.ages import LONGEST_AGES

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    widest = max(len(a) for a in LONGEST_AGES)
    seen = {format_age((now - timedelta(minutes=m)).isoformat(), now=now) for m in range(0, 60 * 24 * 4000, 97)}
    assert max(len(a) for a in seen) <= widest
