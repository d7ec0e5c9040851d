"""The hybrid logical clock: every stamp it gives sorts after every stamp it gave or saw, whatever it saw,
after a reload, and past the widest counter; stamps compare by the numbers they hold."""

from __future__ import annotations

import pytest

from vodou_desktop.vault.hlc import COUNTER_MAX, ZERO, Clock, format_stamp, key, later, parse, valid

DEV = "aaaaaaaaaaaaaaaa"
OTHER = "bbbbbbbbbbbbbbbb"


def _given(clock: Clock, at_ms: int, n: int) -> list[str]:
    return [clock.tick(at_ms) for _ in range(n)]


@pytest.mark.parametrize("seen", [
    format_stamp(9_000_000_000_000, 0, OTHER),  # far ahead of the wall clock
    format_stamp(1_000_000_000_000, COUNTER_MAX, OTHER),  # at the widest counter
    "1000000000000.100003.bbbbbbbbbbbbbbbb",  # past it (an older release let the counter overflow)
    format_stamp(1_000_000_000_000, 7, OTHER),  # behind this clock: nothing to do
])
def test_after_observing_any_stamp_every_tick_is_later_than_it(seen: str) -> None:
    clock = Clock(DEV)
    before = clock.tick(1_000_000_000_000)
    clock.observe(seen)
    ticks = _given(clock, 1_000_000_000_001, 3)
    for stamp in ticks:
        assert later(stamp, seen) and later(stamp, before)
    reloaded = Clock.load(DEV, clock.state())  # the state a run saves, loaded by the next run
    nxt = reloaded.tick(1_000_000_000_001)
    assert later(nxt, seen) and later(nxt, ticks[-1])


def test_the_counter_carries_into_the_milliseconds_and_never_overflows() -> None:
    clock = Clock(DEV, ms=1_000_000_000_000, counter=COUNTER_MAX - 2)
    stamps = _given(clock, 999_999_999_000, 6)  # the wall clock is behind: only the counter moves
    assert all(valid(s) for s in stamps)
    assert [key(b) > key(a) for a, b in zip(stamps, stamps[1:], strict=False)] == [True] * 5
    assert sorted(stamps) == stamps  # fixed widths: the text order is the number order too
    assert all(parse(s) is not None and parse(s)[1] <= COUNTER_MAX for s in stamps)  # type: ignore[index]


def test_stamps_compare_by_their_numbers_not_their_text() -> None:
    overflowed = "1000000000000.100000.aaaaaaaaaaaaaaaa"
    widest = format_stamp(1_000_000_000_000, COUNTER_MAX, DEV)
    assert overflowed < widest  # as text it sorts below …
    assert later(overflowed, widest)  # … as a clock it is later
    assert later(format_stamp(5, 0, OTHER), format_stamp(5, 0, DEV))  # exact tie: the device id decides
    assert later(format_stamp(1, 0, DEV), ZERO) and later(ZERO, None)


@pytest.mark.parametrize("text", ["", "1.2.3", "1000000000000.00001.AAAAAAAAAAAAAAAA", "١٠٠٠٠٠٠٠٠٠٠٠٠.00001." + DEV,
                                  12, None, "1000000000000.00001." + DEV + "x"])
def test_what_is_not_a_stamp_is_refused(text: object) -> None:
    assert not valid(text)
    clock = Clock(DEV, 5, 5)
    clock.observe(text)  # type: ignore[arg-type]
    assert (clock.ms, clock.counter) == (5, 5)
