"""Run-wide settings, declared once as data.

Each field of :class:`Settings` carries its help text and its range; the environment loader
(``PODARCHIVE_<NAME>``) follows this one table, and so does the manual: docs/settings.md is
generated from it (cog; tests/test_docs.py fails when the page is stale). There is no command
that prints the settings: docs/settings.md is where they are documented. A value out of
range (``PODARCHIVE_DEADLINE=-5`` failed every fetch, #23) is a :class:`ConfigError` when the
settings are made: at a command's start, one line and exit 2. :func:`env_int` does the same
for the few numbers read from the environment outside this table (the cluster broker's
tuning).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podarchive import USER_AGENT
from podarchive.core.errors import ConfigError

MiB = 1024 * 1024


MAX_USER_AGENT = 500  # characters of a User-Agent, the run's or a schedule entry's
GiB = 1024 * MiB
TiB = 1024 * GiB
MEDIA_FOLDER = "media"  # the media folder's name beside the archive, by default


def _setting(default: Any, help: str, low: float | None = None, high: float | None = None) -> Any:
    """A field: its default, help and (numbers) its inclusive range ``low``..``high``."""
    return field(default=default, metadata={"help": help, "range": (low, high)})


def user_agent_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent as a User-Agent, as "is …" completes it (None: it can)."""
    if not text.strip() or not text.isprintable():
        return "not printable text"
    if len(text) > MAX_USER_AGENT:
        return f"longer than {MAX_USER_AGENT} characters"
    return None


@dataclass(frozen=True, slots=True)
class Settings:
    """Knobs for one run. Defaults suit polling thousands of feeds politely."""

    connect_timeout: float = _setting(10.0, "Seconds to wait for a TCP/TLS connection.", 0.1, 3600)
    read_timeout: float = _setting(30.0, "Seconds to wait for each chunk of a response.", 0.1, 3600)
    deadline: float = _setting(
        120.0,
        "Seconds one fetch may take in all (every hop, retry and back-off), however it drips.",
        0.1,
        86400,
    )
    max_feed_bytes: int = _setting(
        50 * MiB, "Largest feed body accepted, after decompression.", 256, 4 * GiB
    )
    max_page_bytes: int = _setting(
        10 * MiB, "Largest episode page accepted, after decompression.", 256, 4 * GiB
    )
    max_file_bytes: int = _setting(
        20 * MiB,
        "Largest transcript or chapters file accepted, after decompression.",
        256,
        4 * GiB,
    )
    max_redirects: int = _setting(10, "Redirect hops followed before giving up.", 0, 100)
    concurrency: int = _setting(8, "Requests in flight at once, over all hosts.", 1, 512)
    per_host: int = _setting(2, "Requests in flight at once to one host.", 1, 512)
    host_gap: float = _setting(
        0.5, "Least seconds between the starts of two requests to one host.", 0, 3600
    )
    retries: int = _setting(
        2, "Retries of a transient failure (timeout, connection, 5xx) per request.", 0, 20
    )
    retry_base: float = _setting(
        1.0, "Seconds of the first retry back-off (doubles, with jitter).", 0, 3600
    )
    move_after_polls: int = _setting(
        3,
        "Polls that must see the same permanent redirect before a feed's URL is switched.",
        1,
        1000,
    )
    move_after_days: float = _setting(
        2.0,
        "Days the same permanent redirect must have been seen before the URL is switched.",
        0,
        365,
    )
    user_agent: str = _setting(USER_AGENT, "User-Agent header sent with every request.")
    allow_private_hosts: bool = _setting(
        False,
        "Let URLs taken from feed content (episode pages) reach loopback and private addresses.",
    )
    processes: int = _setting(
        0,
        "Worker processes that parse feeds and pages in a big run (0: one per core once a run"
        " is worth it: 32 feeds or more, or 32 MiB of markup; 1: none).",
        0,
        256,
    )
    item_cache: bool = _setting(
        True,
        "Parse only the items of a changed feed body whose raw bytes are new (off: parse all).",
    )
    media_dir: str = _setting(
        "",
        "Folder the episodes' media files are kept in (empty: `media` beside the archive file).",
    )
    media_budget: int = _setting(
        5 * GiB, "Most bytes of media one run downloads, over all feeds.", 0, 1024 * TiB
    )
    media_concurrency: int = _setting(2, "Media downloads in flight at once.", 1, 16)
    operator: str = _setting(
        "", "Who keeps the archive (a name, an address): the operator of exported WARCs."
    )

    def __post_init__(self) -> None:
        for f in setting_fields():
            problem = setting_problem(f, getattr(self, f.name))
            if problem is not None:
                raise ConfigError(f"{f.name}: {getattr(self, f.name)!r} is {problem}")

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def media_dir_for(db_path: Path | str, settings: Settings) -> Path:
    """The folder of the archive at ``db_path``'s media: ``settings.media_dir`` (``~``
    expanded; relative: to the working directory), else ``media`` beside the archive file."""
    if settings.media_dir:
        return Path(settings.media_dir).expanduser()
    return Path(db_path).parent / MEDIA_FOLDER


def setting_fields() -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(Settings)


def range_text(f: dataclasses.Field[Any]) -> str:
    """The field's range as docs/settings.md shows it (``0.1 to 3600``), or ""."""
    low, high = f.metadata["range"]
    if f.name == "user_agent":
        return f"printable text, at most {MAX_USER_AGENT} characters"
    if f.name == "media_dir":
        return "a folder's path"
    return "" if low is None else f"{_number(low)} to {_number(high)}"


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def setting_problem(f: dataclasses.Field[Any], value: Any) -> str | None:
    """Why ``value`` is no value for the setting ``f``, as "is …" completes it (None: it is
    one). Numbers must be in the field's range; the user agent printable, not too long."""
    if f.name == "user_agent":
        return user_agent_problem(value)
    if f.name == "media_dir":
        return "not a path (it holds a NUL)" if "\x00" in value else None
    low, high = f.metadata["range"]
    if low is None or isinstance(value, bool):
        return None
    if not low <= value <= high:  # NaN too
        return f"out of range ({range_text(f)})"
    return None


def _coerce(name: str, raw: str, kind: type) -> Any:
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        return kind(raw)
    except ValueError as e:
        raise ConfigError(f"{_var(name)}: not a valid {kind.__name__}: {_shown(raw)}") from e


def _var(name: str) -> str:
    return f"PODARCHIVE_{name.upper()}"


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:39] + "…")


def settings_from_env(environ: Mapping[str, str] = os.environ) -> Settings:
    """Settings with any ``PODARCHIVE_<NAME>`` environment variables applied; a value that
    is not one of its setting's (wrong type, out of range) is a one-line ConfigError."""
    changes: dict[str, Any] = {}
    for f in setting_fields():
        raw = environ.get(_var(f.name))
        if raw is None:
            continue
        value = _coerce(f.name, raw, type(f.default))
        problem = setting_problem(f, value)
        if problem is not None:
            raise ConfigError(f"{_var(f.name)}: {_shown(raw)} is {problem}")
        changes[f.name] = value
    return Settings(**changes)


def env_int(
    name: str, default: int, low: int, high: int, environ: Mapping[str, str] = os.environ
) -> int:
    """The whole number in the environment variable ``name`` (``default`` when unset), from
    ``low`` to ``high``; anything else is a one-line ConfigError."""
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as e:
        raise ConfigError(f"{name}: not a valid int: {_shown(raw)}") from e
    if not low <= value <= high:
        raise ConfigError(f"{name}: {_shown(raw)} is out of range ({low} to {high})")
    return value
