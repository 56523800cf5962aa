"""Run-wide settings, declared once as data.

Each field of :class:`Settings` carries its help text; the environment loader
(``PODARCHIVE_<NAME>``), ``podarchive settings`` and docs/settings.md are all derived from
this one table, and a test checks that every setting is documented.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from podarchive import USER_AGENT
from podarchive.errors import ConfigError

MiB = 1024 * 1024


def _setting(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True, slots=True)
class Settings:
    """Knobs for one run. Defaults suit polling thousands of feeds politely."""

    connect_timeout: float = _setting(10.0, "Seconds to wait for a TCP/TLS connection.")
    read_timeout: float = _setting(30.0, "Seconds to wait for each chunk of a response.")
    deadline: float = _setting(
        120.0,
        "Seconds one fetch may take in all (every hop, retry and back-off), however it drips.",
    )
    max_feed_bytes: int = _setting(50 * MiB, "Largest feed body accepted, after decompression.")
    max_page_bytes: int = _setting(10 * MiB, "Largest episode page accepted, after decompression.")
    max_file_bytes: int = _setting(
        20 * MiB, "Largest transcript or chapters file accepted, after decompression."
    )
    max_redirects: int = _setting(10, "Redirect hops followed before giving up.")
    concurrency: int = _setting(8, "Requests in flight at once, over all hosts.")
    per_host: int = _setting(2, "Requests in flight at once to one host.")
    host_gap: float = _setting(0.5, "Least seconds between the starts of two requests to one host.")
    retries: int = _setting(
        2, "Retries of a transient failure (timeout, connection, 5xx) per request."
    )
    retry_base: float = _setting(1.0, "Seconds of the first retry back-off (doubles, with jitter).")
    move_after_polls: int = _setting(
        3, "Polls that must see the same permanent redirect before a feed's URL is switched."
    )
    move_after_days: float = _setting(
        2.0, "Days the same permanent redirect must have been seen before the URL is switched."
    )
    user_agent: str = _setting(USER_AGENT, "User-Agent header sent with every request.")
    allow_private_hosts: bool = _setting(
        False,
        "Let URLs taken from feed content (episode pages) reach loopback and private addresses.",
    )
    processes: int = _setting(
        0,
        "Worker processes that parse feeds and pages in a big run (0: one per core; 1: none).",
    )
    item_cache: bool = _setting(
        True,
        "Parse only the items of a changed feed body whose raw bytes are new (off: parse all).",
    )

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def setting_fields() -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(Settings)


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
        raise ConfigError(f"PODARCHIVE_{name.upper()}: not a valid {kind.__name__}: {raw!r}") from e


def settings_from_env(environ: Mapping[str, str] = os.environ) -> Settings:
    """Settings with any ``PODARCHIVE_<NAME>`` environment variables applied."""
    changes: dict[str, Any] = {}
    for f in setting_fields():
        raw = environ.get(f"PODARCHIVE_{f.name.upper()}")
        if raw is not None:
            changes[f.name] = _coerce(f.name, raw, type(f.default))
    return Settings(**changes)
