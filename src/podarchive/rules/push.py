"""WebSub (push) decisions, pure: which hub and topic a feed names, when a lease is renewed,
whether a hub's verification of intent or a content notification counts (#29).

The spec is W3C WebSub (2018): a subscriber asks the hub (``hub.mode=subscribe``, a secret
per subscription), the hub checks with a GET on the callback that echoes ``hub.challenge``
only for what the subscriber asked, and then POSTs the topic's new content signed with
``X-Hub-Signature: <method>=<hex HMAC of the body>``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from podarchive.core.records import record

DEFAULT_LEASE = 86_400  # seconds asked for; the hub has the last word
SIGNATURES = {"sha256": hashlib.sha256, "sha1": hashlib.sha1, "sha384": hashlib.sha384,
              "sha512": hashlib.sha512}  # fmt: skip


def hub_and_topic(links: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The first ``rel="hub"`` and ``rel="self"`` of a channel's atom:links, both http(s);
    None when either is missing (the feed is not pushed)."""
    found: dict[str, str] = {}
    for rel, href in links:
        for word in rel.lower().split():
            if word in ("hub", "self") and word not in found and _is_http(href):
                found[word] = href.strip()
    if "hub" in found and "self" in found:
        return found["hub"], found["self"]
    return None


def _is_http(url: str) -> bool:
    return url.strip().lower().startswith(("http://", "https://"))


def signature_ok(secret: str, header: str | None, body: bytes) -> bool:
    """Whether ``X-Hub-Signature`` is ``method=hex`` with the body's HMAC under ``secret``.

    sha256 is what this subscriber prefers; sha1 (the spec's minimum) and the longer
    SHA-2s are accepted; anything else, or no header, is not valid."""
    if not header or "=" not in header:
        return False
    method, _, given = header.strip().partition("=")
    digest = SIGNATURES.get(method.strip().lower())
    if digest is None:
        return False
    expected = hmac.new(secret.encode(), body, digest).hexdigest()
    return hmac.compare_digest(expected, given.strip().lower())


@record
class Asked:
    """What this subscriber asked a hub for, as the verification must match it."""

    mode: str  # "subscribe" or "unsubscribe"
    topic: str


def challenge_for(asked: Asked | None, query: Mapping[str, str]) -> str | None:
    """The ``hub.challenge`` to echo when ``query`` verifies what was ``asked``; else None.

    A verification for a topic or mode not asked for is refused (404), as is one without
    a challenge; a subscribe verification must carry a positive ``hub.lease_seconds``."""
    if asked is None:
        return None
    challenge = query.get("hub.challenge", "")
    if not challenge or len(challenge) > 1024:
        return None
    if query.get("hub.mode") != asked.mode or query.get("hub.topic") != asked.topic:
        return None
    if asked.mode == "subscribe" and lease_seconds(query) is None:
        return None
    return challenge


def lease_seconds(query: Mapping[str, str]) -> int | None:
    text = query.get("hub.lease_seconds", "").strip()
    if not text.isdigit():
        return None
    value = int(text)
    return value if 0 < value < 10**9 else None


def renew_at(verified_at: datetime, lease: int) -> datetime:
    """When to renew a lease of ``lease`` seconds verified at ``verified_at``: at 3/4 of it,
    but at least a second (and at most an hour) before it ends."""
    margin = min(3600.0, max(1.0, lease / 4))
    return verified_at + timedelta(seconds=max(0.0, lease - margin))


def stretched(every: timedelta | None, push_every: timedelta) -> timedelta | None:
    """A feed's polling interval while its subscription is live: never shorter than its own
    schedule, at least ``push_every``; None (a cron schedule) stays as it is."""
    if every is None:
        return None
    return max(every, push_every)


@record
class Subscription:
    """One feed's WebSub subscription as the archive keeps it (``push_subscriptions``).

    ``state``: ``pending`` (asked, not verified yet), ``live`` (verified, lease running),
    ``failed`` (the hub refused or the lease was lost: polling only), ``unsubscribing``
    (the feed left the schedule), ``gone`` (unsubscribed)."""

    feed_url: str
    hub: str
    topic: str
    secret: str
    callback: str  # the path's token: /websub/<callback>
    state: str = "pending"
    lease_seconds: int | None = None
    lease_until: str | None = None  # ISO, UTC
    renew_at: str | None = None
    asked_at: str | None = None
    last_notified_at: str | None = None
    notifications: int = 0
    last_error: str | None = None


def push_line(sub: Subscription | None) -> str:
    """The status report's words for a feed's push state."""
    if sub is None:
        return "push: none"
    last = f", last notification {sub.last_notified_at}" if sub.last_notified_at else ""
    if sub.state == "live":
        return f"push: subscribed until {sub.lease_until}{last}"
    if sub.state == "failed":
        return f"push: failed ({sub.last_error or 'unknown'}), polling{last}"
    return f"push: {sub.state}{last}"
