"""Platform rules: the markup a publishing platform wraps around notes that is never notes,
and how a platform splits the notes.

Each furniture rule names a platform and the class or id tokens (lower case; a prefix ends in
``*``) of its players, download and share panels, subscribe buttons and related-episode
lists. :func:`drupal_fields_after` follows Drupal's entity fields (the body, then the
labelled text fields after it). Keyed on markup the platform writes on every site, never on
one page's text.
"""

from __future__ import annotations

import re

from bs4.element import Tag

from podarchive.read.extract.soup import attr, classes

#: platform -> class/id tokens of its furniture ("prefix*" matches any token starting so).
PLATFORM_FURNITURE: dict[str, tuple[str, ...]] = {
    "screen readers": ("sr-only", "screen-reader-text", "visually-hidden", "visuallyhidden"),
    "media players": (
        "audio-module*",
        "audio-tool*",
        "audio-controls*",
        "audio-player*",
        "media-player*",
        "embed-code*",
        "download-links*",
    ),
    "powerpress": ("powerpress_*", "powerpress-*"),
    "podlove": (
        "podlove-web-player*",
        "podlovewebplayer*",
        "pwp4-*",
        "podlove-subscribe*",
        "podlove-downloads*",
        "episode_downloads",
        "podlove-episode-downloads*",
    ),
    "podpress": ("podpress_content*", "podpress_playerspace*", "podpress_downloadlinks*"),
    "seriously-simple-podcasting": ("podcast_player", "podcast_meta", "ssp-*", "castos-player*"),
    "podigee": ("podigee-podcast-player*", "podigee-player*"),
    "spotify": ("spotify-embed*", "episode-share*"),
    "apple": ("we-share-*", "product-header__*", "upsell-*"),
    "acast": ("acast-player*", "acast-embed*"),
    "transistor": ("transistor-player*", "transistor-embed*"),
    "buzzsprout": ("buzzsprout-player*", "buzzsprout-*"),
    "libsyn": ("libsyn-player*", "libsyn-item-player*", "libsyn-embed*"),
    "podbean": ("podbean-player*", "pb-player*", "podbean-embed*"),
    "squarespace": (
        "sqs-block-audio",
        "sqs-block-embed",
        "sqs-audio-embed",
        "audio-block",
        "embed-block",
        "sqs-share-buttons",
        "squarespace-social-buttons",
    ),
    "substack": (
        "subscription-widget*",
        "subscribe-widget*",
        "post-footer",
        "like-button*",
        "post-ufi*",
        "share-dialog*",
        "paywall*",
        "footer-wrap",
        "post-title",
        "meta-author*",
        "post-preview*",
    ),
    "wordpress.com": (
        "sharedaddy",
        "jp-relatedposts*",
        "wpcnt",
        "wordads*",
        "wpl-likebox",
        "jetpack-*",
        "wp-block-jetpack-*",
        "post-likes-widget*",
    ),
    "wordpress": (
        "entry-meta",
        "entry-footer",
        "post-meta",
        "postmetadata",
        "tag-metadata",
        "post-tags",
        "entry-tags",
        "tags-links",
        "cat-links",
        "wp-audio-shortcode",
        "mejs-*",
        "wp-block-audio",
        "wp-block-embed*",
    ),
}

_TOKEN_SPLIT_RE = re.compile(r"\s+")


def _compile() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    for platform, patterns in PLATFORM_FURNITURE.items():
        for pattern in patterns:
            if pattern.endswith("*"):
                prefixes.append((pattern[:-1], platform))
            else:
                exact[pattern] = platform
    return exact, tuple(prefixes)


_EXACT, _PREFIXES = _compile()
_PREFIX_STARTS = tuple(prefix for prefix, _ in _PREFIXES)


def platform_furniture(tag: Tag) -> str | None:
    """The platform whose furniture ``tag`` is (by a class or its id), else None."""
    attrs = tag.attrs
    if "class" not in attrs and "id" not in attrs:
        return None
    for token in _TOKEN_SPLIT_RE.split((attr(tag, "class") + " " + attr(tag, "id")).lower()):
        if not token:
            continue
        if token in _EXACT:
            return _EXACT[token]
        if token.startswith(_PREFIX_STARTS):
            return next(platform for prefix, platform in _PREFIXES if token.startswith(prefix))
    return None


#: Drupal: a field's class; the body field's; a field whose label sits above its content (a
#: text field with a heading: "Speaker", "Further reading"), and one whose label is inline
#: (tags, subscribe links: the entity's furniture, which ends the notes).
DRUPAL_FIELD = "field"
DRUPAL_BODY = "field--name-body"
DRUPAL_LABEL_ABOVE = "field--label-above"
DRUPAL_REFERENCE = "field--type-entity-reference"


def drupal_fields_after(block: Tag) -> list[Tag]:
    """The labelled fields after a Drupal body field (``block``) that go on with the notes:
    each sibling field whose label sits above its text, up to the first that is not one."""
    if DRUPAL_BODY not in classes(block):
        return []
    more: list[Tag] = []
    for sibling in block.find_next_siblings():
        names = set(classes(sibling))
        if not sibling.get_text(strip=True):
            continue
        if DRUPAL_FIELD not in names or DRUPAL_LABEL_ABOVE not in names:
            break
        if DRUPAL_REFERENCE in names:
            break  # links to other entities (the guests' pages, the topics): furniture
        more.append(sibling)
    return more
