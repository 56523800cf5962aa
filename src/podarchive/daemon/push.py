"""WebSub subscriptions of the daemon (#29): subscribe, verify, renew, unsubscribe, notify.

:class:`PushManager` keeps each feed's :class:`~podarchive.rules.push.Subscription` in
memory and in the archive (``push_subscriptions``). Its own thread (``podarchive-push``)
does the hub requests and the archive writes of the subscriptions; the HTTP endpoint
(:mod:`.push_http`) calls :meth:`verify` and :meth:`notify`, which only read and change
memory, so the endpoint never waits on the network or the archive. A valid notification
makes the feed due now (``want``): the daemon polls it through the normal pipeline; the
POSTed body is never taken as the feed, only kept as evidence (``push_notices``).

Where the subscriptions live is a :class:`PushStore`: the daemon's is its archive
(:class:`ArchivePushStore`); the cluster's scheduler has its own
(:mod:`podarchive.cluster.push`).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol, TypeVar

from podarchive.core.clock import iso, parse_iso, utcnow
from podarchive.core.errors import ArchiveLocked, PodarchiveError, one_line
from podarchive.core.settings import Settings
from podarchive.daemon.pushed import PushedFeeds
from podarchive.net.hub import hub_request
from podarchive.read.podcast_ns import scan
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.push import (
    DEFAULT_LEASE,
    Asked,
    Subscription,
    challenge_for,
    hub_and_topic,
    lease_seconds,
    renew_at,
    signature_ok,
    stretched,
)
from podarchive.runtime.lock import archive_lock
from podarchive.store import Archive
from podarchive.store.push import PushNotice

T = TypeVar("T")

log = logging.getLogger("podarchive.daemon")
PUSH_EVERY = timedelta(days=1)
RETRY_FAILED = timedelta(hours=1)  # a hub that refused is asked again after this
HUB_RATE = 10  # notifications per hub per second at most; more get 429
NOTICES_WAITING = 1000  # notifications held in memory until written; the oldest go first
Links = dict[str, tuple[str, str] | None]


class PushStore(Protocol):
    """Where a :class:`PushManager` keeps its subscriptions and learns what feeds name."""

    def load(self) -> list[Subscription]:
        """The subscriptions kept (at start)."""
        ...

    def links(self, urls: Collection[str]) -> Links | None:
        """Each feed's hub and topic, as its latest stored body names them (None: both not
        named); None when the store is busy (asked again on a later turn)."""
        ...

    def save(self, subs: Sequence[Subscription], notices: Sequence[PushNotice]) -> bool:
        """Write these; False when the store is busy (written on a later turn)."""
        ...


class ArchivePushStore:
    """The daemon's :class:`PushStore`: its archive, opened only under its lock and
    ``mutex`` (held by whoever has the archive open in this process)."""

    def __init__(self, db_path: Path, mutex: threading.Lock) -> None:
        self.db_path, self.mutex = db_path, mutex

    def load(self) -> list[Subscription]:
        with Archive(self.db_path) as archive:
            return archive.push_subscriptions()

    def links(self, urls: Collection[str]) -> Links | None:
        return self._with_archive(lambda a: {url: feed_links(a, url) for url in urls})

    def save(self, subs: Sequence[Subscription], notices: Sequence[PushNotice]) -> bool:
        def save(archive: Archive) -> bool:
            for sub in subs:
                archive.save_push_subscription(sub)
            archive.save_push_notices(notices)
            return True

        return self._with_archive(save) is not None

    def _with_archive(self, work: Callable[[Archive], T]) -> T | None:
        return with_archive(self.db_path, self.mutex, work)


def with_archive(db_path: Path, mutex: threading.Lock, work: Callable[[Archive], T]) -> T | None:
    """``work(archive)`` under ``mutex`` (the daemon's cycle holds it too) and the archive's
    lock; None when another process holds the archive."""
    with mutex:
        try:
            lock = archive_lock(db_path).acquire()
        except ArchiveLocked:
            return None
        with lock, Archive(db_path) as archive:
            return work(archive)


def feed_links(archive: Archive, url: str) -> tuple[str, str] | None:
    """The hub and topic the feed's latest stored body names, if both."""
    state = archive.feed_state(url)
    body = archive.latest_feed_body(state.id) if state is not None else None
    return hub_and_topic(scan(body[0]).channel.links) if body else None


class PushManager:
    """The daemon's WebSub side. ``want(url)`` makes a feed due now; ``scheduled()`` gives
    the feeds on the schedule (a subscription whose feed left it is unsubscribed), None
    until the daemon has one (a restart must not unsubscribe everything)."""

    def __init__(
        self,
        db_path: Path | None,
        settings: Settings,
        *,
        public_url: str,
        want: Callable[[str], None],
        scheduled: Callable[[], Mapping[str, FeedSchedule] | None],
        push_every: timedelta = PUSH_EVERY,
        lease: int = DEFAULT_LEASE,
        store: PushStore | None = None,
    ) -> None:
        """``db_path``: the daemon's archive, the store (else ``store``, the cluster's)."""
        self.settings = settings
        self.public_url = public_url.rstrip("/")
        self.want, self.scheduled = want, scheduled
        self.push_every, self.lease = push_every, lease
        self._lock = threading.Lock()
        #: held by whoever has the archive open in this process: the daemon's cycle or the
        #: push thread (the archive has one writer at a time)
        self.archive_mutex = threading.Lock()
        if store is None:
            assert db_path is not None, "a PushManager needs an archive or a store"
            store = ArchivePushStore(db_path, self.archive_mutex)
        self.store: PushStore = store
        self._notices: list[PushNotice] = []  # received, not written yet
        self._subs: dict[str, Subscription] = {}
        self._asked: dict[str, Asked] = {}  # callback → what was asked of its hub last
        self._pushed = PushedFeeds()
        self._dirty: set[str] = set()
        self._look: set[str] = set()  # feeds polled since: do they name a hub now?
        self._hub_hits: dict[str, list[float]] = {}
        self._begun = False
        self._trusted: set[str] = set()  # feeds whose schedule lets them reach private hosts
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.log: list[tuple[float, str]] = []  # (monotonic, event) for tests and benchmarks

    # the daemon's side ------------------------------------------------------------------

    def start(self) -> None:
        for sub in self.store.load():
            self._subs[sub.feed_url] = sub
        self._thread = threading.Thread(target=self._run, name="podarchive-push", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def polled(self, urls: Iterable[str]) -> None:
        """A cycle polled these feeds: look whether they name a hub (on the push thread)."""
        with self._lock:
            self._look.update(urls)
        self._wake.set()

    def take_pushed(self, urls: Collection[str]) -> set[str]:
        """Of ``urls``, those a notification made due (taken: asked once)."""
        return self._pushed.take(urls)

    def push_again(self, urls: Collection[str]) -> None:
        self._pushed.put_back(urls)

    def stretch(self, feed: FeedSchedule) -> FeedSchedule:
        """``feed`` with its interval stretched to ``push_every`` while its push is live."""
        with self._lock:
            sub = self._subs.get(feed.url)
        if sub is None or sub.state != "live":
            return feed
        return dataclasses.replace(feed, every=stretched(feed.every, self.push_every))

    def subscription(self, url: str) -> Subscription | None:
        with self._lock:
            return self._subs.get(url)

    # the endpoint's side ----------------------------------------------------------------

    def verify(self, callback: str, query: Mapping[str, str]) -> str | None:
        """The challenge to echo for a verification of intent; None: answer 404."""
        with self._lock:
            asked = self._asked.get(callback)
            challenge = challenge_for(asked, query)
            url = self._feed_of(callback)
            if challenge is None or url is None or asked is None:
                return None
            sub = self._subs[url]
            now = utcnow()
            if asked.mode == "subscribe":
                lease = lease_seconds(query) or self.lease
                sub = dataclasses.replace(
                    sub,
                    state="live",
                    lease_seconds=lease,
                    lease_until=iso(now + timedelta(seconds=lease)),
                    renew_at=iso(renew_at(now, lease)),
                    last_error=None,
                )
            else:
                sub = dataclasses.replace(sub, state="gone", lease_until=None, renew_at=None)
            self._subs[url] = sub
            self._dirty.add(url)
            self._asked.pop(callback, None)
        self._event(f"verified {asked.mode} {url} lease {sub.lease_seconds}")
        self._wake.set()
        return challenge

    def denied(self, callback: str, query: Mapping[str, str]) -> bool:
        """A hub's ``hub.mode=denied``: the subscription failed (polling goes on)."""
        with self._lock:
            url = self._feed_of(callback)
            if url is None or query.get("hub.topic") != self._subs[url].topic:
                return False
            reason = query.get("hub.reason", "no reason given")
            self._subs[url] = dataclasses.replace(
                self._subs[url], state="failed", last_error=f"denied: {reason}"[:200]
            )
            self._dirty.add(url)
        log.warning("push: hub denied %s: %s; polling only", url, one_line(reason, 200))
        return True

    def known(self, callback: str) -> bool:
        with self._lock:
            return self._feed_of(callback) is not None

    def notify(
        self, callback: str, signature: str | None, body: bytes, content_type: str | None = None
    ) -> int:
        """A content distribution POST: the HTTP status to answer (2xx unless unknown).
        Its body is kept as evidence (:class:`PushNotice`), signed or not."""
        now = time.monotonic()
        with self._lock:
            url = self._feed_of(callback)
            if url is None:
                return 404
            sub = self._subs[url]
            if not self._hub_allows(sub.hub, now):
                return 429
            valid = sub.state in ("live", "pending") and signature_ok(sub.secret, signature, body)
            self._keep_notice(sub, body, valid=valid, content_type=content_type)
            if not valid:
                why = "no signature" if not signature else "a bad signature"
                log.warning("push: notification for %s ignored: %s", url, why)
                return 202
            self._subs[url] = dataclasses.replace(
                sub, last_notified_at=iso(utcnow()), notifications=sub.notifications + 1
            )
            self._dirty.add(url)
            self._pushed.add(url)
        self._event(f"notified {url}")
        self.want(url)
        self._wake.set()
        return 202

    def _keep_notice(
        self, sub: Subscription, body: bytes, *, valid: bool, content_type: str | None
    ) -> None:
        """Under ``_lock``: the notification kept as evidence, written by the push thread."""
        notice = PushNotice.of(
            sub.feed_url,
            sub.topic,
            body,
            received_at=iso(utcnow()),
            signature_valid=valid,
            content_type=content_type,
        )
        self._notices = [*self._notices[-(NOTICES_WAITING - 1) :], notice]
        self._wake.set()

    def _feed_of(self, callback: str) -> str | None:
        for url, sub in self._subs.items():
            if sub.callback == callback and sub.state != "gone":
                return url
        return None

    def _hub_allows(self, hub: str, now: float) -> bool:
        hits = [t for t in self._hub_hits.get(hub, []) if now - t < 1.0]
        if len(hits) >= HUB_RATE:
            return False
        hits.append(now)
        self._hub_hits[hub] = hits
        return True

    def _event(self, what: str) -> None:
        self.log.append((time.monotonic(), what))

    # the push thread --------------------------------------------------------------------

    def _run(self) -> None:
        """The push thread: the archive is opened only while there is something to read or
        write (as the daemon's cycles do), never held between turns."""
        while not self._stop.is_set():
            try:
                self._turn()
            except PodarchiveError as e:
                log.error("push: %s", one_line(str(e), 300))
            self._wake.wait(timeout=0.5)
            self._wake.clear()
        try:
            self._flush()
        except PodarchiveError as e:
            log.error("push: %s", one_line(str(e), 300))

    def _turn(self) -> None:
        scheduled = self.scheduled()
        if scheduled is None:
            return
        if not self._begun:
            self._begun = True
            self._look.update(scheduled)  # feeds polled before: do they name a hub?
        self._trusted.update(url for url, f in scheduled.items() if f.allow_private_hosts)
        with self._lock:
            look, self._look = self._look & set(scheduled), set()
        if look:
            found = self.store.links(look)
            if found is None:  # another process has the archive: look again next turn
                with self._lock:
                    self._look |= look
                return
            for url, hub_topic in sorted(found.items()):
                self._discover(scheduled[url], hub_topic)
        now = utcnow()
        for url, sub in list(self._subs.items()):
            trusted = url in self._trusted
            if url not in scheduled and sub.state in ("live", "pending"):
                self._ask(sub, "unsubscribe", trusted=trusted)
            elif url in scheduled and self._renewal_due(sub, now):
                self._ask(sub, "subscribe", trusted=trusted)
        self._flush()

    def _renewal_due(self, sub: Subscription, now: datetime) -> bool:
        if sub.state == "live":
            return (parse_iso(sub.renew_at) or now) <= now
        if sub.state == "failed":
            asked = parse_iso(sub.asked_at)
            return asked is None or asked + RETRY_FAILED <= now
        return False

    def _discover(self, feed: FeedSchedule, found: tuple[str, str] | None) -> None:
        with self._lock:
            sub = self._subs.get(feed.url)
        if found is None:
            return
        hub, topic = found
        if sub is not None and (sub.hub, sub.topic) == found and sub.state != "gone":
            return  # already asked for (renewals follow the lease)
        sub = Subscription(
            feed_url=feed.url,
            hub=hub,
            topic=topic,
            secret=secrets.token_hex(32),
            callback=secrets.token_urlsafe(18),
        )
        with self._lock:
            self._subs[feed.url] = sub
        self._ask(sub, "subscribe", trusted=feed.url in self._trusted)

    def _ask(self, sub: Subscription, mode: str, *, trusted: bool = False) -> None:
        """One request to the hub; the verification of intent arrives at the endpoint."""
        form = {
            "hub.mode": mode,
            "hub.topic": sub.topic,
            "hub.callback": f"{self.public_url}/websub/{sub.callback}",
        }
        if mode == "subscribe":
            form["hub.secret"] = sub.secret
            form["hub.lease_seconds"] = str(self.lease)
        with self._lock:
            self._asked[sub.callback] = Asked(mode, sub.topic)
            state = "pending" if mode == "subscribe" and sub.state != "live" else sub.state
            current = dataclasses.replace(
                self._subs[sub.feed_url], asked_at=iso(utcnow()), state=state
            )
            if mode == "unsubscribe":
                current = dataclasses.replace(current, state="unsubscribing")
            self._subs[sub.feed_url] = current
            self._dirty.add(sub.feed_url)
        self._event(f"asked {mode} {sub.feed_url}")
        try:
            status, answer = hub_request(sub.hub, form, settings=self.settings, trusted=trusted)
        except PodarchiveError as e:
            self._failed(sub.feed_url, mode, one_line(str(e), 200))
            return
        if not 200 <= status < 300:
            self._failed(sub.feed_url, mode, f"hub answered {status} {answer}".strip())

    def _failed(self, url: str, mode: str, why: str) -> None:
        log.warning("push: %s of %s failed: %s; polling only", mode, url, why)
        with self._lock:
            sub = self._subs[url]
            self._asked.pop(sub.callback, None)
            state = "gone" if mode == "unsubscribe" else "failed"
            self._subs[url] = dataclasses.replace(sub, state=state, last_error=why[:200])
            self._dirty.add(url)

    def _flush(self) -> None:
        with self._lock:
            dirty = [self._subs[url] for url in sorted(self._dirty)]
            notices, self._notices = self._notices, []
            self._dirty.clear()
        if not dirty and not notices:
            return
        if not self.store.save(dirty, notices):  # written on a later turn
            with self._lock:
                self._dirty.update(sub.feed_url for sub in dirty)
                self._notices = [*notices, *self._notices][-NOTICES_WAITING:]
