"""The typed faces of ``tags`` (#13): SQL views over its current podcast-namespace rows.

Frozen: migration 9 creates exactly these views (a change is a new migration that drops and
recreates one). Attributes become columns, numbers that are not numbers read as NULL, and
the spec's defaults apply (a person's role ``host``, group ``cast``).
"""

from __future__ import annotations


def _attr(name: str, table: str = "t") -> str:
    return f"json_extract({table}.attributes, '$.{name}')"


def _number(name: str, kind: str = "REAL", table: str = "t") -> str:
    """An attribute as a number; NULL (not 0) when it is not one ("abc", "1:30", "")."""
    value = _attr(name, table)
    return (
        f"(CASE WHEN {value} GLOB '*[0-9]*' AND NOT {value} GLOB '*[^0-9.]*' "
        f"THEN CAST({value} AS {kind}) END)"
    )


def _child_text(name: str) -> str:
    return (
        f"(SELECT c.text FROM tags c WHERE c.parent_id = t.id AND c.name = '{name}' "
        "ORDER BY c.position LIMIT 1)"
    )


_CURRENT = "t.seen_until IS NULL AND t.ns = 'podcast'"
_INSIDE = "(SELECT p.name FROM tags p WHERE p.id = t.parent_id) AS inside"  # NULL: top level
TAG_VIEWS: dict[str, str] = {
    "persons": f"""SELECT t.id, t.feed_id, t.episode_id, t.text AS name,
  lower(coalesce({_attr("role")}, 'host')) AS role,
  lower(coalesce({_attr("group")}, 'cast')) AS "group",
  {_attr("img")} AS img, {_attr("href")} AS href, {_INSIDE}
FROM tags t WHERE {_CURRENT} AND t.name = 'person'""",
    "soundbites": f"""SELECT t.id, t.feed_id, t.episode_id,
  {_number("startTime")} AS start, {_number("duration")} AS duration, t.text AS title, {_INSIDE}
FROM tags t WHERE {_CURRENT} AND t.name = 'soundbite'""",
    "alternate_enclosures": f"""SELECT t.id, t.feed_id, t.episode_id, {_attr("type")} AS type,
  {_number("length", "INTEGER")} AS length, {_number("bitrate")} AS bitrate,
  {_number("height", "INTEGER")} AS height, {_attr("lang")} AS lang,
  {_attr("title")} AS title, {_attr("rel")} AS rel, {_attr("codecs")} AS codecs,
  {_attr("default")} AS "default",
  (SELECT json_group_array(uri) FROM (SELECT {_attr("uri", "s")} AS uri FROM tags s
   WHERE s.parent_id = t.id AND s.name = 'source' ORDER BY s.position)) AS sources, {_INSIDE}
FROM tags t WHERE {_CURRENT} AND t.name = 'alternateEnclosure'""",
    "alternate_enclosure_sources": f"""SELECT t.id, t.feed_id, t.episode_id,
  t.parent_id AS alternate_enclosure_id, {_attr("uri")} AS uri,
  {_attr("contentType")} AS content_type
FROM tags t WHERE {_CURRENT} AND t.name = 'source'
  AND (SELECT p.name FROM tags p WHERE p.id = t.parent_id) = 'alternateEnclosure'""",
    "value_recipients": f"""SELECT t.id, t.feed_id, t.episode_id, t.parent_id AS value_id,
  v.name AS inside, {_attr("type", "v")} AS value_type, {_attr("method", "v")} AS method,
  {_attr("suggested", "v")} AS suggested, {_attr("name")} AS name, {_attr("type")} AS type,
  {_attr("address")} AS address, {_number("split")} AS split,
  {_attr("customKey")} AS custom_key, {_attr("customValue")} AS custom_value,
  {_attr("fee")} AS fee
FROM tags t JOIN tags v ON v.id = t.parent_id
WHERE {_CURRENT} AND t.name = 'valueRecipient'""",
    "remote_items": f"""SELECT t.id, t.feed_id, t.episode_id, {_attr("feedGuid")} AS feed_guid,
  {_attr("feedUrl")} AS feed_url, {_attr("itemGuid")} AS item_guid,
  {_attr("medium")} AS medium, t.text AS title, {_INSIDE}
FROM tags t WHERE {_CURRENT} AND t.name = 'remoteItem'""",
    "podroll": f"""SELECT t.id, t.feed_id, {_attr("feedGuid")} AS feed_guid,
  {_attr("feedUrl")} AS feed_url, {_attr("itemGuid")} AS item_guid, t.text AS title
FROM tags t JOIN tags p ON p.id = t.parent_id
WHERE {_CURRENT} AND t.name = 'remoteItem' AND p.name = 'podroll'""",
    "live_items": f"""SELECT t.id, t.feed_id, {_attr("status")} AS status,
  {_attr("start")} AS start, {_attr("end")} AS "end", {_child_text("guid")} AS guid,
  {_child_text("title")} AS title,
  (SELECT {_attr("url", "c")} FROM tags c WHERE c.parent_id = t.id AND c.name = 'enclosure'
   LIMIT 1) AS enclosure_url,
  (SELECT e.id FROM episodes e WHERE e.feed_id = t.feed_id AND e.guid = {_child_text("guid")}
   LIMIT 1) AS became_episode_id
FROM tags t WHERE {_CURRENT} AND t.name = 'liveItem'""",
    "locations": f"""SELECT t.id, t.feed_id, t.episode_id, t.text AS name,
  {_attr("geo")} AS geo, {_attr("osm")} AS osm, {_attr("rel")} AS rel,
  {_attr("country")} AS country, {_INSIDE}
FROM tags t WHERE {_CURRENT} AND t.name = 'location'""",
}
