from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from podarchive.rules.cron import cron_gap, next_cron_time, validate_cron

WEDNESDAY_NOON = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("0 9 * * 1", datetime(2026, 12, 7, 9, 0, tzinfo=UTC)),  # crontab 1 = Monday
        ("0 9 * * 0", datetime(2026, 12, 6, 9, 0, tzinfo=UTC)),  # 0 = Sunday
        ("0 9 * * 7", datetime(2026, 12, 6, 9, 0, tzinfo=UTC)),  # 7 = Sunday too
        ("0 9 * * 4-5", datetime(2026, 12, 3, 9, 0, tzinfo=UTC)),
        ("30 * * * *", datetime(2026, 12, 2, 12, 30, tzinfo=UTC)),
        ("0 0 1 * *", datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
        ("0 12 * * 3", WEDNESDAY_NOON),  # inclusive: a fire at the very moment counts
    ],
)
def test_crontab_weekdays_mean_what_cron_means(expr: str, expected: datetime) -> None:
    assert next_cron_time(expr, WEDNESDAY_NOON) == expected


def fires(expr: str, after: datetime, count: int) -> list[datetime]:
    out: list[datetime] = []
    while len(out) < count:
        fire = next_cron_time(expr, after)
        assert fire is not None
        out.append(fire)
        after = fire + timedelta(seconds=1)
    return out


def weekdays(expr: str) -> list[str]:
    """The days of one week (from Sunday 2026-12-06) on which ``expr`` fires."""
    sunday = datetime(2026, 12, 6, tzinfo=UTC)
    days = {f.strftime("%a") for f in fires(expr, sunday, 7) if f < sunday + timedelta(days=7)}
    return [d for d in ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat") if d in days]


def test_weekday_fields_mean_what_crontab_means() -> None:
    assert weekdays("0 9 * * 1-5") == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert weekdays("0 9 * * 5-7") == ["Sun", "Fri", "Sat"]
    assert weekdays("0 9 * * sun,sat") == ["Sun", "Sat"]
    assert weekdays("0 9 * * MON-wed") == ["Mon", "Tue", "Wed"]
    assert weekdays("0 9 * * */2") == ["Sun", "Tue", "Thu", "Sat"]
    assert weekdays("0 9 * * *") == ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]


def test_day_of_month_or_day_of_week_as_in_crontab() -> None:
    """Both restricted: the 1st of the month OR a Monday (crontab(5)), not both at once."""
    assert fires("0 6 1 * 1", datetime(2026, 12, 1, tzinfo=UTC), 6) == [
        datetime(2026, 12, 1, 6, 0, tzinfo=UTC),  # Tuesday the 1st
        datetime(2026, 12, 7, 6, 0, tzinfo=UTC),  # Mondays
        datetime(2026, 12, 14, 6, 0, tzinfo=UTC),
        datetime(2026, 12, 21, 6, 0, tzinfo=UTC),
        datetime(2026, 12, 28, 6, 0, tzinfo=UTC),
        datetime(2027, 1, 1, 6, 0, tzinfo=UTC),  # Friday the 1st
    ]
    # one of them a star (even "*/2"): both must match, as in crontab
    assert fires("0 6 13 * */7", datetime(2026, 12, 1, tzinfo=UTC), 1) == [
        datetime(2026, 12, 13, 6, 0, tzinfo=UTC)  # a Sunday the 13th, not Sunday the 6th
    ]
    # 31 April never comes, but April's Mondays do
    assert next_cron_time("0 0 31 4 mon", WEDNESDAY_NOON) == datetime(2027, 4, 5, tzinfo=UTC)


def test_fire_times_round_up_to_the_second_and_the_gap() -> None:
    just_after = WEDNESDAY_NOON + timedelta(microseconds=1)
    assert next_cron_time("0 12 * * 3", just_after) == WEDNESDAY_NOON + timedelta(days=7)
    assert cron_gap("*/15 * * * *", WEDNESDAY_NOON) == timedelta(minutes=15)
    assert cron_gap("0 0 29 2 *", WEDNESDAY_NOON) == timedelta(days=4 * 365 + 1)


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "0 9 * *",
        "0 9 * * 1 2",  # six fields (cronsim reads a seconds field; crontab does not)
        "61 * * * *",
        "0 9 * * 8",
        "x * * * *",
        "*/0 * * * *",
        "0 0 32 * *",
        "0 0 L * *",  # cronsim's extensions, not crontab's
        "0 0 LW * *",
        "0 0 * * 5L",
        "0 0 * * 5#2",
        "0 0 * * ?",
        "0 0 * jan-foo *",
        "0 mon * * *",
    ],
)
def test_bad_cron(expr: str) -> None:
    with pytest.raises(ValueError, match="cron") as caught:
        validate_cron(expr)
    assert "\n" not in str(caught.value)


def test_a_cron_that_never_fires() -> None:
    with pytest.raises(ValueError, match=r"^cron expression '0 0 30 2 \*' never fires$"):
        validate_cron("0 0 30 2 *")
    validate_cron("0 0 30 2 1")  # Mondays in February: fires
