"""Ceilings and ranges (#23, items 2 and 3): every interval, interval-like option and setting
has bounds; a value out of them is one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FAST_ENV
from hypothesis import given
from hypothesis import strategies as st
from loopback import LoopbackSite

from podarchive.cli import cli
from podarchive.core.errors import ConfigError
from podarchive.core.settings import Settings, setting_fields, settings_from_env

HUGE = "99999999999999w"
OVER_A_YEAR = "over the ceiling of a year (365d)"


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.stderr


def one_line_exit_2(code: int, err: str, message: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1, err  # one line: no traceback, no usage block
    assert err.startswith("podarchive: error: "), err
    assert message in err


# item 2: intervals and interval-like options ----------------------------------------------


ADD = ["add", "https://x.example/f", "--no-check", "--schedules", "{s}"]
BROKER = ["--broker", "redis://127.0.0.1:1/0", "--schedules", "{s}"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*ADD, "--every", HUGE], f"--every: interval '{HUGE}' is {OVER_A_YEAR}"),
        ([*ADD, "--every", "3000000d"], f"--every: interval '3000000d' is {OVER_A_YEAR}"),
        ([*ADD, "--every", "366d"], OVER_A_YEAR),
        ([*ADD, "--every", "9" * 5000 + "s"], OVER_A_YEAR),
        ([*ADD, "--page-every", HUGE], f"--page-every: interval '{HUGE}' is {OVER_A_YEAR}"),
        ([*ADD, "--cron", "0 0 30 2 *"], "--cron: cron expression '0 0 30 2 *' never fires"),
        ([*ADD, "--user-agent", "a\nb"], "--user-agent: 'a\\nb' is not printable text"),
        (["status", "--failing-for", HUGE, "--db", "{s}.db"], f"--failing-for: interval '{HUGE}'"),
        (["daemon", "--tick", "inf"], "--tick: 'inf' is not a number of seconds from 0.05 to 3600"),
        (["daemon", "--tick", "nan"], "--tick: 'nan' is not a number of seconds"),
        (["daemon", "--tick", "1e300"], "--tick: '1e300' is not a number of seconds"),
        (["run", "--wait", "nan"], "--wait: 'nan' is not a number of seconds from 0 to 31536000"),
        (["run", "--wait", "1e300"], "--wait: '1e300' is not a number of seconds"),
        (["scheduler", *BROKER, "--tick", "inf"], "--tick: 'inf' is not a number of seconds"),
        (["scheduler", *BROKER, "--hold", "1e300"], "--hold: '1e300' is not a number of seconds"),
        (["backfill", "--rate", "1e-300"], "--rate: '1e-300' is not a number of requests per"),
    ],
)
def test_intervals_and_interval_options_have_ceilings(
    tmp_path: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a command that wrongly starts writes archive.db here
    schedules = tmp_path / "schedules"
    code, err = invoke(*(arg.replace("{s}", str(schedules)) for arg in args))
    one_line_exit_2(code, err, message)
    assert not list(tmp_path.iterdir())  # nothing written: no schedule file, no archive


def test_import_every_has_the_ceiling_too(tmp_path: Path) -> None:
    opml = tmp_path / "subs.opml"
    opml.write_text(
        '<opml version="2.0"><body><outline xmlUrl="https://x.example/f"/></body></opml>'
    )
    code, err = invoke("import", str(opml), "--every", HUGE, "--schedules", str(tmp_path / "s"))
    one_line_exit_2(code, err, f"--every: interval '{HUGE}' is {OVER_A_YEAR}")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('every = "3000000d"', "feed[0].every: interval '3000000d' is " + OVER_A_YEAR),
        (f'page_every = "{HUGE}"', f"feed[0].page_every: interval '{HUGE}' is "),
        ('every = "' + "7" * 100_000 + 's"', "feed[0].every: interval '777"),
        ('cron = "0 0 31 4 *"', "feed[0].cron: cron expression '0 0 31 4 *' never fires"),
        ('user_agent = "x\\ny"', "feed[0].user_agent: 'x\\ny' is not printable text"),
        ("nested = " + "[" * 100_000, "not valid TOML: nested too deeply"),
        ("size = " + "1" * 5000, "not valid TOML: Exceeds the limit (4300 digits)"),
    ],
)
def test_a_bad_schedule_value_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "bad.toml").write_text(f'[[feed]]\nurl = "https://x.example/f"\n{text}\n')
    code, err = invoke("run", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db"))
    one_line_exit_2(code, err, f"{tmp_path / 'bad.toml'}: ")
    assert message in err
    assert len(err) < 400
    assert not (tmp_path / "a.db").exists()


def test_a_fifo_in_schedules_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")  # reading it would block until a writer came
    done = podarchive("run", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db"), env={})
    message = f"{tmp_path / 'pipe.toml'}: cannot read: not a regular file"
    one_line_exit_2(done.returncode, done.stderr, message)


# item 3: settings --------------------------------------------------------------------------

GiB = 1024**3
#: Each number setting's range, as the README's table promises it (inclusive).
RANGES: dict[str, tuple[float, float]] = {
    "connect_timeout": (0.1, 3600),
    "read_timeout": (0.1, 3600),
    "deadline": (0.1, 86400),
    "max_feed_bytes": (256, 4 * GiB),
    "max_page_bytes": (256, 4 * GiB),
    "max_file_bytes": (256, 4 * GiB),
    "max_redirects": (0, 100),
    "concurrency": (1, 512),
    "per_host": (1, 512),
    "host_gap": (0, 3600),
    "retries": (0, 20),
    "retry_base": (0, 3600),
    "move_after_polls": (1, 1000),
    "move_after_days": (0, 365),
    "processes": (0, 256),
    "media_budget": (0, 1024**5),
    "media_concurrency": (1, 16),
}
FIELDS = {f.name: f for f in setting_fields()}


def env_for(name: str, value: object) -> dict[str, str]:
    return {f"PODARCHIVE_{name.upper()}": str(value)}


def is_int(name: str) -> bool:
    return type(FIELDS[name].default) is int


def plain(number: float) -> str:
    return str(int(number)) if number == int(number) else str(number)


def just_outside(name: str) -> list[object]:
    low, high = RANGES[name]
    if is_int(name):
        return [int(low) - 1, int(high) + 1, -(10**20)]
    return [low - 0.001 if low else -1e-9, high * 1.001, "nan", "inf", "-inf", -1e308]


def test_every_number_setting_has_a_range() -> None:
    numbers = {name for name, f in FIELDS.items() if type(f.default) in (int, float)}
    assert set(RANGES) == numbers
    for name, (low, high) in RANGES.items():
        assert low <= FIELDS[name].default <= high, name


@pytest.mark.parametrize("name", sorted(RANGES))
def test_each_setting_takes_its_bounds_and_refuses_beyond_them(name: str) -> None:
    low, high = RANGES[name]
    for bound in (low, high):
        assert getattr(settings_from_env(env_for(name, bound)), name) == bound
    var, shown = f"PODARCHIVE_{name.upper()}", f"{plain(low)} to {plain(high)}"
    for bad in just_outside(name):
        with pytest.raises(ConfigError) as caught:
            settings_from_env(env_for(name, bad))
        assert str(caught.value) == f"{var}: {str(bad)!r} is out of range ({shown})"
        value = float(bad) if isinstance(bad, str) else bad
        with pytest.raises(ConfigError, match=f"^{name}: .* is out of range"):
            Settings(**{name: value})  # the library's own callers are held to it too


@given(st.data())
def test_any_number_out_of_range_is_refused_and_any_in_range_taken(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(RANGES)))
    low, high = RANGES[name]
    if is_int(name):
        inside: st.SearchStrategy[Any] = st.integers(int(low), int(high))
        outside: st.SearchStrategy[Any] = st.integers(max_value=int(low) - 1) | st.integers(
            int(high) + 1
        )
    else:
        inside = st.floats(low, high)
        outside = st.floats(allow_nan=True).filter(lambda x: not low <= x <= high)
    good, bad = data.draw(inside), data.draw(outside)
    assert getattr(settings_from_env(env_for(name, repr(good))), name) == good
    with pytest.raises(ConfigError, match="is out of range"):
        settings_from_env(env_for(name, repr(bad)))


@pytest.mark.parametrize("agent", ["", "   ", "a\nb", "tab\there", "x" * 501])
def test_the_user_agent_must_be_printable_and_short(agent: str) -> None:
    with pytest.raises(ConfigError, match="^PODARCHIVE_USER_AGENT: .* is (not printable|longer)"):
        settings_from_env({"PODARCHIVE_USER_AGENT": agent})
    assert settings_from_env({"PODARCHIVE_USER_AGENT": "x" * 500}).user_agent == "x" * 500


def test_a_deadline_below_zero_stops_run_at_start_in_one_line(
    tmp_path: Path, site: LoopbackSite
) -> None:
    """As a user meets it: a real process, a feed on loopback that must never be asked."""
    site.serve("/f.xml", '<rss version="2.0"><channel><title>F</title></channel></rss>')
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV, PODARCHIVE_DEADLINE="-5")
    done = subprocess.run(
        [sys.executable, "-m", "podarchive", "run", site.url("/f.xml"), "--db",
         str(tmp_path / "a.db"), "--allow-private-hosts"],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "podarchive: error: PODARCHIVE_DEADLINE: '-5' is out of range (0.1 to 86400)\n"
    )
    assert site.requests == []
    assert not (tmp_path / "a.db").exists()


def podarchive(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A real process (a daemon that wrongly starts fails the test by its timeout)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, **FAST_ENV, **env},
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("command", "variable", "raw"),
    [
        (["run", "{url}", "--db", "{t}/a.db"], "PODARCHIVE_DEADLINE", "-5"),
        (["run", "--schedules", "{t}/s", "--db", "{t}/a.db"], "PODARCHIVE_CONCURRENCY", "0"),
        (["daemon", "--schedules", "{t}/s", "--db", "{t}/a.db"], "PODARCHIVE_READ_TIMEOUT", "nan"),
        (["add", "{url}", "--schedules", "{t}/new"], "PODARCHIVE_MAX_REDIRECTS", "-1"),
        (["import", "{t}/subs.opml", "--schedules", "{t}/new"], "PODARCHIVE_PER_HOST", "0"),
        (
            ["backfill", "{url}", "--schedules", "{t}/s", "--db", "{t}/a.db"],
            "PODARCHIVE_MAX_PAGE_BYTES",
            "0",
        ),
        (
            [
                "worker",
                "--broker",
                "redis://127.0.0.1:1/0",
                "--shard",
                "0",
                "--shards-dir",
                "{t}/shards",
            ],
            "PODARCHIVE_HOST_GAP",
            "inf",
        ),
    ],  # fmt: skip
    ids=["run URL", "run", "daemon", "add", "import", "backfill", "worker"],
)
def test_every_command_that_reads_settings_checks_them_first(
    tmp_path: Path, site: LoopbackSite, command: list[str], variable: str, raw: str
) -> None:
    url = site.url("/f.xml")
    site.serve("/f.xml", '<rss version="2.0"><channel><title>F</title></channel></rss>')
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "f.toml").write_text(f'[[feed]]\nurl = "{url}"\n')
    (tmp_path / "subs.opml").write_text(
        f'<opml version="2.0"><body><outline xmlUrl="{url}"/></body></opml>'
    )
    args = [arg.replace("{t}", str(tmp_path)).replace("{url}", url) for arg in command]
    done = podarchive(*args, env={variable: raw})
    one_line_exit_2(done.returncode, done.stderr, f"{variable}: '{raw}' is out of range (")
    assert site.requests == []
    assert not (tmp_path / "a.db").exists()
    assert not (tmp_path / "new").exists()
    assert not (tmp_path / "shards").exists()


@pytest.mark.parametrize(
    ("variable", "raw", "message"),
    [
        ("PODARCHIVE_BROKER_HEARTBEAT_MS", "-1", "'-1' is out of range (100 to 3600000)"),
        ("PODARCHIVE_BROKER_MAINTENANCE", "2000000", "'2000000' is out of range (0 to 1000000)"),
        ("PODARCHIVE_BROKER_HEARTBEAT_MS", "soon", "not a valid int: 'soon'"),
    ],
)
def test_the_brokers_tuning_variables_have_ranges(
    tmp_path: Path, variable: str, raw: str, message: str
) -> None:
    pytest.importorskip("dramatiq")
    (tmp_path / "f.toml").write_text('[[feed]]\nurl = "https://x.example/f"\n')
    code, err = invoke("scheduler", "--broker", "redis://127.0.0.1:1/0", "--schedules",
                       str(tmp_path), "--once", env={variable: raw})  # fmt: skip
    one_line_exit_2(code, err, f"{variable}: {message}")
