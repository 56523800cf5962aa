"""What a page says about its episode in structured data: app state, JSON-LD, Open Graph.

:func:`structured_description` reads the notes an app's state holds as HTML (a ``shownotes``,
``long_description``, ``descriptionHtml``… field of ``__NEXT_DATA__``, ``__NUXT_DATA__`` or a
``window.__NUXT__``/``__APOLLO_STATE__``/``__INITIAL_STATE__`` JSON), else the ``description``
of a schema.org ``PodcastEpisode`` (or ``Episode``, ``RadioEpisode``, or any JSON-LD node whose
``url`` is the page's own), else the ``og:description`` meta. It never raises; malformed JSON
is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import NamedTuple

from bs4 import BeautifulSoup
from bs4.element import Tag

from podarchive.read.extract.decode import valid
from podarchive.read.extract.soup import attr, collapse, tags

#: JSON-LD ``@type`` values (lower case) whose ``description`` is an episode's notes.
EPISODE_TYPES = frozenset({"podcastepisode", "episode", "radioepisode", "tvepisode"})
_MAX_NODES = 5000
#: App state is bigger: at most this many of its values are looked at.
_MAX_STATE_NODES = 200_000
#: Fields (lower case) of app state that hold an episode's notes.
NOTES_KEYS = frozenset(
    {"shownotes", "show_notes", "shownoteshtml", "long_description", "longdescription"}
    | {"descriptionhtml", "description_html", "htmldescription", "html_description"}
    | {"contenthtml", "content_html", "notes_html", "noteshtml"}
)
_STATE_IDS = frozenset({"__NEXT_DATA__", "__NUXT_DATA__"})
#: A notes field's name, quoted as a JSON key.
_NOTES_KEY_RE = re.compile(r'"(' + "|".join(sorted(NOTES_KEYS)) + r')"\s*:', re.I)
_STATE_PREFIXES = (
    "window.__NUXT__",
    "window.__APOLLO_STATE__",
    "window.__INITIAL_STATE__",
    "var ytInitialPlayerResponse",
    "window.ytInitialPlayerResponse",
    "window.__sc_hydration",
    "window.__STATE__",
)
_STATE_MARKERS = (
    "__NEXT_DATA__",
    "__NUXT",
    "__APOLLO_STATE__",
    "__INITIAL_STATE__",
    "ytInitialPlayerResponse",
    "__sc_hydration",
    "__STATE__",
)
#: Fields (lower case) of app state that hold an episode's notes as plain text (a video
#: page's description), taken when at least :data:`MIN_PLAIN_CHARS` long.
PLAIN_NOTES_KEYS = frozenset({"shortdescription"})
#: Kinds of app-state nodes (a ``kind`` field) whose plain ``description`` is an episode's:
#: SoundCloud's track.
EPISODE_KINDS = frozenset({"track", "episode"})
MIN_PLAIN_CHARS = 40
_DECODER = json.JSONDecoder()


class Described(NamedTuple):
    """A description found in structured data and where: ``json-ld`` or ``open-graph``."""

    method: str
    text: str  # HTML or plain text, as the page gives it


def has_structured_data(text: str) -> bool:
    """A cheap look: whether the page text may carry JSON-LD or an ``og:description``."""
    return (
        "ld+json" in text
        or "og:description" in text
        or any(marker in text for marker in _STATE_MARKERS)
        or "window.__" in text
        or "application/json" in text
    )


def structured_description(soup: BeautifulSoup, url: str) -> Described | None:
    """The episode's description from JSON-LD, else ``og:description``, else None."""
    found: list[str] = []
    state: list[str] = []
    og = ""
    for tag in tags(soup, "script", "meta"):
        if tag.name == "meta":
            if attr(tag, "property").lower() == "og:description" and not og:
                og = collapse(attr(tag, "content"))
        elif "ld+json" in attr(tag, "type").lower():
            found += _json_ld_descriptions(tag.get_text(), url)
        elif (data := _state_data(tag)) is not None:
            state += _state_notes(data)
    if state:
        return Described("app-state", valid(max(state, key=len)))
    if found:
        return Described("json-ld", valid(max(found, key=len)))
    return Described("open-graph", valid(og)) if og else None


#: Meta tags whose content is the page's summary, in the order they are trusted.
SUMMARY_METAS = ("og:description", "twitter:description", "description")


def meta_description(soup: BeautifulSoup) -> str:
    """The page's summary from its meta tags (``og:description``, ``twitter:description``,
    ``description``), or ""."""
    found: dict[str, str] = {}
    head = soup.head if soup.head is not None else soup
    for meta in tags(head, "meta"):
        key = (attr(meta, "property") or attr(meta, "name")).lower()
        if key in SUMMARY_METAS and key not in found:
            found[key] = collapse(attr(meta, "content"))
    return next((valid(found[key]) for key in SUMMARY_METAS if found.get(key)), "")


def _json_ld_descriptions(script: str, url: str) -> list[str]:
    """Descriptions of the episode nodes of one JSON-LD script."""
    found: list[str] = []
    for node in _objects(script, _MAX_NODES):
        description = node.get("description")
        if isinstance(description, str) and description.strip() and _is_episode(node, url):
            found.append(description.strip())
    return found


def _objects(script: str, limit: int) -> Iterator[dict[str, object]]:
    """The JSON objects of a script's JSON text, walked iteratively (at most ``limit`` nodes);
    none when it is not JSON."""
    try:
        data = json.loads(script)
    except (ValueError, RecursionError):
        return
    yield from _walk(data, limit)


def _walk(data: object, limit: int) -> Iterator[dict[str, object]]:
    """The JSON objects in ``data``, walked iteratively (at most ``limit`` nodes)."""
    stack: list[object] = [data]
    seen = 0
    while stack and seen < limit:
        node = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack += node
        elif isinstance(node, dict):
            yield node
            stack += [value for value in node.values() if isinstance(value, dict | list)]


def _is_episode(node: dict[str, object], url: str) -> bool:
    kinds = node.get("@type")
    names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if any(isinstance(name, str) and name.lower() in EPISODE_TYPES for name in names):
        return True
    own = node.get("url") or node.get("@id")
    return isinstance(own, str) and own.rstrip("/") == url.rstrip("/")


class _Script(NamedTuple):
    """An app state written as JavaScript, not JSON (Nuxt 2's ``window.__NUXT__=(function(a,
    b){return {…}}(…))``): only its string literals can be read."""

    text: str


def _state_data(tag: Tag) -> object | None:
    """The parsed JSON of an app-state script (a :class:`_Script` where it is JavaScript), or
    None if the script is not one (or not readable). A ``var x = {…};`` or ``window.x = […]``
    script is read up to the end of its value."""
    if attr(tag, "id") in _STATE_IDS:
        text, start = tag.get_text(), 0
    elif attr(tag, "type").lower() == "application/json":
        text, start = tag.get_text(), 0  # an app's own state ("initial-state"): read only
        if not _NOTES_KEY_RE.search(text):  # where it names a notes field
            return None
    else:
        text = tag.get_text().strip()
        if not text.startswith(_STATE_PREFIXES) and not _named_state(text):
            return None
        equals = text.find("=")
        start = len(text) - len(text[equals + 1 :].lstrip()) if equals >= 0 else -1
        if start < 0 or start >= len(text):
            return None
        if text[start] not in "{[":
            return _Script(text) if text.startswith("(function", start) else None
    try:
        data: object = _DECODER.raw_decode(text, start)[0] if start else json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data


#: Any other app's state global ("window.__RPS_STATE__ = {…}"): read where it names a notes
#: field, so an analytics or config global costs no JSON parse.
_STATE_GLOBAL_RE = re.compile(r"(window\.|var |let |const )?__[A-Za-z][A-Za-z0-9_]*__\s*=\s*[{\[]")


def _named_state(text: str) -> bool:
    return _STATE_GLOBAL_RE.match(text) is not None and _NOTES_KEY_RE.search(text) is not None


#: A JavaScript ``key:"string"`` pair of a notes field (the key unquoted or quoted).
_JS_FIELD_RE = re.compile(r'(?<![\w$])"?([A-Za-z_]\w*)"?\s*:\s*"((?:[^"\\]|\\.)*)"')


def _script_notes(script: _Script) -> list[str]:
    """HTML values of the notes fields among a JavaScript state's string literals."""
    found: list[str] = []
    for match in _JS_FIELD_RE.finditer(script.text):
        if match[1].lower() not in NOTES_KEYS:
            continue
        try:
            value = json.loads(f'"{match[2]}"')
        except ValueError:
            continue
        if isinstance(value, str) and "<" in value:
            found.append(value.strip())
    return found


#: Keys (lower case) of an app-state node that make it an episode: a title and its audio or
#: its length. Its HTML ``description`` is then the episode's notes (Anchor's ``__STATE__``).
_TITLE_KEYS = frozenset({"title", "name"})
_MEDIA_KEYS = frozenset({"duration", "enclosureurl", "enclosure_url", "audiourl", "audio_url"})


def _is_media_node(node: dict[str, object]) -> bool:
    keys = {key.lower() for key in node}
    return not keys.isdisjoint(_TITLE_KEYS) and not keys.isdisjoint(_MEDIA_KEYS)


def _state_notes(data: object) -> list[str]:
    """The notes fields of an app state: HTML values of :data:`NOTES_KEYS`, and plain-text
    values of :data:`PLAIN_NOTES_KEYS` (as text, one paragraph a line)."""
    if isinstance(data, _Script):
        return _script_notes(data)
    found: list[str] = []
    for node in _walk(data, _MAX_STATE_NODES):
        episode = node.get("kind") in EPISODE_KINDS
        media = _is_media_node(node)
        for key, value in node.items():
            if not isinstance(value, str):
                continue
            lowered = key.lower()
            html = "<" in value and (lowered in NOTES_KEYS or (media and lowered == "description"))
            plain = lowered in PLAIN_NOTES_KEYS or (episode and lowered == "description")
            if html or (plain and len(value.strip()) >= MIN_PLAIN_CHARS):
                found.append(value.strip())
    return found
