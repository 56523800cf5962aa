"""The exceptions podarchive raises. Every one derives from :class:`PodarchiveError`.

Outside libraries' errors are translated where they are called (``raise X from e``),
so code above the adapters only ever sees this tree::

    PodarchiveError
    ├── ConfigError (ValueError)      bad settings or command-line values
    │   ├── ScheduleError             a bad schedule file: names the file and the key
    │   └── OpmlError                 an OPML file that cannot be imported
    ├── FetchError                    the network side of one request
    │   ├── FetchTimeout              connect/read timeout or the total deadline
    │   ├── BodyTooLarge              body (or its decompressed size) over the cap
    │   ├── HTTPStatusError           a non-success HTTP status (keeps .status)
    │   ├── HostBackoff               the host's Retry-After has not passed yet
    │   ├── Abandoned                 the run is stopping; the request was given up
    │   ├── RedirectError             loops, too many hops, bad Location
    │   └── BlockedURL                not http(s), or a private address for untrusted URLs
    ├── ParseError                    bytes that are not a usable feed
    │   ├── NotAFeed                  e.g. an HTML page where a feed was expected
    │   ├── TranscriptError           a transcript body that is unusable (empty, binary)
    │   └── ChaptersError             chapters that are unusable (not JSON, none readable)
    ├── ExtractError                  an episode page we cannot read
    └── StorageError                  the archive file itself
        ├── SchemaTooNew              archive written by a newer podarchive
        ├── ArchiveLocked             another run holds the archive
        ├── ArchiveDamaged            SQLite reports the file corrupt (``podarchive check``)
        ├── NotAnArchive              another program's file (or not SQLite): left untouched
        ├── ArchiveMissing            the daemon's archive was deleted or moved away
        └── MediaStoreError           the media folder (a disk full: ``disk_full`` set)
    BrokerError (PodarchiveError)     the cluster's broker (Redis) cannot be reached or used
    ExportError (PodarchiveError)     an export (WARC, WACZ) that cannot be written
"""

from __future__ import annotations

import re


class PodarchiveError(Exception):
    """Root of podarchive's exceptions. ``str(e)`` is a one-line reason fit for a user."""

    default_message = "podarchive error"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.default_message)

    @property
    def message(self) -> str:
        return str(self.args[0])


class ConfigError(PodarchiveError, ValueError):
    default_message = "bad configuration"


class ScheduleError(ConfigError):
    """A schedule file is wrong. The message names the file and, where known, the key."""

    default_message = "bad schedule file"

    def __init__(self, path: str, problem: str, key: str | None = None) -> None:
        self.path = path
        self.key = key
        self.problem = problem
        where = f"{path}: {key}" if key else path
        super().__init__(f"{where}: {problem}")


class OpmlError(ConfigError):
    """An OPML file that cannot be imported: not XML, not OPML, empty, no feeds in it."""

    default_message = "not a usable OPML file"


class FetchError(PodarchiveError):
    """``transient`` errors (connection trouble, timeouts) are worth retrying."""

    default_message = "fetch failed"

    def __init__(
        self, message: str | None = None, *, url: str | None = None, transient: bool = False
    ) -> None:
        super().__init__(message)
        self.url = url
        self.transient = transient


class FetchTimeout(FetchError):
    default_message = "timed out"


class BodyTooLarge(FetchError):
    default_message = "body too large"


class HTTPStatusError(FetchError):
    default_message = "HTTP error"

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        url: str | None = None,
        retry_after: str | None = None,
    ) -> None:
        super().__init__(message or f"HTTP {status}", url=url)
        self.status = status
        self.retry_after = retry_after


class HostBackoff(FetchError):
    """The host asked us (Retry-After) not to come back before a time not yet reached."""

    default_message = "host asked us to wait"


class Abandoned(FetchError):
    """The run is stopping (SIGTERM, Ctrl-C): the request was given up, nothing is recorded."""

    default_message = "abandoned: shutting down"


class RedirectError(FetchError):
    default_message = "bad redirect"


class BlockedURL(FetchError):
    default_message = "blocked URL"


class ParseError(PodarchiveError):
    default_message = "not a usable feed"


class NotAFeed(ParseError):
    default_message = "not a feed"


class ExtractError(PodarchiveError):
    default_message = "could not extract show notes"


class StorageError(PodarchiveError):
    default_message = "archive error"


class SchemaTooNew(StorageError):
    default_message = "archive was written by a newer podarchive"


class ArchiveLocked(StorageError):
    default_message = "another run holds the archive"


class ArchiveDamaged(StorageError):
    default_message = "the archive is damaged; run 'podarchive check'"


class NotAnArchive(StorageError):
    default_message = "not a podarchive archive"


class ArchiveMissing(StorageError):
    default_message = "the archive is gone"


class MediaStoreError(StorageError):
    """The media folder cannot be written or read (``disk_full`` when the disk is full)."""

    default_message = "media folder error"

    def __init__(self, message: str | None = None, *, disk_full: bool = False) -> None:
        super().__init__(message)
        self.disk_full = disk_full


class TranscriptError(ParseError):
    """A transcript body with nothing to read: empty, binary, or JSON that is not JSON."""

    default_message = "not a usable transcript"


class ChaptersError(ParseError):
    """A chapters body or block with nothing to read: not JSON, no chapter list, none usable."""

    default_message = "not usable chapters"


NAME_LIMIT = 120  # a feed's name or an episode's title in a message
URL_LIMIT = 200  # a URL in a message
# C0 controls, DEL, C1 controls and the Unicode line and paragraph separators: what could end
# a message's line early (a fake "podarchive:" line after it) or drive the terminal (ESC).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut (for messages)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape_controls(text: str) -> str:
    """``text`` with each control character written as its escape (``\\n``, ``\\x1b``)."""
    return _CONTROLS.sub(lambda m: repr(m.group())[1:-1], text)


def safe_label(text: str, limit: int = NAME_LIMIT) -> str:
    """A name, title or URL from a feed or a file, fit for a one-line message: its control
    characters escaped (it can start no line of its own), then cut to ``limit``."""
    return shorten(escape_controls(text), limit)


def safe_url(url: str) -> str:
    """:func:`safe_label` for a URL (cut at :data:`URL_LIMIT`)."""
    return safe_label(url, URL_LIMIT)


def one_line(text: str, limit: int = 300) -> str:
    """``text`` with its white space folded to single spaces and its other control
    characters escaped, then :func:`shorten`."""
    return shorten(escape_controls(" ".join(text.split())), limit)


class ExportError(PodarchiveError):
    """An export (``export-warc``) cannot be written: its file, or the package around it."""

    default_message = "the export cannot be written"


class BrokerError(PodarchiveError):
    """The cluster's broker (Redis) is unreachable, refused a command or holds no cluster."""

    default_message = "the broker cannot be used"
