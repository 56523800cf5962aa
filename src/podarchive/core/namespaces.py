"""Short labels for XML namespaces: ``podcast`` for every URI the Podcasting 2.0 namespace has
gone by, ``psc``, ``media``… (leaf module; the ``tags`` table's ``ns`` column, #13).

An unknown URI is its own label; an undeclared prefix that lxml's recovery left in the tag
(``podcast:locked`` with no ``xmlns``) is labelled by the prefix.
"""

from __future__ import annotations

PODCAST_URIS = frozenset(
    {
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    }
)
LABELS: dict[str, str] = {
    **dict.fromkeys(PODCAST_URIS, "podcast"),
    **dict.fromkeys(
        (
            "http://podlove.org/simple-chapters",
            "https://podlove.org/simple-chapters",
            "http://podlove.org/simple-chapters/",
            "https://podlove.org/simple-chapters/",
        ),
        "psc",
    ),
    "http://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "https://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "http://search.yahoo.com/mrss/": "media",
    "http://search.yahoo.com/mrss": "media",
    "http://www.google.com/schemas/play-podcasts/1.0": "googleplay",
    "https://www.google.com/schemas/play-podcasts/1.0": "googleplay",
    "http://www.spotify.com/ns/rss": "spotify",
    "https://www.spotify.com/ns/rss": "spotify",
    "http://blubrry.com/developer/rawvoice-rss/": "rawvoice",
    "http://purl.org/syndication/history/1.0": "fh",
    "http://www.w3.org/2005/atom": "atom",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/rss/1.0/modules/content/": "content",
}
KNOWN_PREFIXES = frozenset({"podcast", "psc", "itunes", "media", "googleplay", "spotify"})


def label(namespace: str) -> str:
    """``podcast`` for any Podcasting 2.0 URI (or the bare prefix), else a short known label,
    else the URI as given ("" for no namespace)."""
    key = namespace.strip().lower()
    if key in LABELS:
        return LABELS[key]
    if key.rstrip("/") in LABELS:
        return LABELS[key.rstrip("/")]
    if key in KNOWN_PREFIXES:
        return key
    return namespace
