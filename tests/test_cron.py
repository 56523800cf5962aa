from __future__ import annotations

from datetime import UTC, datetime

import pytest

from podarchive.rules.cron import crontab_day_of_week, next_cron_time, validate_cron

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
    ],
)
def test_crontab_weekdays_mean_what_cron_means(expr: str, expected: datetime) -> None:
    assert next_cron_time(expr, WEDNESDAY_NOON) == expected


def test_weekday_translation() -> None:
    assert crontab_day_of_week("1-5") == "mon,tue,wed,thu,fri"
    assert crontab_day_of_week("5-7") == "sun,fri,sat"
    assert crontab_day_of_week("sun,sat") == "sun,sat"
    assert crontab_day_of_week("*/2") == "sun,tue,thu,sat"
    assert crontab_day_of_week("*") == "*"


@pytest.mark.parametrize(
    "expr", ["", "0 9 * *", "0 9 * * 1 2", "61 * * * *", "0 9 * * 8", "x * * * *"]
)
def test_bad_cron(expr: str) -> None:
    with pytest.raises(ValueError, match="cron"):
        validate_cron(expr)
